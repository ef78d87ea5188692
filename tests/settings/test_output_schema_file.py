"""`%%fuxi --output-schema FILE` in a real kernel: a good schema file (relative to the
kernel's folder, with a byte-order mark as some editors write it) is read through the
bounded reader and gives the answer as data. Bad files are rows of bad_file_readers.py."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat

from fuxi_notebook.testing import Turn, text, tool_use
from fuxi_notebook.testing.frontend import NotebookFrontend

SCHEMA = {"type": "object", "properties": {"region": {"type": "string"}},
          "required": ["region"]}


def test_a_schema_file_gives_the_answer_as_data(tmp_path: Path, fake_api):
    (tmp_path / "schema.json").write_bytes(b"\xef\xbb\xbf" + json.dumps(SCHEMA).encode())
    fake_api.add(Turn([text("North."), tool_use("StructuredOutput", {"region": "North"})]))
    cells = [nbformat.v4.new_code_cell("%load_ext fuxi_notebook"),
             nbformat.v4.new_code_cell("%%fuxi --output-schema schema.json\nwhich region?"),
             nbformat.v4.new_code_cell("print(_fuxi.structured_output)")]
    env = {"FUXI_NOTEBOOK": str(tmp_path / "nb.ipynb"), "ANTHROPIC_BASE_URL": fake_api.url,
           "ANTHROPIC_API_KEY": "sk-ant-test-key-for-the-kernel-0035", "FUXI_REPLAY": ""}
    with NotebookFrontend(cwd=str(tmp_path), cell_ids=False, env=env) as frontend:
        for cell in cells:
            assert frontend.execute(cell) == "ok", cell.outputs
    printed = "".join(o.get("text", "") for o in cells[2].outputs)
    assert printed.strip() == "{'region': 'North'}"
    sent = fake_api.requests[0]
    assert any(tool["name"] == "StructuredOutput" and tool["input_schema"]["properties"]
               == SCHEMA["properties"] for tool in sent["tools"])
