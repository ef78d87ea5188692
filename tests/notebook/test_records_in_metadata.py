"""Sessions the notebook never loses, in real kernels driven as each frontend drives them:
records kept in cell metadata (Clear Outputs, nbstripout), the record shown while a card
waits, one consent across `%reload_ext`, which conversation a new cell continues after a
restart, and VS Code's cell URIs."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import nbformat
import pytest

from fuxi_notebook._internal.sessions.cell_record import METADATA_KEY
from fuxi_notebook._internal.sessions.notebook_file import read_notebook
from fuxi_notebook._internal.sessions.record import RECORD_MIME
from fuxi_notebook.testing import FakeMessagesServer, Turn, text, tool_use
from fuxi_notebook.testing.frontend import NotebookFrontend

from .kernel_harness import loaded_notebook

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-ant-test-key-for-the-kernel-0019"


@pytest.fixture
def api():
    with FakeMessagesServer() as server:
        yield server


def _env(api, path: Path | None, *, key: bool, **extra: str) -> dict[str, str]:
    env = {"ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": KEY if key else "",
           "ANTHROPIC_AUTH_TOKEN": "", "FUXI_BLOCK_REAL_API": "1", "MPLBACKEND": "Agg",
           "PYTHONPATH": str(ROOT), "FUXI_REPLAY": "", "JPY_SESSION_NAME": ""}
    if path is not None:
        env["FUXI_NOTEBOOK"] = str(path)
    env.update(extra)
    return env




def _replay(card):
    return ("Replay", None) if "Replay" in card.buttons else None


def _record(cell) -> dict:
    return next(o["data"][RECORD_MIME] for o in cell.outputs if RECORD_MIME in o.get("data", {}))


def _said(cell) -> str:
    return "".join(o.get("text", "") for o in cell.outputs) + "".join(
        json.dumps(o.get("data", {})) for o in cell.outputs)


def _notes(cell) -> str:
    """What the cell said about how it ran (shown live, kept in the record's metadata)."""
    return " ".join(note for o in cell.outputs if RECORD_MIME in o.get("data", {})
                    for note in o["metadata"]["fuxi"].get("notes", []))


def _recorded(tmp_path: Path, api, *sources: str, turns: list[Turn]):
    """A notebook whose cells ran live in JupyterLab with the extension, then saved."""
    api.add(*turns)
    path, nb = loaded_notebook(tmp_path, *sources)
    with NotebookFrontend(cwd=str(tmp_path), env=_env(api, path, key=True)) as frontend:
        frontend.open(nb, str(path))
        for cell in nb.cells:
            assert frontend.execute(cell, decide=lambda card: ("Allow", None)) == "ok", \
                cell.outputs
    nbformat.write(nb, path)
    return path, nb


def _clear_outputs(path: Path) -> nbformat.NotebookNode:
    """Edit, Clear Outputs of All Cells, then save."""
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    nbformat.write(nb, path)
    return nb


def test_the_extension_keeps_each_record_in_its_cells_metadata(tmp_path, api):
    path, nb = _recorded(tmp_path, api, "%%fuxi\none", turns=[Turn([text("first")])])
    cell = nb.cells[1]
    assert cell.metadata[METADATA_KEY]["record"] == _record(cell)
    assert "cost_usd" in cell.metadata[METADATA_KEY]["volatile"]
    assert read_notebook(path).cells[0].where == "metadata"


@pytest.mark.parametrize("extension", [True, False], ids=["extension", "no-extension"])
def test_clear_outputs_save_restart_run_all_replays_from_the_metadata(tmp_path, api,
                                                                         extension):
    path, nb = _recorded(tmp_path, api, "%%fuxi\nwrite a file",
                         turns=[Turn([tool_use("Write", {"file_path": "out.txt",
                                                         "content": "made\n"}, id="toolu_w1")]),
                                Turn([text("written")])])
    original = _record(nb.cells[1])
    (tmp_path / "out.txt").unlink()
    stripped = _clear_outputs(path)
    asked = len(api.requests)
    with NotebookFrontend(cwd=str(tmp_path), env=_env(api, path, key=False),
                          extension=extension) as frontend:
        frontend.open(stripped, str(path))
        for cell in stripped.cells:
            assert frontend.execute(cell, decide=_replay) == "ok", cell.outputs
    assert len(api.requests) == asked  # replayed: no model call
    assert _record(stripped.cells[1]) == original
    assert (tmp_path / "out.txt").read_text() == "made\n"  # the tool ran again


def test_the_record_stays_in_the_cell_while_the_consent_card_waits(tmp_path, api):
    path, nb = _recorded(tmp_path, api, "%%fuxi\none", turns=[Turn([text("first")])])
    original = _record(nb.cells[1])
    seen = []

    def look(card):
        seen.append([o.get("data", {}).get(RECORD_MIME) for o in card.outputs])
        return _replay(card)

    fresh = nbformat.read(path, as_version=4)
    with NotebookFrontend(cwd=str(tmp_path), env=_env(api, path, key=False)) as frontend:
        frontend.open(fresh, str(path))
        for cell in fresh.cells:
            assert frontend.execute(cell, decide=look) == "ok", cell.outputs
    assert seen and original in seen[0]  # autosave while the card waits keeps the record
    assert [RECORD_MIME in o.get("data", {}) for o in fresh.cells[1].outputs].count(True) == 1


def test_a_cancelled_replay_leaves_the_record_it_had(tmp_path, api):
    path, nb = _recorded(tmp_path, api, "%%fuxi\none", turns=[Turn([text("first")])])
    original = _record(nb.cells[1])
    stripped = _clear_outputs(path)
    with NotebookFrontend(cwd=str(tmp_path), env=_env(api, path, key=False)) as frontend:
        frontend.open(stripped, str(path))
        frontend.execute(stripped.cells[0])
        status = frontend.execute(stripped.cells[1], decide=lambda card: ("Cancel", None))
    assert status == "error"
    assert "replay cancelled" in frontend.last_reply.get("evalue", "") + _said(stripped.cells[1])
    assert [o["data"][RECORD_MIME] for o in stripped.cells[1].outputs
            if RECORD_MIME in o.get("data", {})] == [original]


def test_two_records_that_differ_are_one_line_and_nothing_runs(tmp_path, api):
    path, nb = _recorded(tmp_path, api, "%%fuxi\nwrite",
                         turns=[Turn([tool_use("Write", {"file_path": "x.txt", "content": "1"},
                                               id="toolu_x1")]), Turn([text("ok")])])
    forged = copy.deepcopy(nb.cells[1].metadata[METADATA_KEY])
    forged["record"]["prompt"] = "something else"
    nb.cells[1].metadata[METADATA_KEY] = forged
    nbformat.write(nb, path)
    (tmp_path / "x.txt").unlink()
    fresh = nbformat.read(path, as_version=4)
    with NotebookFrontend(cwd=str(tmp_path), env=_env(api, path, key=False),
                          extension=False) as frontend:
        frontend.execute(fresh.cells[0])
        status = frontend.execute(fresh.cells[1], decide=_replay)
    assert status == "error"
    said = frontend.last_reply.get("evalue", "")
    assert "metadata.fuxi" in said and "differ" in said and "\n" not in said
    assert not (tmp_path / "x.txt").exists()


def test_nbstripout_renumbered_ids_still_replay_in_jupyterlab(tmp_path, api):
    path, nb = _recorded(tmp_path, api, "%%fuxi\none", "%%fuxi\ntwo",
                         turns=[Turn([text("first")]), Turn([text("second")])])
    originals = [_record(nb.cells[1]), _record(nb.cells[2])]
    stripped = _clear_outputs(path)
    for number, cell in enumerate(stripped.cells):
        cell.id = str(number)  # what nbstripout does to ids by default
    nbformat.write(stripped, path)
    asked = len(api.requests)
    with NotebookFrontend(cwd=str(tmp_path), env=_env(api, path, key=False),
                          extension=False) as frontend:
        for cell in stripped.cells:
            assert frontend.execute(cell, decide=_replay) == "ok", cell.outputs
    assert len(api.requests) == asked
    assert [_record(stripped.cells[1]), _record(stripped.cells[2])] == originals


def test_a_copied_cell_is_still_a_copy(tmp_path, api):
    path, nb = _recorded(tmp_path, api, "%%fuxi\none", turns=[Turn([text("first")])])
    duplicate = copy.deepcopy(nb.cells[1])
    duplicate.id = "pasted"
    nb.cells.append(duplicate)
    nbformat.write(nb, path)
    with NotebookFrontend(cwd=str(tmp_path), env=_env(api, path, key=False),
                          extension=False) as frontend:
        frontend.execute(nb.cells[0])
        status = frontend.execute(nb.cells[2], decide=_replay)
    assert status == "error"
    assert "a copy?" in frontend.last_reply.get("evalue", "")


def test_one_consent_per_notebook_and_kernel_also_after_reload_ext(tmp_path, api):
    path, _ = _recorded(tmp_path, api, "%%fuxi\none", "%reload_ext fuxi_notebook",
                         "%%fuxi\ntwo", turns=[Turn([text("first")]), Turn([text("second")])])
    cards = []

    def count(card):
        cards.append(card.text)
        return _replay(card)

    fresh = nbformat.read(path, as_version=4)
    with NotebookFrontend(cwd=str(tmp_path), env=_env(api, path, key=False)) as frontend:
        frontend.open(fresh, str(path))
        for cell in fresh.cells:
            assert frontend.execute(cell, decide=count) == "ok", cell.outputs
    assert len(cards) == 1


def test_a_new_cell_after_a_restart_continues_the_saved_conversation_and_says_so(tmp_path,
                                                                                   api):
    path, nb = _recorded(tmp_path, api, "%%fuxi\nThe code word is kiwi.",
                         turns=[Turn([text("noted")])])
    api.add(Turn([text("kiwi")]))
    new = nbformat.v4.new_code_cell("%%fuxi\nWhat is the code word?", id="unsaved")
    nb.cells.append(new)  # added after the save: not in the file
    with NotebookFrontend(cwd=str(tmp_path), env=_env(api, path, key=True),
                          extension=False) as frontend:
        frontend.execute(nb.cells[0])
        assert frontend.execute(new) == "ok", new.outputs
    assert [m["role"] for m in api.requests[-1]["messages"]] == ["user", "assistant", "user"]
    assert "continuing the conversation saved in the notebook" in _notes(new)
    assert "cell c1" in _notes(new)


def test_with_the_extension_a_new_cell_continues_the_nearest_recorded_cell_above(tmp_path,
                                                                                 api):
    path, nb = _recorded(tmp_path, api, "%%fuxi\nThe code word is kiwi.", "%%fuxi --new\n"
                         "The code word is plum.", turns=[Turn([text("ok")]), Turn([text("ok")])])
    api.add(Turn([text("kiwi")]))
    new = nbformat.v4.new_code_cell("%%fuxi\nWhat is the code word?", id="between")
    nb.cells.insert(2, new)  # between the two, unsaved: only the live notebook has it
    with NotebookFrontend(cwd=str(tmp_path), env=_env(api, path, key=True)) as frontend:
        frontend.open(nb, str(path))
        frontend.execute(nb.cells[0])
        assert frontend.execute(new) == "ok", new.outputs
    history = json.dumps(api.requests[-1]["messages"])
    assert "kiwi" in history and "plum" not in history
    assert "up to cell c1" in _notes(new)


def test_a_new_cell_in_another_working_folder_starts_a_new_conversation_and_says_why(
        tmp_path, api):
    (tmp_path / "repo").mkdir()
    path, nb = _recorded(tmp_path, api, "%%fuxi --cwd repo\nThe code word is kiwi.",
                         turns=[Turn([text("noted")])])
    api.add(Turn([text("no idea")]))
    new = nbformat.v4.new_code_cell("%%fuxi\nWhat is the code word?", id="elsewhere")
    nb.cells.append(new)
    with NotebookFrontend(cwd=str(tmp_path), env=_env(api, path, key=True),
                          extension=False) as frontend:
        frontend.execute(nb.cells[0])
        assert frontend.execute(new) == "ok", new.outputs
    assert [m["role"] for m in api.requests[-1]["messages"]] == ["user"]
    said = _notes(new)
    assert "a new conversation" in said and "--cwd repo" in said


def test_vscode_cells_are_matched_by_text_and_replay_and_continue(tmp_path, api):
    path, nb = _recorded(tmp_path, api, "%%fuxi\nThe code word is kiwi.",
                         turns=[Turn([text("noted")])])
    original = _record(nb.cells[1])
    fresh = nbformat.read(path, as_version=4)
    asked = len(api.requests)
    with NotebookFrontend(cwd=str(tmp_path), env=_env(api, None, key=False), flavor="vscode",
                          path=str(path)) as frontend:
        frontend.open(fresh)
        for cell in fresh.cells:
            assert frontend.execute(cell, decide=_replay) == "ok", cell.outputs
    assert len(api.requests) == asked
    assert _record(fresh.cells[1]) == original
    api.add(Turn([text("kiwi")]))
    new = nbformat.v4.new_code_cell("%%fuxi\nWhat is the code word?", id="vs-new")
    fresh.cells.append(new)
    with NotebookFrontend(cwd=str(tmp_path), env=_env(api, None, key=True), flavor="vscode",
                          path=str(path)) as frontend:
        frontend.open(fresh)
        frontend.execute(fresh.cells[0])
        assert frontend.execute(new) == "ok", new.outputs
    assert [m["role"] for m in api.requests[-1]["messages"]] == ["user", "assistant", "user"]
    assert _record(new)["parent"] == original["cell_id"]


def test_a_live_rerun_in_vscode_replaces_the_metadata_record(tmp_path, api):
    path, nb = _recorded(tmp_path, api, "%%fuxi\none", turns=[Turn([text("first")])])
    api.add(Turn([text("first, again")]))
    with NotebookFrontend(cwd=str(tmp_path), env=_env(api, None, key=True), flavor="vscode",
                          path=str(path)) as frontend:
        frontend.open(nb)
        for cell in nb.cells:
            assert frontend.execute(cell) == "ok", cell.outputs
    assert nb.cells[1].metadata[METADATA_KEY]["record"] != _record(nb.cells[1])  # VS Code
    nbformat.write(nb, path)  # saves the new output beside the old metadata
    saved = read_notebook(path).cells[0]
    assert saved.problem is None and saved.where == "outputs"
    assert saved.record.result.result == "first, again"


def _headless_env(api, tmp_path: Path) -> dict[str, str]:
    import os

    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items()
           if k not in ("FUXI_NOTEBOOK", "JPY_SESSION_NAME", "PYTEST_CURRENT_TEST")}
    return {**env, **_env(api, None, key=False, FUXI_REPLAY="strict"), "HOME": str(home)}


