"""``memlite dashboard`` against a real worker process on a free port."""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys

import pytest

from memlite.http import cookie_name, cookie_value


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _memlite(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memlite", *args], env=env, text=True,
                          capture_output=True, timeout=60, check=False)


@pytest.mark.slow
def test_dashboard_prints_a_one_time_link_that_logs_in(data_dir):
    port = _free_port()
    env = {**os.environ, "MEMLITE_DATA_DIR": str(data_dir), "MEMLITE_WORKER_PORT": str(port)}
    try:
        done = _memlite("dashboard", "--json", env=env)
        assert done.returncode == 0, done.stderr
        url = json.loads(done.stdout)["url"]
        assert url.startswith(f"http://127.0.0.1:{port}/login?code=")
        token = (data_dir / "token").read_text().strip()
        assert token not in done.stdout

        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("GET", url.split(str(port), 1)[1])
        response = conn.getresponse()
        response.read()
        assert response.status == 303
        cookie = response.headers["Set-Cookie"]
        assert cookie.startswith(f"{cookie_name(port)}={cookie_value(token)};")
        conn.request("GET", "/api/readiness",
                     headers={"Cookie": f"{cookie_name(port)}={cookie_value(token)}"})
        response = conn.getresponse()
        assert response.status == 200 and json.loads(response.read())["ready"] is True
        conn.close()

        human = _memlite("dashboard", env=env)
        assert human.returncode == 0 and "/login?code=" in human.stdout
        assert human.stdout.split("code=")[1] != url.split("code=")[1]  # a fresh code each time
    finally:
        stopped = _memlite("worker", "stop", env=env)
        assert stopped.returncode == 0, stopped.stderr
