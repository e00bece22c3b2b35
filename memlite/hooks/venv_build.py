"""Building the plugin's virtual environment: what ``bootstrap.ensure_venv`` starts,
detached in its own session, as ``build(<plugin data dir>, <attempt>)``.

STANDARD LIBRARY ONLY, and Python 3.9 (macOS's ``/usr/bin/python3``): it runs on the
interpreter the hook runs on, and finds a Python 3.11+ to make the venv with. What it
installs, how it reports (``venv-status.json``, ``venv-install.log``), its backoff and how
an update is swapped in: ``memlite.hooks.bootstrap``'s docstring. Apart from it because
the hook never runs this code: it only starts it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time

from memlite.hooks.bootstrap import (
    CONSTRAINTS,
    INSTALL_LOG,
    LOCK_FILE,
    MIN_PYTHON,
    PIP_ENV,
    PYTHON_ENV,
    READY_FILE,
    VENV_DIR,
    fingerprint,
    record_failure,
    source_dir,
    start_worker_when_ready,
    write_status,
)

__all__ = ["CONVERTER_PACKAGES", "base_python", "build", "host_pip", "pip_command",
           "prepare_model"]


def _version(python: str) -> tuple[int, int] | None:
    try:
        out = subprocess.run([python, "-c", "import sys; print(*sys.version_info[:2])"],
                             capture_output=True, text=True, timeout=20, check=True).stdout
        major, minor = out.split()
        return int(major), int(minor)
    except (OSError, ValueError, subprocess.SubprocessError):
        return None


def base_python() -> tuple[str | None, str]:
    """A Python >= 3.11 to make the venv with, and what was looked at (for the reason)."""
    looked = []
    explicit = os.environ.get(PYTHON_ENV, "").strip()
    candidates = [explicit] if explicit else [sys.executable]
    if not explicit:
        names = [f"python3.{minor}" for minor in range(14, MIN_PYTHON[1] - 1, -1)]
        dirs = ["/opt/homebrew/bin", "/usr/local/bin", os.path.expanduser("~/.local/bin")]
        candidates += [p for n in names for p in [shutil.which(n)] if p]
        candidates += [os.path.join(d, n) for n in names for d in dirs]
    for python in candidates:
        if not python or not os.access(python, os.X_OK):
            if python == explicit and explicit:
                looked.append(f"{python} (not found)")
            continue
        version = _version(python)
        looked.append(f"{python} ({'.'.join(map(str, version)) if version else '?'})")
        if version is not None and version >= MIN_PYTHON:
            return python, ""
    return None, ", ".join(looked) or sys.executable


def _tail(path: str, lines: int = 3) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(max(0, os.fstat(f.fileno()).st_size - 4000))
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return ""
    kept = [line.strip() for line in text.splitlines()
            if line.strip() and "Location 'file:" not in line]
    return " | ".join(kept[-lines:])[:400]


def host_pip(base: str) -> bool:
    """True if ``base`` has a pip that can install into another environment
    (``pip --python``, pip 22.3 or newer): then the venv needs no pip of its own."""
    try:
        out = subprocess.run([base, "-m", "pip", "--version"], capture_output=True, text=True,
                             timeout=60, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    parts = out.split()[1].split(".") if len(out.split()) > 1 else []
    try:
        return (int(parts[0]), int(parts[1])) >= (22, 3)
    except (IndexError, ValueError):
        return False


def pip_command(pip: list[str], source: str) -> list[str]:
    """The install (``pip`` is how pip is run): runtime dependencies of ``source`` at the
    constrained versions, the SDK from its sdist (no bundled CLI), no bytecode up front."""
    command = [*pip, "install", "--disable-pip-version-check", "--no-input", "--no-compile",
               "--no-binary", "claude-agent-sdk"]
    constraints = os.path.join(source, CONSTRAINTS)
    if os.path.exists(constraints):
        command += ["-c", constraints]
    command += os.environ.get(PIP_ENV, "").split()
    return [*command, source]


CONVERTER_PACKAGES = ("onnx", "protobuf", "ml-dtypes")
"""What ``memlite.embed.quantize`` needs beyond the venv (numpy and typing-extensions are
in it): installed for the one conversion into a throwaway directory, never into the venv."""


def prepare_model(data: str, base: str, python: str) -> None:
    """After the venv is ready: make the embedder's int8-in-memory copy of MiniLM once.

    ``memlite.embed.quantize`` needs ``onnx`` (~36 MB with protobuf and ml-dtypes) for this
    one conversion and never again, so it is not a runtime dependency: the host's pip puts
    it (at the constrained versions) in a temporary directory beside the venv, the venv's
    Python runs the conversion with that directory on ``PYTHONPATH`` (the copy lands in
    the model cache, ``<data dir>/models``), and the directory goes. The worker started
    just before runs the shipped file (bigger in memory, same ranking) until its next
    start. Never raises: without the copy, memory works the same, only heavier.
    """
    tmp = tempfile.mkdtemp(prefix="converter-", dir=data)
    try:
        command = [base, "-m", "pip", "install", "--disable-pip-version-check", "--no-input",
                   "--no-compile", "--no-deps", "--target", tmp, *CONVERTER_PACKAGES]
        constraints = os.path.join(source_dir(), CONSTRAINTS)
        if os.path.exists(constraints):
            command += ["-c", constraints]
        command += os.environ.get(PIP_ENV, "").split()
        subprocess.run(command, check=True, timeout=600)
        env = {**os.environ, "PYTHONPATH": tmp}
        done = subprocess.run([python, "-c", "from memlite.embed.minilm import MiniLMEmbedder;"
                               " print(MiniLMEmbedder().name)"], env=env, timeout=900,
                              capture_output=True, text=True, check=False)
        print(f"embedding model: {done.stdout.strip() or done.stderr.strip()[-300:]}",
              flush=True)
    except (OSError, subprocess.SubprocessError) as exc:
        print(f"embedding model not converted ({exc}): the shipped file is used", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def build(data: str, attempt: int = 1) -> int:
    """Create ``<data>/venv`` and pip-install memlite into it (run detached by the hook)."""
    final = os.path.join(data, VENV_DIR)
    # An update builds beside the venv in use (its worker keeps running), then swaps.
    update = os.path.exists(os.path.join(final, READY_FILE))
    venv = final + ".next" if update else final
    python = os.path.join(venv, "bin", "python")
    log = os.path.join(data, INSTALL_LOG)
    started = time.time()
    print(f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} building {venv} "
          f"(attempt {attempt})", flush=True)
    try:
        base, looked = base_python()
        if base is None:
            record_failure(data, attempt, "memlite needs Python "
                           f"{'.'.join(map(str, MIN_PYTHON))} or newer; found {looked}. "
                           "Install one (macOS: `brew install python@3.12`) or set "
                           f"{PYTHON_ENV}")
            print(f"failed: no Python >= 3.11 ({looked})", flush=True)
            return 1
        # The host's pip installs into the venv when it can: no pip (nor, on 3.11,
        # setuptools) inside it, and no ensurepip run. Else the venv's own pip, which is
        # removed afterwards: neither is a runtime dependency.
        outside = host_pip(base)
        subprocess.run([base, "-m", "venv", "--clear", *(["--without-pip"] if outside else []),
                        venv], check=True)
        pip = [base, "-m", "pip", "--python", python] if outside else [python, "-m", "pip"]
        subprocess.run(pip_command(pip, source_dir()), check=True)
        if not outside:
            subprocess.run([python, "-m", "pip", "uninstall", "--yes", "--quiet", "pip",
                            "setuptools"], check=False)
        with open(os.path.join(venv, READY_FILE), "w") as f:
            f.write(f"{time.time()}\nfingerprint={fingerprint()}\n")
        if update:  # two renames; the old tree goes once nothing new can start from it
            old = final + ".old"
            shutil.rmtree(old, ignore_errors=True)
            os.replace(final, old)
            os.replace(venv, final)
            shutil.rmtree(old, ignore_errors=True)
        took = time.time() - started
        write_status(data, state="ready", attempt=attempt, time=time.time(), seconds=took)
        print(f"ready in {took:.1f} s", flush=True)
        start_worker_when_ready(os.path.join(final, "bin", "python"))
        if outside:
            prepare_model(data, base, os.path.join(final, "bin", "python"))
        return 0
    except (OSError, subprocess.CalledProcessError) as exc:
        print(f"failed: {exc}", flush=True)
        record_failure(data, attempt, f"{exc}: {_tail(log)}")
        return 1
    finally:
        try:
            os.unlink(os.path.join(data, LOCK_FILE))
        except FileNotFoundError:
            pass
