"""claude-mem, the leading peer, as ``bench_peer_http.py`` runs it: packages, data, worker.

Facts about claude-mem 13.25.3 this module relies on (read from the npm package; none of
its code is copied here):

* Its worker is ``plugin/scripts/worker-service.cjs`` run by **Bun** (its storage needs
  ``bun:sqlite``). Run with ``--daemon`` it serves in the foreground. It reads its settings
  from ``$CLAUDE_MEM_DATA_DIR/settings.json`` (written with defaults at the first start) and
  every ``CLAUDE_MEM_*`` environment variable overrides the file. The database is
  ``$CLAUDE_MEM_DATA_DIR/claude-mem.db``; the port is ``CLAUDE_MEM_WORKER_PORT`` (default
  37700 + uid % 100), bound to 127.0.0.1. Express routes; no token on loopback.
* Search: ``GET /api/search?query=...&project=...&limit=...`` is what its MCP ``search`` tool
  calls (the tool passes its arguments as the query string; without ``format=json`` the
  answer is the Markdown table the tool hands Claude). With Chroma it queries
  ``chroma-mcp`` (started through ``uvx``, which downloads it from PyPI at first use; see
  ``peer_chroma.py``); with
  ``CLAUDE_MEM_CHROMA_ENABLED=false`` (or no Chroma) it runs SQLite FTS5 over observations,
  session summaries and user prompts. Its FTS5 query is the whole query text quoted as ONE
  phrase, so a multi-word question only matches rows holding those words adjacent and in
  order; rows come back in FTS5 ``rank`` order.
* Data goes in through ``SessionStore`` (``plugin/sqlite/SessionStore.js``):
  ``createSDKSession``, ``updateMemorySessionId``, ``storeObservation`` (see
  ``peer_claude_mem_load.js``). Projects are named by folder name.

The npm tarballs are cached under the bench cache directory, never in the repository.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import signal
import subprocess
import tarfile
import time
from collections.abc import Iterable
from pathlib import Path

CLAUDE_MEM_VERSION = "13.25.3"
BUN_VERSION = "1.3.5"
HERE = Path(__file__).resolve().parent
LOADER = HERE / "peer_claude_mem_load.js"


def bun_package() -> str:
    """The npm package holding the Bun binary for this machine."""
    system = {"Darwin": "darwin", "Linux": "linux"}.get(platform.system(), "linux")
    arch = {"arm64": "aarch64", "aarch64": "aarch64"}.get(platform.machine(), "x64")
    return f"@oven/bun-{system}-{arch}"


def tarball_names() -> dict[str, str]:
    """npm spec -> the file name ``npm pack`` writes for it."""
    bun = bun_package()
    return {f"claude-mem@{CLAUDE_MEM_VERSION}": f"claude-mem-{CLAUDE_MEM_VERSION}.tgz",
            f"{bun}@{BUN_VERSION}": f"{bun[1:].replace('/', '-')}-{BUN_VERSION}.tgz"}


def fetch_hint(cache: Path) -> str:
    specs = " ".join(tarball_names())
    return (f"fetch the peer's packages once (needs the npm registry):\n"
            f"    mkdir -p {cache} && cd {cache} && npm pack {specs}")


def ensure_packages(cache: Path) -> tuple[Path, Path]:
    """Unpack (fetching with ``npm pack`` when missing) claude-mem and Bun under ``cache``.

    Returns ``(claude-mem package dir, bun binary)``. Raises ``RuntimeError`` with the
    fetch command when the tarballs are missing and npm cannot get them.
    """
    cache.mkdir(parents=True, exist_ok=True)
    missing = [spec for spec, name in tarball_names().items() if not (cache / name).exists()]
    if missing:
        if shutil.which("npm") is None:
            raise RuntimeError(fetch_hint(cache))
        done = subprocess.run(["npm", "pack", *missing], cwd=cache, capture_output=True,
                              text=True, timeout=600, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"npm pack failed: {done.stderr[-800:]}\n{fetch_hint(cache)}")
    dirs = []
    for name in tarball_names().values():
        target = cache / name.removesuffix(".tgz")
        if not (target / "package").exists():
            target.mkdir(exist_ok=True)
            with tarfile.open(cache / name) as tar:
                try:
                    tar.extractall(target, filter="tar")
                except TypeError:  # Python before 3.11.4 has no extraction filters
                    tar.extractall(target)  # noqa: S202 (the registry's own tarball)
        dirs.append(target / "package")
    bun = dirs[1] / "bin" / "bun"
    bun.chmod(0o755)
    return dirs[0], bun


# --- data -----------------------------------------------------------------------------------


def project_name(project_path: str) -> str:
    """claude-mem names a project by its folder's name."""
    return Path(project_path.rstrip("/")).name or project_path


