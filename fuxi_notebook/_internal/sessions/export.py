"""A notebook's recorded sessions exported: transcripts, JSONL, a Python script, a notebook.

Core (no IPython), used by `python -m fuxi_notebook sessions`. The script and notebook
exports hold the code the agent ran, so a run can be reviewed, repeated or kept without
the agent. What did not run (denied, failed, no result) or changed nothing (read-only
tools) stays visible as comments, so the export never silently differs from the run.

A record is data, never code (a notebook may come from anyone): every value it puts into
generated code is a string literal, or a comment or markdown line whose non-printable
characters (line breaks of any kind, NUL, bidi controls) are written as Python escapes.
Only the code the Python tool ran, and the Bash commands, run as what they were.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from .notebook_file import SavedNotebook
from .record import SessionRecord
from .text.transcript import input_summary, render_transcript, render_transcript_text

__all__ = ["export_jsonl", "export_notebook", "export_script",
           "notebook_sessions", "printable_line", "session_transcript"]

_DENIAL = re.compile(r"denied|not granted|^\s*not executed", re.IGNORECASE)
#: The verdict line of a Bash result whose command ran (a non-zero exit is still a run).
_RAN = re.compile(r"^(Exit code -?\d+|Command timed out after \d+ ms)$", re.MULTILINE)
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]<>#|~])")
#: Line 1 of a script: Python reads a `coding:` declaration in line 1 or 2, and line 2 holds
#: record text (a session id), which must not choose how the file is decoded.
_CODING = "# -*- coding: utf-8 -*-"
#: A line IPython's prompt stripping would change (`>>> `, `...:`, `In [1]: `), in a cell.
_PROMPT = re.compile(r"\s*(>>>|\.\.\.|(\[nav\] |\[ins\] )?In \[)")


def notebook_sessions(notebook: SavedNotebook) -> list[tuple[str, list[SessionRecord]]]:
    """Session id -> its records in notebook order; sessions in order of first appearance."""
    sessions: dict[str, list[SessionRecord]] = {}
    for cell in notebook.cells:
        if cell.record is not None:
            sessions.setdefault(cell.record.session_id, []).append(cell.record)
    return list(sessions.items())


def session_transcript(records: Sequence[SessionRecord], *, markdown: bool) -> str:
    """Each cell's transcript under a heading naming the cell and its prompt."""
    parts = []
    for record in records:
        title = _cell_title(record)
        if markdown:
            parts.append(f"## {_md_escape(title)}\n\n{render_transcript(record)}")
        else:
            parts.append(f"=== {title} ===\n\n{render_transcript_text(record)}")
    return "\n\n".join(parts)


def export_jsonl(records: Iterable[SessionRecord]) -> str:
    """One JSON object per message (keys sorted, so the same records give the same bytes)."""
    return "".join(
        json.dumps({"session_id": r.session_id, "cell_id": r.cell_id, "role": m["role"],
                    "content": m["content"]}, sort_keys=True, ensure_ascii=False) + "\n"
        for r in records for m in r.messages)


# -- the code the agent ran ---------------------------------------------------------------

@dataclass(frozen=True)
class _Step:
    """One tool call as code: Python source, a shell command, or a note on what was not run."""

    kind: Literal["python", "bash", "code", "note"]
    text: str
    not_run: _Step | None = None  # a note's call, shown commented out (python/bash/code)


def _cells(records: Sequence[SessionRecord]) -> list[tuple[SessionRecord, list[_Step]]]:
    """Every record with its tool calls as steps, in order.

    A call's result is in its own record, or, if the run ended owing it, in the next one's
    first message. Tool use ids are looked up per record: hand-made ones may repeat.
    """
    results = [_results(record) for record in records]
    cells = []
    for index, record in enumerate(records):
        owed = results[index + 1] if index + 1 < len(records) else {}
        denied = {a.tool_use_id for a in record.approvals if a.decision == "deny"}
        cells.append((record, [
            _step(call, results[index].get(call["id"], owed.get(call["id"])),
                  call["id"] in denied, record.kinds.get(call["name"]))
            for call in _calls(record)]))
    return cells


def _results(record: SessionRecord) -> dict[str, tuple[str, bool]]:
    """Tool use id -> (result text, is_error) of the results in a record."""
    return {b["tool_use_id"]: (_result_text(b.get("content")), bool(b.get("is_error")))
            for m in record.messages if m["role"] == "user" for b in _blocks(m)
            if b.get("type") == "tool_result" and isinstance(b.get("tool_use_id"), str)}


def _calls(record: SessionRecord) -> list[dict[str, Any]]:
    """The well-formed tool calls of a record (a hand-edited notebook may hold others)."""
    return [b for m in record.messages if m["role"] == "assistant" for b in _blocks(m)
            if b.get("type") == "tool_use" and isinstance(b.get("id"), str)
            and isinstance(b.get("name"), str) and isinstance(b.get("input"), dict)]


