"""MiniLM's tokenizer in plain Python: BERT uncased WordPiece, the same ids as ``tokenizers``.

Why not the ``tokenizers`` package: in the worker its native library and the tokenizer it
builds from ``tokenizer.json`` cost ~14 MB resident (5.4 MB for the import, 8.5 MB for
the loaded tokenizer, 2 CPUs, Linux), against ~6 MB for this module and its vocabulary;
the worker's RSS with the default model is held to 150 MB (issue 14). A text's
tokenization here takes ~1 ms against ~40 ms for the model, a short query's ~30 µs.

What it does is what ``tokenizer.json`` (``memlite/embed/data/``, Apache-2.0) describes,
the pipeline of HuggingFace's tokenizers for BERT:

1. special tokens (``[CLS]``, ``[SEP]``, ``[MASK]``, ...) written in the text are taken
   as they are, before anything else (they are not normalized);
2. normalizer ``BertNormalizer``: drop NUL, U+FFFD and control, format and private-use
   characters (unassigned ones stay; tab, newline and carriage return become spaces),
   every whitespace to a space,
   a space each side of a CJK ideograph, accents stripped (NFD, then non-spacing marks
   dropped), lower case character by character;
3. pre-tokenizer ``BertPreTokenizer``: split on whitespace, every punctuation character
   (Unicode P*, and ASCII's symbols) a word of its own;
4. model ``WordPiece``: greedy longest match from the left, pieces after the first
   prefixed ``##``; a word longer than 100 characters, or with a part no piece matches,
   is ``[UNK]``;
5. ``[CLS]`` + at most ``max_tokens - 2`` tokens + ``[SEP]``; a batch is padded to its
   longest with ``[PAD]`` (id 0, attention 0).

``tests/embed/test_wordpiece.py`` checks the ids against ``tokenizers`` on every text of
the eval corpora and on a set of Unicode edge cases; the vectors are then bitwise the
same as before. One known difference: character properties come from Python's Unicode
database (14.0 on Python 3.11), ``tokenizers``' from its Rust crates' (newer), so a
character assigned only in a later Unicode version can split differently (54 of 3,000
strings of random code points; none of the 42,364 real texts checked).
"""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from collections.abc import Sequence
from pathlib import Path

__all__ = ["WordPiece"]

# Rust's char::is_whitespace (the White_Space property): what BertNormalizer maps to a
# space (tab, newline, carriage return, and these; the other ASCII controls are dropped).
_WHITESPACE = frozenset("\t\n\r \u000b\u000c\u0085\u00a0\u1680\u2000\u2001\u2002\u2003"
                        "\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f"
                        "\u205f\u3000")
_CJK = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
        (0x2B740, 0x2B81F), (0x2B920, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))
_DROPPED = frozenset(("Cc", "Cf", "Co", "Cs"))  # unassigned (Cn) characters are kept
_ASCII_PUNCT = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
_ASCII_WORDS = re.compile(r"[^ !-/:-@\[-`{-~]+|[!-/:-@\[-`{-~]")


@functools.lru_cache(maxsize=8192)
def _normalized(char: str) -> str:
    """What BertNormalizer makes of one character (cached: texts repeat characters)."""
    if char in "\t\n\r":
        return " "
    code = ord(char)
    if code == 0 or code == 0xFFFD or unicodedata.category(char) in _DROPPED:
        return ""
    if char in _WHITESPACE:
        return " "
    stripped = "".join(c for c in unicodedata.normalize("NFD", char)
                       if unicodedata.category(c) != "Mn")
    lowered = "".join(c.lower() for c in stripped)
    if any(low <= code <= high for low, high in _CJK):  # a compatibility one decomposes
        return f" {lowered} "
    return lowered


@functools.lru_cache(maxsize=4096)
def _is_punctuation(char: str) -> bool:
    return char in _ASCII_PUNCT or unicodedata.category(char)[0] == "P"


