"""`%fuxi undo`: what each agent cell changed, and putting it back.

Each live `%%fuxi` cell keeps what it changed, in this kernel's memory:
- files, from the session's file checkpoints (checkpoints/: an edit tool's paths, the
  working folders scanned around Bash and Python);
- kernel names, from the Python tool's watch (kernel/names.py);
- (with the conversation) where the next cell would have gone on from.

Undoing is safe by construction: a file or a name is put back only if it is still as the
cell left it. What changed since (a later cell, or the user) is kept as it is and named,
so undoing never loses work; undo the later cell first to go further back. What could not
be kept (a file over the size caps, an object without a cheap copy that the code may have
changed) is named too.

What a cell changed outlives the kernel: when it ends, its files (their states and the
earlier bytes) and its cell changes are kept in the notebook's undo journal on disk
(checkpoints/journal.py: private, bounded), so that in a new kernel, after a restart,
`%fuxi undo` still finds the cells run before it (`recall`) and restores their files
(through the one restore) and cells (through the notebook's comm); the kernel names they
changed cannot come back, and the undo says so in one line.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from ...checkpoints.history import ABSENT, UNKNOWN, Change
from ...checkpoints.journal import JournalEntry, UndoJournal
from ...checkpoints.restore import FileState
from ...checkpoints.watch import FileCheckpoints
from ..kernel.cells import CellOp
from ..kernel.names import Left, NameChanges, NameState, left_as, same, undo_copy_cap

__all__ = ["CellChanges", "UndoBook", "Undone"]

_UNBOUND = object()


@dataclass
class CellChanges:
    """One agent cell's changes (see the module docstring)."""

    cell_id: str
    label: str
    names: NameChanges = field(default_factory=NameChanges)
    files: FileCheckpoints | None = None
    #: the file checkpoints' mark where the cell started
    mark: str = ""
    #: each changed file's state before the cell, and as the cell left it (None: it
    #: could not be read so, a folder on its path being a link)
    file_states: dict[str, tuple[Change, FileState | None]] = field(default_factory=dict)
    #: each changed name's state before the cell, and the object the cell left (or
    #: _UNBOUND)
    name_states: dict[str, tuple[NameState, Any]] = field(default_factory=dict)
    #: names the code may have changed inside but that could not be copied, with why
    not_kept: dict[str, str] = field(default_factory=dict)
    #: what each changed name's object held when the cell ended (undo checks it still
    #: does before it puts the name back)
    left: dict[str, Left] = field(default_factory=dict)
    #: what the cell tools did to the notebook's cells, in order
    cell_ops: list[CellOp] = field(default_factory=list)
    undone: bool = False
    #: the record the cell's run left, and its output as shown (display id, data,
    #: metadata): undoing writes what was undone into it
    record: Any = None
    shown: tuple[str, dict[str, Any], dict[str, Any]] | None = None
    #: when the cell ended; its entry in the undo journal on disk (None: not kept there),
    #: and what the journal could not keep for after a restart, one line each
    at: float = 0.0
    journaled: JournalEntry | None = None
    journal_notes: list[str] = field(default_factory=list)
    #: read back from the journal (a cell an earlier kernel ran): the names it changed
    #: and how, which a new kernel cannot give back
    earlier_kernel: bool = False
    lost_names: dict[str, str] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not (self.file_states or self.name_states or self.not_kept or self.cell_ops
                    or self.lost_names)

    def cannot_undo(self) -> list[str]:
        """What of the cell's changes `%fuxi undo` could not take back, one line each."""
        lines = [f"file {path}: its earlier content ({before.size:,} bytes) was over the "
                 "size cap (FUXI_UNDO_MAX_FILE_MB, FUXI_UNDO_MAX_KEPT_MB)"
                 for path, (before, _after) in sorted(self.file_states.items())
                 if before.before == UNKNOWN]
        lines += [f"file {path}: a folder on its path is a link or not a folder now"
                  for path, (before, after) in sorted(self.file_states.items())
                  if after is None and before.before != UNKNOWN]
        lines += [f"name {name}: may have changed inside, and {why}"
                  for name, why in sorted(self.not_kept.items())]
        lines += [f"name {name}: whether it changes after this cell cannot be told "
                  f"({left.why}), so undo would keep it as it is then"
                  for name, left in sorted(self.left.items()) if left.why is not None]
        return lines + self.journal_notes

    def lines(self) -> list[str]:
        """What the cell changed, one line per file or name."""
        lines = []
        for path, (before, after) in sorted(self.file_states.items()):
            what = ("created" if before.before == ABSENT else "changed (its mode only)"
                    if after is not None and after.digest == before.before else "changed")
            if before.before == UNKNOWN:
                what += " (over the size cap: cannot be undone)"
            lines.append(f"file {path} {what}")
        for name, (state, after) in sorted(self.name_states.items()):
            what = ("created" if not state.bound else "deleted" if after is _UNBOUND
                    else "changed inside" if after is state.value else "rebound")
            lines.append(f"name {name} {what}")
        for name, why in sorted(self.not_kept.items()):
            lines.append(f"name {name} may have changed inside: cannot be undone ({why})")
        lines += [f"name {name} {what} (cannot come back after a kernel restart)"
                  for name, what in sorted(self.lost_names.items())]
        verbs = {"edit": "edited", "insert": "inserted", "delete": "deleted", "move": "moved"}
        lines += [f"{cell_label(op)} {verbs.get(op.kind, op.kind)}" for op in self.cell_ops]
        return lines


