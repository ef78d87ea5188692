"""`python -m fuxi_notebook sessions provenance NB`: the cells an agent inserted or edited,
for review, read from a file we did not write: malformed entries are named, secrets in a
cell are redacted, a bad file is one line and exit status 2."""

from __future__ import annotations

import json
import subprocess
import sys

import nbformat

ENTRY = {"agent_cell": "agent", "session": "3f2a1b9c-0000", "tool": "InsertCell",
         "at": "2026-12-06T09:30:00Z"}


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fuxi_notebook", "sessions", "provenance",
                           *args], capture_output=True, text=True)


def _notebook(tmp_path, *cells):
    nb = nbformat.v4.new_notebook()
    nb.cells = list(cells)
    path = tmp_path / "nb.ipynb"
    nbformat.write(nb, path)
    return path


def test_each_marked_cell_names_its_agent_cell_and_shows_its_source(tmp_path):
    key = "sk-ant-api03-" + "B" * 90
    path = _notebook(
        tmp_path,
        nbformat.v4.new_code_cell("%%fuxi\nload the sales data", id="agent"),
        nbformat.v4.new_code_cell(f"token = '{key}'\ndf = load()", id="made",
                                  metadata={"fuxi": {"provenance": [ENTRY, {"tool": 3}]}}),
        nbformat.v4.new_code_cell("plain = 1", id="plain"))
    done = _run(str(path))
    assert done.returncode == 0, done.stderr
    assert "1 cell(s) an agent inserted or edited" in done.stdout
    assert ("inserted by agent cell 1 “load the sales data” · InsertCell · session 3f2a1b9c"
            in done.stdout)
    assert "! an entry that is not {agent_cell, session, tool, at}" in done.stdout
    assert "    | df = load()" in done.stdout and key not in done.stdout
    assert "plain = 1" not in done.stdout
    data = json.loads(_run(str(path), "--json").stdout)
    assert [c["id"] for c in data] == ["made"] and data[0]["changes"][0]["agent_cell_at"] == 1


def test_an_agent_cell_no_longer_there_and_a_notebook_without_marks(tmp_path):
    path = _notebook(tmp_path, nbformat.v4.new_markdown_cell(
        "# Notes", id="m", metadata={"fuxi": {"provenance": [{**ENTRY, "tool": "EditCell"}]}}))
    assert "edited by agent cell agent (no longer in the notebook)" in _run(str(path)).stdout
    empty = _notebook(tmp_path, nbformat.v4.new_code_cell("x = 1", id="x"))
    assert "no cell carries an agent's provenance" in _run(str(empty)).stdout


def test_a_file_that_is_not_a_notebook_is_one_line_and_status_2(tmp_path):
    bad = tmp_path / "bad.ipynb"
    bad.write_text("{not json")
    done = _run(str(bad))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


def test_sessions_keep_and_nbstripout_keep_the_marks(tmp_path):
    """An agent cell inserted for other cells (`about`) that the agent also edited keeps
    both marks when `sessions keep` copies its record in, and nbstripout keeps them all."""
    from fuxi_notebook.__main__ import main

    record = {"application/vnd.fuxi.session.v1+json": {"cell_id": "agent", "prompt": "p"},
              "text/plain": "fuxi session"}
    agent = nbformat.v4.new_code_cell("%%fuxi\np", id="agent", metadata={"fuxi": {
        "about": ["made"], "provenance": [{**ENTRY, "tool": "EditCell"}]}})
    agent.outputs = [nbformat.v4.new_output("display_data", data=record)]
    made = nbformat.v4.new_code_cell("df = load()", id="made",
                                     metadata={"fuxi": {"provenance": [ENTRY]}})
    path = _notebook(tmp_path, agent, made)
    assert main(["sessions", "keep", str(path)]) == 0
    subprocess.run([sys.executable, "-m", "nbstripout", str(path)], check=True)
    cells = json.loads(path.read_text())["cells"]
    assert cells[0]["outputs"] == [] and cells[0]["metadata"]["fuxi"]["about"] == ["made"]
    assert cells[0]["metadata"]["fuxi"]["record"]["prompt"] == "p"
    assert cells[0]["metadata"]["fuxi"]["provenance"][0]["tool"] == "EditCell"
    assert cells[1]["metadata"]["fuxi"] == {"provenance": [ENTRY]}
    assert "inserted by agent cell 1 “p”" in _run(str(path)).stdout
