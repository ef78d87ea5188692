"""The Glob and Grep tools: find files by name and by content, via ripgrep."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from ..base import DeclaredTool, Reach, ToolContext, ToolError, ToolOutput
from .globmatch import compile_glob, split_literal_prefix
from .ripgrep import COMMON_ARGS, rg_path, run_rg

__all__ = ["GlobTool", "GrepTool", "rg_path"]

MAX_GLOB_RESULTS = 100
MAX_GREP_CHARS = 30_000
_LIST_BYTES = 64 * 1024 * 1024
_CONTENT_BYTES = 4 * 1024 * 1024


def _search_root(ctx: ToolContext, path: str | None) -> Path:
    """The directory or file to search (default: the working directory)."""
    root = ctx.resolve(path) if path else ctx.cwd
    if not root.exists():
        raise ToolError(f"Path does not exist: {root}. Check it, or omit `path` to use the cwd.")
    return root


def _newest_first(paths: list[str]) -> list[str]:
    """Most recently modified first (what the model most likely cares about), then by name."""

    def key(path: str) -> tuple[int, str]:
        try:
            return -os.stat(path).st_mtime_ns, path
        except OSError:
            return 0, path

    return sorted(paths, key=key)


class GlobTool(DeclaredTool):
    """Find files whose path matches a glob pattern."""

    name = "Glob"
    description = (
        "Fast file search by name pattern, for any codebase size. Patterns are matched "
        "against paths relative to `path` (default: the working directory): `*` and `?` "
        "match within one path segment, `**` matches any number of directories, `[abc]` is "
        "a character class and `{a,b}` an alternation. A pattern without `/` only matches "
        "files directly in the directory, so use `**/*.py` to search recursively and "
        "`src/**/*.{js,ts}` for a subtree. Files ignored by .gitignore are skipped. Returns "
        f"absolute paths, most recently modified first, at most {MAX_GLOB_RESULTS}. To "
        "search file contents use Grep."
    )

    def __init__(self) -> None:
        self.input_schema: dict[str, Any] = {
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "Glob pattern, e.g. `**/*.py`."},
                "path": {
                    "type": "string",
                    "description": "Directory to search in (default: the working directory).",
                },
            },
            "required": ["pattern"],
            "additionalProperties": False,
        }

    kind = "read"

    def reach(self, input: dict[str, Any]) -> Reach:
        """The directory actually searched: `path` plus the pattern's literal prefix (the
        same split `run` uses, so the check covers what is listed)."""
        root = input.get("path") or "."
        prefix, _ = split_literal_prefix(str(input.get("pattern", "")))
        if prefix:
            root = prefix if prefix.startswith("/") else f"{root}/{prefix}"
        return Reach(reads=(str(root),), dirs=True)

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """List candidate files with rg, match them with our glob regex, sort, cap."""
        root = _search_root(ctx, input.get("path"))
        if not root.is_dir():
            raise ToolError(f"{root} is not a directory; Glob needs a directory as `path`.")
        prefix, pattern = split_literal_prefix(input["pattern"])
        base = Path(os.path.normpath(root / prefix)) if prefix else root
        if not base.is_dir():
            return ToolOutput(content="No files found")
        matches = await self._matches(base, pattern)
        if ctx.read_denied is not None:
            matches = [m for m in matches if not ctx.read_denied(Path(m), self.name)]
        if not matches:
            return ToolOutput(content="No files found")
        shown = _newest_first(matches)[:MAX_GLOB_RESULTS]
        text = "\n".join(shown)
        if len(matches) > MAX_GLOB_RESULTS:
            text += (
                f"\n(Results are truncated: showing {MAX_GLOB_RESULTS} of {len(matches)} "
                "files. Use a more specific path or pattern.)"
            )
        return ToolOutput(content=text)

    async def _matches(self, base: Path, pattern: str) -> list[str]:
        """Absolute paths under `base` whose relative path matches `pattern`."""
        args = ["--files", *COMMON_ARGS]
        if "/" not in pattern and "**" not in pattern:
            args += ["--max-depth", "1"]
        result = await run_rg(args, base, _LIST_BYTES)
        if result.returncode == 2 and not result.stdout:
            raise ToolError(f"Listing files in {base} failed: {result.stderr}")
        regex = compile_glob(pattern)
        relative = (line for line in result.stdout.splitlines() if line)
        return [str(base / rel) for rel in relative if regex.match(rel)]


class GrepTool(DeclaredTool):
    """Search file contents with a regular expression."""

    name = "Grep"
    description = (
        "Searches file contents with a regular expression (ripgrep/Rust regex syntax: escape "
        "literal braces and other metacharacters, e.g. `interface\\{\\}`). Search `path` (a "
        "file or directory, default: the working directory); restrict files with `glob` "
        "(e.g. `*.py`, `*.{ts,tsx}`) or `type` (e.g. `py`, `js`, `rust`). `output_mode`: "
        "`files_with_matches` (default; file paths, newest first), `content` (matching lines; "
        "`-n` line numbers on by default, `-A`/`-B`/`-C` context lines) or `count` (matches "
        "per file). `-i` ignores case; `multiline` lets `.` and patterns span lines; "
        "`head_limit` keeps only the first N lines or entries. Files ignored by .gitignore "
        "are skipped. Use this instead of running grep or rg through Bash."
    )

    def __init__(self) -> None:
        self.input_schema: dict[str, Any] = {
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "Regular expression to search for."},
                "path": {"type": "string", "description": "File or directory to search in."},
                "glob": {"type": "string", "description": "Only search files matching this glob."},
                "type": {
                    "type": "string",
                    "description": "Only search this file type (rg --type).",
                },
                "output_mode": {
                    "type": "string",
                    "enum": ["content", "files_with_matches", "count"],
                    "description": "What to return (default files_with_matches).",
                },
                "-i": {"type": "boolean", "description": "Case-insensitive search."},
                "-n": {
                    "type": "boolean",
                    "description": "Line numbers (content mode, default on).",
                },
                "-A": {"type": "integer", "minimum": 0, "description": "Lines after each match."},
                "-B": {"type": "integer", "minimum": 0, "description": "Lines before each match."},
                "-C": {"type": "integer", "minimum": 0, "description": "Lines around each match."},
                "head_limit": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "Keep only the first N output lines / entries.",
                },
                "multiline": {
                    "type": "boolean",
                    "description": "Let patterns span lines and `.` match newlines.",
                },
            },
            "required": ["pattern"],
            "additionalProperties": False,
        }

    kind = "read"

    def reach(self, input: dict[str, Any]) -> Reach:
        return Reach(reads=(str(input.get("path") or "."),), dirs=True)

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """Run rg with flags built from the input, then sort, limit and cap its output."""
        root = _search_root(ctx, input.get("path"))
        mode = input.get("output_mode", "files_with_matches")
        limit = _LIST_BYTES if mode == "files_with_matches" else _CONTENT_BYTES
        result = await run_rg(_grep_args(input, mode, root), ctx.cwd, limit)
        if result.returncode == 2 and not result.stdout:
            raise ToolError(f"Search failed: {result.stderr or 'rg exited with status 2'}")
        lines = _without_denied(result.stdout, mode, ctx, self.name)
        if not lines:
            return ToolOutput(content="No matches found")
        text = _format(mode, lines, input.get("head_limit"))
        if result.truncated:
            text += "\n[Search output was too large and was cut; narrow the search.]"
        if result.returncode == 2 and result.stderr:
            text += f"\n[Some files could not be searched: {result.stderr[:500]}]"
        return ToolOutput(content=_cap_head(text, MAX_GREP_CHARS))


def _without_denied(stdout: str, mode: str, ctx: ToolContext, tool: str) -> list[str]:
    """Output lines with NUL-marked file names, minus files a deny rule forbids reading.

    rg runs with `--null` so file names are unambiguous (they may contain `:`); the usual
    `path:line` / `path-line` / `path` forms are rebuilt here.
    """
    entries: list[tuple[str, ...]]
    if mode == "files_with_matches":
        entries = [(name, "") for name in stdout.split("\0") if name.strip("\n")]
        entries = [(name.lstrip("\n"), rest) for name, rest in entries]
    else:
        entries = [tuple(line.split("\0", 1)) if "\0" in line else ("", line)
                   for line in stdout.splitlines() if line or mode == "content"]
    lines = []
    for name, rest in entries:
        if name and ctx.read_denied is not None and ctx.read_denied(Path(name), tool):
            continue
        if not name:
            lines.append(rest)
        elif mode == "files_with_matches":
            lines.append(name)
        else:
            context_line = mode == "content" and re.match(r"\d+-", rest) is not None
            lines.append(f"{name}{'-' if context_line else ':'}{rest}")
    return lines


def _grep_args(input: dict[str, Any], mode: str, root: Path) -> list[str]:
    """The rg command line for a Grep call (pattern via -e so a leading `-` is safe)."""
    args = [*COMMON_ARGS, "--null", "--max-columns", "500", "--max-columns-preview"]
    if mode == "files_with_matches":
        args.append("--files-with-matches")
    elif mode == "count":
        args.append("--count")
    else:
        args.append("--sort=path")  # files in a stable order (replay, prompt cache)
        if input.get("-n", True):
            args.append("--line-number")
        for flag in ("-A", "-B", "-C"):
            if input.get(flag) is not None:
                args += [flag, str(input[flag])]
    if input.get("-i"):
        args.append("--ignore-case")
    if input.get("multiline"):
        args += ["--multiline", "--multiline-dotall"]
    if input.get("glob"):
        args += ["--glob", input["glob"]]
    if input.get("type"):
        args += ["--type", input["type"]]
    return [*args, "-e", input["pattern"], "--", str(root)]


def _format(mode: str, lines: list[str], head_limit: int | None) -> str:
    """Mode-specific ordering and summary, then `head_limit`."""
    if mode == "files_with_matches":
        lines = _newest_first(lines)
    elif mode == "count":
        lines = sorted(lines)
    total = len(lines)
    if head_limit is not None:
        lines = lines[:head_limit]
    text = "\n".join(lines)
    if mode == "files_with_matches":
        text = f"Found {total} file{'s' if total != 1 else ''}\n{text}"
    if len(lines) < total:
        unit = "files" if mode == "files_with_matches" else "lines"
        text += f"\n[Showing the first {len(lines)} of {total} {unit} (head_limit).]"
    return text


def _cap_head(text: str, limit: int) -> str:
    """Search results keep their beginning: cut at a line end and say how much is left."""
    if len(text) <= limit:
        return text
    cut = text.rfind("\n", 0, limit)
    cut = cut if cut > 0 else limit
    return (
        f"{text[:cut]}\n\n[Output truncated: {len(text) - cut} more characters not shown. "
        "Narrow the search with path, glob, type or head_limit.]"
    )
