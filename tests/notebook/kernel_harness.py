"""A real ipykernel driven through jupyter_client, acting as a minimal frontend.

It collects iopub and shell replies in background threads, can send `execute_request`s
with or without a JupyterLab-style `cellId`, click widget buttons the way ipywidgets'
ButtonView does (`comm_msg` with `{"method": "custom", "content": {"event": "click"}}`),
and interrupt the kernel with SIGINT, like "Interrupt kernel".
"""

from __future__ import annotations

import os
import queue
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any

from jupyter_client import KernelManager
from jupyter_client.kernelspec import KernelSpec


@dataclass
class CellResult:
    """What one execute_request produced."""

    reply: dict[str, Any]
    messages: list[dict[str, Any]]

    @property
    def status(self) -> str:
        return self.reply["content"]["status"]

    @property
    def stdout(self) -> str:
        return "".join(m["content"]["text"] for m in self.messages
                       if m["msg_type"] == "stream" and m["content"]["name"] == "stdout")

    @property
    def stderr(self) -> str:
        return "".join(m["content"]["text"] for m in self.messages
                       if m["msg_type"] == "stream" and m["content"]["name"] == "stderr")

    @property
    def displays(self) -> list[dict[str, Any]]:
        return [m["content"] for m in self.messages
                if m["msg_type"] in ("display_data", "execute_result")]

    @property
    def updates(self) -> list[dict[str, Any]]:
        return [m["content"] for m in self.messages if m["msg_type"] == "update_display_data"]

    def final(self, mime: str) -> dict[str, Any]:
        """The last display (or display update) carrying `mime`."""
        for content in reversed(self.displays + self.updates):
            if mime in content["data"]:
                return content
        raise AssertionError(f"no output with {mime}: {self.messages}")


class KernelHarness:
    """One kernel process and the channels to talk to it."""

    def __init__(self, *, env: dict[str, str], cwd: str) -> None:
        self.km = KernelManager()
        self.km._kernel_spec = KernelSpec(
            argv=[sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            display_name="fuxi-test", language="python", interrupt_mode="signal")
        # as a real kernel: ipykernel forwards fd 1/2 output (os.system, subprocesses) to
        # the cell only when it is not itself under pytest
        kernel_env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
        self.km.start_kernel(env={**kernel_env, **env}, cwd=cwd)
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=60)
        self._iopub: list[dict[str, Any]] = []
        self._replies: dict[str, dict[str, Any]] = {}
        self._lock = threading.Condition()
        self._running = True
        self._threads = [threading.Thread(target=self._pump, args=(getter,), daemon=True)
                         for getter in (self.kc.get_iopub_msg, self.kc.get_shell_msg)]
        for thread in self._threads:
            thread.start()

    def _pump(self, getter: Any) -> None:
        while self._running:
            try:
                message = getter(timeout=0.1)
            except queue.Empty:
                continue
            except Exception:  # channel closed at shutdown
                return
            if (message["header"]["msg_type"] == "comm_open"
                    and message["content"].get("target_name") == "fuxi.notebook"):
                # as JupyterLab without fuxi's extension: a comm of an unknown target is closed
                self.kc.shell_channel.send(self.kc.session.msg(
                    "comm_close", {"comm_id": message["content"]["comm_id"], "data": {}}))
            with self._lock:
                if message["header"]["msg_type"].endswith("_reply"):
                    self._replies[message["parent_header"].get("msg_id")] = message
                else:
                    self._iopub.append(message)
                self._lock.notify_all()

    def send(self, code: str, *, cell_id: str | None = None) -> str:
        """Send an execute_request; returns its msg_id."""
        content = {"code": code, "silent": False, "store_history": True,
                   "user_expressions": {}, "allow_stdin": False, "stop_on_error": True}
        message = self.kc.session.msg("execute_request", content)
        if cell_id is not None:
            message["metadata"] = {"cellId": cell_id, "deletedCells": [], "recordTiming": False}
        self.kc.shell_channel.send(message)
        return message["header"]["msg_id"]

    def wait(self, msg_id: str, timeout: float = 60) -> CellResult:
        """Wait for the reply and for the kernel to go idle for that request."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while not (msg_id in self._replies and self._idle(msg_id)):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no reply to {msg_id} within {timeout} s")
                self._lock.wait(left)
            return CellResult(self._replies[msg_id], self.messages(msg_id))

    def _idle(self, msg_id: str) -> bool:
        return any(m["msg_type"] == "status" and m["content"]["execution_state"] == "idle"
                   and m["parent_header"].get("msg_id") == msg_id for m in self._iopub)

    def messages(self, msg_id: str) -> list[dict[str, Any]]:
        with self._lock:
            return [m for m in self._iopub if m["parent_header"].get("msg_id") == msg_id]

    def run(self, code: str, *, cell_id: str | None = None, timeout: float = 60) -> CellResult:
        return self.wait(self.send(code, cell_id=cell_id), timeout)

    def wait_for(self, predicate: Any, timeout: float = 30) -> dict[str, Any]:
        """The first iopub message matching `predicate` (waiting for it)."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while True:
                for message in self._iopub:
                    if predicate(message):
                        return message
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError("expected iopub message did not arrive")
                self._lock.wait(left)

    def widget(self, model: str, key: str, value: str, after: int = 0) -> str:
        """The comm id of the widget `model` whose state has `key == value` (waiting)."""
        message = self.wait_for(
            lambda m: m["msg_type"] == "comm_open"
            and m["content"]["data"].get("state", {}).get("_model_name") == model
            and m["content"]["data"]["state"].get(key) == value
            and self._iopub.index(m) >= after)
        return message["content"]["comm_id"]

    def button(self, description: str, after: int = 0) -> str:
        """The comm id of the widget button with this label (waiting for it)."""
        return self.widget("ButtonModel", "description", description, after)

    def iopub_count(self) -> int:
        with self._lock:
            return len(self._iopub)

    def messages_since(self, mark: int) -> list[dict[str, Any]]:
        """Every iopub message after the first `mark` (whatever request it belongs to)."""
        with self._lock:
            return list(self._iopub[mark:])

    def text_field(self, placeholder: str, after: int = 0) -> str:
        """The comm id of the widget text field with this placeholder (waiting for it)."""
        return self.widget("TextModel", "placeholder", placeholder, after)

    def type_into(self, comm_id: str, value: str) -> None:
        """What ipywidgets' TextView sends as the user types (a state update)."""
        data = {"method": "update", "state": {"value": value}, "buffer_paths": []}
        self.kc.shell_channel.send(self.kc.session.msg("comm_msg", {"comm_id": comm_id,
                                                                     "data": data}))

    def click(self, comm_id: str) -> None:
        """What ipywidgets' ButtonView sends when clicked."""
        data = {"method": "custom", "content": {"event": "click"}}
        self.kc.shell_channel.send(self.kc.session.msg("comm_msg", {"comm_id": comm_id,
                                                                     "data": data}))

    def interrupt(self) -> None:
        self.km.interrupt_kernel()

    def close(self) -> None:
        self._running = False
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)


