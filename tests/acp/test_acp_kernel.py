"""`fuxi-acp --kernel FILE` works on a live ipykernel's namespace: the agent reads a
DataFrame's columns and runs Python there; what it creates is in the kernel afterwards."""

from __future__ import annotations

import asyncio
import os
import queue
import signal
import subprocess
import sys
from typing import Any

import pytest

from fuxi_notebook.testing import Turn, text, tool_use

from .acp_client import RecordingClient, acp_agent, agent_env, appears, new_session
from .test_acp_agent import _prompt

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def kernel(tmp_path):
    from jupyter_client.manager import KernelManager

    manager = KernelManager(kernel_name="python3")
    manager.kernel_cmd = [sys.executable, "-m", "ipykernel_launcher", "-f",
                          "{connection_file}"]
    manager.connection_file = str(tmp_path / "kernel.json")
    manager.start_kernel(cwd=str(tmp_path))
    client = manager.client()
    client.start_channels()
    client.wait_for_ready(timeout=60)
    try:
        yield manager, client
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def _run(client, code: str) -> str:
    """Run `code` in the kernel as a user would; its stdout."""
    msg_id = client.execute(code)
    out = []
    while True:
        try:
            message = client.get_iopub_msg(timeout=30)
        except queue.Empty:
            raise AssertionError(f"the kernel did not finish {code!r}") from None
        if message["parent_header"].get("msg_id") != msg_id:
            continue
        kind, content = message["header"]["msg_type"], message["content"]
        if kind == "stream":
            out.append(content["text"])
        elif kind == "error":
            raise AssertionError(f"{content['ename']}: {content['evalue']}")
        elif kind == "status" and content["execution_state"] == "idle":
            return "".join(out)


async def test_the_agent_reads_a_dataframe_and_runs_python_in_the_kernel(
        fake_api, tmp_path, kernel):
    manager, user = kernel
    _run(user, "import pandas as pd\nsales = pd.DataFrame({'region': ['N', 'S'], "
               "'amount': [3, 4]})")
    fake_api.add(
        Turn([tool_use("Variables", {})]),
        Turn([tool_use("Python", {"code": "sales.columns.tolist()"})]),
        Turn([tool_use("Python", {"code": "total = int(sales['amount'].sum())\n"
                                          "print('total is', total)"})]),
        Turn([text("The total is 7.")]))
    client = RecordingClient()
    async with acp_agent(client, fake_api, tmp_path, "--kernel",
                         manager.connection_file) as (conn, _):
        sid = await new_session(conn, tmp_path)
        done = await conn.prompt(session_id=sid, prompt=_prompt("sum the sales"))
    assert done.stop_reason == "end_turn"
    variables, columns, total = [u.raw_output for u in client.of("tool_call_update")]
    assert "sales" in variables and "DataFrame" in variables
    assert "['region', 'amount']" in columns
    assert "total is 7" in total
    assert [a.tool_call.title for a in client.asks] == [  # Python is asked; Variables reads
        "Python: `sales.columns.tolist()`",
        "Python: `total = int(sales['amount'].sum())` (+1 more line)"]
    asked = client.asks[1].tool_call.content[-1].content.text  # the whole code, as Python
    assert "```python\ntotal = int(sales['amount'].sum())\nprint('total is', total)\n```" \
        in asked
    assert _run(user, "print(total)") == "7\n"  # the agent's variable is the user's now
    # In holds "" and the user's three cells: the agent's calls left no history
    assert _run(user, "print(len(In))") == "4\n"


async def test_without_a_kernel_there_are_no_kernel_tools(fake_api, tmp_path):
    fake_api.add(Turn([text("No kernel here.")]))
    client = RecordingClient()
    async with acp_agent(client, fake_api, tmp_path) as (conn, _):
        sid = await new_session(conn, tmp_path)
        await conn.prompt(session_id=sid, prompt=_prompt("hi"))
    names = {tool["name"] for tool in fake_api.requests[0]["tools"]}
    assert "Bash" in names and not names & {"Python", "Variables", "Inspect"}


