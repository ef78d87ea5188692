"""Bad input to `fuxi-acp` gets one clear line: a JSON-RPC error for a request's bad params
(-32602, one line of details), one line on stderr with a non-zero exit for a bad command
line, never a traceback, and the agent goes on serving.

Driven through a real `fuxi-acp` process over stdio, its stderr kept in a file."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, RequestError, schema, spawn_agent_process

from fuxi_notebook.testing import Turn, text

from .acp_client import RecordingClient, agent_env, new_session

pytestmark = pytest.mark.timeout(120)

#: session ids that cannot name a session file, each in another form
BAD_SESSION_IDS = ["../../etc/x", "/etc/passwd", "..", "a/b", "a\\b", "a\x00b", "x" * 5000,
                   "\u00e9" * 200, "a\ud800b"]


@contextlib.asynccontextmanager
async def agent_logging_to(log: Path, client: RecordingClient, server: Any, cwd: Path,
                           *args: str) -> AsyncIterator[Any]:
    """`fuxi-acp`, initialized, its stderr written to `log`."""
    with log.open("wb") as stderr:
        async with spawn_agent_process(
                client, sys.executable, "-m", "fuxi_notebook", "acp", *args,
                env=agent_env(server), cwd=str(cwd),
                transport_kwargs={"stderr": stderr}) as (conn, process):
            await conn.initialize(protocol_version=PROTOCOL_VERSION)
            yield conn, process


def _one_line(error: RequestError) -> str:
    """The error's details, checked to be one bounded line."""
    details = str((error.data or {}).get("details", "")) if isinstance(
        error.data, dict) else str(error.data)
    assert details and "\n" not in details and len(details) < 1000, details
    return details


async def _refused(call: Any, what: str = "") -> RequestError:
    with pytest.raises(RequestError) as refused:
        await call
        pytest.fail(f"accepted: {what}")
    return refused.value


async def test_session_load_refuses_ids_that_are_no_session_file_name(fake_api, tmp_path):
    fake_api.add(Turn([text("Still here.")]))
    client, log = RecordingClient(), tmp_path / "stderr.txt"
    async with agent_logging_to(log, client, fake_api, tmp_path) as (conn, _):
        for bad in BAD_SESSION_IDS:
            error = await _refused(conn.load_session(cwd=str(tmp_path), session_id=bad,
                                                     mcp_servers=[]))
            assert error.code == -32602, (bad[:20], error.data)
            _one_line(error)
        not_text = await _refused(conn._conn.send_request(
            "session/load", {"sessionId": 5, "cwd": str(tmp_path), "mcpServers": []}))
        assert not_text.code == -32602
        sid = await new_session(conn, tmp_path)
        done = await conn.prompt(session_id=sid, prompt=[
            schema.TextContentBlock(type="text", text="are you there?")])
    assert done.stop_reason == "end_turn" and client.text() == "Still here."
    assert "Traceback" not in log.read_text(errors="replace")


async def test_every_method_answers_bad_params_with_one_json_rpc_error(fake_api, tmp_path):
    (tmp_path / "a-file").write_text("not a folder")
    fake_api.add(Turn([text("Still here.")]))
    client, log = RecordingClient(), tmp_path / "stderr.txt"
    folder = str(tmp_path)
    async with agent_logging_to(log, client, fake_api, tmp_path) as (conn, _):
        sid = await new_session(conn, tmp_path)
        raw = conn._conn.send_request
        calls = {
            "cwd with a NUL": conn.new_session(cwd=folder + "/a\x00b", mcp_servers=[]),
            "cwd a file": conn.new_session(cwd=str(tmp_path / "a-file"), mcp_servers=[]),
            "cwd relative": conn.new_session(cwd="relative", mcp_servers=[]),
            "extra dir with a NUL": conn.new_session(
                cwd=folder, mcp_servers=[], additional_directories=["/tmp/a\x00b"]),
            "stdio server without a command": conn.new_session(cwd=folder, mcp_servers=[
                schema.McpServerStdio(name="s", command="", args=[], env=[])]),
            "list in a folder with a NUL": conn.list_sessions(cwd=folder + "/\x00"),
            "list in a relative folder": conn.list_sessions(cwd="relative"),
            "mode unknown": conn.set_session_mode(session_id=sid, mode_id="yolo\n"),
            "mode not text": raw("session/set_mode", {"sessionId": sid, "modeId": 3}),
            "config unknown": conn.set_config_option(config_id="x", session_id=sid,
                                                     value="y"),
            "model with a newline": conn.set_config_option(
                config_id="model", session_id=sid, value="claude\nsonnet"),
            "effort not a level": conn.set_config_option(config_id="effort", session_id=sid,
                                                         value=True),
            "prompt of no session": conn.prompt(session_id="../x", prompt=[
                schema.TextContentBlock(type="text", text="hi")]),
            "prompt not a list": raw("session/prompt", {"sessionId": sid, "prompt": "hi"}),
        }
        for what, call in calls.items():
            error = await _refused(call, what)
            assert error.code == -32602, (what, error.code, error.data)
            if isinstance(error.data, dict) and "details" in error.data:
                _one_line(error)
        await conn._conn.send_notification("session/cancel", {"sessionId": 7})
        await conn.cancel(session_id="../../no-such-session")
        done = await conn.prompt(session_id=sid, prompt=[
            schema.TextContentBlock(type="text", text="are you there?")])
    assert done.stop_reason == "end_turn" and client.text() == "Still here."
    assert "Traceback" not in log.read_text(errors="replace")


