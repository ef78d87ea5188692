"""The Settings Editor's defaults for agent cells, as the frontend extension sends them
(labextension/schema/plugin.json: model, permissionMode, maxBudgetUsd, effort, replay).

They come from the browser, so each value is checked here as `%fuxi config` would check
it, and what is wrong is left out with one line. The permission mode may only be one that
approves no more than `default` (`NARROW_MODES`: default, plan, dontAsk): the value
arrives over a channel that code running in the kernel could also write to, and the
integrity guard cannot tell such a write from the browser's, so a default from there may
make the agent ask more, never less (acceptEdits, auto and bypassPermissions are given
with `%fuxi config` or a cell's line). A budget must be a positive number. A kernel
without the extension has none of them; a cell's options and `%fuxi config` win over
them (controller.py).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ....options import EFFORT_LEVELS, PERMISSION_MODES
from ...common.replay_modes import REPLAY_MODES
from ...permissions.modes import NARROW_MODES

__all__ = ["SETTING_OPTIONS", "frontend_defaults"]

#: the Settings Editor's names -> the `%%fuxi` options they set
SETTING_OPTIONS = {"model": "model", "permissionMode": "permission_mode",
                   "maxBudgetUsd": "max_budget_usd", "effort": "effort", "replay": "replay"}
#: the permission modes a default from the browser may be (see the module docstring)
_MODES = tuple(mode for mode in PERMISSION_MODES if mode in NARROW_MODES)
_MODEL_CHARS = 200


def _checked(name: str, value: Any) -> Any:
    """The option's value, or raise ValueError with what is wrong."""
    if name == "maxBudgetUsd":
        if isinstance(value, bool) or not isinstance(value, int | float) or not (
                math.isfinite(value) and value > 0):
            raise ValueError("must be a positive number of US dollars")
        return float(value)
    if not isinstance(value, str):
        raise ValueError("must be text")
    choices = {"permissionMode": _MODES, "effort": EFFORT_LEVELS, "replay": REPLAY_MODES}
    if name in choices and value not in choices[name]:
        raise ValueError(f"must be one of {', '.join(choices[name])}")
    if name == "model" and (len(value) > _MODEL_CHARS or not value.isprintable()
                            or any(c.isspace() for c in value)):
        raise ValueError("is not a model name")
    return value


def frontend_defaults(raw: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """(the `%%fuxi` option defaults the Settings Editor sets, one line for each value
    left out)."""
    chosen: dict[str, Any] = {}
    problems: list[str] = []
    for name, option in SETTING_OPTIONS.items():
        if name not in raw or raw[name] in ("", None):
            continue
        try:
            chosen[option] = _checked(name, raw[name])
        except ValueError as error:
            shown = str(raw[name])[:40]
            problems.append(f"the Settings Editor's Fuxi {name} {shown!r} {error}; not used")
    return chosen, problems
