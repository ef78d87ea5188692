"""Which copy of a cell's record is read (metadata first, outputs second), `sessions keep`
(the pre-commit hook), and the live notebook merged with the saved file."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

from fuxi_notebook.__main__ import main
from fuxi_notebook._internal.sessions.cell_record import (
    METADATA_KEY,
    cell_record,
    keep_in_metadata,
    record_digest,
)
from fuxi_notebook._internal.sessions.notebook_file import live_notebook, read_notebook
from fuxi_notebook._internal.sessions.record import RECORD_MIME

ROOT = Path(__file__).resolve().parents[2]


def _record(cell_id: str = "c1", prompt: str = "hello", result: str = "hi") -> dict:
    return {"version": 1, "cell_id": cell_id, "session_id": "s-" + cell_id, "parent": None,
            "model": "claude-sonnet-5-5", "prompt": prompt, "options": {},
            "messages": [{"role": "user", "content": prompt},
                         {"role": "assistant", "content": [{"type": "text", "text": result}]}],
            "approvals": [], "result": {"subtype": "success", "is_error": False,
                                        "num_turns": 1, "stop_reason": "end_turn",
                                        "result": result}}


def _output(record: dict, **volatile) -> dict:
    return {"output_type": "display_data", "data": {RECORD_MIME: record, "text/plain": "x"},
            "metadata": {"fuxi": {"cost_usd": 0.01, **volatile}}}


def _cell(record_out: dict | None = None, record_meta: dict | None = None,
          cell_id: str = "c1", source: str = "%%fuxi\nhello") -> dict:
    cell = {"cell_type": "code", "id": cell_id, "source": source, "metadata": {},
            "outputs": [_output(record_out)] if record_out else [], "execution_count": 1}
    if record_meta is not None:
        cell["metadata"][METADATA_KEY] = {"record": record_meta, "volatile": {"cost_usd": 0.02}}
    return cell


def test_the_metadata_copy_is_read_when_the_outputs_are_cleared():
    held = cell_record(_cell(None, _record()))
    assert (held.where, held.data["prompt"], held.outputs_cleared) == ("metadata", "hello", True)
    assert held.volatile == {"cost_usd": 0.02}


def test_the_output_copy_is_read_without_metadata_and_equal_copies_agree():
    assert cell_record(_cell(_record())).where == "outputs"
    both = cell_record(_cell(_record(), _record()))
    assert both.where == "metadata" and both.problem is None
    assert both.volatile == {"cost_usd": 0.01}  # the output's: the newer volatile values


def test_key_order_does_not_make_two_copies_differ():
    reordered = dict(reversed(list(_record().items())))
    assert cell_record(_cell(_record(), reordered)).problem is None


def test_copies_that_differ_are_a_conflict_in_one_line():
    held = cell_record(_cell(_record(prompt="hello"), _record(prompt="rm -rf")))
    assert held.data is None and held.problem is not None
    assert "differ" in held.problem and "\n" not in held.problem
    assert "sessions keep" in held.problem


def test_an_output_that_says_it_replaces_the_metadata_record_wins():
    old, new = _record(result="old"), _record(result="new")
    cell = _cell(None, old)
    cell["outputs"] = [_output(new, replaces=record_digest(old))]
    held = cell_record(cell)
    assert held.where == "outputs" and held.data["result"]["result"] == "new"
    cell["outputs"] = [_output(new, replaces=record_digest(_record(result="other")))]
    assert cell_record(cell).problem is not None  # it replaces another record: a conflict


@pytest.mark.parametrize("entry", ["a string", {"volatile": {}}, ["record"], 3])
def test_a_malformed_metadata_entry_is_one_line(entry):
    cell = _cell(_record())
    cell["metadata"][METADATA_KEY] = entry
    held = cell_record(cell)
    assert held.data is None and "metadata.fuxi" in held.problem


def test_keep_in_metadata_copies_once_and_never_overwrites_a_conflict():
    cell = _cell(_record())
    assert keep_in_metadata(cell) == "kept"
    assert cell["metadata"][METADATA_KEY]["record"] == _record()
    assert keep_in_metadata(cell) == "same"
    cell["metadata"][METADATA_KEY]["record"] = _record(prompt="other")
    before = copy.deepcopy(cell)
    assert keep_in_metadata(cell) == "conflict" and cell == before
    assert keep_in_metadata(cell, from_outputs=True) == "kept"
    assert keep_in_metadata(_cell(None)) == "none"


def _write(path: Path, cells: list[dict]) -> Path:
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4,
                                "nbformat_minor": 5}, indent=1, sort_keys=True) + "\n")
    return path


def test_sessions_keep_writes_only_what_changed_then_nbstripout_keeps_the_records(
        tmp_path, capsys):
    markdown = {"cell_type": "markdown", "id": "m", "metadata": {}, "source": "# hi"}
    path = _write(tmp_path / "nb.ipynb", [markdown, _cell(_record())])
    assert main(["sessions", "keep", "--check", str(path)]) == 1
    assert METADATA_KEY not in json.loads(path.read_text())["cells"][1]["metadata"]
    assert main(["sessions", "keep", str(path)]) == 0
    assert "copied the record of 1 cell(s)" in capsys.readouterr().out
    kept = path.read_text()
    assert main(["sessions", "keep", str(path)]) == 0 and path.read_text() == kept
    subprocess.run([sys.executable, "-m", "nbstripout", str(path)], check=True)
    stripped = json.loads(path.read_text())
    assert stripped["cells"][1]["outputs"] == []
    assert read_notebook(path).cells[0].record.prompt == "hello"


def test_sessions_keep_reports_conflicts_and_bad_files_and_goes_on(tmp_path, capsys):
    bad = tmp_path / "bad.ipynb"
    bad.write_text("{not json")
    conflicted = _write(tmp_path / "c.ipynb", [_cell(_record(), _record(prompt="other"))])
    good = _write(tmp_path / "g.ipynb", [_cell(_record())])
    status = main(["sessions", "keep", str(bad), str(conflicted), str(good)])
    err = capsys.readouterr().err
    assert status == 2
    assert "bad.ipynb is not valid notebook JSON" in err
    assert "c.ipynb: cell c1: the record in its metadata differs" in err
    assert METADATA_KEY in json.loads(good.read_text())["cells"][0]["metadata"]


def test_the_pre_commit_hook_runs_sessions_keep():
    hooks = (ROOT / ".pre-commit-hooks.yaml").read_text()
    assert "entry: python -m fuxi_notebook sessions keep" in hooks
    assert "types: [jupyter]" in hooks


def test_the_live_notebook_wins_over_the_file_for_order_sources_and_records(tmp_path):
    path = _write(tmp_path / "nb.ipynb", [_cell(_record("a"), cell_id="a",
                                                source="%%fuxi\nold text")])
    saved = read_notebook(path)
    live = [{"id": "new", "cell_type": "code", "source": "%%fuxi\nunsaved", "fuxi": None,
             "has_record_output": False},
            {"id": "a", "cell_type": "code", "source": "%%fuxi\nedited", "fuxi": None,
             "has_record_output": True}]
    merged = live_notebook(path, live, saved)
    assert [(c.cell_id, c.body, c.index) for c in merged.cells] == [
        ("new", "unsaved", 0), ("a", "edited", 1)]
    # not mirrored yet (the extension was installed after the run): the file's output
    assert merged.cells[1].record.cell_id == "a"
    live[1]["has_record_output"] = False  # the running cell: the browser cleared it
    assert live_notebook(path, live, saved).cells[1].record.cell_id == "a"
    live[1]["fuxi"] = {"record": _record("a", prompt="live"), "volatile": {}}
    assert live_notebook(path, live, saved).cells[1].record.prompt == "live"
