"""Project memory: the FUXI.md files whose text joins the system prompt.

Read, in this order (a later, more specific file comes later in the prompt):

1. "user": `~/.fuxi/FUXI.md`;
2. "project": `FUXI.md` in each folder from the top down to `root`, then
   `<root>/.fuxi/FUXI.md`; "local": `FUXI.local.md` next to each of those `FUXI.md`.
   The top is the git root above `root` when there is one (found by looking for `.git`,
   never by running git: a checkout's git config can run code), else `root` itself. The
   comparable tool reads every parent up to `/`; stopping at the repository keeps a
   notebook in `/tmp/x` from reading whatever `/tmp/FUXI.md` someone left there.

`nested_memory` adds, while the session runs, the FUXI.md of the folders between `root`
and a file the model reads. Each file is capped at `MAX_MEMORY_CHARS` characters (cut
with a notice), and a project's file that is a symlink leading outside the project is not
followed (`reading.py`). Memory is text: it never changes what is allowed, so it applies
without trust.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..common.config_folder import project_folder
from ..common.reading import Outside, note, read_inside

__all__ = ["LOCAL_MEMORY_FILE", "MAX_MEMORY_CHARS", "MEMORY_FILE", "MemoryFile", "git_root",
           "load_memory", "nested_memory"]

MEMORY_FILE = "FUXI.md"
LOCAL_MEMORY_FILE = "FUXI.local.md"
#: characters of one memory file that reach the prompt
MAX_MEMORY_CHARS = 40_000


@dataclass(frozen=True)
class MemoryFile:
    """One memory file: where it is, which source it belongs to, and its (capped) text."""

    path: Path
    source: str
    text: str
    truncated: bool = False

    def block(self) -> str:
        """The text as the system prompt holds it (as `agent/prompt.py` always wrote it)."""
        return f"Contents of {self.path}:\n\n{self.text}"


def git_root(root: Path) -> Path | None:
    """The nearest folder at or above `root` holding `.git` (a folder, or a worktree's
    file), or None."""
    for folder in (root, *root.parents):
        note(folder / ".git")
        if os.path.lexists(folder / ".git"):
            return folder
    return None


def _read(path: Path, source: str, zone: Path | None,
          warnings: list[str]) -> MemoryFile | None:
    try:
        read = read_inside(path, zone, MAX_MEMORY_CHARS)
    except Outside as why:
        warnings.append(f"skipped the memory file: {why}")
        return None
    except (OSError, UnicodeDecodeError) as error:
        warnings.append(f"skipped the memory file {path}: it cannot be read ({error})")
        return None
    if read is None:
        return None
    text = read.text
    if read.truncated:
        text += (f"\n\n[... {path.name} was cut here: only its first {MAX_MEMORY_CHARS:,} "
                 "characters are included]")
    return MemoryFile(path, source, text, read.truncated)


def load_memory(sources: Iterable[str], root: Path, *, user_folder: Path | None = None
                ) -> tuple[list[MemoryFile], list[str]]:
    """The memory files of `sources` for a project in `root`, and warnings (a file
    skipped). Each file is read once, even when two sources name it (`root` = home)."""
    sources = set(sources)
    root = Path(os.path.realpath(root))
    top = git_root(root) or root
    folders = [top, *reversed([p for p in root.parents if p.is_relative_to(top)
                               and p != top]), *([root] if root != top else [])]
    places: list[tuple[Path, str, Path | None]] = []
    if "user" in sources and user_folder is not None:
        places.append((user_folder / MEMORY_FILE, "user", None))
    for folder in folders:
        if "project" in sources:
            places.append((folder / MEMORY_FILE, "project", top))
        if "local" in sources:
            places.append((folder / LOCAL_MEMORY_FILE, "local", top))
    if "project" in sources:
        places.append((project_folder(root) / MEMORY_FILE, "project", root))
    files: list[MemoryFile] = []
    warnings: list[str] = []
    seen: set[str] = set()
    for path, source, zone in places:
        note(path)
        key = os.path.realpath(path)
        if key in seen:
            continue
        seen.add(key)
        found = _read(path, source, zone, warnings)
        if found is not None:
            files.append(found)
    return files, warnings


def nested_memory(path_read: Path | str, root: Path | str,
                  already_loaded: Iterable[Path | str]) -> list[tuple[Path, str]]:
    """The FUXI.md files of the folders below `root` down to the folder of `path_read`
    (its own folder included; `root` itself excluded, its memory is in the prompt), not in
    `already_loaded`, outermost first, as (path, text). For a file outside `root`: none.

    Pure: the caller adds the returned paths to what it has loaded, and shows the texts
    to the model (a reminder next to the tool result).
    """
    root = Path(os.path.realpath(root))
    target = Path(os.path.realpath(path_read))
    if not target.is_relative_to(root) or target == root:
        return []
    folder = target if target.is_dir() else target.parent
    if folder == root:  # a file in `root` itself: its memory is in the prompt
        return []
    chain = [p for p in reversed(folder.parents) if p.is_relative_to(root) and p != root]
    places = [*chain, folder]
    loaded = {os.path.realpath(p) for p in already_loaded}
    found: list[tuple[Path, str]] = []
    for place in places:
        path = place / MEMORY_FILE
        if os.path.realpath(path) in loaded:
            continue
        memory = _read(path, "project", root, [])
        if memory is not None:
            found.append((path, memory.text))
    return found
