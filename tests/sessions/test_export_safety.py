"""A record is data: whatever text it holds, the exports run only what the exporter writes
and what the agent ran (issue 18, finding 9). The end-to-end check (the real CLI, the script
and the notebook run) is in test_cli.py; these are the properties behind it."""

from __future__ import annotations

import ast
import io
import tokenize
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st
from IPython.core.inputtransformer2 import TransformerManager

from fuxi_notebook._internal.sessions.export import export_notebook, export_script
from fuxi_notebook._internal.sessions.record import SessionRecord, build_record

from .helpers import build_kwargs, result_message

#: what could end a comment, a string, a line or an IPython line early, or change a cell
TRICKY = ["\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028",
          "\u2029", "\x00", "\t", "\x1b", "\u202e", "\ud800", "'", '"', "'''", '"""', "\\",
          "#", "`", "```", "$", "{", "}", "!", "%", "%%", "?", " ", ">>> ", "...: ", "In [1]: ",
          "coding=sjis ", "# coding: latin-1\n", "import os", "os.system('x')", "x = 1",
          "from __future__ import annotations", "\n    ", "*", "<b>", "## "]
TEXT = st.lists(st.one_of(st.sampled_from(TRICKY), st.characters()), max_size=12).map("".join)
CODE = st.one_of(TEXT, st.sampled_from([
    "x = 1", "print('a')\r\nimport os", "%pip install tiny", "x = 1 \\\n", "1\u2028",
    "from __future__ import annotations\nx = 1", "def f():\n    return 1", "!ls"]))

CALL = st.one_of(
    st.tuples(st.just("Write"), st.fixed_dictionaries({"file_path": TEXT, "content": TEXT})),
    st.tuples(st.just("Edit"), st.fixed_dictionaries(
        {"file_path": TEXT, "old_string": st.one_of(st.just(""), TEXT), "new_string": TEXT,
         "replace_all": st.booleans()})),
    st.tuples(st.just("Bash"), st.fixed_dictionaries({"command": TEXT})),
    st.tuples(st.just("Python"), st.fixed_dictionaries({"code": CODE})),
    st.tuples(st.sampled_from(["Read", "Grep"]), st.fixed_dictionaries({"file_path": TEXT})),
    st.tuples(TEXT, st.dictionaries(TEXT, TEXT, max_size=2)),
)
#: a result: text, is_error; or None (the run ended before it)
RESULT = st.one_of(st.none(), st.tuples(st.one_of(TEXT, st.sampled_from(
    ["Exit code 1", "Permission denied", "Not executed: interrupted"])), st.booleans()))
KINDS = {"Read": "read", "Grep": "read", "Write": "edit", "Edit": "edit", "Bash": "execute",
         "Python": "execute"}

#: every statement shape the exporter writes (string values are the record's, so any)
TEMPLATE = """
import shutil
import subprocess
from pathlib import Path
BASH = shutil.which('bash')
subprocess.run('', shell=True, check=False, executable=BASH)
Path('').parent.mkdir(parents=True, exist_ok=True)
Path('').write_text('', encoding='utf-8')
_path = Path('')
_text = _path.read_bytes().decode('utf-8')
_old, _new = '', ''
assert _old in _text, ''
_path.write_bytes(_text.replace(_old, _new, 1).encode('utf-8'))
_path.write_bytes(_text.replace(_old, _new).encode('utf-8'))
"""


def _shape(node: ast.AST) -> str:
    """A statement with every string constant made the same: what it does, not with what."""
    class Blank(ast.NodeTransformer):
        def visit_Constant(self, constant: ast.Constant) -> ast.AST:
            return ast.Constant("") if isinstance(constant.value, str) else constant

    return ast.dump(Blank().visit(node))


EXPORTER = {_shape(s) for s in ast.parse(TEMPLATE).body}