def _step(call: dict[str, Any], result: tuple[str, bool] | None, denied: bool,
          kind: str | None) -> _Step:
    """`kind` is the tool's declared kind as recorded (a read changes nothing to re-run)."""
    name, args = call["name"], call["input"]
    about = f"{name}: {input_summary(name, args)}"
    if kind == "read":
        return _Step("note", f"{about} (read-only, nothing to run)")
    action = _action(name, args)
    if action is None:
        return _Step("note", f"{about} (not exported: no code to run)")
    if result is None:
        return _Step("note", f"no result recorded, it may not have run: {about}", action)
    text, is_error = result
    ran = name == "Bash" and _RAN.search(text) is not None
    if denied or (is_error and not ran and _DENIAL.search(text)):
        return _Step("note", f"denied: {about}", action)
    if is_error and not ran:
        return _Step("note", f"failed in the run ({_first_line(text)}): {about}", action)
    return action


def _action(name: str, args: dict[str, Any]) -> _Step | None:
    """The code a call runs, or None for a tool an export cannot repeat."""
    path = args.get("file_path")
    if name == "Python" and isinstance(args.get("code"), str):
        return _Step("python", args["code"])
    if name == "Bash" and isinstance(args.get("command"), str):
        return _Step("bash", args["command"])
    if name == "Write" and isinstance(path, str) and isinstance(args.get("content"), str):
        return _Step("code", _write_code(path, args["content"], f"Write {path}"))
    old, new = args.get("old_string"), args.get("new_string")
    if name != "Edit" or not (isinstance(path, str) and isinstance(old, str)
                              and isinstance(new, str)):
        return None
    if old == "":  # the Edit tool creates the file
        return _Step("code", _write_code(path, new, f"Edit (create) {path}"))
    count = "every occurrence" if args.get("replace_all") else "1 occurrence"
    return _Step("code", "\n".join([
        f"# Edit {printable_line(path)} (replace {count})",
        f"_path = Path({path!r})",
        "_text = _path.read_bytes().decode('utf-8')",
        f"_old, _new = {_literal(old)}, {_literal(new)}",
        f"assert _old in _text, {f'the text to replace is not in {path}'!r}",
        f"_path.write_bytes(_text.replace(_old, _new{'' if args.get('replace_all') else ', 1'})"
        ".encode('utf-8'))"]))


def _write_code(path: str, content: str, comment: str) -> str:
    return "\n".join([f"# {printable_line(comment)}",
                      f"Path({path!r}).parent.mkdir(parents=True, exist_ok=True)",
                      f"Path({path!r}).write_text({_literal(content)}, encoding='utf-8')"])


def _literal(text: str) -> str:
    """A Python literal of `text`: one repr per line when it has several, for reading."""
    lines = text.splitlines(keepends=True)
    if len(lines) <= 1:
        return repr(text)
    return "(\n" + "".join(f"    {line!r}\n" for line in lines) + ")"


def _script_code(step: _Step) -> str:
    """A step as plain Python (code that only IPython accepts is commented out)."""
    if step.kind == "bash":
        return f"# Bash: {printable_line(_first_line(step.text))}\n{_bash_call(step.text)}"
    if step.kind == "note":
        code = "" if step.not_run is None else (
            _bash_call(step.not_run.text) if step.not_run.kind == "bash" else step.not_run.text)
        return _comment(step.text) + ("\n" + _comment(code) if code else "")
    if step.kind == "python" and not _plain_python(step.text):
        return _script_code(_Step("note", "Python, not plain Python (IPython syntax?): it "
                                  "runs only in a notebook", step))
    return step.text.rstrip()


def _bash_call(command: str) -> str:
    return f"subprocess.run({_literal(command)}, shell=True, check=False, executable=BASH)"


def _plain_python(code: str) -> bool:
    """Compiles on its own, and still will in the middle of a script (no `__future__`)."""
    try:
        tree = cast(ast.Module, compile(code, "<fuxi Python call>", "exec", ast.PyCF_ONLY_AST,
                                        dont_inherit=True))
        compile(tree, "<fuxi Python call>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return not any(isinstance(node, ast.ImportFrom) and node.module == "__future__"
                   for node in tree.body)


def _header(records: Sequence[SessionRecord], notebook: str | None,
            value: Callable[[str], str]) -> list[str]:
    """What the export is, where it must run and what it leaves out (`value` quotes the
    record's and the caller's text for the target: a comment or markdown)."""
    source = f" from {value(notebook)}" if notebook else ""
    lines = [f"Code the fuxi agent ran{source}, exported by `python -m fuxi_notebook "
             "sessions export`."]
    cells = {r.cell_id for r in records}
    sessions: dict[str, list[SessionRecord]] = {}
    for record in records:
        sessions.setdefault(record.session_id, []).append(record)
    for session_id, own in sessions.items():
        line = f"Session {value(session_id)}: cells {', '.join(value(r.cell_id) for r in own)}"
        if own[0].parent and own[0].parent not in cells:
            line += f" (continues cell {value(own[0].parent)}, not exported)"
        lines.append(line)
    for cwd in dict.fromkeys(r.cwd for r in records if r.cwd):
        lines.append(f"The agent worked in {value(cwd)}: run this from there.")
    return [*lines, "Bash commands run one by one: a `cd` does not carry over to the next.",
            "Read-only, denied and failed calls are kept as comments."]


