"""Folders for the user's private data (session transcripts, the trust store), made 0o700.

`Path.mkdir(parents=True, mode=0o700)` applies the mode to the last folder only, and
through the umask: `~/.fuxi/projects/` came out 0o755, so any user could list the project
paths of every session. `make_private_dirs` makes each missing folder 0o700 whatever the
umask, and leaves the folders that already existed as they are. Folders the agent's tools
make for the user's own files are not private data and keep the usual modes. This module
imports nothing from the rest of the package.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["PRIVATE_DIR_MODE", "make_private_dirs"]

PRIVATE_DIR_MODE = 0o700


def make_private_dirs(path: Path) -> None:
    """Create `path` and its missing parents, each readable by the user only."""
    missing = []
    folder = Path(path)
    while not os.path.lexists(folder) and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=PRIVATE_DIR_MODE)
        except FileExistsError:  # another process made it meanwhile: not ours to change
            if not folder.is_dir():
                raise
            continue
        os.chmod(folder, PRIVATE_DIR_MODE)  # the umask may have taken bits from the mode
