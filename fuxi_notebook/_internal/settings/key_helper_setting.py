"""Which `apiKeyHelper` a session runs, and where it came from.

`"apiKeyHelper": "<shell command>"` in a settings file names a command whose output is the
API key (`models/access/key_helper.py` runs it). A command is code: from the user's own settings
it applies at once; from the project's (`.fuxi/settings.json`, `.fuxi/settings.local.json`)
only once the folder was trusted with exactly that content, like a hook command (it is one
of the items the trust card lists, `gate.py`). Precedence is that of the other scalar
settings, local > project > user, among the helpers that apply: while the project is not
trusted, the user's helper (if any) is used, and one line says which was not run.

    setting, note = api_key_helper(project)    # project: a load_project_settings result
    helper = key_helper_for(project, env=options_env)   # a KeyHelper, or None
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ..models.access.key_helper import KeyHelper
from .files import SourceSettings

__all__ = ["KeyHelperSetting", "api_key_helper", "can_run_live", "declared_key_helpers",
           "key_helper_for"]


@dataclass(frozen=True)
class KeyHelperSetting:
    """One `apiKeyHelper` a settings file declares.

    Attributes:
        command: the shell command, as written.
        source: "user", "project" or "local"; `file`: the settings file.
        applies: False for a project's helper while the folder is not trusted (it is not
            run).
    """

    command: str
    source: str
    file: Path
    applies: bool

    @property
    def origin(self) -> str:
        """`project settings /repo/.fuxi/settings.json`, for messages."""
        return f"{self.source} settings {self.file}"


class _Project(Protocol):
    """What `api_key_helper` needs of a `ProjectSettings` (project.py imports this module)."""

    @property
    def root(self) -> Path: ...

    @property
    def api_key_helpers(self) -> tuple[KeyHelperSetting, ...]: ...


def declared_key_helpers(files: Iterable[SourceSettings], *,
                         trusted: bool) -> tuple[KeyHelperSetting, ...]:
    """Every `apiKeyHelper` of `files` (in precedence order, user first), the most specific
    first; a project's applies when `trusted` (whether the folder's gated content applies)."""
    found = [KeyHelperSetting(f.api_key_helper, f.source, f.path,
                              applies=trusted or f.source == "user")
             for f in files if f.api_key_helper is not None]
    return tuple(reversed(found))


def api_key_helper(project: _Project) -> tuple[KeyHelperSetting | None, str | None]:
    """(the helper the session runs, None: none applies; one line naming a project's
    helper that is not run because the folder is not trusted, None: there is none)."""
    helpers = project.api_key_helpers
    chosen = next((helper for helper in helpers if helper.applies), None)
    held = [helper for helper in helpers if not helper.applies]
    if not held:
        return chosen, None
    root = str(project.root)
    instead = f"; the one of {chosen.origin} is used" if chosen is not None else ""
    return chosen, (f"the apiKeyHelper of {held[0].origin} is not run until you trust "
                    f"{root} (fuxi_notebook.trust_project_settings({root!r}) in Python, or "
                    f"the card a %%fuxi cell shows){instead}")


def key_helper_for(project: _Project, *, env: Mapping[str, str] | None = None,
                   ttl_ms: int | None = None) -> KeyHelper | None:
    """The `KeyHelper` running the session's helper in the project folder (None: no helper
    applies). `env`: the session's variables (the settings' `env` under the options'),
    which the command gets and whose `FUXI_API_KEY_HELPER_TTL_MS` sets the TTL.

    Sessions with the same helper, folder and variables share one `KeyHelper` (and so
    its cached key): a notebook's cells do not run the command once each."""
    chosen, _ = api_key_helper(project)
    if chosen is None:
        return None
    variables = dict(env or {})
    key = (chosen.command, str(project.root), chosen.origin,
           tuple(sorted(variables.items())), ttl_ms)
    helper = _SHARED.pop(key, None)
    if helper is None:
        helper = KeyHelper(chosen.command, cwd=project.root, origin=chosen.origin,
                           env=variables, ttl_ms=ttl_ms)
    _SHARED[key] = helper  # the most recently used last
    while len(_SHARED) > _MAX_SHARED:
        del _SHARED[next(iter(_SHARED))]
    return helper


#: the helpers sessions share, least recently used first
_SHARED: dict[tuple[object, ...], KeyHelper] = {}
_MAX_SHARED = 16


def can_run_live() -> bool:
    """Whether a live request could be sent: a key, a provider switched on
    (`models/access/providers.py`), or an apiKeyHelper in the user's own settings (a
    project's runs only once trusted, so it does not count). The one answer for the
    notebook's replay default and the chat's sign-in check."""
    from ..models.access.providers import has_credentials

    if has_credentials():
        return True
    from ...errors import ConfigurationError
    from .files import read_source

    try:
        user = read_source("user", Path.cwd())
    except (ConfigurationError, OSError):
        return False  # an unreadable file is the session's to report
    return user is not None and user.api_key_helper is not None
