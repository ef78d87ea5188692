"""File checkpoints (checkpoints/history.py, watch.py): what a call changed is recorded,
and rewinding to a mark puts every file back, created ones removed."""

from __future__ import annotations

import os
from pathlib import Path

from fuxi_notebook._internal.checkpoints.history import FileHistory
from fuxi_notebook._internal.checkpoints.watch import FileCheckpoints, Limits


def _code(checkpoints: FileCheckpoints, call: str, work) -> None:
    """A call of kind `execute` (Bash, Python) that does `work`."""
    watch = checkpoints.before(call, "execute")
    assert watch is not None
    work()
    checkpoints.after(watch)


def test_code_that_overwrites_creates_and_deletes_is_rewound(tmp_path: Path):
    (tmp_path / "data.csv").write_text("a,b\n1,2\n")
    (tmp_path / "old.txt").write_text("keep me\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "deep.txt").write_text("deep\n")
    history = FileHistory()
    checkpoints = FileCheckpoints([tmp_path], history, Limits())
    history.mark("prompt")

    def work() -> None:
        (tmp_path / "data.csv").write_text("overwritten\n")
        (tmp_path / "old.txt").unlink()
        (tmp_path / "new.txt").write_text("made by code\n")
        (tmp_path / "sub" / "deep.txt").write_text("changed deep\n")

    _code(checkpoints, "call-1", work)
    assert {Path(c.path).name for c in history.since("prompt")} == {
        "data.csv", "old.txt", "new.txt", "deep.txt"}
    done = history.rewind("prompt")
    assert (tmp_path / "data.csv").read_text() == "a,b\n1,2\n"
    assert (tmp_path / "old.txt").read_text() == "keep me\n"
    assert (tmp_path / "sub" / "deep.txt").read_text() == "deep\n"
    assert not (tmp_path / "new.txt").exists()
    assert sorted(Path(p).name for p in done.removed) == ["new.txt"]
    assert done.not_undone == []


def test_an_edit_tool_is_taken_by_its_declared_paths(tmp_path: Path):
    target = tmp_path / "notes.md"
    target.write_text("one\n")
    os.chmod(target, 0o640)
    history = FileHistory()
    checkpoints = FileCheckpoints([tmp_path], history, Limits())
    history.mark("m")
    watch = checkpoints.before("w1", "edit", [target, tmp_path / "created.md"])
    assert watch is not None
    target.write_text("two\n")
    (tmp_path / "created.md").write_text("new\n")
    assert len(checkpoints.after(watch)) == 2
    history.rewind("m")
    assert target.read_text() == "one\n" and target.stat().st_mode & 0o777 == 0o640
    assert not (tmp_path / "created.md").exists()


def test_a_read_call_takes_nothing_and_an_unchanged_file_is_no_change(tmp_path: Path):
    (tmp_path / "a.txt").write_text("a")
    history = FileHistory()
    checkpoints = FileCheckpoints([tmp_path], history, Limits())
    assert checkpoints.before("r", "read") is None
    watch = checkpoints.before("e", "edit", [tmp_path / "a.txt"])
    assert watch is not None and checkpoints.after(watch) == []
    _code(checkpoints, "x", lambda: None)
    assert history.changes == []


def test_rewinding_to_a_later_mark_after_an_earlier_one_redoes(tmp_path: Path):
    path = tmp_path / "f.txt"
    path.write_text("v1")
    history = FileHistory()
    checkpoints = FileCheckpoints([tmp_path], history, Limits())
    history.mark("before")
    _code(checkpoints, "c1", lambda: path.write_text("v2"))
    history.mark("middle")
    _code(checkpoints, "c2", lambda: path.write_text("v3"))
    history.rewind("before")
    assert path.read_text() == "v1"
    history.rewind("middle")
    assert path.read_text() == "v2"


def test_a_file_over_the_cap_is_named_as_not_undone(tmp_path: Path):
    big = tmp_path / "big.bin"
    big.write_bytes(b"x" * 2000)
    (tmp_path / "small.txt").write_text("small")
    history = FileHistory()
    checkpoints = FileCheckpoints([tmp_path], history, Limits(file_bytes=1000))
    history.mark("m")

    def work() -> None:
        big.write_bytes(b"y" * 3000)
        (tmp_path / "small.txt").write_text("changed")

    _code(checkpoints, "c", work)
    done = history.rewind("m")
    assert (tmp_path / "small.txt").read_text() == "small"
    assert [(Path(p).name, "2,000 bytes" in why) for p, why in done.not_undone] == [
        ("big.bin", True)]
    assert big.read_bytes() == b"y" * 3000  # left as it is, not half-restored


def test_the_history_on_disk_is_read_back_and_rewinds(tmp_path: Path):
    work = tmp_path / "work"
    work.mkdir()
    (work / "f.txt").write_text("original")
    folder = tmp_path / "history"
    history = FileHistory(folder)
    checkpoints = FileCheckpoints([work], history, Limits())
    history.mark("m")
    _code(checkpoints, "c", lambda: (work / "f.txt").write_text("changed"))
    assert oct(folder.stat().st_mode & 0o777) == "0o700"
    again = FileHistory(folder)  # a resumed conversation, in another process
    FileCheckpoints([work], again, Limits())  # its working folders: restores land there
    again.rewind("m")
    assert (work / "f.txt").read_text() == "original"


def test_kept_copies_are_released_when_no_longer_needed(tmp_path: Path):
    path = tmp_path / "f.txt"
    path.write_text("a" * 1000)
    history = FileHistory()
    checkpoints = FileCheckpoints([tmp_path], history, Limits())
    for n in range(20):
        _code(checkpoints, f"c{n}", lambda n=n: path.write_text(chr(ord("b") + n) * 1000))
    # the baseline holds the current copy, each change its earlier one: nothing else
    assert history.memory_bytes == 21 * 1000


def test_skipped_folders_and_links_are_not_followed(tmp_path: Path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "index").write_text("git data")
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("elsewhere")
    (tmp_path / "link").symlink_to(outside)
    history = FileHistory()
    checkpoints = FileCheckpoints([tmp_path], history, Limits())

    def work() -> None:
        (tmp_path / ".git" / "index").write_text("changed")
        (outside / "secret.txt").write_text("changed")

    _code(checkpoints, "c", work)
    assert history.changes == []


def test_a_folder_over_the_file_cap_is_not_scanned_again_and_says_so(tmp_path: Path):
    for number in range(12):
        (tmp_path / f"f{number}.txt").write_text(str(number))
    history = FileHistory()
    checkpoints = FileCheckpoints([tmp_path], history, Limits(files=10))
    assert checkpoints.before("c1", "execute") is None  # found out by the first scan
    assert checkpoints.too_many_files and history.memory_bytes == 0
    assert len(checkpoints.notes) == 1 and "more than 10 files" in checkpoints.notes[0]
    assert "cannot be undone" in checkpoints.notes[0]
    scans = []
    checkpoints._files = lambda: scans.append(1)  # type: ignore[method-assign]
    assert checkpoints.before("c2", "execute") is None and scans == []
    watch = checkpoints.before("w", "edit", [tmp_path / "f1.txt"])  # Write/Edit still kept
    assert watch is not None
    (tmp_path / "f1.txt").write_text("changed")
    assert len(checkpoints.after(watch)) == 1


def test_a_call_that_makes_the_folder_too_big_forgets_its_baseline(tmp_path: Path):
    (tmp_path / "a.txt").write_text("a")
    history = FileHistory()
    checkpoints = FileCheckpoints([tmp_path], history, Limits(files=5))
    watch = checkpoints.before("c1", "execute")
    assert watch is not None and history.memory_bytes == 1

    def work() -> None:
        for number in range(8):
            (tmp_path / f"n{number}.txt").write_text("x")

    work()
    assert checkpoints.after(watch) == []
    assert checkpoints.too_many_files and history.memory_bytes == 0 and checkpoints.notes


def _history(work: Path) -> tuple[FileHistory, FileCheckpoints]:
    history = FileHistory()
    return history, FileCheckpoints([work], history, Limits())


def test_a_rewind_never_writes_through_a_folder_turned_into_a_link(tmp_path: Path):
    """Issue 35, finding 4: the restore walks from the working folder without following
    a link at any level; a folder swapped for a link since stops it, in one line."""
    work, outside = tmp_path / "work", tmp_path / "site-packages"
    (work / "d").mkdir(parents=True)
    outside.mkdir()
    (work / "d" / "usercustomize.py").write_text("# the user's\n")
    history, checkpoints = _history(work)
    history.mark("m")
    _code(checkpoints, "rm", lambda: (work / "d" / "usercustomize.py").unlink())
    (work / "d").rmdir()
    (work / "d").symlink_to(outside)
    done = history.rewind("m")
    assert not (outside / "usercustomize.py").exists()
    assert done.restored == [] and len(done.not_undone) == 1
    path, why = done.not_undone[0]
    assert path.endswith("d/usercustomize.py") and "link" in why and "\n" not in why


def test_a_rewind_does_not_replace_a_link_at_the_files_own_name(tmp_path: Path):
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("mine\n")
    history, checkpoints = _history(work)
    history.mark("m")
    _code(checkpoints, "w", lambda: (work / "notes.txt").write_text("agent\n"))
    (work / "notes.txt").unlink()
    (work / "elsewhere.txt").write_text("other\n")
    (work / "notes.txt").symlink_to("elsewhere.txt")
    done = history.rewind("m")
    assert (work / "notes.txt").is_symlink()
    assert (work / "elsewhere.txt").read_text() == "other\n"
    assert "a link now" in dict(done.not_undone)[str(work / "notes.txt")]


def test_a_mode_only_change_is_rewound(tmp_path: Path):
    work = tmp_path / "work"
    work.mkdir()
    script = work / "run.sh"
    script.write_text("echo\n")
    script.chmod(0o644)
    history, checkpoints = _history(work)
    history.mark("m")
    _code(checkpoints, "chmod", lambda: script.chmod(0o755))
    assert [Path(c.path).name for c in history.since("m")] == ["run.sh"]
    done = history.rewind("m")
    assert script.stat().st_mode & 0o777 == 0o644 and done.restored == [str(script)]


def test_a_file_whose_folder_is_gone_is_restored_with_it(tmp_path: Path):
    import shutil

    work = tmp_path / "work"
    (work / "a" / "b").mkdir(parents=True)
    (work / "a" / "b" / "f.txt").write_text("deep\n")
    history, checkpoints = _history(work)
    history.mark("m")
    _code(checkpoints, "rm", lambda: shutil.rmtree(work / "a"))
    done = history.rewind("m")
    assert (work / "a" / "b" / "f.txt").read_text() == "deep\n" and done.not_undone == []


def test_a_restore_outside_the_working_folders_is_refused(tmp_path: Path):
    from fuxi_notebook._internal.checkpoints.history import Change
    from fuxi_notebook._internal.checkpoints.restore import RestoreRefused, put_back

    work, other = tmp_path / "work", tmp_path / "other"
    work.mkdir()
    other.mkdir()
    for path in (other / "x.txt", work / ".." / "other" / "x.txt"):
        try:
            put_back(path, [work], b"data", 0o644)
        except RestoreRefused as refused:
            assert "outside the working folders" in str(refused)
        else:
            raise AssertionError("written outside")
    assert not (other / "x.txt").exists()
    history, _ = _history(work)
    history.mark("m")
    history.record(Change(str(other / "x.txt"), "absent", call="c"))
    (other / "x.txt").write_text("theirs")
    done = history.rewind("m")
    assert (other / "x.txt").read_text() == "theirs"
    assert "outside the working folders" in done.not_undone[0][1]