@dataclass
class Undone:
    """What one undo did, and what it left."""

    restored: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    #: the cell changes asked of the notebook whose answers have not come yet (each then
    #: moves to `restored` or `kept`)
    waiting: list[str] = field(default_factory=list)

    def summary(self) -> str:
        parts = [f"{len(self.restored)} restored"] + (
            [f"{len(self.kept)} not undone"] if self.kept else []) + (
            [f"{len(self.waiting)} waiting for the notebook"] if self.waiting else [])
        return ", ".join(parts)


class UndoBook:
    """This kernel's agent cells and their changes, oldest first."""

    def __init__(self, namespace: dict[str, Any]) -> None:
        self.namespace = namespace
        self.entries: list[CellChanges] = []
        #: the file checkpoints' notes said already (each once per kernel)
        self.told: set[str] = set()
        #: this notebook's undo journal on disk (None: not looked up yet)
        self._journal: UndoJournal | None = None

    def journal(self) -> UndoJournal | None:
        """This notebook's undo journal (None: the kernel was not told its notebook)."""
        if self._journal is None:
            from ..kernel.notebook import notebook_path

            path = notebook_path(SimpleNamespace(user_ns=self.namespace))
            self._journal = UndoJournal.of_notebook(path) if path else None
        return self._journal

    def begin(self, cell_id: str, prompt: str) -> CellChanges:
        """A live agent cell starts: its changes are kept from here."""
        label = next((line.strip() for line in prompt.splitlines() if line.strip()), "")
        return CellChanges(cell_id, label[:60])

    def watch_files(self, changes: CellChanges, checkpoints: FileCheckpoints | None) -> None:
        """The session's file checkpoints are the cell's (marked where the cell starts)."""
        changes.files = checkpoints
        if checkpoints is not None:
            changes.mark = f"cell {changes.cell_id} {len(self.entries)} {id(changes)}"
            checkpoints.history.mark(changes.mark)

    def finish(self, changes: CellChanges) -> None:
        """The cell ended (also when interrupted): its changes as they stand now."""
        self._settle_files(changes)
        self._settle_names(changes)
        if changes.empty:
            return
        self.entries = [e for e in self.entries if e.cell_id != changes.cell_id or e.undone]
        self.entries.append(changes)
        changes.at = time.time()
        self._keep_on_disk(changes)

    def _keep_on_disk(self, changes: CellChanges) -> None:
        """The cell's changes into the journal, for after a restart; what could not be
        kept there is said when the cell ends (`cannot_undo`), never an error."""
        from ...checkpoints.journal import JournalRefused
        from ...sessions.redact import redact_text
        from .cellrun import secrets

        journal = self.journal()
        if journal is None:
            return
        history = changes.files.history if changes.files is not None else None
        blobs = {before.before: data for before, _after in changes.file_states.values()
                 if history is not None and before.before not in (ABSENT, UNKNOWN)
                 and (data := history.blob(before.before)) is not None}
        entry = JournalEntry(
            changes.cell_id, redact_text(changes.label, secrets=secrets()),
            [str(root) for root in (changes.files.roots if changes.files else [])],
            dict(changes.file_states), [asdict(op) for op in changes.cell_ops],
            _lost_names(changes), changes.at)
        try:
            changes.journal_notes = journal.write(entry, blobs)
            changes.journaled = entry
        except (JournalRefused, OSError, TypeError, ValueError) as error:
            why = " ".join(str(getattr(error, "strerror", None) or error).split())
            changes.journal_notes = [f"this cell's changes are kept in this kernel only, "
                                     f"not for after a restart ({why[:200]})"]

    def recall(self) -> list[str]:
        """The cells this notebook's journal holds that this kernel does not (run before
        a restart) join the book, in the order they ran; one line for each entry of the
        journal ignored (corrupt, too big, from a newer version, not ours)."""
        journal = self.journal()
        if journal is None:
            return []
        found, notes = journal.read()
        known = {e.journaled.id for e in self.entries if e.journaled is not None}
        for entry in found:
            if entry.id in known:
                continue
            ops = [_cell_op(raw) for raw in entry.cell_ops]
            if any(op is None for op in ops):
                notes.append(f"an undo journal entry was ignored: {journal.folder / entry.id}"
                             ": a cell change in it is not understood")
                continue
            self.entries.append(CellChanges(
                entry.cell_id, entry.label, file_states=dict(entry.files),
                cell_ops=[op for op in ops if op is not None], undone=entry.undone,
                at=entry.at, journaled=entry, earlier_kernel=True,
                lost_names=dict(entry.names)))
        self.entries.sort(key=lambda e: e.at)
        return notes

    def _settle_files(self, changes: CellChanges) -> None:
        checkpoints = changes.files
        if checkpoints is None:
            return
        first: dict[str, Change] = {}
        for change in checkpoints.history.since(changes.mark):
            first.setdefault(change.path, change)
        for path, before in first.items():
            now = checkpoints.state_now(Path(path))
            if now is None or before.before == UNKNOWN or _differs(before, now):
                changes.file_states[path] = (before, now)

    def _settle_names(self, changes: CellChanges) -> None:
        for name, state in changes.names.before.items():
            after = self.namespace.get(name, _UNBOUND)
            if state.bound and after is state.value:
                if state.copied and same(after, state.copy):
                    continue  # named, not changed
                if not state.copied:
                    if state.why:
                        changes.not_kept[name] = state.why
                    continue
            elif not state.bound and after is _UNBOUND:
                continue  # made and deleted within the cell
            changes.name_states[name] = (state, after)
        room = max(0, undo_copy_cap() - changes.names.copied_bytes)
        for name, (_state, after) in sorted(changes.name_states.items()):
            if after is not _UNBOUND:
                changes.left[name], used = left_as(after, room)
                room -= used

    def find(self, cell_id: str | None) -> CellChanges | None:
        """The newest not-undone entry of `cell_id` (None: the newest of all)."""
        for entry in reversed(self.entries):
            if not entry.undone and (cell_id is None or entry.cell_id == cell_id):
                return entry
        return None

    def undo(self, entry: CellChanges, live: Any = None,
             answered: Callable[[Undone], None] | None = None) -> Undone:
        """Put back what `entry` changed, where it is still as the cell left it (`live`:
        the notebook's comm, for the cells the cell tools changed; the notebook answers
        after the line that asked has ended, and `answered(done)` is called with each
        answer)."""
        done = Undone()
        if entry.earlier_kernel and entry.files is None and entry.journaled is not None:
            journal = self.journal()
            if journal is not None:  # the kept copies, from disk
                entry.files = journal.checkpoints(entry.journaled)
        for op in reversed(entry.cell_ops):
            self._undo_cell(op, live, done, answered, entry.cell_id)
        for path, (before, after) in sorted(entry.file_states.items()):
            self._undo_file(entry, Path(path), before, after, done)
        for name, (state, after) in sorted(entry.name_states.items()):
            self._undo_name(name, state, after, entry.left.get(name, Left()), done)
        done.kept.extend(f"name {name}: {why}" for name, why in sorted(entry.not_kept.items()))
        if entry.lost_names:
            names = sorted(entry.lost_names)
            done.kept.append(f"{'names' if len(names) > 1 else 'name'} {', '.join(names)}: "
                             "kernel names cannot come back after a restart")
        entry.undone = True
        self._mark_undone(entry)
        return done

    def _mark_undone(self, entry: CellChanges) -> None:
        """The journal says so too (a later kernel does not offer it again)."""
        from ...common.reading import Unreadable

        journal = self.journal()
        if journal is not None and entry.journaled is not None:
            entry.journaled.undone = True
            # if it fails, this kernel knows; a later one would offer it again, safely
            with contextlib.suppress(OSError, Unreadable):
                journal.mark_undone(entry.journaled)

    def _undo_cell(self, op: CellOp, live: Any, done: Undone,
                   answered: Callable[[Undone], None] | None, agent_cell: str) -> None:
        """Ask the notebook to take a cell change back; the extension makes it only where
        the cell is still as the agent left it (`expect`, `expect_index`), and its answer
        says which (`_inverse`)."""
        request, label = _inverse(op, agent_cell), cell_label(op)

        def then(answer: dict[str, Any]) -> None:
            if label in done.waiting:
                done.waiting.remove(label)
            if answer.get("ok") is True:
                done.restored.append(label)
            else:
                why = str(answer.get("error") or "no reason given")
                done.kept.append(f"{label}: {_KEPT.get(why, f'not taken back ({why})')}")
            if answered is not None:
                answered(done)

        done.waiting.append(label)
        if request is None or live is None or not live.change_then(request, then):
            done.waiting.remove(label)
            done.kept.append(f"{label}: the notebook's frontend extension is not "
                             "connected, so the cell change cannot be taken back")

    def _undo_file(self, entry: CellChanges, path: Path, before: Change,
                   after: FileState | None, done: Undone) -> None:
        checkpoints = entry.files
        assert checkpoints is not None
        now = checkpoints.state_now(path)
        if after is None or now is None:
            done.kept.append(f"file {path}: a folder on its path is a link or not a folder "
                             "now (nothing was written there)")
            return
        if (now.what, now.digest, now.mode) != (after.what, after.digest, after.mode):
            done.kept.append(f"file {path}: changed since the cell (kept as it is)")
            return
        if before.before == UNKNOWN:
            done.kept.append(f"file {path}: its earlier content ({before.size:,} bytes) was "
                             "over the size cap")
            return
        # the restore compares again, on the folder it opened, before it writes
        rewound = checkpoints.history.rewind_changes([before], expect={str(path): after})
        if rewound.not_undone:
            done.kept.extend(f"file {p}: {why}" for p, why in rewound.not_undone)
        else:
            done.restored.append(f"file {path}")

    def _undo_name(self, name: str, state: NameState, after: Any, left: Left,
                   done: Undone) -> None:
        """Put a name back if it still holds exactly what the cell left (see `left`)."""
        current = self.namespace.get(name, _UNBOUND)
        if current is not after:
            done.kept.append(f"name {name}: rebound since the cell (kept as it is)")
            return
        still = True if current is _UNBOUND else left.still(current)
        if still is None:
            done.kept.append(f"name {name}: whether it changed since the cell cannot be "
                             f"told ({left.why}), so it is kept as it is")
            return
        if not still:
            done.kept.append(f"name {name}: changed since the cell (kept as it is)")
            return
        if not state.bound:
            self.namespace.pop(name, None)
        elif state.copied:
            self.namespace[name] = _restored_copy(state)
        else:
            self.namespace[name] = state.value
        done.restored.append(f"name {name}")