def to_claude_mem(obs) -> dict:
    """One loader line for a memlite ``NewObservation``: the same fields, claude-mem's names.

    claude-mem stores ``facts``, ``concepts``, ``files_read`` and ``files_modified`` as JSON
    lists, like memlite; its ``created_at_epoch`` is milliseconds, like memlite's ``at_ms``.
    """
    if obs.at_ms is None:
        raise ValueError("a benchmark observation needs its time (at_ms)")
    return {
        "session": obs.session_id, "project": project_name(obs.project), "at": obs.at_ms,
        "obs": {"type": obs.type, "title": obs.title, "subtitle": obs.subtitle or None,
                "narrative": obs.narrative or None, "facts": list(obs.facts),
                "concepts": list(obs.concepts), "files_read": list(obs.files_read),
                "files_modified": list(obs.files_modified)},
    }


def write_jsonl(observations: Iterable, path: Path) -> int:
    count = 0
    with path.open("w") as out:
        for obs in observations:
            out.write(json.dumps(to_claude_mem(obs)) + "\n")
            count += 1
    return count


def load(bun: Path, package: Path, db: Path, jsonl: Path) -> dict:
    """Write ``db`` through claude-mem's SessionStore (``peer_claude_mem_load.js``)."""
    db.parent.mkdir(parents=True, exist_ok=True)
    home = db.parent / "home"
    home.mkdir(exist_ok=True)
    done = subprocess.run([str(bun), str(LOADER), str(package), str(db), str(jsonl)],
                          env={**os.environ, "HOME": str(home), "DO_NOT_TRACK": "1"},
                          capture_output=True, text=True, timeout=3600, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"claude-mem loader failed: {done.stderr[-2000:]}")
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


# --- worker ---------------------------------------------------------------------------------


def worker_env(home: Path, port: int) -> dict[str, str]:
    """The environment the peer's worker runs in: its own HOME and data dir, no Chroma.

    ``CLAUDE_MEM_CHROMA_ENABLED=false``: the search a user without Chroma gets (full text);
    ``peer_chroma.env`` turns it on for the ``--peer-chroma`` worker.
    Telemetry off (``DO_NOT_TRACK``): nothing leaves the machine.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLAUDE_MEM_")}
    return {**env, "HOME": str(home), "CLAUDE_MEM_DATA_DIR": str(home / ".claude-mem"),
            "CLAUDE_MEM_WORKER_PORT": str(port), "CLAUDE_MEM_WORKER_HOST": "127.0.0.1",
            "CLAUDE_MEM_CHROMA_ENABLED": "false", "DO_NOT_TRACK": "1",
            "CLAUDE_MEM_TELEMETRY": "0", "CLAUDE_MEM_TRANSCRIPTS_ENABLED": "false"}


class PeerWorker:
    """claude-mem's worker on a copy of ``db``, in its own process group; ``stop`` by pid."""

    def __init__(self, bun: Path, package: Path, db: Path | None, home: Path, port: int, *,
                 extra_env: dict[str, str] | None = None) -> None:
        """``db`` None: ``home/.claude-mem`` is already in place (``peer_chroma``);
        ``extra_env`` overrides ``worker_env`` (Chroma on)."""
        data = home / ".claude-mem"
        if db is not None:
            data.mkdir(parents=True)
            shutil.copy(db, data / "claude-mem.db")
        self.port = port
        self.home = home
        self.log = (home / "worker.out").open("w")
        self.proc = subprocess.Popen(
            [str(bun), str(package / "plugin" / "scripts" / "worker-service.cjs"), "--daemon"],
            env={**worker_env(home, port), **(extra_env or {})}, stdout=self.log,
            stderr=subprocess.STDOUT, start_new_session=True)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def wait_ready(self, get_json, timeout: float = 300) -> dict:
        """Wait until ``/api/health`` says initialized (the first start migrates and backs up)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise RuntimeError(f"claude-mem's worker exited with {self.proc.returncode}")
            try:
                health = get_json(self.port, "/api/health")
                if health.get("initialized"):
                    return health
            except (OSError, ValueError):
                pass
            time.sleep(0.3)
        raise RuntimeError("claude-mem's worker did not become ready")

    def stop(self) -> None:
        """SIGTERM the worker's pid, then whatever is left in the group it leads."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)  # the group is this worker's own
        except (ProcessLookupError, PermissionError):
            pass
        self.log.close()


BARE_BUN = """
const body = JSON.stringify({status: "ok"});
Bun.serve({hostname: "127.0.0.1", port: Number(process.argv[2]),
  fetch() { return new Response(body, {headers: {"content-type": "application/json"}}); }});
"""