def test_a_missing_connection_file_is_one_line_and_status_2(tmp_path):
    done = subprocess.run([sys.executable, "-m", "fuxi_notebook", "acp", "--kernel",
                           str(tmp_path / "nope.json")], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 2 and "no kernel connection file" in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


async def _while_a_call_sleeps(fake_api, tmp_path, manager, then) -> tuple[Any, Any]:
    """Prompt a Python call that sleeps in the kernel; once it runs, `then(conn, sid)`;
    (the client, the prompt's response)."""
    fake_api.add(Turn([tool_use("Python", {"code": "import time\nopen('started', 'w').close()"
                                                   "\ntime.sleep(120)"})]),
                 Turn([text("It stopped.")]))
    client = RecordingClient()
    async with acp_agent(client, fake_api, tmp_path, "--kernel",
                         manager.connection_file) as (conn, _):
        sid = await new_session(conn, tmp_path)
        running = asyncio.create_task(conn.prompt(session_id=sid, prompt=_prompt("wait")))
        await appears(tmp_path / "started")
        await then(conn, sid)
        return client, await asyncio.wait_for(running, 60)


async def test_cancel_interrupts_the_kernel_and_the_kernel_stays_usable(
        fake_api, tmp_path, kernel):
    manager, user = kernel

    async def cancel(conn, sid):
        await conn.cancel(session_id=sid)

    client, done = await _while_a_call_sleeps(fake_api, tmp_path, manager, cancel)
    assert done.stop_reason == "cancelled"
    assert [u.status for u in client.of("tool_call_update")] == ["failed"]
    assert _run(user, "print('free again')") == "free again\n"  # not still sleeping


async def test_a_kernel_that_dies_during_a_call_fails_the_call(fake_api, tmp_path, kernel):
    manager, _ = kernel

    async def kill(conn, sid):
        os.kill(manager.provisioner.process.pid, signal.SIGKILL)

    client, done = await _while_a_call_sleeps(fake_api, tmp_path, manager, kill)
    assert done.stop_reason == "end_turn"
    [end] = client.of("tool_call_update")
    assert end.status == "failed" and "the kernel stopped answering" in end.raw_output


@pytest.fixture
def lab_with_notebook(tmp_path):
    """JupyterLab on this machine with `sales.ipynb` open on a kernel (a REST session)."""
    import json
    import urllib.request

    import nbformat

    from ..browser.lab import JupyterLab

    root, state = tmp_path / "work", tmp_path / "state"
    root.mkdir()
    state.mkdir()
    nbformat.write(nbformat.v4.new_notebook(), root / "sales.ipynb")
    lab = JupyterLab(root, state, {}).start()
    try:
        body = json.dumps({"path": "sales.ipynb", "type": "notebook",
                           "kernel": {"name": "python3"}}).encode()
        request = urllib.request.Request(lab.url + "/api/sessions", data=body, method="POST",
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as answer:
            kernel_id = json.loads(answer.read())["kernel"]["id"]
        yield lab, root, state / "runtime" / f"kernel-{kernel_id}.json"
    finally:
        lab.stop()


async def test_the_kernel_of_a_notebook_open_on_a_running_server(fake_api, lab_with_notebook):
    from jupyter_client import BlockingKernelClient

    _, root, connection_file = lab_with_notebook
    fake_api.add(Turn([tool_use("Python", {"code": "shared = 41 + 1"})]),
                 Turn([text("Set it.")]))
    client = RecordingClient()
    runtime = {"JUPYTER_RUNTIME_DIR": str(connection_file.parent)}
    async with acp_agent(client, fake_api, root, "--notebook", str(root / "sales.ipynb"),
                         **runtime) as (conn, _):
        sid = await new_session(conn, root)
        await conn.prompt(session_id=sid, prompt=_prompt("set shared"))
    assert [u.status for u in client.of("tool_call_update")] == ["completed"]
    user = BlockingKernelClient(connection_file=str(connection_file))
    user.load_connection_file()
    user.start_channels()
    try:
        user.wait_for_ready(timeout=30)
        assert _run(user, "print(shared)") == "42\n"  # in the notebook's own kernel
    finally:
        user.stop_channels()
    done = subprocess.run([sys.executable, "-m", "fuxi_notebook", "acp", "--notebook",
                           str(root / "other.ipynb")], env=agent_env(fake_api, **runtime),
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2 and "no running Jupyter server has a kernel for" in done.stderr

