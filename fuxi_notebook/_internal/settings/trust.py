"""The trust store: which project folders the user trusted, and with what.

A folder's settings can run code (hook commands, MCP servers) or widen what runs without
asking (`allow` rules, a permissive mode, more directories, environment variables). None of
it applies until the user trusted the folder, and trust is given to *content*: the store
maps the folder's resolved path to a fingerprint (sha256) of the code-running content it
was trusted with. When a `git pull` adds a hook, the fingerprint no longer matches and the
folder is untrusted again until the user approves the new content; the store keeps the
lines the user saw, so what changed can be shown.

The store is `<user folder>/trusted-folders.json` (`~/.fuxi/` or `FUXI_CONFIG_DIR`),
written atomically (a temp file, then `os.replace`) under a lock file, so two kernels
trusting at once lose nothing. A corrupt store reads as empty with a warning: at worst
the user is asked again, and a session never fails because of it. The agent's own tools
must not write it (it would trust a folder itself): it lives under `.fuxi/`, a protected
folder, and a `FUXI_CONFIG_DIR` elsewhere must be protected by the caller too.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..common.atomic_file import write_atomically
from ..common.private_dirs import make_private_dirs

__all__ = ["STORE_NAME", "TrustRecord", "TrustStoreWarning", "fingerprint_of", "folder_key",
           "forget_folder", "is_trusted", "lookup_trust", "trust_folder", "trust_store_path",
           "trusted_record"]

STORE_NAME = "trusted-folders.json"
_VERSION = 1
#: part of every fingerprint: a new scheme (or new kinds of content) makes old trust void
_SCHEME = "fuxi-trust-v1"
#: a store larger than this is not read (treated as empty, with a warning): thousands of
#: trusted folders fit in a fraction of it
_MAX_STORE_BYTES = 16 << 20


class TrustStoreWarning(UserWarning):
    """The trust store could not be read (it is treated as empty) or written."""


@dataclass(frozen=True)
class TrustRecord:
    """What the store holds for a folder."""

    fingerprint: str
    items: tuple[str, ...] = ()
    trusted_at: str | None = None


def trust_store_path() -> Path:
    """`<user folder>/trusted-folders.json` (the user folder read on each call)."""
    from .files import user_folder

    return user_folder() / STORE_NAME


def folder_key(path: Path | str) -> str:
    """The store's key for a folder: its absolute path, symlinks resolved (so a link to a
    trusted folder is that folder, and a folder renamed is a new one)."""
    return os.path.realpath(os.path.expanduser(os.fspath(path)))


def fingerprint_of(items: Sequence[Any]) -> str:
    """`sha256:<hex>` of the canonical JSON of `items` (what trust is given to)."""
    if not items:  # most folders: nothing needs trust
        return _NOTHING
    return _fingerprint(items)


def _fingerprint(items: Sequence[Any]) -> str:
    text = json.dumps([_SCHEME, list(items)], sort_keys=True, ensure_ascii=False,
                      separators=(",", ":"), default=str)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def _load(path: Path) -> tuple[dict[str, Any], str | None]:
    """The folders of the store, and why it was treated as empty (None when it was not)."""
    from ...errors import ConfigurationError
    from ..common.reading import load_json, read_bounded

    where = f"the trust store {path}"
    try:
        raw = read_bounded(path, limit=_MAX_STORE_BYTES, where=where)
        if raw is None:
            return {}, None
        data = load_json(raw, where)
    except ConfigurationError as error:
        return {}, f"{error}; it is treated as empty, so trusted folders must be trusted again"
    folders = data.get("folders") if isinstance(data, dict) else None
    if not isinstance(folders, dict):
        return {}, f"the trust store {path} does not hold a 'folders' object; it is treated " \
                   "as empty, so trusted folders must be trusted again"
    return {k: v for k, v in folders.items() if isinstance(k, str) and isinstance(v, dict)
            and isinstance(v.get("fingerprint"), str)}, None


def _folders(path: Path) -> dict[str, Any]:
    folders, problem = _load(path)
    if problem:
        warnings.warn(problem, TrustStoreWarning, stacklevel=3)
    return folders


def lookup_trust(path: Path | str) -> tuple[TrustRecord | None, str | None]:
    """What the store holds for the folder `path` (None: nothing), and why the store was
    treated as empty (None when it was read), for callers that collect warnings."""
    folders, problem = _load(trust_store_path())
    entry = folders.get(folder_key(path))
    if entry is None:
        return None, problem
    items, when = entry.get("items"), entry.get("trusted_at")
    return TrustRecord(entry["fingerprint"],
                       tuple(i for i in items if isinstance(i, str))
                       if isinstance(items, list) else (),
                       when if isinstance(when, str) else None), problem


def trusted_record(path: Path | str) -> TrustRecord | None:
    """What the store holds for the folder `path`, or None (a corrupt store warns)."""
    record, problem = lookup_trust(path)
    if problem:
        warnings.warn(problem, TrustStoreWarning, stacklevel=2)
    return record


def is_trusted(path: Path | str, fingerprint: str) -> bool:
    """Whether the folder `path` was trusted with exactly this content."""
    record = trusted_record(path)
    return record is not None and record.fingerprint == fingerprint


def trust_folder(path: Path | str, fingerprint: str, *, items: Sequence[str] = ()) -> None:
    """Trust the folder `path` with the content of `fingerprint`; `items` are the lines the
    user was shown (kept to tell what changed later)."""
    store = trust_store_path()
    with _locked(store):
        folders = _folders(store)
        folders[folder_key(path)] = {
            "fingerprint": fingerprint, "items": list(items),
            "trusted_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        _write(store, folders)


def forget_folder(path: Path | str) -> bool:
    """Take back the trust in the folder `path`; whether it was trusted."""
    store = trust_store_path()
    with _locked(store):
        folders = _folders(store)
        if folders.pop(folder_key(path), None) is None:
            return False
        _write(store, folders)
        return True


def _write(store: Path, folders: dict[str, Any]) -> None:
    """Write the store atomically, readable by the user only."""
    make_private_dirs(store.parent)
    text = json.dumps({"version": _VERSION, "folders": folders}, indent=2, sort_keys=True,
                      ensure_ascii=False)
    write_atomically(store, (text + "\n").encode("utf-8"), mode=0o600, sync=True)


@contextlib.contextmanager
def _locked(store: Path) -> Iterator[None]:
    """An exclusive lock for a read-modify-write of the store (where `fcntl` exists)."""
    try:
        import fcntl
    except ImportError:  # not POSIX: last writer wins
        yield
        return
    make_private_dirs(store.parent)
    descriptor = os.open(store.with_name(STORE_NAME + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)


_NOTHING = _fingerprint([])
