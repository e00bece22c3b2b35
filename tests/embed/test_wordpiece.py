"""memlite.embed.wordpiece gives MiniLM the ids HuggingFace's ``tokenizers`` gives it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from memlite.embed import minilm
from memlite.embed.wordpiece import WordPiece

ROOT = Path(__file__).resolve().parents[2]

EDGE_CASES = [
    "Café naïve résumé", "ΣΊΣΥΦΟΣ ΌΔΟΣ", "İstanbul ıi", "straße STRASSE",
    "中文字符测试 and 日本語", "\U0002B820\U0002B91F\U0002B920 x", "\uf98a compatibility",
    "emoji 🚀🔥 test", "zero\u200bwidth\u200djoin\u00adsoft", "nb\u00a0sp\u3000ideo\u2028ls",
    "tab\tnew\nline\rret\x0bvt\x0cff\x85nel\x7fdel\x01", "private\ue000use \u0378unassigned",
    "[MASK] and [CLS][SEP] x[PAD]y [mask] [UNK]", "a" * 150,
    "x" * 99 + " " + "y" * 100 + " " + "z" * 101, "e\u0301 combining ABC\u0300\u0316",
    "\ufffd\x00bad", "¿Qué? ¡Sí! «quotes» “curly” — dash – en", "$100 + 5% ^ ~ ` | < = >",
    "ﬁ ligature Ⅻ ① ²", "ǅ ǈ Dž", "ᾈ greek x\u0345y", "\u0130\u0307", "",
    "   ", "tokens " * 400, "src/memlite/storage/db.py:412 def open_reader(location)",
    "unbelievably antidisestablishmentarianism xyzzyplugh",
]


def _corpus() -> list[str]:
    texts = list(EDGE_CASES)

    def walk(node: object) -> None:
        if isinstance(node, str):
            texts.append(node)
        elif isinstance(node, dict):
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(json.loads((ROOT / "bench/eval/dataset.json").read_text()))
    locomo = ROOT / "bench/eval/locomo_data/locomo10.json"
    if locomo.is_file():
        walk(json.loads(locomo.read_text()))
    sources = sorted((ROOT / "memlite").rglob("*.py"))
    for path in [ROOT / "README.md", ROOT / "SECURITY.md", *sources]:
        text = path.read_text()
        texts.extend(text[i:i + 1500] for i in range(0, len(text), 1500))
    return texts


@pytest.fixture(scope="module")
def reference():
    tokenizers = pytest.importorskip("tokenizers")
    tok = tokenizers.Tokenizer.from_file(str(minilm.tokenizer_path()))
    tok.enable_truncation(max_length=minilm.MAX_TOKENS)
    tok.no_padding()
    return tok


@pytest.fixture(scope="module")
def wordpiece():
    return WordPiece(minilm.tokenizer_path(), max_tokens=minilm.MAX_TOKENS)


def test_the_same_ids_as_tokenizers_on_every_corpus_text(reference, wordpiece):
    texts = _corpus()
    assert len(texts) > 10_000
    expected = [e.ids for e in reference.encode_batch(texts)]
    differing = [t[:60] for t, e in zip(texts, expected, strict=True) if wordpiece.ids(t) != e]
    assert differing == []


def test_a_batch_is_padded_to_its_longest_like_tokenizers(reference, wordpiece):
    texts = ["short", "a somewhat longer text, with punctuation!", ""]
    reference.enable_padding(pad_id=0, pad_token="[PAD]", pad_type_id=0)
    try:
        expected = reference.encode_batch(texts)
    finally:
        reference.no_padding()
    ids, masks = wordpiece.encode_batch(texts)
    assert ids == [e.ids for e in expected]
    assert masks == [e.attention_mask for e in expected]


def test_long_texts_are_cut_to_the_models_length(wordpiece):
    ids = wordpiece.ids("word " * 1000)
    assert len(ids) == minilm.MAX_TOKENS and ids[0] == 101 and ids[-1] == 102


def test_another_kind_of_tokenizer_file_is_refused(tmp_path):
    spec = json.loads(minilm.tokenizer_path().read_text())
    spec["normalizer"] = {"type": "NFC"}
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(spec))
    with pytest.raises(ValueError, match="not a BERT uncased WordPiece"):
        WordPiece(path, max_tokens=16)


def test_the_embedders_vectors_are_bitwise_those_of_the_tokenizers_pipeline(model_cache,
                                                                            reference):
    """What the worker stores does not change: same ids, same feed, same vectors."""
    embedder = minilm.MiniLMEmbedder(cache_dir=model_cache)
    texts = [t for t in _corpus()[:: 97] if t.strip()][:40]
    ours = embedder.embed(texts)

    class Reference:
        def encode_batch(self, batch):
            reference.enable_padding(pad_id=0, pad_token="[PAD]", pad_type_id=0)
            try:
                done = reference.encode_batch(list(batch))
            finally:
                reference.no_padding()
            return [e.ids for e in done], [e.attention_mask for e in done]

    embedder._tokenizer = Reference()
    assert (embedder.embed(texts) == ours).all()


def test_the_embedder_does_not_load_the_tokenizers_package(model_cache):
    code = (
        "import sys\n"
        "from memlite.embed.minilm import MiniLMEmbedder\n"
        f"m = MiniLMEmbedder(cache_dir={str(model_cache)!r})\n"
        "print(m.embed(['hello world']).shape, 'tokenizers' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=300)
    assert out.stdout.strip() == "(1, 384) False"