async def test_a_line_that_is_no_json_rpc_is_one_line_on_stderr(fake_api, tmp_path):
    client, log = RecordingClient(), tmp_path / "stderr.txt"
    async with agent_logging_to(log, client, fake_api, tmp_path) as (conn, process):
        for line in (b"this is not json\n", b"[1, 2\n", b'{"jsonrpc": "2.0", "id": {}}\n',
                     b"[" * 100_000 + b"\n"):
            process.stdin.write(line)
        await process.stdin.drain()
        sid = await new_session(conn, tmp_path)  # still serving, and every line was read
        assert sid
    logged = log.read_text(errors="replace")
    assert "Traceback" not in logged
    assert all(line.startswith("fuxi-acp: ") for line in logged.splitlines()), logged


# -- the command line ------------------------------------------------------------------


def _server_info(runtime: Path, name: str, info: Any) -> None:
    runtime.mkdir(exist_ok=True)
    (runtime / name).write_text(info if isinstance(info, str) else json.dumps(info))


def _acp_command(tmp_path: Path, *args: str, runtime: Path | None = None
                 ) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(runtime or tmp_path / "runtime"),
           "FUXI_BLOCK_REAL_API": "1"}
    return subprocess.run([sys.executable, "-m", "fuxi_notebook.__main__", "acp", *args],
                          capture_output=True, text=True, timeout=60, check=False,
                          stdin=subprocess.DEVNULL, env=env, cwd=tmp_path)


def _fuxi_acp(tmp_path: Path, *args: str, runtime: Path | None = None
              ) -> subprocess.CompletedProcess[str]:
    code = "import sys; from fuxi_notebook._internal.acp.server import acp_main; " \
           "sys.exit(acp_main(sys.argv[1:]))"
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(runtime or tmp_path / "runtime"),
           "FUXI_BLOCK_REAL_API": "1"}
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True,
                          text=True, timeout=60, check=False, stdin=subprocess.DEVNULL,
                          env=env, cwd=tmp_path)


def _assert_one_line(done: subprocess.CompletedProcess[str], *words: str) -> None:
    assert done.returncode != 0 and done.stdout == "", (done.returncode, done.stdout)
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert all(word in lines[0] for word in words), lines[0]


#: server info files that hold no usable server, each in another form
BAD_SERVER_INFOS = {
    "a tab in the url's path": {"url": "http://127.0.0.1:8888/\t"},
    "a tab in the host": {"url": "http://127.0.0.1\t:8888/"},
    "a tab in the port": {"url": "http://127.0.0.1:88\t88/"},
    "a newline in the url": {"url": "http://127.0.0.1:8888/\n"},
    "an escape in the url": {"url": "http://127.0.0.1:8888/\x1b[2J"},
    "a port out of range": {"url": "http://127.0.0.1:99999/"},
    "a url not text": {"url": ["http://127.0.0.1:8888/"]},
    "a token with a newline": {"url": "http://127.0.0.1:8888/", "token": "a\nb"},
    "a root folder not text": {"url": "http://127.0.0.1:8888/", "root_dir": 5},
    "not json": "{not json",
    "nested too deep": "[" * 100_000,
    "not an object": "[1, 2]",
}


@pytest.mark.parametrize("what", list(BAD_SERVER_INFOS))
def test_a_server_info_that_is_no_server_is_skipped_and_named_in_one_line(tmp_path, what):
    info = BAD_SERVER_INFOS[what]
    if isinstance(info, dict):
        info = {"pid": os.getpid(), "token": "t", "root_dir": str(tmp_path), **info}
    _server_info(tmp_path / "runtime", "jpserver-1.json", info)
    done = _fuxi_acp(tmp_path, "--notebook", str(tmp_path / "n.ipynb"))
    _assert_one_line(done, "fuxi-acp", "jpserver-1.json")
    assert done.returncode == 2


def test_a_server_info_that_is_a_device_or_a_fifo_is_not_read(tmp_path):
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    (runtime / "jpserver-1.json").symlink_to("/dev/zero")
    os.mkfifo(runtime / "jpserver-2.json")
    done = _fuxi_acp(tmp_path, "--notebook", str(tmp_path / "n.ipynb"))
    _assert_one_line(done, "jpserver-1.json", "jpserver-2.json")


def test_bad_arguments_are_one_line_with_exit_status_2(tmp_path):
    for args, words in [
            (["--max-budget-usd", "-1"], ["--max-budget-usd"]),
            (["--max-budget-usd", "lots"], ["--max-budget-usd"]),
            (["--permission-mode", "yolo"], ["yolo"]),
            (["--setting-sources", "user,nope"], ["nope"]),
            (["--kernel", str(tmp_path / "missing.json")], ["missing.json"]),
            (["--kernel", "k.json", "--notebook", "n.ipynb"], ["--kernel"]),
            (["--no-such-option"], ["--no-such-option"]),
            (["--notebook", str(tmp_path / "n.ipynb")], ["no Jupyter server"])]:
        done = _fuxi_acp(tmp_path, *args)
        _assert_one_line(done, *words)
        assert done.returncode == 2, (args, done.stderr)
    via_main = _acp_command(tmp_path, "--notebook", str(tmp_path / "n.ipynb"))
    assert via_main.returncode == 2 and "Traceback" not in via_main.stderr
