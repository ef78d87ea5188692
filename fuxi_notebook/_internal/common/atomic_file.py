"""Writing a file whole or not at all: the one home for the temporary-file-and-rename
write that the trust store, file checkpoints, the CLI's notebook output and a copied
login file each need (a reader sees the old file or the new one, never half of it)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

__all__ = ["write_atomically"]


def write_atomically(path: Path, data: bytes, *, mode: int | None = None,
                     sync: bool = False, suffix: str = "") -> None:
    """Replace `path` with `data`: a temporary file beside it (`.<name>.…<suffix>`), given
    `mode` and (`sync`) flushed to disk, then renamed over it. Whatever goes wrong,
    cancellation included, the temporary file is removed and `path` is as it was."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.",
                                         suffix=suffix)
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
            if sync:
                file.flush()
                os.fsync(file.fileno())
        if mode is not None:
            os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