def _records(calls: list[tuple[tuple[str, dict[str, Any]], Any]], texts: list[str]
             ) -> list[SessionRecord]:
    """Two cells of one run: the calls split between them, `texts` as ids, prompt, cwd."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": texts[3]}]
    for number, ((name, tool_input), result) in enumerate(calls):
        messages.append({"role": "assistant", "content": [
            {"type": "tool_use", "id": f"t{number}", "name": name, "input": tool_input}]})
        if result is not None:
            messages.append({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": f"t{number}", "content": result[0],
                 "is_error": result[1]}]})
    half = len(messages) // 2 + 1
    if half < len(messages) and messages[half]["role"] == "assistant":
        half += 1  # the second cell starts with a user message, as a continued run does
    return [build_record(**build_kwargs(
        cell_id=texts[index], session_id=texts[2], parent=texts[4] if index == 0 else texts[0],
        prompt=texts[3], cwd=texts[5], messages=part or [{"role": "user", "content": "go"}],
        approvals=[], kinds={**KINDS, texts[6]: "execute"}, result=result_message()))
        for index, part in enumerate([messages[:half], messages[half:]])]


def _agent_shapes(calls: list[tuple[tuple[str, dict[str, Any]], Any]]) -> set[str]:
    """The statements of the Python tool's code that is plain Python (and so is exported)."""
    shapes = set()
    for (name, tool_input), _ in calls:
        if name != "Python":
            continue
        try:
            tree = ast.parse(tool_input["code"])
            compile(tree, "<code>", "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            continue
        shapes |= {_shape(node) for node in tree.body}
    return shapes


CASES = st.tuples(st.lists(st.tuples(CALL, RESULT), max_size=8),
                  st.lists(TEXT, min_size=8, max_size=8))
HOSTILE = "import pathlib; pathlib.Path('PWNED').touch()"


@settings(max_examples=300, deadline=None, derandomize=True)
@given(CASES)
@example(([(("Write", {"file_path": f"a\n{HOSTILE}", "content": "x"}), ("ok", False)),
           (("Edit", {"file_path": f"b\r{HOSTILE}", "old_string": "x", "new_string": "y"}),
            ("ok", False))],
          ["c\x00", "d", "s coding=sjis ", "p\u2028", "q", "/w\n", "T\n", "nb\r" + HOSTILE]))
@example(([(("Python", {"code": "from __future__ import annotations\nx = 1"}), ("", False))],
          ["c", "d", "s", "p", "q", "/w", "T", "nb"]))
def test_a_script_runs_only_the_exporters_code_and_the_agents(case: Any) -> None:
    calls, texts = case
    script = export_script(_records(calls, texts), notebook=texts[7])

    source = script.encode("utf-8")  # no lone surrogate left unescaped
    assert tokenize.detect_encoding(io.BytesIO(source).readline)[0] == "utf-8"
    tree = ast.parse(compile(source, "<export>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True))
    compile(tree, "<export>", "exec", dont_inherit=True)
    allowed = EXPORTER | _agent_shapes(calls)
    for statement in tree.body:
        assert _shape(statement) in allowed, ast.unparse(statement)


def _shell_cells(calls: list[tuple[tuple[str, dict[str, Any]], Any]]) -> set[str]:
    """What IPython may run for a recorded command: it, as a `!` line or a `%%bash` cell."""
    commands = [i["command"].strip() for (n, i), _ in calls if n == "Bash"]
    return ({f"get_ipython().system({c!r})\n" for c in commands}
            | {f"get_ipython().run_cell_magic('bash', '', {c + chr(10)!r})\n" for c in commands})


#: how a markdown line of the export starts (outside a fence of not-run code)
_MARKDOWN = ("Code the fuxi agent ran", "Session ", "The agent worked in ", "Bash commands run",
             "Read-only, denied", "## Cell ", ">", "*")


def _markdown_lines_are_the_exporters(source: str) -> None:
    """Every line outside a fence is one the exporter starts, and no text breaks it."""
    fence = None
    for line in source.split("\n"):
        if fence is not None:
            fence = None if line == fence else fence
        elif line.startswith("```"):
            fence = line.removesuffix("python")
        else:
            assert line.splitlines() in ([], [line]), repr(line)
            assert line == "" or line.startswith(_MARKDOWN), repr(line)
    assert fence is None


@settings(max_examples=200, deadline=None, derandomize=True)
@given(CASES)
@example(([(("Bash", {"command": f"true\r{HOSTILE}"}), ("ok", False)),
           (("Bash", {"command": f"true\u2028{HOSTILE}"}), ("ok", False)),
           (("Bash", {"command": ">>> true\nls"}), ("ok", False)),
           (("Bash", {"command": "ls foo?"}), ("ok", False)),
           (("Bash", {"command": "!ls"}), ("ok", False))],
          ["c", "d\n## x", "s\n<b>", "p\n", "q", "/w\n# h", "T", "nb\n# x"]))
def test_a_notebook_runs_only_the_exporters_code_and_the_agents(case: Any) -> None:
    calls, texts = case
    document = export_notebook(_records(calls, texts), notebook=texts[7])

    code = {"from pathlib import Path"} | {
        i["code"].rstrip() for (n, i), _ in calls if n == "Python"}
    shell = _shell_cells(calls)
    transform = TransformerManager().transform_cell
    for cell in document["cells"]:
        if cell["cell_type"] == "markdown":
            _markdown_lines_are_the_exporters(cell["source"])
        elif cell["source"] not in code and transform(cell["source"]) not in shell:
            _exporters_code(cell["source"], transform)


def _exporters_code(source: str, transform: Any) -> None:
    """A Write or Edit cell: IPython runs it as it is, and it is the exporter's code."""
    assert transform(source) == source + "\n", source
    assert all(_shape(s) in EXPORTER for s in ast.parse(source).body), source