def export_script(records: Sequence[SessionRecord], *, notebook: str | None = None) -> str:
    """The code as a plain Python script, with `# %%` cells (VS Code and Jupytext open it)."""
    parts = ["\n".join([_CODING, *(_comment(line) for line in
                                   _header(records, notebook, printable_line))]),
             "import shutil\nimport subprocess\nfrom pathlib import Path\n\n"
             "BASH = shutil.which('bash')  # None: the default shell"]
    for record, steps in _cells(records):
        title = f"# %% {_cell_title(record)}"
        body = [_script_code(step) for step in steps] or ["# (no tool calls)"]
        parts.append("\n\n".join([title, *body]))
    return "\n\n\n".join(parts) + "\n"


def export_notebook(records: Sequence[SessionRecord], *,
                    notebook: str | None = None) -> dict[str, Any]:
    """The code as an nbformat v4 notebook: the prompts as markdown, calls as code cells."""
    import nbformat  # here: it loads jsonschema, seconds that the other exports need not pay

    # nbformat's constructors carry no annotations: typed views of them
    new_markdown_cell = cast("Callable[[str], Any]", nbformat.v4.new_markdown_cell)
    new_code_cell = cast("Callable[[str], Any]", nbformat.v4.new_code_cell)
    new_notebook = cast("Callable[..., dict[str, Any]]", nbformat.v4.new_notebook)
    header = _header(records, notebook, lambda text: _md_escape(printable_line(text)))
    cells: list[Any] = [new_markdown_cell("\n\n".join(header)),
                        new_code_cell("from pathlib import Path")]
    for record, steps in _cells(records):
        cells.append(new_markdown_cell(
            f"## Cell {_md_escape(printable_line(_one_line(record.cell_id)))}\n\n"
            f"{_quote(record.prompt)}"))
        for step in steps:
            if step.kind == "note" and cells[-1].cell_type == "markdown":
                cells[-1].source += "\n\n" + _notebook_note(step)
            elif step.kind == "note":  # after code: a markdown cell of its own
                cells.append(new_markdown_cell(_notebook_note(step)))
            else:
                cells.append(new_code_cell(_notebook_code(step)))
    for number, cell in enumerate(cells, 1):
        cell.id = f"export-{number}"
    document = new_notebook(cells=cells, metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"}})
    nbformat.validate(document)
    return document


def _cell_title(record: SessionRecord) -> str:
    return printable_line(f"cell {_one_line(record.cell_id)}: {_first_line(record.prompt)}")


def _notebook_code(step: _Step) -> str:
    """A step as notebook code: a shell command as a `!` line if IPython runs that line as
    exactly the command, else as a `%%bash` cell, or the call that cell makes if IPython's
    prompt stripping (`>>> `) would change the command."""
    if step.kind != "bash":
        return step.text.rstrip()
    command = step.text.strip()
    if _shell_line(command):
        return f"!{command}"
    if not any(_PROMPT.match(line) for line in command.splitlines()):
        return f"%%bash\n{command}"
    return f"get_ipython().run_cell_magic('bash', '', {command + chr(10)!r})"


def _shell_line(command: str) -> bool:
    """IPython splits a cell at every `str.splitlines` break, expands `$name` and `{expr}`
    in a `!` line, and reads `!!` and a trailing `?` as other commands."""
    return (command.isprintable() and not {"$", "{"} & set(command)
            and not command.startswith("!") and not command.endswith("?"))


def _notebook_note(step: _Step) -> str:
    note = f"*{_md_escape(printable_line(step.text))}*"
    if step.not_run is None:
        return note
    code = _notebook_code(step.not_run)
    fence = "`" * max(3, max((len(r) for r in re.findall(r"`+", code)), default=0) + 1)
    return f"{note}\n\n{fence}python\n{code}\n{fence}"


# -- small text helpers ---------------------------------------------------------------------

def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message["content"]
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)]


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    blocks = content if isinstance(content, list) else []
    return "\n".join(str(b.get("text", "")) for b in blocks
                     if isinstance(b, dict) and b.get("type") == "text")


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _first_line(text: str, width: int = 100) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    line = _one_line(lines[0]) if lines else ""
    return line if len(line) <= width else line[: width - 1] + "…"


def printable_line(text: str, keep: str = "") -> str:
    """`text` as one line of printable characters (and `keep`), the others as their Python
    escapes: a value can then neither end a comment, markdown or IPython line early nor
    hide in one."""
    return "".join(c if c.isprintable() or c in keep else repr(c)[1:-1] for c in text)


def _comment(text: str) -> str:
    """Comment lines: any line break starts a new `# ` line (tabs kept, for code)."""
    return "\n".join(f"# {printable_line(line, keep=chr(9))}".rstrip()
                     for line in text.splitlines()) or "#"


def _quote(text: str) -> str:
    return "\n".join(f"> {line}".rstrip() for line in text.strip().splitlines()) or ">"


def _md_escape(text: str) -> str:
    return _MD_SPECIAL.sub(r"\\\1", text)
