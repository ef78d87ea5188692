"""Policy integrity: code the model runs in this process must not change the policy.

Allowing the Python tool gives the model the kernel's privileges; nothing in-process is a
sandbox against that. What we can promise is that the policy does not change *silently*.
`PolicyGuard` keeps a baseline (`PolicySeal`) of

- the policy's state (rules, mode, working directories, the approval callback, the
  notebook's defaults, rules granted along the conversation — whatever was `watch`ed),
  compared by value or by identity;
- the package's code: every attribute of every loaded `fuxi_notebook` module and of the
  classes defined there (a replaced method, a rebound function, a tool's re-declared kind).

The baseline moves only on the approval path (`reseal()` after the engine applies an
update, when a session starts, after the user's `%fuxi config` / `reset` and when a cell
ends). `check()` runs before every permission decision, after every call of a tool that
runs code, and between cells; any difference from the baseline is tampering: it is
restored and the caller ends the run with a security error.
"""

from __future__ import annotations

import copy
import sys
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["PolicyGuard", "PolicySeal", "Watched"]

#: value: compared (and restored) as a deep copy; shallow: a shallow copy (its items are
#: immutable or compared by identity); identity: the same object must be there
How = Literal["value", "shallow", "identity"]
_MISSING = object()
_PACKAGE = __name__.split(".")[0]


@dataclass(frozen=True)
class Watched:
    """`owner.attr` is part of the policy; `how` says how a change is seen."""

    owner: Any
    attr: str
    how: How = "value"
    label: str = ""

    @property
    def name(self) -> str:
        return self.label or f"{type(self.owner).__name__}.{self.attr}"


@dataclass(frozen=True)
class _Value:
    watched: Watched
    original: Any
    copy: Any


def _copy(how: How, value: Any) -> Any:
    if how == "value":
        return copy.deepcopy(value)
    return copy.copy(value) if how == "shallow" else None


def _restore_in_place(original: Any, saved: Any, how: How) -> bool:
    """Put `saved`'s content back into the mutable `original` (others share it)."""
    fresh = _copy(how, saved)
    if isinstance(original, list):
        original[:] = fresh
        return True
    if isinstance(original, dict):
        original.clear()
        original.update(fresh)
        return True
    if isinstance(original, set):
        original.clear()
        original.update(fresh)
        return True
    return False


def _code_entries() -> list[tuple[Any, str, Any]]:
    """(namespace owner, name, value) for the package's modules and their classes."""
    entries: list[tuple[Any, str, Any]] = []
    for name, module in list(sys.modules.items()):
        if module is None or not (name == _PACKAGE or name.startswith(_PACKAGE + ".")):
            continue
        entries.append((sys.modules, name, module))
        for attr, value in list(vars(module).items()):
            entries.append((module, attr, value))
            if isinstance(value, type) and value.__module__ == name:
                entries.extend((value, cattr, cvalue)
                               for cattr, cvalue in list(vars(value).items()))
    return entries


def _current(owner: Any, name: str) -> Any:
    if owner is sys.modules:
        return sys.modules.get(name, _MISSING)
    if isinstance(owner, type):
        return vars(owner).get(name, _MISSING)
    return vars(owner).get(name, _MISSING)


def _describe(owner: Any, name: str) -> str:
    if owner is sys.modules:
        return f"the module {name}"
    where = getattr(owner, "__qualname__", None) or getattr(owner, "__name__", "?")
    return f"{where}.{name}"


class PolicySeal:
    """A snapshot of the policy; `breaches()` says what changed, `restore()` undoes it."""

    def __init__(self, watched: list[Watched]) -> None:
        self._values = [_Value(w, getattr(w.owner, w.attr, _MISSING),
                               _copy(w.how, getattr(w.owner, w.attr, _MISSING)))
                        for w in watched]
        self._code = _code_entries()

    def breaches(self) -> list[str]:
        """What changed since the seal, one line each (empty: intact)."""
        found = [f"{value.watched.name} was changed" for value in self._values
                 if self._changed(value)]
        for owner, name, original in self._code:
            if _current(owner, name) is not original:
                found.append(f"{_describe(owner, name)} was replaced")
        return found

    @staticmethod
    def _changed(value: _Value) -> bool:
        now = getattr(value.watched.owner, value.watched.attr, _MISSING)
        return now is not value.original or (
            value.watched.how != "identity" and not _equal(now, value.copy))

    def restore(self) -> None:
        """Put back what changed (an immutable value comes back as an equal copy: take a
        new seal afterwards)."""
        for owner, name, original in self._code:
            if _current(owner, name) is original:
                continue
            if owner is sys.modules:
                sys.modules[name] = original
            else:
                type.__setattr__(owner, name, original) if isinstance(owner, type) else \
                    setattr(owner, name, original)
        for value in self._values:
            watched = value.watched
            if value.original is _MISSING or not self._changed(value):
                continue
            setattr(watched.owner, watched.attr, value.original)
            if watched.how != "identity" and not _restore_in_place(value.original, value.copy,
                                                                   watched.how):
                setattr(watched.owner, watched.attr, _copy(watched.how, value.copy))


def _equal(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except Exception:  # an object whose __eq__ was tampered with or fails
        return False


class PolicyGuard:
    """What one session's policy consists of, and its legitimate baseline."""

    def __init__(self, watched: list[Watched] | None = None) -> None:
        self.watched: list[Watched] = list(watched or [])
        self.baseline = PolicySeal(self.watched)

    def watch(self, owner: Any, attr: str, how: How = "value", label: str = "") -> None:
        """Add `owner.attr` to the policy (the notebook adds its defaults, ...) and take
        the baseline again."""
        self.watched.append(Watched(owner, attr, how, label))
        self.reseal()

    def reseal(self) -> None:
        """The policy as it stands is legitimate (it changed on the approval path)."""
        self.baseline = PolicySeal(self.watched)

    def check(self) -> list[str]:
        """What changed since the baseline (restored before returning); [] if intact."""
        breaches = self.baseline.breaches()
        if breaches:
            self.baseline.restore()
            self.reseal()
        return breaches
