"""The Read, Write and Edit tools: look at files and change them safely."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from ....errors import ConfigurationError
from ...common.media import IMAGE_HEAD_BYTES, image_type
from ...common.reading import check_depth, read_bounded
from ..base import DeclaredTool, Reach, ToolContext, ToolError, ToolOutput
from ..truncate import cap_head_tail, cap_line
from .fsutil import atomic_write, ensure_fresh, number_line, remember_file
from .ipynb import render_notebook
from .textread import MAX_LINE_CHARS, read_window

__all__ = ["EditTool", "ReadTool", "WriteTool", "folder_rule"]

DEFAULT_READ_LINES = 2000
MAX_IMAGE_BYTES = 5 * 1024 * 1024
MAX_NOTEBOOK_CHARS = 100_000
#: a notebook file bigger than this is not read (the cap of sessions/notebook_file.py)
MAX_NOTEBOOK_FILE_BYTES = 128 * 1024 * 1024
#: a notebook nested deeper than this is not read: one is about 8 levels, its outputs'
#: JSON some more (sessions/notebook_file.py's cap)
MAX_NOTEBOOK_DEPTH = 128
SNIPPET_CONTEXT = 3
SNIPPET_MAX_LINES = 30
IMAGE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}


def _existing_file(ctx: ToolContext, file_path: str) -> Path:
    """The resolved path, or a ToolError the model can act on if it is not a file."""
    path = ctx.resolve(file_path)
    if path.is_dir():
        raise ToolError(
            f"{path} is a directory, not a file. Use Glob to find files in it, or Bash `ls`."
        )
    if not path.exists():
        raise ToolError(f"File does not exist: {path}. Check the path (Glob can find files).")
    if not path.is_file():
        raise ToolError(f"{path} is not a regular file (a device, socket or pipe).")
    return path


def folder_rule(tool: str, file_path: object) -> str:
    """`Tool(<folder of file_path>/**)`: what "Always allow" adds for a file tool (a
    folder outside the working directories is named, so the rule reaches it)."""
    if not isinstance(file_path, str) or not file_path:
        return tool
    folder = Path(file_path).parent
    if str(folder) == ".":  # a file in the working directory (`././**` matches nothing)
        return f"{tool}(./**)"
    anchor = f"/{folder}" if folder.is_absolute() else f"./{folder}"
    return f"{tool}({anchor.rstrip('/')}/**)"


def _path(input: dict[str, Any]) -> tuple[str, ...]:
    value = input.get("file_path")
    return (value,) if isinstance(value, str) and value else ()


class ReadTool(DeclaredTool):
    """Read a text file, image or notebook, with line numbers for text."""

    name = "Read"
    description = (
        "Reads a file from the local filesystem. `file_path` may be absolute or relative to "
        "the working directory. Text is returned like `cat -n`: each line prefixed by its "
        f"1-based line number and a tab. By default up to {DEFAULT_READ_LINES} lines from "
        "the start are shown; for long files pass `offset` (line to start at) and `limit` "
        f"(number of lines). Lines longer than {MAX_LINE_CHARS} characters are cut. Images "
        "(png, jpg, gif, webp) are returned as images you can see. Jupyter notebooks "
        "(.ipynb) are shown cell by cell (cells numbered from 0) with their text outputs. "
        "The line-number prefix is not part of the file: never include it in Edit strings. "
        "Read a file before editing or overwriting it. For directories use Glob or Bash `ls`."
    )

    def __init__(self) -> None:
        self.input_schema: dict[str, Any] = {
            "type": "object",
            "properties": {
                "file_path": {"type": "string", "description": "Path of the file to read."},
                "offset": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "1-based line number to start reading at (default 1).",
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "description": f"Number of lines to read (default {DEFAULT_READ_LINES}).",
                },
            },
            "required": ["file_path"],
            "additionalProperties": False,
        }

    kind = "read"

    def reach(self, input: dict[str, Any]) -> Reach:
        return Reach(reads=_path(input))

    def always_allow(self, input: dict[str, Any]) -> str:
        return folder_rule("Read", input.get("file_path"))

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """Dispatch on the file kind; every successful read is recorded in the context."""
        path = _existing_file(ctx, input["file_path"])
        suffix = path.suffix.lower()
        try:
            media_type = sniff_image(path)
            if media_type is not None:
                output = _read_image(path, media_type)
            elif suffix == ".ipynb":
                output = _read_notebook(path, input)
            else:
                output = _read_text(path, input.get("offset"), input.get("limit"))
                if suffix in IMAGE_TYPES and isinstance(output.content, str):
                    output.content = (f"({path.name} is named like an image but is not "
                                      f"{IMAGE_TYPES[suffix]} data: read as text)\n"
                                      + output.content)
        except OSError as exc:
            raise ToolError(f"Could not read {path}: {exc.strerror or exc}") from exc
        remember_file(ctx, path)
        return output


def sniff_image(path: Path) -> str | None:
    """The image type of a file from its bytes, never its name (a text file called
    `x.png` sent as an image would make the API reject the whole conversation)."""
    with path.open("rb") as handle:
        return image_type(handle.read(IMAGE_HEAD_BYTES))


def _read_image(path: Path, media_type: str) -> ToolOutput:
    size = path.stat().st_size
    if size > MAX_IMAGE_BYTES:
        raise ToolError(
            f"Image {path} is {size} bytes, over the {MAX_IMAGE_BYTES} byte limit. Make a "
            "smaller copy with Bash (e.g. ImageMagick `convert -resize`) and read that."
        )
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    block = {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}
    return ToolOutput(content=[block])


def _read_notebook(path: Path, input: dict[str, Any]) -> ToolOutput:
    """Notebooks as cells; a file that is not notebook JSON is read as plain text. The
    file may be anyone's: it is read by the bounded reader (a regular file of at most
    MAX_NOTEBOOK_FILE_BYTES, at most MAX_NOTEBOOK_DEPTH deep), and what cannot be read so
    is a ToolError of one line the model reads."""
    try:
        data = read_bounded(path, limit=MAX_NOTEBOOK_FILE_BYTES,
                            where=f"Could not read the notebook {path}")
        if data is None:
            raise ToolError(f"File does not exist: {path}.")
        notebook = json.loads(data.decode("utf-8-sig"))
        check_depth(notebook, f"The notebook {path}", MAX_NOTEBOOK_DEPTH)
        text = render_notebook(notebook)
    except RecursionError:
        raise ToolError(f"The notebook {path} is nested too deeply to read (more than "
                        f"{MAX_NOTEBOOK_DEPTH} levels).") from None
    except ConfigurationError as error:  # Unreadable (read_bounded), too deep (check_depth)
        raise ToolError(str(error)) from None
    except (ValueError, AttributeError):  # not UTF-8, not JSON, not a notebook's shape
        return _read_text(path, input.get("offset"), input.get("limit"))
    return ToolOutput(content=cap_head_tail(text, MAX_NOTEBOOK_CHARS))


def _read_text(path: Path, offset: int | None, limit: int | None) -> ToolOutput:
    if path.stat().st_size == 0:
        return ToolOutput(content=f"The file {path} exists but is empty (0 bytes).")
    first = max(offset or 1, 1)
    window = read_window(path, first, limit or DEFAULT_READ_LINES)
    if not window.lines:
        return ToolOutput(
            content=f"The file {path} has only {window.total} lines; offset {first} is past "
            "the end. Use a smaller offset."
        )
    last = window.first + len(window.lines) - 1
    body = "\n".join(number_line(window.first + i, line) for i, line in enumerate(window.lines))
    if window.first > 1 or last < window.total:
        body += (
            f"\n\n[Showing lines {window.first}-{last} of {window.total}. "
            "Use offset and limit to read more.]"
        )
    return ToolOutput(content=body)


class WriteTool(DeclaredTool):
    """Create or overwrite a whole file, atomically."""

    name = "Write"
    description = (
        "Writes a file to the local filesystem, replacing it entirely if it exists; missing "
        "parent directories are created. An existing file must have been read with Read "
        "first in this session, and must not have changed since, otherwise the write is "
        "refused. Prefer Edit for changing part of an existing file: it sends only the "
        "difference. Use Write for new files or complete rewrites. Do not create "
        "documentation or README files unless asked."
    )

    def __init__(self) -> None:
        self.input_schema: dict[str, Any] = {
            "type": "object",
            "properties": {
                "file_path": {"type": "string", "description": "Path of the file to write."},
                "content": {"type": "string", "description": "The complete new file content."},
            },
            "required": ["file_path", "content"],
            "additionalProperties": False,
        }

    kind = "edit"

    def reach(self, input: dict[str, Any]) -> Reach:
        return Reach(writes=_path(input))

    def always_allow(self, input: dict[str, Any]) -> str:
        return folder_rule("Edit", input.get("file_path"))

    async def refuses(self, input: dict[str, Any], ctx: ToolContext) -> str | None:
        self._check(ctx.resolve(input["file_path"]), ctx)
        return None

    @staticmethod
    def _check(path: Path, ctx: ToolContext) -> bool:
        """Refuse a directory, and an existing file not read or changed since; whether
        the file exists."""
        if path.is_dir():
            raise ToolError(f"{path} is a directory; give the path of a file to write.")
        existed = path.exists()
        if existed:
            ensure_fresh(ctx, path)
        return existed

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """Check freshness, write atomically, and remember the new state."""
        path = ctx.resolve(input["file_path"])
        existed = self._check(path, ctx)
        _write(path, input["content"], ctx)
        remember_file(ctx, path)
        if existed:
            return ToolOutput(content=f"The file {path} has been updated.")
        return ToolOutput(content=f"File created successfully at: {path}")


def _write(path: Path, content: str, ctx: ToolContext) -> None:
    try:
        atomic_write(path, content, expected=ctx.approved_targets.get(str(path)))
    except OSError as exc:
        raise ToolError(f"Could not write {path}: {exc.strerror or exc}") from exc
    except UnicodeEncodeError as exc:
        raise ToolError(f"Could not write {path}: the text is not valid Unicode ({exc}).") from exc


class EditTool(DeclaredTool):
    """Replace an exact string in a file."""

    name = "Edit"
    description = (
        "Performs an exact string replacement in a file: `old_string` is replaced by "
        "`new_string`. Read the file first; the edit is refused if the file was not read or "
        "changed since. `old_string` must match the file exactly, including whitespace and "
        "indentation; copy it from the Read output without the line-number prefix. It must "
        "be unique in the file: include enough surrounding lines to make it so, or set "
        "`replace_all` to change every occurrence (e.g. to rename a variable). With an empty "
        "`old_string` and a path that does not exist, a new file is created."
    )

    def __init__(self) -> None:
        self.input_schema: dict[str, Any] = {
            "type": "object",
            "properties": {
                "file_path": {"type": "string", "description": "Path of the file to edit."},
                "old_string": {"type": "string", "description": "The exact text to replace."},
                "new_string": {"type": "string", "description": "The text to put in its place."},
                "replace_all": {
                    "type": "boolean",
                    "default": False,
                    "description": "Replace every occurrence instead of exactly one.",
                },
            },
            "required": ["file_path", "old_string", "new_string"],
            "additionalProperties": False,
        }

    kind = "edit"

    def reach(self, input: dict[str, Any]) -> Reach:
        return Reach(writes=_path(input))

    def always_allow(self, input: dict[str, Any]) -> str:
        return folder_rule("Edit", input.get("file_path"))

    async def refuses(self, input: dict[str, Any], ctx: ToolContext) -> str | None:
        self._planned(input, ctx)
        return None

    @staticmethod
    def _planned(input: dict[str, Any], ctx: ToolContext
                 ) -> tuple[Path, str | None, tuple[int, str, int] | None]:
        """The edit as it would be made now: `(path, None, None)` to create a new file,
        else `(path, old content, (start, updated content, count))`; ToolError when the
        tool refuses it (nothing to change, not read, changed since, no match)."""
        old, new = input["old_string"], input["new_string"]
        if old == new:
            raise ToolError("old_string and new_string are identical; there is nothing to change.")
        path = ctx.resolve(input["file_path"])
        if old == "" and not path.exists() and not path.is_symlink():
            return path, None, None
        path = _existing_file(ctx, input["file_path"])
        ensure_fresh(ctx, path)
        content = _read_for_edit(path)
        old, new = _match_line_endings(content, old, new)
        return path, content, _apply(content, old, new, bool(input.get("replace_all")), path)

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """Validate the edit against the current file, then write the result atomically."""
        path, content, planned = self._planned(input, ctx)
        new = input["new_string"]
        if content is None or planned is None:
            _write(path, new, ctx)
            remember_file(ctx, path)
            return ToolOutput(content=f"File created successfully at: {path}")
        _, new = _match_line_endings(content, input["old_string"], new)  # as it was applied
        start, updated, count = planned
        _write(path, updated, ctx)
        remember_file(ctx, path)
        noun = "occurrence" if count == 1 else "occurrences"
        return ToolOutput(
            content=f"The file {path} has been updated ({count} {noun} replaced). "
            f"Snippet of the edited region:\n{_snippet(updated, start, new)}"
        )


def _read_for_edit(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"{path} is not a UTF-8 text file and cannot be edited.") from None
    except OSError as exc:
        raise ToolError(f"Could not read {path}: {exc.strerror or exc}") from exc


def _match_line_endings(content: str, old: str, new: str) -> tuple[str, str]:
    """Let `\\n` in the strings match a CRLF file, since Read shows lines without `\\r`."""
    if old and old not in content and "\r\n" in content and "\n" in old:
        crlf_old = old.replace("\r\n", "\n").replace("\n", "\r\n")
        if crlf_old in content:
            return crlf_old, new.replace("\r\n", "\n").replace("\n", "\r\n")
    return old, new


def _apply(content: str, old: str, new: str, replace_all: bool, path: Path) -> tuple[int, str, int]:
    """(index of the first match, new content, replacements), or why it cannot apply."""
    if old == "":
        if content:
            raise ToolError(
                f"old_string is empty but {path} already has content. Give the exact text "
                "to replace, or use Write to overwrite the whole file."
            )
        return 0, new, 1
    count = content.count(old)
    if count == 0:
        raise ToolError(
            f"old_string was not found in {path}. It must match the file exactly, including "
            "whitespace and indentation; Read the file again and copy the text precisely."
        )
    if count > 1 and not replace_all:
        raise ToolError(
            f"old_string matches {count} times in {path}. Add more surrounding context to "
            "make it unique, or set replace_all to true to replace every occurrence."
        )
    updated = content.replace(old, new) if replace_all else content.replace(old, new, 1)
    return content.index(old), updated, count if replace_all else 1


def _snippet(content: str, start: int, new: str) -> str:
    """Numbered lines around the first replacement, so the model can check the result."""
    lines = content.split("\n")
    first = content.count("\n", 0, start) + 1
    last = first + new.count("\n")
    low = max(1, first - SNIPPET_CONTEXT)
    high = min(len(lines), last + SNIPPET_CONTEXT, low + SNIPPET_MAX_LINES - 1)
    return "\n".join(
        number_line(n, cap_line(lines[n - 1].rstrip("\r"), MAX_LINE_CHARS))
        for n in range(low, high + 1)
    )
