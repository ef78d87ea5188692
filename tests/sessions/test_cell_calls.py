"""A cell tool's call in the transcript (issue 39 (2)): read by what the record noted of the
cell, or, in a record without it, by the cell's id and the input's own diff; never the
call's JSON. What the record keeps of a cell is redacted and capped like any text it keeps."""

from __future__ import annotations

import pytest

from fuxi_notebook._internal.sessions.record import (
    CELL_LINE_CHARS,
    CELL_SOURCE_CHARS,
    load_record,
    record_to_output,
)
from fuxi_notebook._internal.sessions.text.transcript import (
    input_summary,
    render_transcript,
    render_transcript_text,
)
from fuxi_notebook.errors import ConfigurationError

from .test_transcript_findings import _calls, _record

EDIT = {"cell_id": "c1", "old_string": "1 + 1", "new_string": "40 + 2"}


def test_a_record_without_the_cells_reads_the_id_and_the_inputs_diff():
    record = _record(_calls(("t1", "EditCell", EDIT, "Edited cell c1", False),
                            ("t2", "MoveCell", {"cell_id": "c2", "to_index": 0}, "Moved", False),
                            ("t3", "RunCell", {"cell_id": "c1"}, "42", False)))
    text, md = render_transcript_text(record), render_transcript(record)
    assert "EditCell: cell c1\n" in text and "-1 + 1" in text and "+40 + 2" in text
    assert "MoveCell: cell c2 → 1\n" in text
    assert "RunCell: cell c1\n" in text
    assert "cell_id" not in text and "cell_id" not in md


def test_the_cells_noted_name_position_first_line_and_whole_lines():
    cells = {"t1": {"at": 3, "line": "total = 1 + 1", "before": "# sum\ntotal = 1 + 1\n"},
             "t2": {"at": 0, "line": "import pandas as pd", "ran": "import pandas as pd\nx = 1"},
             "t3": {"at": 5, "line": "", "before": ""}}
    record = _record(_calls(("t1", "EditCell", EDIT, "Edited", False),
                            ("t2", "RunCell", {"cell_id": "c9"}, "", False),
                            ("t3", "DeleteCell", {"cell_id": "c5"}, "Deleted", False)),
                     cells=cells)
    text = render_transcript_text(record)
    assert "EditCell: cell 4: total = 1 + 1\n" in text
    assert "     # sum\n    -total = 1 + 1\n    +total = 40 + 2" in text  # context kept
    assert "RunCell: cell 1: import pandas as pd\n    import pandas as pd\n    x = 1" in text
    assert "DeleteCell: cell 6\n" in text  # an empty cell: its place only
    assert record_to_output(record, volatile={})[0][
        "application/vnd.fuxi.session.v1+json"]["cells"]["t1"]["at"] == 3


def test_what_the_record_keeps_of_a_cell_is_redacted_and_capped():
    key = "sk-ant-api03-" + "A" * 90
    cells = {"t1": {"at": 0, "line": f"key = '{key}'" + "x" * 500,
                    "before": f"key = '{key}'\n" + "y" * (CELL_SOURCE_CHARS * 2)}}
    record = _record(_calls(("t1", "EditCell", EDIT, "Edited", False)), cells=cells)
    kept = record.cells["t1"]
    assert key not in kept.line and key not in str(kept.before)
    assert len(kept.line) <= CELL_LINE_CHARS + 40
    assert len(str(kept.before)) < CELL_SOURCE_CHARS + 200
    assert key not in render_transcript_text(record) + render_transcript(record)


@pytest.mark.parametrize("bad", [{"at": -1}, {"at": "two"}, {"line": 3}, {"extra": 1}])
def test_a_saved_record_with_a_malformed_cell_entry_is_refused_in_one_line(bad):
    record = _record(_calls(("t1", "EditCell", EDIT, "Edited", False)),
                     cells={"t1": {"at": 1, "line": "x"}})
    data = record_to_output(record, volatile={})[0]["application/vnd.fuxi.session.v1+json"]
    data["cells"]["t1"] = bad
    with pytest.raises(ConfigurationError) as raised:
        load_record(data)
    assert "\n" not in str(raised.value)


def test_a_running_call_is_summarised_by_its_cell_not_its_json():
    assert input_summary("EditCell", EDIT) == "cell c1"
    assert input_summary("DeleteCell", {"cell_id": "c7"}) == "cell c7"
    assert input_summary("InsertCell", {"code": "print(1)"}) == "print(1)"
