"""Issue 39 (11), undo after a restart, in real kernels through the testing frontend
(which emulates the extension's comm and its cell changes): an agent cell's files and
cell changes are kept in the notebook's undo journal on disk (0600 files in 0700
folders), so `%fuxi undo` in the kernel after a restart restores its files, deletes the
cell it inserted, keeps a file the user changed since (named), and says in one line that
the kernel names cannot come back. A journal entry that is corrupt or from a newer version
is one line, never a traceback; the journal's cap drops the oldest entries. The journal
itself (checkpoints/journal.py) is also checked directly: its byte cap, and entries that
are not ours."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import nbformat
import pytest

from fuxi_notebook._internal.checkpoints.history import Change
from fuxi_notebook._internal.checkpoints.journal import JournalEntry, JournalLimits, UndoJournal
from fuxi_notebook._internal.checkpoints.restore import FileState
from fuxi_notebook.testing import FakeMessagesServer, Turn, text, tool_use
from fuxi_notebook.testing.frontend import NotebookFrontend

from .kernel_harness import loaded_notebook
from .test_kernel_sessions import _env, _errors

ALLOW = "%%fuxi --permission-mode acceptEdits --allowed-tools Python,Read,Write"


@pytest.fixture
def api():
    with FakeMessagesServer() as server:
        yield server


def _shown(cell) -> str:
    """What a cell shows as plain text (displays, streams, errors)."""
    parts = [o.get("data", {}).get("text/plain", "") for o in cell.outputs]
    return "\n".join([*parts, _errors(cell)])


def _entries(config: Path) -> list[Path]:
    """The journal's entry files, oldest first."""
    return sorted(config.glob("undo/*/*/entry.json"))


def _run(frontend, source: str):
    cell = nbformat.v4.new_code_cell(source)
    frontend.execute(cell)
    return cell


def _restart(frontend, nb) -> None:
    frontend.restart()
    assert frontend.execute(nb.cells[0]) == "ok"  # %load_ext fuxi_notebook, again


def test_undo_after_a_restart_restores_files_and_cells_and_names_what_cannot_come_back(
        tmp_path, api):
    work, config = tmp_path / "work", tmp_path / "config"
    work.mkdir()
    (work / "report.md").write_text("original\n")
    path, nb = loaded_notebook(work, "total = 1", f"{ALLOW}\ntidy up")
    api.add(Turn([tool_use("Read", {"file_path": "report.md"})]),
            Turn([tool_use("Write", {"file_path": "report.md", "content": "rewritten\n"})]),
            Turn([tool_use("Write", {"file_path": "notes.md", "content": "# notes\n"})]),
            Turn([tool_use("Write", {"file_path": "mine.md", "content": "agent's\n"})]),
            Turn([tool_use("InsertCell", {"code": "# Findings", "cell_type": "markdown",
                                          "after_cell_id": "c1"})]),
            Turn([tool_use("Python", {"code": "made = 42\ntotal = 2"})]),
            Turn([text("Done.")]))
    with NotebookFrontend(cwd=str(work), env=_env(api, path, FUXI_CONFIG_DIR=str(config))
                          ) as frontend:
        frontend.open(nb, str(path))
        assert [frontend.execute(cell) for cell in list(nb.cells)] == ["ok"] * 3, [
            _errors(c) for c in nb.cells]
        inserted = [c["id"] for c in nb.cells if c["source"] == "# Findings"]
        assert len(inserted) == 1
        (work / "mine.md").write_text("the user's own edit\n")  # changed since the cell
        # the journal: one entry, private
        [entry] = _entries(config)
        assert stat.S_IMODE(entry.stat().st_mode) == 0o600
        for folder in (entry.parent, entry.parent.parent, config / "undo"):
            assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
        assert all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in entry.parent.iterdir())

        _restart(frontend, nb)
        listed = _run(frontend, "%fuxi undo --list")
        assert "cell c2 (run before a kernel restart)" in _shown(listed), _shown(listed)
        undo = _run(frontend, "%fuxi undo")
        frontend.wait_until(lambda: "# Findings" not in [c["source"] for c in nb.cells]
                            and "waiting" not in _shown(undo))
        shown = _shown(undo)
        assert f"restored cell {inserted[0]}" in shown, shown
        assert (work / "report.md").read_text() == "original\n"
        assert not (work / "notes.md").exists()
        assert (work / "mine.md").read_text() == "the user's own edit\n"
        assert f"not undone: file {work / 'mine.md'}: changed since the cell" in shown, shown
        lost = [line for line in shown.splitlines() if "cannot come back" in line]
        assert lost == ["- not undone: names made, total: kernel names cannot come back "
                        "after a restart"], shown
        assert "Traceback" not in shown
        # undone on disk too: nothing is offered again, in this kernel or the next
        assert json.loads(entry.read_text())["undone"] is True
        again = _run(frontend, "%fuxi undo")
        assert "nothing changed" in _shown(again), _shown(again)