@pytest.mark.slow
@pytest.mark.parametrize("runner", ["jupyter-execute", "papermill"])
def test_a_stripped_notebook_replays_headless_and_keeps_its_records(tmp_path, api, runner):
    import subprocess
    import sys

    path, nb = _recorded(tmp_path, api, "%%fuxi\nwrite a file",
                         turns=[Turn([tool_use("Write", {"file_path": "out.txt",
                                                         "content": "made\n"}, id="toolu_w2")]),
                                Turn([text("written")])])
    original = _record(nb.cells[1])
    (tmp_path / "out.txt").unlink()
    subprocess.run([sys.executable, "-m", "nbstripout", str(path)], check=True)
    assert nbformat.read(path, as_version=4).cells[1].outputs == []
    asked = len(api.requests)
    bin_dir = Path(sys.executable).parent
    if runner == "papermill":
        out = tmp_path / "out.ipynb"
        command = [str(bin_dir / "papermill"), str(path), str(out), "--cwd", str(tmp_path),
                   "-k", "python3"]
    else:
        out = path
        command = [str(bin_dir / "jupyter"), "execute", "--inplace", str(path)]
    done = subprocess.run(command, env=_headless_env(api, tmp_path), cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(api.requests) == asked  # no model call
    ran = nbformat.read(out, as_version=4)
    assert _record(ran.cells[1]) == original
    assert ran.cells[1].metadata[METADATA_KEY]["record"] == original  # kept, not lost
    assert (tmp_path / "out.txt").read_text() == "made\n"


SHIPPED = sorted(p.relative_to(ROOT / "notebooks").as_posix()
                 for p in [*(ROOT / "notebooks").glob("*.ipynb"),
                           *(ROOT / "notebooks" / "batch").glob("*.ipynb")])


@pytest.mark.slow
@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_notebook_stripped_by_nbstripout_replays_under_jupyter_execute(
        copy_dir, tmp_path, name):
    import subprocess
    import sys

    path = copy_dir / name
    subprocess.run([sys.executable, "-m", "nbstripout", str(path)], check=True)
    stripped = nbformat.read(path, as_version=4)
    assert all(not c.get("outputs") for c in stripped.cells if c.cell_type == "code")
    with FakeMessagesServer() as api:  # any model call would arrive here: none may
        done = subprocess.run(
            [str(Path(sys.executable).parent / "jupyter"), "execute", "--inplace", str(path)],
            env=_headless_env(api, tmp_path), cwd=path.parent, capture_output=True, text=True,
            timeout=600)
        assert done.returncode == 0, done.stderr[-4000:]
        assert api.requests == [] and api.connection_count == 0
    ran = read_notebook(path)
    assert all(cell.record is not None and cell.where == "metadata" for cell in ran.cells)
    recorded = {c.key: c.record for c in read_notebook(ROOT / "notebooks" / name).cells}
    assert {c.key: c.record for c in ran.cells} == recorded


def test_a_cleared_figure_is_named_and_the_replay_still_runs_and_draws_it(copy_dir, tmp_path):
    """quickstart's plot cell refers to the figure it showed; Clear Outputs removed it."""
    path = copy_dir / "quickstart.ipynb"
    stripped = _clear_outputs(path)
    plot = next(c for c in stripped.cells if c.get("id") == "q-07")
    with FakeMessagesServer() as api, NotebookFrontend(
            cwd=str(copy_dir), env={**_env(api, path, key=False), "HOME": str(tmp_path)},
            extension=False) as frontend:
        for cell in stripped.cells:
            if cell.cell_type == "code":
                assert frontend.execute(cell, decide=_replay) == "ok", cell.outputs
        assert api.requests == []
    assert "figures the records refer to are no longer in the notebook" in _notes(plot)
    assert "cell q-07 (1)" in _notes(plot)
    assert any("image/png" in o.get("data", {}) for o in plot.outputs)  # drawn again