def cell_label(op: CellOp) -> str:
    """`cell <id> “its first line”`: the cell a change was made to, as a person finds it
    in the notebook (the id alone says nothing on screen): an edited cell by its source
    before the agent (what undo puts back), an inserted one by its own."""
    source = op.before[1].get("source") if op.kind == "delete" and isinstance(
        op.before, tuple | list) and len(op.before) == 2 and isinstance(op.before[1], dict) \
        else op.before if op.kind == "edit" else op.after if op.kind == "insert" else None
    lines = [line.strip() for line in str(source or "").splitlines() if line.strip()]
    if not lines:
        return f"cell {op.cell}"
    first = lines[0] if len(lines[0]) <= _LABEL_CHARS else lines[0][:_LABEL_CHARS - 1] + "…"
    return f"cell {op.cell} “{first}”"


#: the most of a cell's first line an undo line shows
_LABEL_CHARS = 40


def _lost_names(changes: CellChanges) -> dict[str, str]:
    """Each name the cell changed and how (the journal keeps only that of names)."""
    lost = {name: ("created" if not state.bound else "deleted" if after is _UNBOUND
                   else "changed inside" if after is state.value else "rebound")
            for name, (state, after) in changes.name_states.items()}
    lost.update((name, "may have changed inside") for name in changes.not_kept)
    return lost


