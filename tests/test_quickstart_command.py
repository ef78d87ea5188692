"""The README's main command, `bash scripts/quickstart.sh`: installs and serves the
quickstart notebook in JupyterLab (the browser test runs it; here: the command works)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_quickstart_command_serves_the_quickstart_notebook(tmp_path):
    port = _free_port()
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
           "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
           "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "settings"),
           "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "workspaces")}
    server = subprocess.Popen(
        ["bash", "scripts/quickstart.sh", "--no-browser", f"--port={port}",
         "--ServerApp.ip=127.0.0.1", "--IdentityProvider.token=", "--ServerApp.password="],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True)
    # a notebook given on the command line makes its folder the server root
    url = f"http://127.0.0.1:{port}/api/contents/quickstart.ipynb?content=0"
    try:
        deadline = time.monotonic() + 300
        while True:
            assert server.poll() is None, server.stdout.read() if server.stdout else ""
            try:
                with urllib.request.urlopen(url, timeout=5) as response:
                    body = json.loads(response.read())
                break
            except OSError:
                assert time.monotonic() < deadline, "JupyterLab did not come up"
                time.sleep(0.5)  # polling for the server to answer, not waiting on a guess
        assert body["name"] == "quickstart.ipynb" and body["type"] == "notebook"
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=60)
