"""A minimal notebook frontend over jupyter_client: runs cells as JupyterLab does.

Each `execute_request` carries the cell's id (as JupyterLab sends it), outputs are kept the
way a saved notebook keeps them (display updates and `clear_output` applied, streams
merged), and approval cards can be answered by clicking their buttons as ipywidgets'
ButtonView does. Used to record the example notebooks and by tests that need a notebook
run end to end without a browser.
"""

from __future__ import annotations

import os
import queue
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Card", "NotebookFrontend"]


@dataclass
class Card:
    """A widget display the kernel showed: its buttons (label -> comm id), text boxes."""

    buttons: dict[str, str] = field(default_factory=dict)
    texts: list[str] = field(default_factory=list)
    #: what the cell displayed since the previous card (a card's own text among it)
    shown: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "\n".join(self.shown)


#: Given a card, the label of the button to click and text for its first text box.
Decide = Callable[[Card], tuple[str, str | None] | None]


class NotebookFrontend:
    """One kernel and the notebook cells it runs (see the module docstring)."""

    def __init__(self, *, cwd: str, env: dict[str, str] | None = None,
                 cell_ids: bool = True) -> None:
        """Args:
            cell_ids: send each cell's id as JupyterLab does (False: as nbclient and nbval,
                which send none).
        """
        from jupyter_client import KernelManager
        from jupyter_client.kernelspec import KernelSpec

        self.km = KernelManager()
        self.km._kernel_spec = KernelSpec(
            argv=[sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            display_name="fuxi-frontend", language="python", interrupt_mode="signal")
        self.cwd, self.env = cwd, {**os.environ, **(env or {})}
        self.cell_ids = cell_ids
        self.kc: Any = None
        self.count = 0
        self.last_reply: dict[str, Any] = {}  # content of the last execute_reply

    def start(self) -> NotebookFrontend:
        self.km.start_kernel(env=self.env, cwd=self.cwd)
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=60)
        return self

    def restart(self) -> None:
        """Restart the kernel as "Restart kernel" does (a new process on the same
        connection: the namespace and the conversation in memory are gone)."""
        self.km.restart_kernel(now=True)
        self.kc.wait_for_ready(timeout=60)

    def close(self) -> None:
        if self.kc is not None:
            self.kc.stop_channels()
            self.kc = None
        if self.km.has_kernel:
            self.km.shutdown_kernel(now=True)

    def __enter__(self) -> NotebookFrontend:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def execute(self, cell: Any, *, decide: Decide | None = None, timeout: float = 120,
                counted: bool = True) -> str:
        """Run a code cell (an nbformat cell), setting its outputs; returns the status."""
        content = {"code": cell.source, "silent": False, "store_history": True,
                   "user_expressions": {}, "allow_stdin": False, "stop_on_error": True}
        message = self.kc.session.msg("execute_request", content)
        if self.cell_ids:
            message["metadata"] = {"cellId": cell.get("id"), "deletedCells": [],
                                   "recordTiming": False}
        self.kc.shell_channel.send(message)
        outputs = _Outputs()
        self._pump(message["header"]["msg_id"], outputs, decide, timeout)
        status = self._reply(message["header"]["msg_id"], timeout)
        if counted:
            self.count += 1
            cell.execution_count = self.count
        cell.outputs = outputs.cells()
        return status

    def _pump(self, msg_id: str, outputs: _Outputs, decide: Decide | None,
              timeout: float) -> None:
        deadline = time.monotonic() + timeout
        card = Card()
        idle = False
        while not idle:
            if time.monotonic() > deadline:
                raise TimeoutError(f"the cell did not finish within {timeout} s")
            try:
                message = self.kc.get_iopub_msg(timeout=0.2)
            except queue.Empty:
                continue
            kind, body = message["header"]["msg_type"], message["content"]
            if kind == "comm_open":
                _note_widget(card, body)
            if message["parent_header"].get("msg_id") != msg_id:
                continue
            if kind == "status" and body["execution_state"] == "idle":
                idle = True
            elif kind == "display_data" and "application/vnd.jupyter.widget-view+json" in (
                    body.get("data") or {}):
                outputs.add(message)
                if decide is not None and card.buttons:
                    self._answer(card, decide)
                card = Card()
            else:
                if kind == "display_data":
                    data = body.get("data") or {}
                    card.shown.append(str(data.get("text/markdown") or data.get("text/plain")
                                          or ""))
                outputs.add(message)

    def _reply(self, msg_id: str, timeout: float) -> str:
        """The execute_reply's status (a UsageError shows no error output, only this)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                reply = self.kc.get_shell_msg(timeout=0.2)
            except queue.Empty:
                continue
            if reply["parent_header"].get("msg_id") == msg_id:
                self.last_reply = reply["content"]
                return str(reply["content"]["status"])
        raise TimeoutError("no execute_reply")

    def _answer(self, card: Card, decide: Decide) -> None:
        choice = decide(card)
        if choice is None:
            return
        label, text = choice
        if text is not None and card.texts:
            self._comm(card.texts[0], {"method": "update", "state": {"value": text},
                                       "buffer_paths": []})
        self._comm(card.buttons[label], {"method": "custom", "content": {"event": "click"}})

    def _comm(self, comm_id: str, data: dict[str, Any]) -> None:
        self.kc.shell_channel.send(self.kc.session.msg("comm_msg", {"comm_id": comm_id,
                                                                     "data": data}))


def _note_widget(card: Card, body: dict[str, Any]) -> None:
    state = (body.get("data") or {}).get("state") or {}
    if state.get("_model_name") == "ButtonModel":
        card.buttons[str(state.get("description"))] = body["comm_id"]
    elif state.get("_model_name") == "TextModel":
        card.texts.append(body["comm_id"])


class _Outputs:
    """A cell's outputs as a saved notebook keeps them."""

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []
        self.ids: dict[str, list[int]] = {}
        self.clear_pending = False

    def add(self, message: dict[str, Any]) -> None:
        kind, body = message["header"]["msg_type"], message["content"]
        if kind == "clear_output":
            if body.get("wait"):
                self.clear_pending = True
            else:
                self._clear()
            return
        if kind == "update_display_data":
            for index in self.ids.get((body.get("transient") or {}).get("display_id", ""), []):
                self.items[index].update(data=body["data"], metadata=body.get("metadata", {}))
            return
        if kind not in ("stream", "display_data", "execute_result", "error"):
            return
        if self.clear_pending:
            self._clear()
        if kind == "stream" and self.items and self.items[-1].get("name") == body["name"] and (
                self.items[-1]["output_type"] == "stream"):
            self.items[-1]["text"] += body["text"]
            return
        output = {"output_type": kind, **{k: v for k, v in body.items() if k != "transient"}}
        display_id = (body.get("transient") or {}).get("display_id")
        if display_id:
            self.ids.setdefault(display_id, []).append(len(self.items))
        self.items.append(output)

    def _clear(self) -> None:
        self.items, self.ids, self.clear_pending = [], {}, False

    def cells(self) -> list[Any]:
        import nbformat

        return [nbformat.from_dict(item) for item in self.items]
