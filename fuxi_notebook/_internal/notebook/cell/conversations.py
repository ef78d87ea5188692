"""Which conversation a `%%fuxi` cell continues, and the records this kernel made.

- `--new`: a fresh conversation.
- `--resume ID` (a cell id or a session id): the conversation that ends with that cell
  (for a session, its last recorded cell), rebuilt from the records.
- otherwise the conversation this kernel is having; in a kernel that has run no `%%fuxi`
  cell yet (after a restart, or a colleague opening the notebook), the one saved in the
  notebook: the chain of `parent` links from the nearest recorded cell above this one (in
  the live notebook when the frontend extension answers; a cell the saved file does not
  have yet continues the file's last conversation). It must have run in the same working
  folder (the same `--cwd` as written), as in a running kernel; the cell says which cell
  it continues, or why not.
- `--fork` takes any of these into a new session id; the original branch stays as it is.

Conversations rebuilt from records never get back "Always allow" rules: a record is data
anyone could have edited, and only a click in this kernel grants a rule for live cells.
Session ids are derived from the cell that starts (or forks) a conversation, so records
are the same on every run of a notebook.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ....errors import ConfigurationError
from ...agent.session import Conversation
from ...sessions.history import follow_parents, join_records
from ...sessions.record import SessionRecord
from .identity import CellIdentity, NotebookIdentity

__all__ = ["ConversationPlan", "Conversations", "session_id_for"]

_NAMESPACE = uuid.UUID("5b3c1a9e-6f0d-4f57-9a51-7f1e5f0a2c11")


def session_id_for(kind: str, cell_id: str) -> str:
    """A session id derived from the cell that starts ("new") or forks ("fork") it."""
    return str(uuid.uuid5(_NAMESPACE, f"{kind}:{cell_id}"))


@dataclass
class ConversationPlan:
    """What a cell continues: the conversation, its last cell, and how it was found."""

    conversation: Conversation
    parent: str | None
    source: str  # new | kernel | notebook | resume
    note: str | None = None
    ancestors: list[SessionRecord] = field(default_factory=list)


@dataclass
class _Remembered:
    record: SessionRecord
    outputs: list[Mapping[str, Any]]
    volatile: Mapping[str, Any] = field(default_factory=dict)


def _other_folder(record: SessionRecord, cwd_option: str | None) -> str | None:
    """How the folder `record` ran in differs from this cell's ("ran with --cwd repo"), or
    None if it is the same: the same `--cwd` as written (a notebook copied or opened on
    another machine has other absolute folders; relative to it, they are the same)."""
    written = record.options.get("cwd")
    if (written or None) != (cwd_option or None):
        return f"ran with --cwd {written}" if written else "ran without --cwd"
    return None


class Conversations:
    """The kernel's conversation and its records (see the module docstring)."""

    def __init__(self, identity: NotebookIdentity) -> None:
        self.identity = identity
        self.current: Conversation | None = None
        self.last_cell: str | None = None
        self.key: tuple[Any, ...] | None = None
        self.from_notebook = True  # until a cell runs or `%fuxi reset`
        self.records: dict[str, _Remembered] = {}
        self.order: list[str] = []

    def reset(self) -> None:
        """The next cell starts a new conversation (not the one saved in the notebook)."""
        self.current, self.last_cell, self.key = None, None, None
        self.from_notebook = False

    def plan(self, *, cell: CellIdentity, new: bool, resume: str | None, fork: bool,
             key: tuple[Any, ...], model: str | None = None,
             cwd_option: str | None = None) -> ConversationPlan:
        """The conversation `cell` continues. Raises ConfigurationError (with why).

        A conversation does not depend on the model: another `model` continues it (the
        cell says so). Only `new`, or another `key` (the working directory: the files the
        conversation talked about are elsewhere), starts a fresh one, announced too.
        """
        if resume:
            plan = self._resumed(resume)
        elif new or (self.current is not None and key != self.key):
            plan = ConversationPlan(Conversation(id=session_id_for("new", cell.cell_id)),
                                    None, "new")
            if not new:
                plan.note = (f"a new conversation: the working directory changed "
                             f"({self.key[0] if self.key else '?'} → {key[0]})")
        elif self.current is not None:
            plan = ConversationPlan(self.current, self.last_cell, "kernel",
                                    ancestors=self._chain_or_empty(self.last_cell))
            was = self._model_of(self.last_cell)
            if model and was and model != was:
                plan.note = (f"continuing this conversation with {model} (it was {was}); "
                             "--new starts a fresh one")
        elif self.from_notebook:
            plan = self._from_notebook(cell, key, cwd_option)
        else:
            plan = ConversationPlan(Conversation(id=session_id_for("new", cell.cell_id)),
                                    None, "new")
        if fork:
            plan.conversation = plan.conversation.forked(session_id_for("fork", cell.cell_id))
            plan.note = (plan.note + "; " if plan.note else "") + (
                f"forked into a new session {plan.conversation.id[:8]}; the original "
                "branch is unchanged")
        return plan

    def _model_of(self, cell_id: str | None) -> str | None:
        remembered = self.records.get(cell_id or "")
        return remembered.record.model if remembered is not None else None

    def _resumed(self, wanted: str) -> ConversationPlan:
        last = self._find(wanted)
        chain = self.chain(last)
        conversation = self._rebuilt(chain)
        return ConversationPlan(conversation, last, "resume", ancestors=chain,
                                note=f"resuming after cell {last} ({len(chain)} recorded "
                                     f"cell(s), session {conversation.id[:8]})")

    def _from_notebook(self, cell: CellIdentity, key: tuple[Any, ...],
                       cwd_option: str | None) -> ConversationPlan:
        notebook = self.identity.saved(needed_for="continuing the saved conversation")
        new = ConversationPlan(Conversation(id=session_id_for("new", cell.cell_id)), None,
                               "new")
        if notebook is None:
            return new
        if cell.position is not None:
            above, where = notebook.recorded_above(cell.position), "above this one"
        else:  # not in the saved file yet (a new cell): the file's last conversation
            recorded = [c for c in notebook.cells if c.record is not None]
            above, where = (recorded[-1] if recorded else None), "in the saved notebook"
        if above is None or above.key is None or above.record is None:
            if any(c.record is not None for c in notebook.cells):
                new.note = f"a new conversation: no recorded cell {where}"
            return new
        elsewhere = _other_folder(above.record, cwd_option)
        if elsewhere:
            new.note = (f"a new conversation: cell {above.key} {where} {elsewhere}, this "
                        f"cell runs in {key[0]}; --resume {above.key} continues it there")
            return new
        chain = self.chain(above.key)
        return ConversationPlan(self._rebuilt(chain), above.key, "notebook", ancestors=chain,
                                note=f"continuing the conversation saved in the notebook "
                                     f"({len(chain)} recorded cell(s) up to cell {above.key})")

    def _find(self, wanted: str) -> str:
        """The cell id `wanted` names: a cell id, or a session id (or its prefix)."""
        notebook = self.identity.saved(needed_for=f"--resume {wanted}")
        if wanted in self.records or (notebook is not None and notebook.cell(wanted)):
            return wanted
        cells = [(k, r.record.session_id) for k, r in
                 ((k, self.records[k]) for k in self.order)]
        if notebook is not None:
            cells = [(c.key, c.record.session_id) for c in notebook.cells
                     if c.record is not None and c.key] + cells
        if len(wanted) >= 4:  # a prefix: of a cell id (`%fuxi sessions`), else of a session id
            by_cell = {key for key, _ in cells if key.startswith(wanted)}
            if len(by_cell) == 1:
                return by_cell.pop()
            if len(by_cell) > 1:
                raise ConfigurationError(f"--resume {wanted}: the prefix matches "
                                         f"{len(by_cell)} cells; give more of the id")
            matches = [key for key, sid in cells if sid.startswith(wanted)]
            if matches:
                return matches[-1]
        where = f" or in {notebook.path.name}" if notebook is not None else ""
        raise ConfigurationError(f"--resume {wanted}: no recorded cell or session with that "
                                 f"id in this kernel{where} (see %fuxi sessions)")

    def chain(self, last: str | None) -> list[SessionRecord]:
        """The records of the conversation that ends with cell `last`, oldest first:
        this kernel's records first, then the saved notebook's."""
        if last is None:
            return []

        def find(key: str) -> SessionRecord | str:
            remembered = self.records.get(key)
            if remembered is not None:
                return remembered.record
            notebook = self.identity.saved(needed_for="rebuilding the conversation from "
                                           "the notebook")  # cached while the file is unchanged
            return notebook.record_or_why(key) if notebook else "has no readable session record"

        try:
            return follow_parents(last, find)
        except ConfigurationError as error:
            raise ConfigurationError(f"{error}; start a new one with --new, or --resume a "
                                     "cell after it") from None

    def _chain_or_empty(self, last: str | None) -> list[SessionRecord]:
        try:
            return self.chain(last)
        except ConfigurationError:
            return []

    def outputs_of(self, records: Sequence[SessionRecord]) -> dict[str, list[Any]]:
        """cell id -> saved outputs (figures that records refer to)."""
        found: dict[str, list[Any]] = {}
        notebook = self.identity.saved()
        for record in records:
            remembered = self.records.get(record.cell_id)
            if remembered is not None:
                found[record.cell_id] = list(remembered.outputs)
            elif notebook is not None and (cell := notebook.cell(record.cell_id)):
                found[record.cell_id] = list(cell.outputs)
        return found

    def _rebuilt(self, chain: list[SessionRecord]) -> Conversation:
        history, pending = join_records(chain, self.outputs_of(chain))
        return Conversation(id=chain[-1].session_id, history=history, pending_results=pending)

    def remember(self, record: SessionRecord, outputs: list[Mapping[str, Any]],
                 conversation: Conversation, key: tuple[Any, ...],
                 volatile: Mapping[str, Any] | None = None) -> None:
        """A cell finished: its record joins the kernel's, its conversation goes on."""
        self.records[record.cell_id] = _Remembered(record, outputs, dict(volatile or {}))
        if record.cell_id in self.order:
            self.order.remove(record.cell_id)
        self.order.append(record.cell_id)
        self.current, self.last_cell, self.key = conversation, record.cell_id, key
        self.from_notebook = False

    def rewind_before(self, cell_id: str) -> str:
        """The next cell goes on from before cell `cell_id` (its parent, or anew); what
        the cell says about it."""
        remembered = self.records.get(cell_id)
        if remembered is None:
            return "the conversation was not rewound: this kernel has no record of the cell"
        parent = remembered.record.parent
        chain = self._chain_or_empty(parent)
        if chain:
            self.current, self.last_cell = self._rebuilt(chain), parent
            self.from_notebook = False
            return f"the next %%fuxi cell goes on from cell {parent}, before cell {cell_id}"
        self.reset()
        return "the next %%fuxi cell starts a new conversation (the cell began it)"

    def recorded(self, cell: CellIdentity) -> tuple[SessionRecord | None, str | None]:
        """The record this cell would replay (this kernel's newest, else the saved one),
        or why the saved one cannot be read."""
        remembered = self.records.get(cell.cell_id)
        if remembered is not None:
            return remembered.record, None
        if cell.saved is not None:
            return cell.saved.record, cell.saved.problem
        return None, None

    def volatile_of(self, cell_id: str, cell: CellIdentity) -> dict[str, Any]:
        """The volatile metadata (cost, usage, timings) of the record `recorded` gives:
        this kernel's newest, else the saved one (a replay shows the recorded numbers)."""
        remembered = self.records.get(cell_id)
        if remembered is not None:
            return dict(remembered.volatile)
        return dict(cell.saved.volatile) if cell.saved is not None else {}

    def volatile(self) -> dict[str, Mapping[str, Any]]:
        """cell id -> the volatile metadata (cost, usage) of its record's output."""
        found: dict[str, Mapping[str, Any]] = {}
        notebook = self.identity.saved()
        for cell in notebook.cells if notebook is not None else []:
            if cell.key:
                found[cell.key] = cell.volatile
        for key, remembered in self.records.items():
            if remembered.volatile:
                found[key] = remembered.volatile
        return found

    def sessions(self) -> list[tuple[str, list[SessionRecord]]]:
        """(session id, its records in order) for the saved notebook and this kernel."""
        notebook = self.identity.saved(needed_for="listing the saved sessions")
        seen: dict[str, SessionRecord] = {}
        if notebook is not None:
            for cell in notebook.cells:
                if cell.record is not None:
                    seen[cell.record.cell_id] = cell.record
        for key in self.order:
            seen[key] = self.records[key].record
        by_session: dict[str, list[SessionRecord]] = {}
        for record in seen.values():
            by_session.setdefault(record.session_id, []).append(record)
        return list(by_session.items())