def _normalize(text: str) -> str:
    if text.isascii():
        if text.isprintable():  # letters, digits, punctuation and spaces only
            return text.lower()
        return "".join(_normalized(c) for c in text)
    return "".join(_normalized(c) for c in text)


def _words(text: str) -> list[str]:
    if text.isascii():
        return _ASCII_WORDS.findall(text)
    words: list[str] = []
    current: list[str] = []
    for char in text:
        if char == " ":
            if current:
                words.append("".join(current))
                current = []
        elif _is_punctuation(char):
            if current:
                words.append("".join(current))
                current = []
            words.append(char)
        else:
            current.append(char)
    if current:
        words.append("".join(current))
    return words


class WordPiece:
    """A BERT WordPiece tokenizer read from a HuggingFace ``tokenizer.json``.

    Only what MiniLM's file uses is supported (BertNormalizer lowercasing, BertPreTokenizer,
    WordPiece, the [CLS]/[SEP] template); another file raises ValueError at load.
    """

    def __init__(self, path: Path, *, max_tokens: int) -> None:
        spec = json.loads(Path(path).read_text(encoding="utf-8"))
        normalizer, model = spec.get("normalizer") or {}, spec.get("model") or {}
        if (normalizer.get("type") != "BertNormalizer" or not normalizer.get("lowercase")
                or normalizer.get("strip_accents") not in (None, True)
                or not normalizer.get("clean_text")
                or not normalizer.get("handle_chinese_chars")
                or (spec.get("pre_tokenizer") or {}).get("type") != "BertPreTokenizer"
                or model.get("type") != "WordPiece"):
            raise ValueError(f"{path}: not a BERT uncased WordPiece tokenizer")
        self.vocab: dict[str, int] = model["vocab"]
        self.prefix: str = model.get("continuing_subword_prefix", "##")
        self.max_chars: int = model.get("max_input_chars_per_word", 100)
        self.unk = self.vocab[model.get("unk_token", "[UNK]")]
        self.cls, self.sep = self.vocab["[CLS]"], self.vocab["[SEP]"]
        self.max_tokens = max_tokens
        special = [t["content"] for t in spec.get("added_tokens", [])
                   if t.get("special") and not t.get("normalized")]
        self.special = {t: self.vocab[t] for t in special}
        self._split = (re.compile("(" + "|".join(map(re.escape, sorted(
            special, key=len, reverse=True))) + ")") if special else None)
        # Words repeat across texts; 4,096 of them cost under 1 MB, a miss ~5 µs.
        self._pieces = functools.lru_cache(maxsize=4096)(self._word_pieces)

    def _word_pieces(self, word: str) -> tuple[int, ...]:
        if len(word) > self.max_chars:
            return (self.unk,)
        vocab, pieces, start = self.vocab, [], 0
        while start < len(word):
            end = len(word)
            while start < end:
                piece = word[start:end] if start == 0 else self.prefix + word[start:end]
                found = vocab.get(piece)
                if found is not None:
                    pieces.append(found)
                    break
                end -= 1
            else:
                return (self.unk,)
            start = end
        return tuple(pieces)

    def ids(self, text: str) -> list[int]:
        """``[CLS]``, the text's tokens (at most ``max_tokens - 2``), ``[SEP]``."""
        room = self.max_tokens - 2
        out: list[int] = []
        parts = self._split.split(text) if self._split else [text]
        for n, part in enumerate(parts):
            if n % 2:  # a special token written in the text
                out.append(self.special[part])
            else:
                for word in _words(_normalize(part)):
                    out.extend(self._pieces(word))
            if len(out) >= room:
                break
        return [self.cls, *out[:room], self.sep]

    def encode_batch(self, texts: Sequence[str]) -> tuple[list[list[int]], list[list[int]]]:
        """Token ids padded to the longest text with ``[PAD]`` (0), and attention masks."""
        rows = [self.ids(text) for text in texts]
        width = max((len(row) for row in rows), default=0)
        ids = [row + [0] * (width - len(row)) for row in rows]
        masks = [[1] * len(row) + [0] * (width - len(row)) for row in rows]
        return ids, masks
