"""Tool names the Messages API accepts, made from MCP server keys and MCP tool names.

A server's tools are offered as `mcp__<server key>__<tool name>`. The API allows only
`^[a-zA-Z0-9_-]{1,128}$`, while MCP tool names may contain "." (and a server may send
anything), so tool names are sanitized ("." becomes "_"); a name that sanitizes into another's, or
must be cut, gets a suffix derived from the original name, so the result depends on the
names alone, never on listing order.

Server keys are not sanitized but checked (`server_name_problem`): the permission rule
language splits `mcp__a__b__c` as server `a`, tool `b__c`, so a key must not contain `__`
or end with `_`, or its rules would name another server; and it must leave room for a
suffixed tool name. The patterns end in `\\Z`, not `$`: `$` also matches before a final
newline, so `db` and a newline passed as a server name.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable

__all__ = ["PREFIX", "server_name_problem", "tool_names"]

#: What the Messages API accepts as a tool name.
PREFIX = "mcp__"
_MAX = 128
_SUFFIX = 7  # "_" + 6 hex digits
_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")
_KEY = re.compile(r"^[a-zA-Z0-9_-]+\Z")
#: the longest server key: `mcp__<key>__` leaves room for a tool name cut to a suffix
MAX_SERVER_NAME = _MAX - len(PREFIX) - len("__") - _SUFFIX


def server_name_problem(name: object) -> str | None:
    """Why `name` cannot be a server key (None: it can)."""
    if not isinstance(name, str) or not name:
        return "a server name must be a non-empty string"
    if not _KEY.match(name):
        return ("a server name may contain only letters, digits, '_' and '-' (it becomes "
                f"part of tool names such as 'mcp__{_UNSAFE.sub('_', name)}__tool')")
    if "__" in name or name.endswith("_"):
        return ("a server name must not contain '__' or end with '_' (permission rules "
                "split 'mcp__server__tool' at the first '__' after the server)")
    if len(name) > MAX_SERVER_NAME:
        return f"a server name must be at most {MAX_SERVER_NAME} characters"
    return None


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:_SUFFIX - 1]


def tool_names(server: str, names: Iterable[str]) -> dict[str, str]:
    """`{MCP tool name: API tool name}` for one server's tools (all distinct)."""
    head = f"{PREFIX}{server}__"
    room = _MAX - len(head)
    clean = {name: _UNSAFE.sub("_", name) or "_" for name in names}
    counts = Counter(clean.values())
    wanted: dict[str, str] = {}
    for name, safe in clean.items():
        if len(safe) > room or (counts[safe] > 1 and safe != name):
            # cut, or sanitized into another's name: a suffix from the original name
            safe = safe[: room - _SUFFIX] + "_" + _digest(name)
        wanted[name] = head + safe
    taken: dict[str, str] = {}
    for name in sorted(wanted, key=lambda n: (wanted[n] != head + n, n)):
        candidate, number = wanted[name], 1
        while candidate in taken:  # only if a literal name equals another's suffixed one
            number += 1
            tail = f"_{number}"
            candidate = wanted[name][: _MAX - len(tail)] + tail
        taken[candidate] = name
    return {name: api for api, name in taken.items()}
