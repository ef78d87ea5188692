"""`python -m fuxi_notebook`: the demo agent, and the sessions a notebook has recorded.

`demo` runs the demo agent (no API key needed); `acp` is `fuxi-acp`, the agent over the
Agent Client Protocol. `sessions list|show|export NOTEBOOK.ipynb`
reads the session records saved in a notebook's `%%fuxi` cells, without Jupyter: to see what
an agent did, or to keep its code as a script or notebook. `sessions keep NB.ipynb...`
copies each record into its cell's metadata (before nbstripout, in a pre-commit hook).
`sessions provenance NB.ipynb` lists the cells an agent inserted or edited, by whom.
Bad input is one line on stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, cast

if TYPE_CHECKING:
    from collections.abc import Callable

    from ._internal.sessions.notebook_file import FuxiCell, SavedNotebook
    from ._internal.sessions.record import SessionRecord

_Sessions = list[tuple[str, list["SessionRecord"]]]
_FORMATS = ("markdown", "jsonl", "script", "notebook")
#: A shorter prefix of a session or cell id is not looked up (too easily ambiguous).
MIN_PREFIX = 4


class _Parser(argparse.ArgumentParser):
    """argparse's own errors (an unknown option, a missing argument, a bad choice) as one
    line and exit status 2, without the usage; its subcommands' parsers are of this class
    too (argparse makes them of their parent's)."""

    def error(self, message: str) -> NoReturn:
        _say(f"{self.prog}: error", message)
        raise SystemExit(2)


def _say(prefix: str, message: object) -> None:
    """`prefix: message` on stderr as one line: line breaks folded into spaces, what hides
    or reorders text (a name can hold anything) escaped. Every error the command reports
    goes through here."""
    from ._internal.common.visible import reveal

    line = reveal(" ".join(str(message).split())).text
    print(f"{prefix}: {line}", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    from .errors import ConfigurationError

    parser = _Parser(prog="python -m fuxi_notebook")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("demo", help="an agent fixes a failing test in a tiny project")
    _add_sessions_parser(commands)
    from ._internal.acp.server import add_arguments

    add_arguments(commands.add_parser(
        "acp", help="the agent over the Agent Client Protocol on stdio (as fuxi-acp)"))
    from ._internal.batch import cli as batch_cli

    batch_cli.add_arguments(commands.add_parser(
        "batch", help="run a notebook over many parameters on Dask, each run recorded"))
    args = parser.parse_args(argv)
    if args.command == "batch":
        return batch_cli.main(args, _say)
    if args.command == "acp":
        from ._internal.acp.server import run

        return run(args, parser)
    if args.command == "demo":
        from ._internal.demo import demo_main

        return asyncio.run(demo_main())
    if args.command == "sessions":
        try:
            return _sessions_main(args)
        except ConfigurationError as error:  # a bad id, a bad file, an output not written
            _say("fuxi sessions", error)
            return 2
    return 2


def _add_sessions_parser(commands: argparse._SubParsersAction[_Parser]
                         ) -> None:
    sessions = commands.add_parser(
        "sessions", help="list, show or export the fuxi sessions recorded in a notebook",
        description="The fuxi sessions recorded in a saved notebook's %%fuxi cells. An id "
        "may be a cell id or a session id, or a unique prefix of at least "
        f"{MIN_PREFIX} characters of one.")
    actions = sessions.add_subparsers(dest="action", required=True)
    listing = actions.add_parser("list", help="a table of the notebook's sessions")
    listing.add_argument("notebook", metavar="NOTEBOOK.ipynb")
    show = actions.add_parser("show", help="the transcript of a session or cell (default: all)")
    show.add_argument("notebook", metavar="NOTEBOOK.ipynb")
    show.add_argument("id", nargs="?", metavar="SESSION_OR_CELL_ID")
    show.add_argument("--markdown", action="store_true", help="markdown instead of plain text")
    export = actions.add_parser("export", help="a session or cell (default: all) as markdown, "
                                "JSON lines, a Python script or a notebook")
    export.add_argument("notebook", metavar="NOTEBOOK.ipynb")
    export.add_argument("id", nargs="?", metavar="SESSION_OR_CELL_ID")
    export.add_argument("--format", required=True, choices=_FORMATS)
    export.add_argument("-o", "--output", metavar="FILE",
                        help="write here (atomically) instead of to stdout")
    cells = actions.add_parser(
        "cells", help="a saved session (query(), FuxiSDKClient, fuxi-acp, jupyter-ai's "
        "chat) as a notebook of %%fuxi cells that replay it")
    cells.add_argument("session_id", metavar="SESSION_ID")
    cells.add_argument("--cwd", default=".", metavar="DIR",
                       help="the folder the session ran in (default: this one)")
    cells.add_argument("-o", "--output", required=True, metavar="FILE.ipynb",
                       help="the notebook to write (atomically)")
    provenance = actions.add_parser(
        "provenance", help="the cells an agent inserted or edited: which agent cell and "
        "session, with which tool, when, and the cell's source now")
    provenance.add_argument("notebook", metavar="NOTEBOOK.ipynb")
    provenance.add_argument("--json", action="store_true", help="JSON instead of text")
    keep = actions.add_parser(
        "keep", help="copy each %%fuxi cell's record from its outputs into its metadata, "
        "where Clear Outputs and nbstripout leave it (run it before nbstripout)")
    keep.add_argument("notebooks", nargs="+", metavar="NOTEBOOK.ipynb")
    keep.add_argument("--from-outputs", action="store_true",
                      help="also replace a metadata record that differs from the outputs'")
    keep.add_argument("--check", action="store_true",
                      help="change nothing; exit 1 if a notebook would change")


def _sessions_main(args: argparse.Namespace) -> int:
    from .errors import ConfigurationError

    if args.action == "keep":
        return _keep_main(args)
    if args.action == "cells":
        return _cells_main(args)
    output = Path(args.output).expanduser() if getattr(args, "output", None) else None
    try:
        if output is not None and output.exists() and (
                output.resolve() == Path(args.notebook).expanduser().resolve()):
            raise ConfigurationError(f"will not overwrite {args.notebook}, the notebook the "
                                     "sessions are read from; choose another -o FILE")
        text, warnings = _sessions_command(args)
        if output is not None:
            _write_file(output, text)
        else:
            _print(text)
    except ConfigurationError as error:
        _say("fuxi sessions", error)
        return 2
    except RecursionError:
        _say("fuxi sessions", f"{args.notebook} is nested too deeply to read")
        return 2
    for warning in warnings:
        _say("fuxi sessions: warning", warning)
    return 0


def _cells_main(args: argparse.Namespace) -> int:
    """`sessions cells SESSION_ID -o FILE.ipynb`: a stored session as %%fuxi cells."""
    import json

    from ._internal.models.names import model_name
    from ._internal.notebook.replay.from_store import session_cells_notebook
    from ._internal.sessions.api import get_session_info, get_session_messages

    folder = Path(args.cwd).expanduser().resolve()
    if get_session_info(args.session_id, folder) is None:
        _say("fuxi sessions", f"no saved session {args.session_id} in {folder}")
        return 2
    messages = [m.message for m in get_session_messages(args.session_id, folder)]
    try:
        notebook = session_cells_notebook(args.session_id, messages, model=model_name(),
                                          cwd=str(folder))
    except ValueError as error:
        _say("fuxi sessions", error)
        return 2
    _write_file(Path(args.output).expanduser(), json.dumps(notebook, indent=1))
    return 0


def _sessions_command(args: argparse.Namespace) -> tuple[str, list[str]]:
    """`(text to print or write, warnings)`. Raises ConfigurationError for bad input."""
    from ._internal.sessions import export
    from ._internal.sessions.listing import format_sessions, summarize
    from ._internal.sessions.notebook_file import read_notebook
    from .errors import ConfigurationError

    if args.action == "provenance":
        from ._internal.sessions.notebook_file import read_document
        from ._internal.sessions.provenance import provenance_json, provenance_text

        document = read_document(Path(args.notebook).expanduser())
        return (provenance_json(document) if args.json
                else provenance_text(document, Path(args.notebook).name)), []
    notebook = read_notebook(args.notebook)
    unreadable = [f"cell {c.cell_id or f'#{c.index + 1}'}: record unreadable: {c.problem}"
                  for c in notebook.cells if c.record is None and c.problem]
    if args.action == "list":
        volatile = {c.record.cell_id: c.volatile for c in notebook.cells if c.record}
        table = format_sessions(summarize(export.notebook_sessions(notebook), volatile))
        return "\n".join([table, *unreadable]), []
    if args.action == "export" and args.format == "notebook" and not args.output:
        raise ConfigurationError("the notebook format needs -o FILE")
    chosen = _select(notebook, args.id)
    if not chosen:
        raise ConfigurationError(f"no fuxi session is recorded in {notebook.path.name}")
    warnings = unreadable if args.id is None else []  # left out of "everything"
    records = [r for _, own in chosen for r in own]
    if args.action == "show" or args.format == "markdown":
        return _transcripts(chosen, markdown=args.action == "export" or args.markdown), warnings
    if args.format == "jsonl":
        return export.export_jsonl(records), warnings
    if args.format == "script":
        return export.export_script(records, notebook=notebook.path.name), warnings
    import nbformat

    document = export.export_notebook(records, notebook=notebook.path.name)
    # nbformat's functions carry no annotations: typed views of them
    writes = cast("Callable[[Any], str]", nbformat.writes)
    from_dict = cast("Callable[[dict[str, Any]], Any]", nbformat.from_dict)
    return writes(from_dict(document)), warnings


def _keep_main(args: argparse.Namespace) -> int:
    """`sessions keep`: 0 when every record is in its cell's metadata, 1 when a notebook
    changed under --check or a cell's two records conflict, 2 for a file that is not a
    notebook (the others are still done)."""
    from ._internal.sessions.keep import keep_records
    from .errors import ConfigurationError

    status = 0
    for name in args.notebooks:
        try:
            kept = keep_records(name, from_outputs=args.from_outputs)
            if kept.text is not None and not args.check:
                _write_file(Path(name).expanduser(), kept.text)
        except ConfigurationError as error:
            _say("fuxi sessions keep", error)
            status = 2
            continue
        if kept.kept:
            verb = "would copy" if args.check else "copied"
            print(f"{name}: {verb} the record of {len(kept.kept)} cell(s) into their "
                  f"metadata ({', '.join(kept.kept[:5])}{', ...' if len(kept.kept) > 5 else ''})")
            status = max(status, 1 if args.check else 0)
        for conflict in kept.conflicts:
            print(f"{name}: {conflict}", file=sys.stderr)
            status = max(status, 1)
    return status


def _transcripts(chosen: _Sessions, *, markdown: bool) -> str:
    """Each session's transcript under a heading saying which session it is."""
    from ._internal.sessions.export import printable_line, session_transcript

    parts = []
    for session_id, records in chosen:
        cells = {r.cell_id for r in records}
        heading = f"Session {printable_line(session_id)}"
        if records[0].parent and records[0].parent not in cells:
            heading += f" (continues cell {printable_line(records[0].parent)})"
        heading = f"# {heading}" if markdown else f"{heading}\n{'=' * len(heading)}"
        parts.append(f"{heading}\n\n{session_transcript(records, markdown=markdown)}")
    return "\n\n\n".join(parts)


def _select(notebook: SavedNotebook, key: str | None) -> _Sessions:
    """What `key` names: a session, or one cell (all sessions for None).

    Exact ids first; then a unique prefix of at least MIN_PREFIX characters.
    """
    from ._internal.sessions.export import notebook_sessions
    from .errors import ConfigurationError

    sessions = notebook_sessions(notebook)
    if key is None:
        return sessions
    for session_id, records in sessions:
        if session_id == key:
            return [(session_id, records)]
    exact = notebook.cell(key)
    if exact is not None:
        return _cell_selection(exact)
    matches: dict[str, _Sessions | FuxiCell] = {}
    if len(key) >= MIN_PREFIX:
        for session_id, records in sessions:
            if session_id.startswith(key):
                matches[f"session {session_id}"] = [(session_id, records)]
        for cell in notebook.cells:
            if any(k is not None and k.startswith(key) for k in (cell.key, cell.cell_id)):
                matches[f"cell {cell.key}"] = cell
    if not matches:
        hint = f" (a prefix needs at least {MIN_PREFIX} characters)" if (
            len(key) < MIN_PREFIX) else ""
        raise ConfigurationError(f"no session or cell {key!r} in {notebook.path.name}{hint}")
    if len(matches) > 1:
        names = ", ".join(sorted(matches)[:5]) + (", ..." if len(matches) > 5 else "")
        raise ConfigurationError(f"the id prefix {key!r} is ambiguous: it matches {names}")
    match = next(iter(matches.values()))
    return match if isinstance(match, list) else _cell_selection(match)


def _cell_selection(cell: FuxiCell) -> _Sessions:
    from .errors import ConfigurationError

    if cell.record is None:
        why = f" ({cell.problem})" if cell.problem else ""
        raise ConfigurationError(f"cell {cell.key} has no readable session record{why}")
    return [(cell.record.session_id, [cell.record])]


def _print(text: str) -> None:
    """Print, in UTF-8 if the terminal's encoding cannot hold the text."""
    text = text if not text or text.endswith("\n") else text + "\n"
    try:
        try:
            sys.stdout.write(text)
        except UnicodeEncodeError:
            sys.stdout.flush()
            sys.stdout.buffer.write(text.encode("utf-8", "replace"))
        sys.stdout.flush()
    except BrokenPipeError:  # `... | head`: the reader has gone, which is fine
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _write_file(target: Path, text: str) -> None:
    """Write `text` to `target` atomically (a temporary file in its folder, then replace)."""
    from ._internal.common.atomic_file import write_atomically
    from .errors import ConfigurationError

    text = text if not text or text.endswith("\n") else text + "\n"
    try:
        mode = target.stat().st_mode & 0o7777 if target.exists() else 0o666 & ~_umask()
        write_atomically(target, text.encode("utf-8", errors="replace"), mode=mode,
                         suffix=".tmp")
    except OSError as exc:
        raise ConfigurationError(f"cannot write {target}: {exc.strerror or exc}") from None


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def acp_main() -> int:
    """The `fuxi-acp` command."""
    from ._internal.acp.server import acp_main as run_acp

    return run_acp()


if __name__ == "__main__":
    sys.exit(main())

