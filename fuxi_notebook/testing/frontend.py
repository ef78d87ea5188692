"""A minimal notebook frontend over jupyter_client: runs cells as a real frontend does.

Three flavours, each sending what the real one sends:

- "lab": JupyterLab / Notebook 7. Each `execute_request` carries the nbformat cell id
  (`metadata.cellId`). With `extension=True` (the default) it also does what fuxi's
  frontend extension does: it answers the kernel's `fuxi.notebook` comm with the live
  document (`document`, the cells as they are now, saved or not), makes the cell changes
  the kernel asks for as the extension makes them (`cell_changes.py`, held to the
  extension's own rules by one table of cases, `change_cases.json`) and copies each record
  output into its cell's metadata; without it, it closes that comm as JupyterLab closes a
  comm whose target it does not know.
- "vscode": vscode-jupyter (src/kernels/execution/cellExecution.ts): `metadata` is
  `{"cellId": <the cell document's URI>, **<the cell's nbformat metadata>}`, with
  `stop_on_error: false` and `allow_stdin: true`; before the first cell it runs its
  start-up code, which sets `__vsc_ipynb_file__` (src/kernels/kernel.ts); no
  `JPY_SESSION_NAME` (VS Code starts the kernel itself); unknown comms are closed.
- "nbclient": nbclient, nbval and papermill: no cell id, nothing answers a comm.

Outputs are kept the way a saved notebook keeps them (display updates and `clear_output`
applied, streams merged), and approval cards can be answered by clicking their buttons as
ipywidgets' ButtonView does. Used to record the example notebooks and by tests that need
a notebook run end to end without a browser.
"""

from __future__ import annotations

import json
import os
import queue
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from .._internal.notebook.cell.output_model import OutputModel

__all__ = ["Card", "NotebookFrontend"]


def json_copy(value: Any) -> Any:
    """A plain-JSON copy (nbformat nodes become dicts)."""
    return json.loads(json.dumps(value)) if value is not None else None


@dataclass
class Card:
    """A widget display the kernel showed: its buttons (label -> comm id), text boxes."""

    buttons: dict[str, str] = field(default_factory=dict)
    texts: list[str] = field(default_factory=list)
    #: what the cell displayed since the previous card (a card's own text among it)
    shown: list[str] = field(default_factory=list)
    #: the cell's outputs (as a saved notebook keeps them) while the card waits
    outputs: list[dict[str, Any]] = field(default_factory=list)
    #: the HTML the card's own widgets show (an approval card's detail), joined
    html: str = ""

    @property
    def text(self) -> str:
        return "\n".join(self.shown)


#: Given a card, the label of the button to click and text for its first text box.
Decide = Callable[[Card], tuple[str, str | None] | None]


