"""Every reader of a file the product did not write, as the user meets it: one row each.

`python -m tests.settings.bad_file_readers ROW FOLDER` runs row ROW against the project
in FOLDER (its user folder is FOLDER/user) and prints, as one JSON line, everything the
user was told: the error raised (a ConfigurationError, a tool's error), the notes a run
yields, the Python warnings. Any other exception escapes as a traceback, which the test
reads as a failure. The command line's readers are rows too: they run `python -m
fuxi_notebook` itself. A new reader is one more row in ROWS.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def _sparse(path: Path) -> None:
    with path.open("wb") as handle:
        handle.truncate(200 << 20)


#: the bad files, by kind: each makes `path` one
KINDS: dict[str, Callable[[Path], None]] = {
    "dev-zero": lambda path: path.symlink_to("/dev/zero"),  # its size reads 0
    "fifo": lambda path: os.mkfifo(path),
    "huge": _sparse,  # 200 MB
    "deep": lambda path: path.write_text("[" * 100_000 + "]" * 100_000),
    "not-utf8": lambda path: path.write_bytes(b'{"name": "caf\xe9"}'),
    "directory": lambda path: path.mkdir(),
}


@dataclass(frozen=True)
class Row:
    """A reader: where the bad file goes (relative to the project; `user/...` is the
    user's folder), what to set up around it, and how the user runs into it."""

    label: str
    name: str
    run: Callable[[Path, Path], list[str]] | None = None  # (folder, bad file) -> said
    command: tuple[str, ...] = ()  # `python -m fuxi_notebook ...`, "{path}" the bad file
    setup: Callable[[Path], None] | None = None
    #: (kinds) what this reader may accept without a word: a text file's "[[[" is text,
    #: FUXI.md is cut rather than refused, a folder's listing skips what is no file
    quiet: frozenset[str] = frozenset()
    #: where the bad file goes when that depends on the project's folder (else `name`)
    where: Callable[[Path], Path] | None = None

    def path(self, folder: Path) -> Path:
        """The bad file of this row for the project in `folder`."""
        return self.where(folder) if self.where is not None else folder / self.name


def _json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")


def _query(folder: Path, **options: Any) -> list[str]:
    """A query() in the project, as a user's script runs it: what it raised and said."""
    from fuxi_notebook import FuxiAgentOptions, query
    from fuxi_notebook._internal.models.scripted import ScriptedModel
    from fuxi_notebook.errors import ConfigurationError
    from fuxi_notebook.testing import text
    from fuxi_notebook.types import SystemMessage

    said: list[str] = []
    options = {"model": ScriptedModel([[text("done")]]), "cwd": folder,
               "setting_sources": ["user", "project", "local"], **options}

    async def run() -> None:
        async for message in query(prompt="/bad hello", options=FuxiAgentOptions(**options)):
            if isinstance(message, SystemMessage) and message.subtype == "informational":
                said.append(str(message.data.get("content")))
            if isinstance(message, SystemMessage) and message.subtype == "init":
                said.extend(f"plugin {e['path']}: {e['error']}"
                            for e in message.data.get("plugin_errors", []))

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            asyncio.run(run())
        except ConfigurationError as error:
            said.append(str(error))
    return said + [str(w.message) for w in caught]


def _notebook_read(folder: Path, bad: Path) -> list[str]:
    """The agent's NotebookRead on a kernel told its notebook is `bad`."""
    import os

    from fuxi_notebook._internal.notebook.kernel.notebook import NotebookReadTool
    from fuxi_notebook._internal.tools.base import ToolContext, ToolError

    os.environ["FUXI_NOTEBOOK"] = str(bad)
    try:
        asyncio.run(NotebookReadTool(None).run({}, ToolContext(cwd=folder)))
    except ToolError as error:
        return [str(error)]
    return []


def _notebook_store(folder: Path, bad: Path) -> list[str]:
    """The sessions API over a notebook (`NotebookSessionStore`)."""
    from fuxi_notebook._internal.sessions.notebook_store import NotebookSessionStore
    from fuxi_notebook.errors import ConfigurationError

    store = NotebookSessionStore(bad)
    said = []
    for call in (lambda: asyncio.run(store.list_sessions("any")), lambda: store.read("s")):
        try:
            call()
        except ConfigurationError as error:
            said.append(str(error))
    return said


#: the session a transcript row reads (`resume`, `sessions cells`, the sessions API)
SESSION = "5e55104e-0000-4000-8000-000000000035"


def _transcript(folder: Path) -> Path:
    """Where the local store keeps SESSION of the project in `folder` (FUXI_CONFIG_DIR is
    `folder/user`)."""
    from fuxi_notebook._internal.sessions.store import project_key_for_directory

    return (folder / "user" / "projects" / project_key_for_directory(folder)
            / f"{SESSION}.jsonl")


def _sessions_api(folder: Path, bad: Path) -> list[str]:
    """The sessions API's functions that read a transcript, as a script calls them."""
    from fuxi_notebook import get_session_info, get_session_messages, list_sessions
    from fuxi_notebook.errors import ConfigurationError

    said = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for call in (lambda: list_sessions(folder), lambda: get_session_info(SESSION, folder),
                     lambda: get_session_messages(SESSION, folder)):
            try:
                call()
            except ConfigurationError as error:
                said.append(str(error))
    return said + [str(w.message) for w in caught]


def _read_tool(folder: Path, bad: Path) -> list[str]:
    """The agent's Read of a notebook file: its error is what the model reads."""
    from fuxi_notebook._internal.tools.base import ToolContext, ToolError
    from fuxi_notebook._internal.tools.files.file_tools import ReadTool

    try:
        asyncio.run(ReadTool().run({"file_path": str(bad)}, ToolContext(cwd=folder)))
    except ToolError as error:
        return [str(error)]
    return []


def _output_schema_cell(folder: Path, bad: Path) -> list[str]:
    """`%%fuxi --output-schema FILE` in a real kernel: the cell's UsageError."""
    import nbformat

    from fuxi_notebook.testing import FakeMessagesServer, Turn, text
    from fuxi_notebook.testing.frontend import NotebookFrontend

    cells = [nbformat.v4.new_code_cell("%load_ext fuxi_notebook"),
             nbformat.v4.new_code_cell(f"%%fuxi --output-schema {bad.name}\nhello")]
    with FakeMessagesServer() as api:
        api.add(Turn([text("a cell that ran")]))  # what a cell that runs would ask
        env = {"FUXI_NOTEBOOK": str(folder / "nb.ipynb"), "ANTHROPIC_BASE_URL": api.url,
               "ANTHROPIC_API_KEY": "sk-ant-test-key-for-the-kernel-0035", "FUXI_REPLAY": ""}
        with NotebookFrontend(cwd=str(folder), cell_ids=False, env=env) as frontend:
            if frontend.execute(cells[0]) != "ok":
                raise AssertionError(cells[0].outputs)
            if frontend.execute(cells[1]) == "ok":
                return []
            reply = frontend.last_reply
    if reply.get("ename") != "UsageError" or any(
            output["output_type"] == "error" for output in cells[1].outputs):
        raise AssertionError(f"not one UsageError line: {reply} {cells[1].outputs}")
    return [str(reply["evalue"])]


def _style_chosen(folder: Path) -> None:
    _json(folder / "user" / "settings.json", {"outputStyle": "bad"})


def _gated(folder: Path) -> None:
    """A project setting that needs trust: the trust store is read to decide."""
    _json(folder / ".fuxi" / "settings.json", {"env": {"FROM_PROJECT": "1"}})


_TEXT = frozenset({"deep"})  # "[[[..." is a text file's text


def _in_query(name: str, **kwargs: Any) -> Row:
    """A file a query() reads in its project (settings, extensions, memory, trust)."""
    return Row(f"query: {name}", name, run=lambda folder, bad: _query(folder), **kwargs)


ROWS: dict[str, Row] = {row.label: row for row in [
    Row("sessions list", "nb.ipynb", command=("sessions", "list", "{path}")),
    Row("sessions show", "nb.ipynb", command=("sessions", "show", "{path}")),
    Row("sessions export", "nb.ipynb",
        command=("sessions", "export", "{path}", "--format", "jsonl")),
    Row("sessions keep", "nb.ipynb", command=("sessions", "keep", "{path}")),
    Row("sessions keep --check", "nb.ipynb", command=("sessions", "keep", "--check", "{path}")),
    Row("NotebookRead", "nb.ipynb", run=_notebook_read),
    Row("NotebookSessionStore", "nb.ipynb", run=_notebook_store),
    _in_query(".fuxi/settings.json"),
    _in_query(".fuxi/settings.local.json"),
    _in_query("user/settings.json"),
    _in_query(".mcp.json"),
    _in_query("FUXI.md", quiet=_TEXT | {"huge"}),
    _in_query("user/FUXI.md", quiet=_TEXT | {"huge"}),
    _in_query(".fuxi/agents/bad.md", quiet=_TEXT),
    _in_query(".fuxi/commands/bad.md", quiet=_TEXT | {"directory"}),
    _in_query(".fuxi/skills/bad/SKILL.md", quiet=_TEXT),
    _in_query(".fuxi/output-styles/bad.md", setup=_style_chosen, quiet=_TEXT),
    _in_query("user/trusted-folders.json", setup=_gated),
    Row("query: a plugin's manifest", "plugin/.fuxi-plugin/plugin.json",
        run=lambda folder, bad: _query(
            folder, plugins=[{"type": "local", "path": str(folder / "plugin")}])),
    Row("query: mcp_servers=path", "servers.json",
        run=lambda folder, bad: _query(folder, mcp_servers=bad)),
    Row("query: settings=path", "permissions.json",
        run=lambda folder, bad: _query(folder, settings=str(bad))),
    Row("query: system_prompt file", "prompt.md", quiet=_TEXT, run=lambda folder, bad: _query(
        folder, system_prompt={"type": "file", "path": str(bad)})),
    # the git branch a transcript notes: a bad file means no branch, never a hang
    _in_query(".git", quiet=frozenset(KINDS)),
    _in_query(".git/HEAD", quiet=frozenset(KINDS)),
    Row("query: resume", f"{SESSION}.jsonl", where=_transcript,
        run=lambda folder, bad: _query(folder, resume=SESSION)),
    Row("query: continue_conversation", f"{SESSION}.jsonl", where=_transcript,
        run=lambda folder, bad: _query(folder, continue_conversation=True)),
    Row("sessions API", f"{SESSION}.jsonl", where=_transcript, run=_sessions_api),
    Row("sessions cells", f"{SESSION}.jsonl", where=_transcript,
        command=("sessions", "cells", SESSION, "-o", "out.ipynb")),
    Row("Read: a notebook", "nb.ipynb", run=_read_tool),
    Row("%%fuxi --output-schema FILE", "schema.json", run=_output_schema_cell),
]}


def main(row: str, folder: str) -> None:
    chosen = ROWS[row]
    assert chosen.run is not None
    print(json.dumps(chosen.run(Path(folder), chosen.path(Path(folder)))))


if __name__ == "__main__":
    main(*sys.argv[1:])
