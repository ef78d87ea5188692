"""What travels between the batch and its workers (issue 37): the notebook's folder out,
a run's files back. A bundle writes only inside its target folder, whatever it holds."""

from __future__ import annotations

import io
import os
import stat
import zipfile
from pathlib import Path

import pytest

from fuxi_notebook._internal.batch.bundle import changed_files, manifest, pack, unpack
from fuxi_notebook._internal.batch.params import BatchInputError, make_grid, parse_value


def _zip(entries: dict[str, bytes], links: tuple[str, ...] = ()) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
        for name in links:
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, "/etc/passwd")
    return buffer.getvalue()


@pytest.mark.parametrize("name", ["../escaped.txt", "/tmp/absolute.txt", "a/../../up.txt",
                                  "./", "a//b/../../../c"])
def test_a_bundle_never_writes_outside_its_folder(tmp_path, name):
    target = tmp_path / "run"
    written = unpack(_zip({name: b"x", "kept.txt": b"ok"}), target)
    assert written == [target / "kept.txt"]
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")
                  if p.is_file()) == ["run/kept.txt"]


def test_a_link_in_a_bundle_is_not_made_nor_followed(tmp_path):
    target = tmp_path / "run"
    target.mkdir()
    os.symlink(tmp_path / "outside.txt", target / "out.txt")  # planted before unpacking
    unpack(_zip({"out.txt": b"data"}, links=("link",)), target)
    assert not (tmp_path / "outside.txt").exists()  # written as a file, not through it
    assert (target / "out.txt").read_bytes() == b"data" and not (target / "link").exists()


def test_the_folder_travels_without_caches_and_comes_back_as_what_changed(tmp_path):
    folder = tmp_path / "project"
    (folder / ".git").mkdir(parents=True)
    (folder / ".git" / "HEAD").write_text("ref")
    (folder / "data.csv").write_text("a\n")
    (folder / "runs").mkdir()
    (folder / "runs" / "old.ipynb").write_text("{}")
    data = pack(folder, leave_out=(folder / "runs",))
    work = tmp_path / "work"
    unpack(data, work)
    assert sorted(manifest(work)) == ["data.csv"]
    before = manifest(work)
    (work / "new.txt").write_text("made")
    back = tmp_path / "back"
    unpack(changed_files(work, before, always=("data.csv",)), back)
    assert sorted(p.name for p in back.iterdir()) == ["data.csv", "new.txt"]


def test_a_folder_too_big_to_send_is_one_line(tmp_path, monkeypatch):
    from fuxi_notebook._internal.batch import bundle

    monkeypatch.setattr(bundle, "MAX_BUNDLE_BYTES", 10)
    (tmp_path / "big.bin").write_bytes(b"x" * 100)
    with pytest.raises(BatchInputError, match="more than a batch sends to its workers"):
        pack(tmp_path)


def test_parameters_as_papermill_reads_them_and_the_grid_they_make(tmp_path):
    assert [parse_value(v) for v in ("3", "2.5", "True", "None", "north", "1e3")] == [
        3, 2.5, True, None, "north", 1000.0]
    (tmp_path / "p.yaml").write_text("year: 2026\nregion: ignored\n")
    grid = make_grid([("region", "n"), ("limit", "1"), ("region", "s"), ("limit", "2")],
                     ["{scale: 0.5}"], [Path(tmp_path / "p.yaml")])
    assert grid == [{"year": 2026, "scale": 0.5, "region": r, "limit": n}
                    for r in ("n", "s") for n in (1, 2)]
    with pytest.raises(BatchInputError, match="must be a mapping"):
        make_grid(yamls=["- a list"])
    with pytest.raises(BatchInputError, match="not valid YAML"):
        make_grid(yamls=["{unclosed"])