class NotebookFrontend:
    """One kernel and the notebook cells it runs (see the module docstring)."""

    def __init__(self, *, cwd: str, env: dict[str, str] | None = None,
                 cell_ids: bool = True, flavor: str | None = None,
                 extension: bool = True, path: str | None = None) -> None:
        """Args:
            cell_ids: send each cell's id as JupyterLab does (False: as nbclient and nbval,
                which send none); `flavor` says it in full ("lab", "vscode", "nbclient").
            extension: (lab) behave as fuxi's frontend extension does (it describes
                `document` once that is set: `open`).
            path: the notebook file (VS Code's `__vsc_ipynb_file__`; the live document's
                path for the extension).
        """
        from jupyter_client.kernelspec import KernelSpec
        from jupyter_client.manager import KernelManager

        self.km = KernelManager()
        self.km._kernel_spec = KernelSpec(
            argv=[sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            display_name="fuxi-frontend", language="python", interrupt_mode="signal")
        self.flavor = flavor or ("lab" if cell_ids else "nbclient")
        if self.flavor not in ("lab", "vscode", "nbclient"):
            raise ValueError(f"unknown frontend flavour {self.flavor!r}")
        self.cwd, self.env = cwd, {**os.environ, **(env or {})}
        if self.flavor == "vscode":  # VS Code starts kernels itself, not Jupyter Server
            self.env.pop("JPY_SESSION_NAME", None)
        self.cell_ids = self.flavor != "nbclient"
        self.extension = extension and self.flavor == "lab"
        self.path = path
        #: the live notebook (an nbformat notebook) the extension describes to the kernel
        self.document: Any = None
        #: the Settings Editor's Fuxi settings the extension sends (`set_settings`)
        self.settings: dict[str, Any] = {}
        #: agent cells whose next run is a replay ("Fuxi: replay this cell": `replay`)
        self._replay: set[str] = set()
        self._comms: set[str] = set()  # the kernel's fuxi.notebook comms answered
        self._started_up = False
        self.kc: Any = None
        self.count = 0
        self.last_reply: dict[str, Any] = {}  # content of the last execute_reply
        #: display id -> the executed cell showing it and its outputs: an
        #: update_display_data from any cell updates it there (JupyterLab keeps each
        #: cell's execution future until the cell runs again, for exactly that)
        self._displays: dict[str, tuple[Any, _Outputs]] = {}
        #: how many times the page was reloaded (`reload`)
        self.page = 0

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
        self._comms.clear()
        self._started_up = False

    def reload(self) -> None:
        """Reload the page as F5 does, the kernel running on: a new connection to it that
        knows none of the comms the kernel opened and routes no output of a request it did
        not send (a cell running meanwhile shows nothing more here); the extension, as it
        loads, attaches to the kernel's `fuxi.notebook` comm and says hello again."""
        from .._internal.notebook.extension.live_notebook import COMM_ID

        self.kc.stop_channels()
        self.kc = self.km.client()  # (no kernel_info: a busy kernel answers it at the end)
        self.kc.start_channels()
        self.page += 1
        self._comms.clear()
        self._displays.clear()
        if self.extension and self.document is not None:
            self._comms.add(COMM_ID)
            for _ in range(30):  # a new subscription misses what is sent before it joins
                self._hello(COMM_ID)
                if self._welcomed(COMM_ID, timeout=1.0):
                    return
            raise TimeoutError("the kernel did not take the extension's hello")

    def set_settings(self, settings: dict[str, Any]) -> None:
        """Change the Settings Editor's Fuxi settings: the extension tells the kernel."""
        self.settings = dict(settings)
        for comm_id in self._comms:
            self._comm(comm_id, {"event": "settings", "settings": self.settings})

    def replay(self, cell: Any, **kwargs: Any) -> str:
        """Run agent `cell` as "Fuxi: replay this cell" does (the live document says so,
        once); `execute`'s status."""
        self._replay.add(str(cell.get("id")))
        return self.execute(cell, **kwargs)

    def _welcomed(self, comm_id: str, timeout: float) -> bool:
        """Whether the kernel answered a hello on `comm_id` within `timeout` (on this
        connection's iopub: what it sends from now on is seen here), handling what comes
        meanwhile."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                message = self.kc.get_iopub_msg(timeout=0.1)
            except queue.Empty:
                continue
            self._anywhere(message)
            body = message["content"]
            if message["header"]["msg_type"] == "comm_msg" and body.get(
                    "comm_id") == comm_id and (body.get("data") or {}).get("event") == "welcome":
                return True
        return False

    def open(self, notebook: Any, path: str | None = None) -> NotebookFrontend:
        """The notebook this frontend shows (its cells are what `execute` runs)."""
        self.document = notebook
        self.path = path or self.path
        return self

    def _start_up(self, timeout: float) -> None:
        """VS Code's start-up code, run silently before the first cell."""
        self._started_up = True
        if self.flavor != "vscode" or not self.path:
            return
        code = f"__vsc_ipynb_file__ = {os.path.abspath(self.path)!r}"
        message = self.kc.session.msg("execute_request", {
            "code": code, "silent": True, "store_history": False, "user_expressions": {},
            "allow_stdin": False, "stop_on_error": False})
        self.kc.shell_channel.send(message)
        self._reply(message["header"]["msg_id"], timeout)

    def _request_metadata(self, cell: Any) -> dict[str, Any]:
        if self.flavor == "vscode":
            index = self._index(cell)
            path = os.path.abspath(self.path or "Untitled-1.ipynb")
            uri = f"vscode-notebook-cell:{path}#W{index}sZmlsZQ%3D%3D"
            return {"cellId": uri, **json_copy(cell.get("metadata") or {})}
        return {"cellId": cell.get("id"), "deletedCells": [], "recordTiming": False}

    def _index(self, cell: Any) -> int:
        cells = self.document.cells if self.document is not None else []
        for index, candidate in enumerate(cells):
            if candidate is cell:
                return index
        return len(cells)

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
        if not self._started_up:
            self._start_up(timeout)
        vscode = self.flavor == "vscode"
        content = {"code": cell.source, "silent": False, "store_history": True,
                   "user_expressions": {}, "allow_stdin": vscode, "stop_on_error": not vscode}
        message = self.kc.session.msg("execute_request", content)
        if self.cell_ids:
            message["metadata"] = self._request_metadata(cell)
        self.kc.shell_channel.send(message)
        outputs = _Outputs()
        self._displays = {key: shown for key, shown in self._displays.items()
                          if shown[0] is not cell}  # its earlier outputs are gone
        page = self.page
        self._pump(message["header"]["msg_id"], outputs, decide, timeout, page)
        if self.page != page:  # reloaded while it ran: this page sent no such request
            return "reloaded"  # (its reply went to the page that sent it)
        status = self._reply(message["header"]["msg_id"], timeout)
        if counted:
            self.count += 1
            cell.execution_count = self.count
        self._set_outputs(cell, outputs)
        self._displays.update((key, (cell, outputs)) for key in outputs.ids)
        return status

    def _set_outputs(self, cell: Any, outputs: _Outputs) -> None:
        cell.outputs = outputs.cells()
        if self.extension:  # the extension copies a record output into the metadata
            from .._internal.sessions.cell_record import keep_in_metadata

            keep_in_metadata(cell, from_outputs=True)

    def _update_elsewhere(self, message: dict[str, Any]) -> None:
        """An update_display_data for a display another (finished) cell shows."""
        shown = self._displays.get((message["content"].get("transient") or {})
                                   .get("display_id", ""))
        if shown is not None:
            shown[1].add_message(message)
            self._set_outputs(*shown)

    def _pump(self, msg_id: str, outputs: _Outputs, decide: Decide | None,
              timeout: float, page: int) -> None:
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
            if kind == "comm_open" and body.get("target_name") != "fuxi.notebook":
                _note_widget(card, body)
            else:
                self._anywhere(message)
            if message["parent_header"].get("msg_id") != msg_id:
                continue
            if kind == "status" and body["execution_state"] == "idle":
                idle = True
            elif self.page != page:
                continue  # a reloaded page routes no output of the request to the cell
            elif kind == "display_data" and "application/vnd.jupyter.widget-view+json" in (
                    body.get("data") or {}):
                outputs.add_message(message)
                card.outputs = json_copy(outputs.items)
                if decide is not None and card.buttons:
                    self._answer(card, decide)
                card = Card()
            else:
                if kind == "display_data":
                    data = body.get("data") or {}
                    card.shown.append(str(data.get("text/markdown") or data.get("text/plain")
                                          or ""))
                outputs.add_message(message)

    def _anywhere(self, message: dict[str, Any]) -> None:
        """What a frontend does with a message whichever request it answers: the
        `fuxi.notebook` comm opened and its requests answered, a display updated wherever
        it is shown (JupyterLab routes an update by its display id)."""
        kind, body = message["header"]["msg_type"], message["content"]
        if kind == "comm_open" and body.get("target_name") == "fuxi.notebook":
            self._fuxi_comm(body)
        elif kind == "comm_msg" and body.get("comm_id") in self._comms:
            self._fuxi_request(body)
        elif kind == "update_display_data":
            self._update_elsewhere(message)  # (the running cell's own: its outputs too)

    def wait_until(self, done: Callable[[], bool], timeout: float = 30) -> None:
        """Go on handling what the kernel sends while no cell runs, as a frontend does
        (comm requests answered, display updates applied), until `done()` is true; a
        TimeoutError after `timeout` seconds. For what arrives after a cell ended, e.g.
        `%fuxi undo` naming what the notebook's answers said."""
        deadline = time.monotonic() + timeout
        while not done():
            if time.monotonic() > deadline:
                raise TimeoutError(f"not done within {timeout} s")
            try:
                message = self.kc.get_iopub_msg(timeout=0.2)
            except queue.Empty:
                continue
            self._anywhere(message)

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

    def _fuxi_comm(self, body: dict[str, Any]) -> None:
        """The kernel opened `fuxi.notebook`: the extension says hello; a frontend
        without it closes the comm (nbclient does nothing)."""
        comm_id = body["comm_id"]
        if self.flavor == "nbclient":
            return
        if not self.extension or self.document is None:  # nothing to describe
            self.kc.shell_channel.send(self.kc.session.msg("comm_close", {
                "comm_id": comm_id, "data": {}}))
            return
        self._comms.add(comm_id)
        self._hello(comm_id)

    def _hello(self, comm_id: str) -> str:
        return self._comm(comm_id, {"event": "hello", "version": 1, "app": "JupyterLab",
                                    "app_version": "emulated", "path": self.path or "",
                                    "edits": 1, "settings": self.settings})

    def _fuxi_request(self, body: dict[str, Any]) -> None:
        """The extension's answer to a request: to `notebook` the live document, to any
        other the cell change it asks for (`cell_changes.apply_change`)."""
        from .._internal.sessions.record import RECORD_MIME

        data = body.get("data") or {}
        if not isinstance(data.get("id"), int) or not isinstance(data.get("request"), str):
            return
        if data["request"] == "outputs":  # what the cells an agent cell is about show
            from .cell_changes import summarize_outputs

            asked = data.get("cells")
            wanted: list[Any] = asked if isinstance(asked, list) else []
            found = {cell["id"]: summarize_outputs(cell.get("outputs") or [])
                     for cell in (self.document.cells if self.document is not None else [])
                     if cell.get("id") in wanted[:20] and cell.get("cell_type") == "code"}
            self._comm(body["comm_id"], {"id": data["id"], "outputs": json_copy(found)})
            return
        if data["request"] != "notebook":  # a change (an unknown request: an error)
            from .cell_changes import apply_change

            cells = self.document.cells if self.document is not None else []
            result = apply_change(cells, data)
            if data["request"] == "set_outputs" and result.get("ok"):
                from .._internal.sessions.cell_record import keep_in_metadata

                for cell in cells:  # the extension keeps a record output in the metadata
                    if cell.get("id") == data.get("cell"):
                        keep_in_metadata(cell, from_outputs=True)
            if data["id"] > 0:  # 0: a change nobody waits for
                self._comm(body["comm_id"], {"id": data["id"], "result": result})
            return
        cells = []
        for cell in self.document.cells if self.document is not None else []:
            outputs = cell.get("outputs") or []
            cells.append({"id": cell.get("id"), "cell_type": cell.get("cell_type"),
                          "source": cell.get("source"),
                          "fuxi": json_copy((cell.get("metadata") or {}).get("fuxi")),
                          "has_record_output": any(
                              RECORD_MIME in (o.get("data") or {}) for o in outputs)})
        replay, self._replay = sorted(self._replay), set()  # once
        self._comm(body["comm_id"], {"id": data["id"], "notebook": {
            "path": self.path or "", "dirty": True, "running": [], "cells": cells,
            "replay": replay}})

    def _comm(self, comm_id: str, data: dict[str, Any]) -> str:
        message = self.kc.session.msg("comm_msg", {"comm_id": comm_id, "data": data})
        self.kc.shell_channel.send(message)
        return str(message["header"]["msg_id"])


def _note_widget(card: Card, body: dict[str, Any]) -> None:
    state = (body.get("data") or {}).get("state") or {}
    if state.get("_model_name") == "ButtonModel":
        card.buttons[str(state.get("description"))] = body["comm_id"]
    elif state.get("_model_name") == "TextModel":
        card.texts.append(body["comm_id"])
    elif state.get("_model_name") == "HTMLModel":
        card.html += str(state.get("value") or "")


class _Outputs(OutputModel):
    """A cell's outputs as a saved notebook keeps them: the kernel's own model of them
    (notebook/cell/output_model.py), fed whole messages."""

    def add_message(self, message: dict[str, Any]) -> None:
        self.add(message["header"]["msg_type"], message["content"])

    def cells(self) -> list[Any]:
        import nbformat

        # nbformat's functions carry no annotations: a typed view of this one
        from_dict = cast("Callable[[dict[str, Any]], Any]", nbformat.from_dict)
        return [from_dict(item) for item in self.items]
