"""One private helper that code ported from the comparable SDK imports by its path.

That SDK's e2e test of resuming from a SessionStore imports
`_internal.session_resume._write_redacted_credentials` to give a throwaway config folder
a copy of a developer's OAuth login with its single-use refresh token taken out. This
package has no login file (it reads an API key from the environment), so nothing here
calls it; it is kept so that test, renamed, runs as it is. Nothing else of that SDK's
`_internal` is provided: private paths are not an interface.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .common.atomic_file import write_atomically

__all__ = ["_write_redacted_credentials"]


def _write_redacted_credentials(creds_json: str | None, dst: Path) -> None:
    """Write `creds_json` to `dst` without any `refreshToken` (at any depth), readable by
    the owner only. None writes nothing; text that is not JSON is written as it is."""
    if creds_json is None:
        return
    try:
        text = json.dumps(_without_refresh(json.loads(creds_json)))
    except ValueError:
        text = creds_json
    write_atomically(dst, text.encode("utf-8"), mode=0o600)


def _without_refresh(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_refresh(v) for k, v in value.items() if k != "refreshToken"}
    if isinstance(value, list):
        return [_without_refresh(v) for v in value]
    return value
