"""Reading %%fuxi cells and their records from a saved notebook; matching cells by text."""

from __future__ import annotations

import json

import nbformat
import pytest

from fuxi_notebook._internal.sessions.notebook_file import read_notebook, split_fuxi_source
from fuxi_notebook._internal.sessions.record import MAX_RECORD_BYTES, RECORD_MIME, build_record
from fuxi_notebook.errors import ConfigurationError

from .helpers import build_kwargs


def _record(cell_id, parent=None, prompt="Fix the failing test"):
    return build_record(**build_kwargs(cell_id=cell_id, parent=parent, prompt=prompt))


def _cell(source, cell_id, record=None, data=None):
    cell = nbformat.v4.new_code_cell(source, id=cell_id)
    if record is not None or data is not None:
        payload = data if data is not None else {RECORD_MIME: record.model_dump(mode="json")}
        cell.outputs = [nbformat.v4.new_output("display_data", data=payload,
                                               metadata={"fuxi": {"cost_usd": 0.5}})]
    return cell


def _write(tmp_path, cells):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# title", id="md"), *cells]
    path = tmp_path / "n.ipynb"
    nbformat.write(nb, path)
    return path


def test_split_fuxi_source():
    assert split_fuxi_source("\n%%fuxi --new\nhello\nworld\n") == ("--new", "hello\nworld")
    assert split_fuxi_source("%%fuxi\nhi") == ("", "hi")
    assert split_fuxi_source("%%fuxiX\nhi") is None
    assert split_fuxi_source("print(1)") is None


def test_records_chains_and_volatile_metadata(tmp_path):
    path = _write(tmp_path, [
        _cell("%%fuxi\none", "a", _record("a")),
        _cell("x = 1", "code"),
        _cell("%%fuxi\ntwo", "b", _record("b", parent="a")),
        _cell("%%fuxi\nthree", "c"),
    ])
    notebook = read_notebook(path)
    assert [c.cell_id for c in notebook.cells] == ["a", "b", "c"]
    assert notebook.cells[0].volatile == {"cost_usd": 0.5}
    assert [c.key for c in notebook.chain("b")] == ["a", "b"]
    assert notebook.recorded_above(notebook.cells[2].index).key == "b"
    assert notebook.recorded_above(notebook.cells[0].index) is None


def test_identical_cells_are_matched_in_order_of_execution(tmp_path):
    path = _write(tmp_path, [_cell("%%fuxi\nsame", "a"), _cell("%%fuxi\nother", "b"),
                             _cell("%%fuxi  \nsame\n", "c")])
    notebook = read_notebook(path)
    first = notebook.match("", "same")
    assert first.cell_id == "a"
    second = notebook.match("", "same", after=first.index, used=frozenset({first.index}))
    assert second.cell_id == "c"
    # run again from the top (Restart & Run All in the same session of the matcher)
    assert notebook.match("", "same", after=second.index,
                          used=frozenset({first.index, second.index})).cell_id == "a"
    assert notebook.match("--new", "same") is None  # options are part of the cell's text


def test_a_reordered_notebook_keeps_each_record_with_its_cell(tmp_path):
    path = _write(tmp_path, [_cell("%%fuxi\ntwo", "b", _record("b", parent="a")),
                             _cell("%%fuxi\none", "a", _record("a"))])
    notebook = read_notebook(path)
    assert notebook.cell("a").body == "one" and notebook.match("", "two").key == "b"
    assert [c.key for c in notebook.chain("b")] == ["a", "b"]


@pytest.mark.parametrize(("data", "problem"), [
    ({RECORD_MIME: "{not json"}, "not valid JSON"),
    ({RECORD_MIME: {"version": 99}}, "unsupported fuxi session record version 99"),
    ({RECORD_MIME: {"version": 1, "cell_id": "a"}}, "invalid fuxi session record"),
    ({RECORD_MIME: "x" * (MAX_RECORD_BYTES + 1)}, "too large"),
])
def test_unreadable_records_say_why_and_break_no_chain_silently(tmp_path, data, problem):
    path = _write(tmp_path, [_cell("%%fuxi\none", "a", data=data),
                             _cell("%%fuxi\ntwo", "b", _record("b", parent="a"))])
    notebook = read_notebook(path)
    assert notebook.cells[0].record is None and problem in notebook.cells[0].problem
    with pytest.raises(ConfigurationError, match="cell a has no readable session record"):
        notebook.chain("b")


def test_circular_parents_and_bad_files(tmp_path):
    path = _write(tmp_path, [_cell("%%fuxi\none", "a", _record("a", parent="b")),
                             _cell("%%fuxi\ntwo", "b", _record("b", parent="a"))])
    with pytest.raises(ConfigurationError, match="circle"):
        read_notebook(path).chain("b")
    bad = tmp_path / "bad.ipynb"
    bad.write_text("{")
    with pytest.raises(ConfigurationError, match="not valid notebook JSON"):
        read_notebook(bad)
    bad.write_text(json.dumps({"nbformat": 4}))
    with pytest.raises(ConfigurationError, match="no 'cells' list"):
        read_notebook(bad)
    with pytest.raises(ConfigurationError, match="cannot read the notebook"):
        read_notebook(tmp_path / "missing.ipynb")
