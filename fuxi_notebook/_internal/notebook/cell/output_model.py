"""A cell's outputs as a notebook keeps them, built from the messages the kernel sends for
the cell's request: what a frontend shows in the cell, as nbformat output dicts.

A frontend routes a cell's outputs to it by the request it sent: a tab reloaded while a
cell runs is a new frontend, which never sent that request, so what the cell shows from
then on reaches no cell (live_notebook.py). The kernel keeps this model of the running
`%%fuxi` cell's outputs (fed by the one place every message leaves, output_redaction.py,
after redaction), so that it can hand the cell's outputs to such a frontend at the end.
The rules are the frontends' own: consecutive stream text of one name joins, a display
update changes every output showing that display id, `clear_output(wait=True)` clears
when the next output comes. The testing frontend (testing/frontend.py) keeps a cell's
outputs with the same model.
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["OutputModel"]

_OUTPUTS = frozenset({"stream", "display_data", "execute_result", "error"})


class OutputModel:
    """One cell's outputs (see the module docstring)."""

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []
        #: display id -> the indexes of the outputs showing it
        self.ids: dict[str, list[int]] = {}
        self.clear_pending = False

    def add(self, kind: str, body: dict[str, Any]) -> None:
        """One message of the cell (`kind` its type, `body` its content)."""
        if kind == "clear_output":
            if body.get("wait"):
                self.clear_pending = True
            else:
                self._clear()
            return
        display_id = (body.get("transient") or {}).get("display_id")
        if kind == "update_display_data":
            for index in self.ids.get(str(display_id), []):
                self.items[index].update(data=copy.deepcopy(body.get("data") or {}),
                                         metadata=copy.deepcopy(body.get("metadata") or {}))
            return
        if kind not in _OUTPUTS:
            return
        if self.clear_pending:
            self._clear()
        last = self.items[-1] if self.items else None
        if kind == "stream" and last is not None and last["output_type"] == "stream" and (
                last.get("name") == body.get("name")):
            last["text"] += str(body.get("text") or "")
            return
        output = {"output_type": kind, **{k: copy.deepcopy(v) for k, v in body.items()
                                          if k != "transient"}}
        if display_id:
            self.ids.setdefault(str(display_id), []).append(len(self.items))
        self.items.append(output)

    def _clear(self) -> None:
        self.items, self.ids, self.clear_pending = [], {}, False

    def outputs(self) -> list[dict[str, Any]]:
        """The outputs as a saved notebook keeps them (copies)."""
        return copy.deepcopy(self.items)
