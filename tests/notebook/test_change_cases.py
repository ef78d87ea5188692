"""The testing frontend's emulation of the extension's cell changes against the one table
of cases (fuxi_notebook/testing/change_cases.json) that node runs against the extension's
own rules (labextension/test/change_rules.test.ts): the same answers, exactly, and the
same notebook afterwards, so the kernel tests that run against the emulation test what the
extension does."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from fuxi_notebook.testing.cell_changes import (
    OUTPUT_CASES,
    apply_change,
    change_cases,
    summarize_outputs,
)

TABLE = change_cases()


def _after(case: dict[str, Any]) -> list[Any]:
    by_id = {cell["id"]: cell for cell in TABLE["notebook"]}
    entries = case.get("after") or [cell["id"] for cell in TABLE["notebook"]]
    return [by_id[entry] if isinstance(entry, str) else entry for entry in entries]


@pytest.mark.parametrize("case", TABLE["cases"], ids=[c["name"] for c in TABLE["cases"]])
def test_the_emulation_answers_each_case_as_the_table_says(case: dict[str, Any]) -> None:
    cells = copy.deepcopy(TABLE["notebook"])
    answer = apply_change(cells, copy.deepcopy(case["request"]), lambda: TABLE["new_id"])
    assert answer == case["answer"]
    assert json.loads(json.dumps(cells)) == _after(case)


def test_the_table_covers_every_request_the_kernel_sends() -> None:
    named = {case["request"].get("request") for case in TABLE["cases"]}
    assert {"insert_cell", "edit_cell", "delete_cell", "move_cell", "set_outputs",
            "restore_cell"} <= named


OUTPUTS = json.loads(OUTPUT_CASES.read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", OUTPUTS["cases"], ids=[c["name"] for c in OUTPUTS["cases"]])
def test_the_emulation_summarises_outputs_as_the_table_says(case: dict[str, Any]) -> None:
    """The `outputs` request (what the cells an agent cell is about show): the same table
    node runs against labextension/src/outputs.ts (labextension/test/outputs.test.ts)."""
    assert summarize_outputs(case["outputs"]) == case["summary"]
