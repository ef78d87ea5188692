"""`python -m fuxi_notebook sessions list|show|export` and the export functions behind it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from fuxi_notebook._internal.sessions.export import (
    export_jsonl,
    export_notebook,
    export_script,
    notebook_sessions,
    session_transcript,
)
from fuxi_notebook._internal.sessions.notebook_file import read_notebook
from fuxi_notebook._internal.sessions.record import RECORD_MIME, build_record

from .helpers import build_kwargs, result_message, run_approvals, run_messages

REPO = Path(__file__).resolve().parents[2]
SID_A = "aaaa1111-0000-4000-8000-000000000001"
SID_B = "bbbb2222-0000-4000-8000-000000000002"
DENIED = "Permission to use Bash was denied: deleting files."


def _conversation(prompt, calls):
    """Prompt, then one assistant call and its result per `(name, input, result[, error])`."""
    messages = [{"role": "user", "content": prompt}]
    for number, (name, tool_input, result, *error) in enumerate(calls, 1):
        messages.append({"role": "assistant", "content": [
            {"type": "tool_use", "id": f"t{number}", "name": name, "input": tool_input}]})
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"t{number}", "content": result,
             "is_error": bool(error and error[0])}]})
    messages.append({"role": "assistant", "content": [{"type": "text", "text": "Done."}]})
    return messages


def _record(cell_id, session_id, parent, prompt, calls, approvals=(), turns=None):
    return build_record(**build_kwargs(
        cell_id=cell_id, session_id=session_id, parent=parent, prompt=prompt,
        messages=_conversation(prompt, calls), approvals=list(approvals),
        result=result_message(num_turns=turns or len(calls) + 1), kinds=KINDS))


#: the kinds the tools declare, as a live run records them
KINDS = {"Read": "read", "Write": "edit", "Edit": "edit", "Bash": "execute", "Python": "execute"}


GREETING_CALLS = [
    ("Read", {"file_path": "README.md"}, "# readme"),
    ("Write", {"file_path": "out/hello.txt", "content": "hello\n"}, "File created"),
    ("Bash", {"command": "echo done >> out/hello.txt"}, "(no output)"),
    ("Python", {"code": "open('py.txt', 'w').write('from python')"}, "11"),
    ("Edit", {"file_path": "out/hello.txt", "old_string": "hello", "new_string": "hi"},
     "The file out/hello.txt has been updated (1 occurrence replaced)."),
    ("Bash", {"command": "rm -rf out"}, DENIED, True),
    ("Python", {"code": "%pip install tiny"}, "Successfully installed tiny"),
]


def _records():
    one = build_record(**build_kwargs(cell_id="cell-one", session_id=SID_A,
                                      messages=run_messages(), approvals=run_approvals()))
    two = _record("cell-two", SID_A, "cell-one", "Write the greeting file\nthen check it",
                  GREETING_CALLS, approvals=[{"tool_use_id": "t6", "tool_name": "Bash",
                                              "decision": "deny", "source": "user"}])
    fork = _record("cell-fork", SID_B, "cell-two", "Try another way",
                   [("Bash", {"command": "ls"}, "out\npy.txt")])
    return one, two, fork


def _fuxi_cell(cell_id, prompt, record_data, cost=0.01):
    output = nbformat.v4.new_output("display_data", data={
        RECORD_MIME: record_data, "text/plain": "fuxi session"},
        metadata={"fuxi": {"cost_usd": cost}})
    cell = nbformat.v4.new_code_cell(f"%%fuxi\n{prompt}", outputs=[output])
    cell.id = cell_id
    return cell


@pytest.fixture
def notebook(tmp_path):
    """Session A (cell-one, cell-two), session B forking from cell-two, a broken record."""
    one, two, fork = _records()
    broken = {**one.model_dump(mode="json"), "version": 99, "cell_id": "cell-broken"}
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# Analysis"),
        _fuxi_cell("cell-one", one.prompt, one.model_dump(mode="json")),
        nbformat.v4.new_code_cell("x = 1"),
        _fuxi_cell("cell-two", two.prompt, two.model_dump(mode="json")),
        _fuxi_cell("cell-fork", fork.prompt, fork.model_dump(mode="json"), cost=0.005),
        _fuxi_cell("cell-broken", "Broken", broken),
    ])
    path = tmp_path / "analysis.ipynb"
    nbformat.write(nb, path)
    return path


def fuxi(*args, cwd=REPO):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "fuxi_notebook", *map(str, args)], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=60)


def _ok(done):
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return done.stdout


# -- the command line -------------------------------------------------------------------------

def test_help_lists_demo_and_sessions():
    out = _ok(fuxi("--help"))
    assert "demo" in out and "sessions" in out


def test_list_shows_each_session_with_its_fork_cost_and_unreadable_cells(notebook):
    done = fuxi("sessions", "list", notebook)
    lines = _ok(done).splitlines()

    assert lines[0].startswith("| session | cells | turns | cost |")
    assert lines[2] == ("| aaaa1111 | cell-one, cell-two | 12 | $0.0200 | claude-sonnet-5-5 | "
                        "Fix the failing test | success |")
    assert lines[3] == ("| bbbb2222 | cell-fork (fork of cell-two) | 2 | $0.0050 | "
                        "claude-sonnet-5-5 | Try another way | success |")
    assert lines[4].startswith("cell cell-broken: record unreadable: unsupported fuxi session "
                               "record version 99")
    assert len(lines) == 5
    assert done.stderr == ""


def test_show_a_cell_by_its_id(notebook):
    out = _ok(fuxi("sessions", "show", notebook, "cell-two"))

    assert out.startswith(f"Session {SID_A} (continues cell cell-one)\n")
    assert "=== cell cell-two: Write the greeting file ===\n\n> Write the greeting file\n" in out
    assert "Bash: rm -rf out (denied by you)" in out
    assert "=== cell cell-one" not in out and "cell-fork" not in out


def test_show_a_session_by_a_prefix_of_its_id(notebook):
    out = _ok(fuxi("sessions", "show", notebook, "bbbb2"))

    assert out.startswith(f"Session {SID_B} (continues cell cell-two)\n")
    assert "=== cell cell-fork: Try another way ===" in out
    assert "Bash: ls" in out
    assert "cell-one" not in out and "=== cell cell-two" not in out


def test_show_everything_warns_about_unreadable_records(notebook):
    done = fuxi("sessions", "show", notebook)
    out = _ok(done)

    for cell in ("cell-one", "cell-two", "cell-fork"):
        assert f"=== cell {cell}: " in out
    assert out.index(SID_A) < out.index(SID_B)
    assert done.stderr.startswith("fuxi sessions: warning: cell cell-broken: record unreadable")


def test_show_markdown(notebook):
    out = _ok(fuxi("sessions", "show", notebook, "cell-one", "--markdown"))

    assert out.startswith(f"# Session {SID_A}\n\n## cell cell-one: Fix the failing test\n\n")
    assert "<b>Edit</b> <code>src/add.js</code>" in out


def test_export_markdown_to_a_file_atomically(notebook, tmp_path):
    target = tmp_path / "exports" / "session.md"
    target.parent.mkdir()
    target.write_text("old contents")
    done = fuxi("sessions", "export", notebook, SID_A, "--format", "markdown", "-o", target)

    assert _ok(done) == ""
    text = target.read_text()
    assert text.startswith(f"# Session {SID_A}\n")
    assert "## cell cell-two: Write the greeting file" in text and "cell-fork" not in text
    assert text.endswith("\n")
    assert [p.name for p in target.parent.iterdir()] == ["session.md"]  # no temporary left


def test_export_jsonl_is_one_sorted_object_per_message(notebook):
    out = _ok(fuxi("sessions", "export", notebook, "--format", "jsonl"))
    lines = out.splitlines()
    objects = [json.loads(line) for line in lines]
    one, two, fork = _records()

    assert len(objects) == len(one.messages) + len(two.messages) + len(fork.messages)
    assert objects[0] == {"session_id": SID_A, "cell_id": "cell-one", "role": "user",
                          "content": "Fix the failing test"}
    assert objects[-1]["cell_id"] == "cell-fork" and objects[-1]["session_id"] == SID_B
    assert all(line.startswith('{"cell_id": ') for line in lines)  # keys sorted
    assert out == _ok(fuxi("sessions", "export", notebook, "--format", "jsonl"))


def test_exported_script_compiles_and_repeats_the_run(notebook, tmp_path):
    script = tmp_path / "greeting.py"
    _ok(fuxi("sessions", "export", notebook, "cell-two", "--format", "script", "-o", script))
    source = script.read_text()
    compile(source, str(script), "exec")

    assert "# %% cell cell-two: Write the greeting file\n" in source
    assert "subprocess.run('echo done >> out/hello.txt', shell=True, check=False" in source
    assert "# denied: Bash: rm -rf out\n# subprocess.run('rm -rf out'" in source
    assert "# Read: README.md (read-only, nothing to run)" in source
    assert "\n# %pip install tiny" in source  # IPython syntax: kept, commented out

    work = tmp_path / "work"
    work.mkdir()
    done = subprocess.run([sys.executable, str(script)], cwd=work, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert (work / "out" / "hello.txt").read_text() == "hi\ndone\n"
    assert (work / "py.txt").read_text() == "from python"


def test_export_notebook_needs_an_output_file(notebook, tmp_path):
    done = fuxi("sessions", "export", notebook, "--format", "notebook")
    assert done.returncode == 2
    assert done.stderr == "fuxi sessions: the notebook format needs -o FILE\n"

    target = tmp_path / "code.ipynb"
    _ok(fuxi("sessions", "export", notebook, "cell-two", "--format", "notebook", "-o", target))
    exported = nbformat.read(target, as_version=4)
    nbformat.validate(exported)
    assert [c.id for c in exported.cells] == [f"export-{n}"
                                              for n in range(1, len(exported.cells) + 1)]
    sources = [c.source for c in exported.cells if c.cell_type == "code"]
    assert "!echo done >> out/hello.txt" in sources
    assert "%pip install tiny" in sources
    assert not any("rm -rf" in s for s in sources)  # denied: only in a markdown note
    prompt = next(c for c in exported.cells if c.source.startswith("## Cell cell-two"))
    assert "> Write the greeting file\n> then check it" in prompt.source


def _fails(done, message):
    assert done.returncode == 2
    assert done.stdout == ""
    assert "Traceback" not in done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("fuxi sessions: "), done.stderr
    assert message in lines[0]


def test_a_missing_file_is_one_line(tmp_path):
    _fails(fuxi("sessions", "list", tmp_path / "nope.ipynb"), "cannot read the notebook")


@pytest.mark.parametrize(("text", "message"), [
    ("{not json", "is not valid notebook JSON"),
    ("[1, 2]", "is not a Jupyter notebook"),
    ("[" * 100_000, "analysis.ipynb"),
])
def test_a_file_that_is_not_a_notebook_is_one_line(tmp_path, text, message):
    path = tmp_path / "analysis.ipynb"
    path.write_text(text)
    for command in (["list"], ["show"], ["export", "--format", "script"]):
        _fails(fuxi("sessions", command[0], path, *command[1:]), message)


@pytest.mark.parametrize(("key", "message"), [
    ("nope-nope", "no session or cell 'nope-nope' in analysis.ipynb"),
    ("cel", "(a prefix needs at least 4 characters)"),
    ("cell", "the id prefix 'cell' is ambiguous: it matches cell cell-broken, cell cell-fork"),
    ("cell-broken", "cell cell-broken has no readable session record (unsupported fuxi"),
])
def test_bad_ids_are_one_line(notebook, key, message):
    _fails(fuxi("sessions", "show", notebook, key), message)
    _fails(fuxi("sessions", "export", notebook, key, "--format", "jsonl"), message)


def test_an_export_never_overwrites_its_notebook_or_writes_nowhere(notebook, tmp_path):
    before = notebook.read_bytes()
    _fails(fuxi("sessions", "export", notebook, "--format", "notebook", "-o", notebook),
           "will not overwrite")
    assert notebook.read_bytes() == before
    _fails(fuxi("sessions", "export", notebook, "--format", "script", "-o",
                tmp_path / "missing" / "x.py"), "cannot write")


def test_an_empty_notebook_lists_nothing_and_exports_nothing(tmp_path):
    path = tmp_path / "empty.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("%%fuxi\nhi")]),
                   path)
    assert _ok(fuxi("sessions", "list", path)) == (
        "No fuxi sessions are recorded in this notebook yet.\n")
    _fails(fuxi("sessions", "export", path, "--format", "script"), "no fuxi session is recorded")


# -- the export functions ---------------------------------------------------------------------

def test_notebook_sessions_groups_records_in_order_of_first_appearance(notebook):
    sessions = notebook_sessions(read_notebook(notebook))
    assert [(sid, [r.cell_id for r in records]) for sid, records in sessions] == [
        (SID_A, ["cell-one", "cell-two"]), (SID_B, ["cell-fork"])]


def test_session_transcript_heads_each_cell():
    one, two, _ = _records()
    text = session_transcript([one, two], markdown=False)
    assert text.startswith("=== cell cell-one: Fix the failing test ===\n\n> Fix the failing")
    assert "\n\n=== cell cell-two: Write the greeting file ===\n\n" in text
    md = session_transcript([two], markdown=True)
    assert md.startswith("## cell cell-two: Write the greeting file\n\n> Write the greeting")


def test_export_jsonl_keeps_unicode_and_one_line_per_message():
    record = _record("c", SID_A, None, "Grüße ✓", [])
    lines = export_jsonl([record]).splitlines()
    assert len(lines) == 2
    assert '"content": "Grüße ✓"' in lines[0]


def test_script_header_says_where_and_what():
    _, two, fork = _records()
    source = export_script([two, fork], notebook="analysis.ipynb")
    header = source.split("\nimport shutil")[0]
    assert header.startswith("# -*- coding: utf-8 -*-\n"  # record text cannot pick a codec
                             "# Code the fuxi agent ran from analysis.ipynb")
    assert f"# Session {SID_A}: cells cell-two (continues cell cell-one, not exported)" in header
    assert f"# Session {SID_B}: cells cell-fork\n" in header  # its parent is exported
    assert source.index("# %% cell cell-two") < source.index("# %% cell cell-fork")


def test_script_keeps_what_did_not_run_as_comments():
    calls = [
        ("Bash", {"command": "false"}, "Exit code 1", True),
        ("Bash", {"command": "make"}, "Blocked by a PreToolUse hook.", True),
        ("Python", {"code": "1 / 0"}, "ZeroDivisionError: division by zero", True),
        ("Edit", {"file_path": "a.txt", "old_string": "x", "new_string": "y"},
         "old_string was not found in a.txt.", True),
        ("Bash", {"command": "cat x"}, "Not executed: the run was interrupted.", True),
        ("InsertCell", {"code": "df.plot()"}, "Inserted."),
    ]
    messages = _conversation("go", calls)
    messages.append({"role": "assistant", "content": [
        {"type": "tool_use", "id": "late", "name": "Bash", "input": {"command": "date"}}]})
    record = build_record(**build_kwargs(cell_id="c", messages=messages, approvals=[]))
    source = export_script([record])
    compile(source, "<export>", "exec")

    # a command that ran and failed ran: it is repeated
    assert "\nsubprocess.run('false', shell=True" in source
    assert ("# failed in the run (Blocked by a PreToolUse hook.): Bash: make\n"
            "# subprocess.run('make'") in source
    assert "# failed in the run (ZeroDivisionError: division by zero): Python: 1 / 0\n# 1 / 0"\
        in source
    assert "# failed in the run (old_string was not found in a.txt.): Edit: a.txt" in source
    assert "# denied: Bash: cat x" in source
    assert "# InsertCell: df.plot() (not exported: no code to run)" in source
    assert "# no result recorded, it may not have run: Bash: date" in source
    for not_run in ("make", "cat x", "date"):
        assert f"\nsubprocess.run('{not_run}'" not in source


def test_tool_use_ids_repeated_in_other_cells_do_not_mix():
    one, two, _ = _records()  # both use ids t1, t2, t3 ...; cell-one denied its t3
    source = export_script([one, two])
    assert "\nsubprocess.run('echo done >> out/hello.txt', shell=True" in source  # two's t3
    assert "# failed in the run (1 failing: add()): Bash: npm test" in source  # one's t1
    assert "# denied: Bash: rm -rf node_modules" in source


def test_a_result_owed_to_the_next_cell_counts():
    first = build_record(**build_kwargs(cell_id="a", approvals=[], messages=[
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "make"}}]}]))
    second = build_record(**build_kwargs(cell_id="b", parent="a", approvals=[], messages=[
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "built"},
            {"type": "text", "text": "go on"}]}]))
    assert "\nsubprocess.run('make', shell=True" in export_script([first, second])
    assert "no result recorded" in export_script([first])


def test_edit_variants_become_guarded_code(tmp_path):
    calls = [
        ("Edit", {"file_path": "new.txt", "old_string": "", "new_string": "a\nb\n"}, "created"),
        ("Edit", {"file_path": "new.txt", "old_string": "a", "new_string": "c",
                  "replace_all": True}, "updated"),
        ("Write", {"file_path": "q.txt", "content": "it's \"quoted\"\n\\ done"}, "written"),
    ]
    record = _record("c", SID_A, None, "edit", calls)
    source = export_script([record])
    assert "_text.replace(_old, _new).encode('utf-8')" in source  # replace_all: no count
    (tmp_path / "script.py").write_text(source)
    subprocess.run([sys.executable, "script.py"], cwd=tmp_path, check=True, timeout=60)
    assert (tmp_path / "new.txt").read_text() == "c\nb\n"
    assert (tmp_path / "q.txt").read_text() == "it's \"quoted\"\n\\ done"

    (tmp_path / "new.txt").write_text("zzz")  # the guard stops a wrong edit
    only_edit = _record("c", SID_A, None, "edit", calls[1:2])
    (tmp_path / "edit.py").write_text(export_script([only_edit]))
    done = subprocess.run([sys.executable, "edit.py"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode != 0
    assert "AssertionError: the text to replace is not in new.txt" in done.stderr
    assert (tmp_path / "new.txt").read_text() == "zzz"


def test_notebook_export_is_valid_deterministic_and_shell_safe():
    calls = [
        ("Bash", {"command": "echo $HOME"}, "/root"),
        ("Bash", {"command": "cd src\nls"}, "a.py"),
        ("Bash", {"command": "  pytest -q  "}, "1 passed"),
    ]
    record = _record("c", SID_A, None, "shell", calls)
    document = export_notebook([record], notebook="x.ipynb")
    nbformat.validate(document)
    assert document == export_notebook([record], notebook="x.ipynb")
    code = [c["source"] for c in document["cells"] if c["cell_type"] == "code"]
    assert code == ["from pathlib import Path", "%%bash\necho $HOME", "%%bash\ncd src\nls",
                    "!pytest -q"]
    assert document["cells"][0]["source"].startswith("Code the fuxi agent ran from x.ipynb")



# -- record text never becomes code (issue 18, finding 9) --------------------------------------

#: what a record could smuggle into generated code: it creates the sentinel file PWNED
INJECT = "import pathlib; pathlib.Path('PWNED').write_text('ran')"
#: every way a value could end a comment, a string or a line early (Python, IPython,
#: markdown); NUL last: no file name or command can hold it
BREAKS = ["\n", "\r", "\r\n", "\u2028", "\u2029", "\x0b", "\x0c", "\x1c", "\x85", "\x00"]


def _hostile_notebook(folder):
    """One cell whose every field that reaches generated code holds a line break + INJECT."""
    calls = []
    for number, brk in enumerate(BREAKS):
        tail = f"{brk}{INJECT}{brk}#"
        failed = brk == "\x00"  # the run could not do it either
        calls += [
            ("Write", {"file_path": f"w{number}.txt{tail}", "content": f"w{tail}"}, "created",
             failed),
            ("Edit", {"file_path": f"e{number}.txt{tail}", "old_string": "",
                      "new_string": f"e{tail}"}, "created", failed),
            ("Edit", {"file_path": f"e{number}.txt{tail}", "old_string": f"e{tail}",
                      "new_string": f"f{tail}"}, "updated", failed),
            ("Bash", {"command": f"true{tail}"},  # bash: a syntax error
             "embedded null byte" if failed else "Exit code 2", True),
            ("Bash", {"command": f"echo {number}{tail}"}, "Permission denied", True),
            ("Read", {"file_path": f"r{tail}"}, "read"),
            (f"Tool{tail}", {"x": f"x{tail}"}, "done"),
            ("Python", {"code": f"1{tail}"}, "failed: syntax", True),
        ]
    breaks = "".join(BREAKS)
    record = build_record(**build_kwargs(
        cell_id=f"c{breaks}{INJECT}", session_id=f"s{breaks}{INJECT}", parent=f"p{breaks}",
        prompt=f"go{breaks}{INJECT}", cwd=f"/w{breaks}{INJECT}",
        messages=_conversation(f"go{breaks}{INJECT}", calls), approvals=[],
        result=result_message(), kinds=KINDS))
    nb = nbformat.v4.new_notebook(cells=[
        _fuxi_cell("hostile", "go", record.model_dump(mode="json"))])
    path = folder / "hostile.ipynb"
    nbformat.write(nb, path)
    return path


def test_an_exported_script_never_runs_record_text_as_code(tmp_path):
    script = tmp_path / "export.py"
    _ok(fuxi("sessions", "export", _hostile_notebook(tmp_path), "--format", "script",
             "-o", script))
    work = tmp_path / "work"
    work.mkdir()
    done = subprocess.run([sys.executable, str(script)], cwd=work, capture_output=True,
                          text=True, timeout=60)

    assert not (work / "PWNED").exists()
    assert done.returncode == 0, done.stderr  # and what ran is repeated, byte for byte
    for number, brk in enumerate(BREAKS[:-1]):
        tail = f"{brk}{INJECT}{brk}#"
        assert (work / f"w{number}.txt{tail}").read_bytes() == f"w{tail}".encode()
        assert (work / f"e{number}.txt{tail}").read_bytes() == f"f{tail}".encode()


#: runs a notebook's code cells in IPython, as a kernel would (without one)
_RUN_CELLS = """\
import sys, nbformat
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
for cell in nbformat.read(sys.argv[1], as_version=4).cells:
    if cell.cell_type == "code":
        print(cell.id, shell.run_cell(cell.source).success)
"""


def test_an_exported_notebook_never_runs_record_text_as_code(tmp_path):
    target = tmp_path / "export.ipynb"
    _ok(fuxi("sessions", "export", _hostile_notebook(tmp_path), "--format", "notebook",
             "-o", target))
    work = tmp_path / "work"
    work.mkdir()
    done = subprocess.run([sys.executable, "-c", _RUN_CELLS, str(target)], cwd=work,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "IPYTHONDIR": str(tmp_path / "ipython")})

    assert not (work / "PWNED").exists()
    assert done.returncode == 0, done.stderr
    cells = {c.id: c.source for c in nbformat.read(target, as_version=4).cells}
    ran = dict(line.split() for line in done.stdout.splitlines() if line.startswith("export-"))
    assert ran and all(cells[cell].startswith(("%%bash", "get_ipython().run_cell_magic('bash'"))
                       for cell, success in ran.items() if success != "True"), done.stdout
    for number, brk in enumerate(BREAKS[:-1]):
        tail = f"{brk}{INJECT}{brk}#"
        assert (work / f"w{number}.txt{tail}").read_bytes() == f"w{tail}".encode()
        assert (work / f"e{number}.txt{tail}").read_bytes() == f"f{tail}".encode()