def wait_until(condition: Any, timeout: float = 20.0) -> None:
    """Poll for a condition on the outside world (a request arrived, a file appeared)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.05)


def record_of(result: CellResult) -> dict[str, Any]:
    """The session record a `%%fuxi` cell left in its final display."""
    from fuxi_notebook._internal.sessions.record import RECORD_MIME

    return result.final(RECORD_MIME)["data"][RECORD_MIME]


def loaded_kernel(api: Any, work: Any, **env: str) -> KernelHarness:
    """A kernel in `work` with `%load_ext fuxi_notebook` done, talking to the fake `api`
    (a key set, the real API blocked), this checkout's package loaded; `env` adds to or
    overrides its environment. `harness.work` is its working folder."""
    from pathlib import Path

    harness = KernelHarness(cwd=str(work), env={
        "ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "sk-ant-test-key-for-the-kernel-0001",
        "FUXI_BLOCK_REAL_API": "1", "FUXI_MODEL": "claude-sonnet-5-5", "MPLBACKEND": "Agg",
        "FUXI_STALL_TIMEOUT": "30", **env})
    loaded = harness.run("%load_ext fuxi_notebook")
    assert loaded.status == "ok", loaded.messages
    where = harness.run("import fuxi_notebook; print(fuxi_notebook.__file__)").stdout.strip()
    assert where == str(Path(__file__).resolve().parents[2] / "fuxi_notebook" / "__init__.py")
    harness.work = work  # type: ignore[attr-defined]
    return harness


def loaded_notebook(folder: Any, *sources: str) -> tuple[Any, Any]:
    """(path, notebook): `%load_ext fuxi_notebook` (id "load") then a code cell per
    source (ids c1, c2, ...), saved as folder/nb.ipynb."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("%load_ext fuxi_notebook", id="load")]
    nb.cells += [nbformat.v4.new_code_cell(s, id=f"c{i}") for i, s in enumerate(sources, 1)]
    path = folder / "nb.ipynb"
    nbformat.write(nb, path)
    return path, nb