def test_a_corrupt_or_newer_journal_entry_is_one_line_and_the_cap_drops_the_oldest(
        tmp_path, api):
    work, config = tmp_path / "work", tmp_path / "config"
    work.mkdir()
    prompts = [f"{ALLOW}\nstep {n}" for n in range(1, 5)]
    path, nb = loaded_notebook(work, *prompts)
    for n in range(1, 5):
        api.add(Turn([tool_use("Write", {"file_path": f"step{n}.md", "content": f"{n}\n"})]),
                Turn([text(f"Step {n} done.")]))
    environment = _env(api, path, FUXI_CONFIG_DIR=str(config), FUXI_UNDO_MAX_CELLS="3")
    with NotebookFrontend(cwd=str(work), env=environment) as frontend:
        frontend.open(nb, str(path))
        assert [frontend.execute(cell) for cell in list(nb.cells)] == ["ok"] * 5, [
            _errors(c) for c in nb.cells]
        entries = _entries(config)
        # the cap (3 entries) dropped the oldest: step 1's
        assert [json.loads(e.read_text())["cell"] for e in entries] == ["c2", "c3", "c4"]
        entries[2].write_text("{ not json")
        newer = json.loads(entries[1].read_text())
        entries[1].write_text(json.dumps({**newer, "version": 99}))

        _restart(frontend, nb)
        undo = _run(frontend, "%fuxi undo")
        shown = _shown(undo)
        assert "Traceback" not in shown, shown
        ignored = [line for line in shown.splitlines() if "was ignored" in line]
        assert len(ignored) == 2, shown
        assert any("invalid JSON" in line for line in ignored), ignored
        assert any("written by a newer fuxi_notebook (journal version 99" in line
                   for line in ignored), ignored
        assert "undid cell c2" in shown, shown  # the one entry left that could be used
        assert not (work / "step2.md").exists()
        assert (work / "step3.md").exists() and (work / "step4.md").exists()
        assert (work / "step1.md").exists()  # dropped from the journal: not undoable


# -- the journal itself --

def _entry(work: Path, name: str, cell: str) -> tuple[JournalEntry, dict[str, bytes]]:
    """An entry of `cell` for a file `name` it changed, and the file's earlier bytes."""
    import hashlib

    before = f"before {cell}\n".encode() * 10
    digest = hashlib.sha256(before).hexdigest()
    path = str(work / name)
    change = Change(path, digest, 0o644, len(before), "call")
    return (JournalEntry(cell, "a label", [str(work)],
                         {path: (change, FileState("file", "0" * 64, 0o644, 3))},
                         names={"x": "created"}),
            {digest: before})


def test_the_byte_cap_drops_the_oldest_and_keeps_a_copy_that_does_not_fit_as_unknown(
        tmp_path):
    journal = UndoJournal(tmp_path / "undo", str(tmp_path / "nb.ipynb"),
                          JournalLimits(bytes=2000, entries=100, file_bytes=1 << 20))
    for cell in ("a", "b", "c"):
        entry, blobs = _entry(tmp_path, f"{cell}.txt", cell)
        assert journal.write(entry, blobs) == []
    found, notes = journal.read()
    assert notes == [] and [e.cell_id for e in found] == ["b", "c"]  # "a" was the oldest
    big, _ = _entry(tmp_path, "big.txt", "d")
    path = next(iter(big.files))
    notes = journal.write(big, {big.files[path][0].before: b"x" * 5000})
    assert len(notes) == 1 and "does not fit the undo journal" in notes[0]
    found, _ = journal.read()
    assert found[-1].files[path][0].before == "unknown"


def test_an_entry_that_is_not_ours_is_treated_as_absent(tmp_path):
    journal = UndoJournal(tmp_path / "undo", str(tmp_path / "nb.ipynb"))
    entry, blobs = _entry(tmp_path, "a.txt", "a")
    journal.write(entry, blobs)
    other = UndoJournal(tmp_path / "undo", str(tmp_path / "other.ipynb"))
    other.folder.mkdir()
    moved = other.folder / entry.id
    os.rename(journal.folder / entry.id, moved)  # another notebook's folder
    found, notes = other.read()
    assert found == [] and len(notes) == 1 and "another notebook's" in notes[0]
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text("{}")
    (moved / "entry.json").unlink()
    (moved / "entry.json").symlink_to(elsewhere)
    found, notes = other.read()
    assert found == [] and "not ours" in notes[0]


def test_a_file_the_journal_restores_goes_through_the_one_restore(tmp_path):
    """A kept copy comes back only where the file is still as the cell left it."""
    import hashlib

    work = tmp_path / "work"
    work.mkdir()
    target = work / "a.txt"
    target.write_bytes(b"after\n")
    after = FileState("file", hashlib.sha256(b"after\n").hexdigest(), 0o644, 6)
    os.chmod(target, 0o644)
    before = b"before\n"
    change = Change(str(target), hashlib.sha256(before).hexdigest(), 0o644, len(before))
    journal = UndoJournal(tmp_path / "undo", str(tmp_path / "nb.ipynb"))
    entry = JournalEntry("c1", "", [str(work)], {str(target): (change, after)})
    journal.write(entry, {change.before: before})
    [found], _ = journal.read()
    checkpoints = journal.checkpoints(found)
    rewound = checkpoints.history.rewind_changes([change], expect={str(target): after})
    assert rewound.restored == [str(target)] and target.read_bytes() == before


def test_an_entry_too_big_to_read_is_one_line(tmp_path):
    journal = UndoJournal(tmp_path / "undo", str(tmp_path / "nb.ipynb"))
    entry, blobs = _entry(tmp_path, "a.txt", "a")
    journal.write(entry, blobs)
    small = UndoJournal(tmp_path / "undo", str(tmp_path / "nb.ipynb"),
                        JournalLimits(bytes=100, entries=100, file_bytes=100))
    found, notes = small.read()
    assert found == [] and len(notes) == 1 and "larger than the limit" in notes[0], notes