def _cell_op(raw: dict[str, Any]) -> CellOp | None:
    """A cell change read back from the journal, if it is one `_inverse` can take back
    (None: not understood)."""
    kind, before, after = raw.get("kind"), raw.get("before"), raw.get("after")
    ok = {"edit": isinstance(before, str) and isinstance(after, str),
          "insert": isinstance(after, str),
          "delete": isinstance(before, list) and len(before) == 2
          and type(before[0]) is int and isinstance(before[1], dict),
          "move": type(before) is int and type(after) is int}.get(str(kind), False)
    return CellOp(str(kind), str(raw.get("cell")), before, after) if ok else None


def _differs(before: Change, now: FileState) -> bool:
    """Whether a file is now otherwise than `before` (its content, its mode, or absent)."""
    if before.before == ABSENT:
        return now.what != "absent"
    return (now.what, now.digest, now.mode) != ("file", before.before, before.mode)


#: what undo says of a cell the notebook left as it is, by the extension's answer (the
#: error texts of fuxi_notebook/testing/change_cases.json)
_KEPT = {
    "the cell was changed meanwhile": "changed since the agent cell (kept as it is)",
    "the cell was moved meanwhile": "moved since the agent cell (left where it is)",
}


def _inverse(op: CellOp, agent_cell: str) -> dict[str, Any] | None:
    """The request that takes a cell change back, only where the cell is still as the
    agent cell left it: its source (`expect`), its place (`expect_index`); a deleted cell
    comes back whole under its id, unless it is back already. An edit taken back loses
    the mark of `agent_cell` in its provenance (`undo_of`)."""
    if op.kind == "edit":
        return {"request": "edit_cell", "cell": op.cell, "source": op.before,
                "expect": op.after, "undo_of": agent_cell}
    if op.kind == "insert":
        return {"request": "delete_cell", "cell": op.cell, "expect": op.after}
    if op.kind == "delete":
        index, cell = op.before
        return {"request": "restore_cell", "index": index, "cell": cell}
    if op.kind == "move":
        return {"request": "move_cell", "cell": op.cell, "to": op.before,
                "expect_index": op.after}
    return None


def _restored_copy(state: NameState) -> Any:
    """The object as it was: changed back in place where its type allows (so other names
    for it see the change too), else the copy itself."""
    value, kept = state.value, state.copy
    try:
        if isinstance(value, list):
            value[:] = kept
            return value
        if isinstance(value, dict | set):
            value.clear()
            value.update(kept)
            return value
        if isinstance(value, bytearray):
            value[:] = kept
            return value
    except Exception:
        pass
    return kept

