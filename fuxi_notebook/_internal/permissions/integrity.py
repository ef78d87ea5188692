"""Policy integrity: code the model runs in this process must not change the policy.

Allowing the Python tool gives the model the kernel's privileges; nothing in-process is a
sandbox against that. What we can promise is that the policy does not change *silently*.
`PolicyGuard` keeps a baseline (`PolicySeal`) of

- the policy's state (rules, mode, working directories, the approval callback, the
  notebook's defaults, rules granted along the conversation — whatever was `watch`ed),
  compared by value or by identity;
- the package's code: every attribute of every loaded `fuxi_notebook` module and of the
  classes defined there (a replaced method, a rebound function, a tool's re-declared kind),
  watched from the first call of a tool that runs code (`arm`; the seal costs ~2 ms, so
  sessions that never run code do not pay it).

The baseline moves only on the approval path (`reseal()` after the engine applies an
update, when a session starts, after the user's `%fuxi config` / `reset` and when a cell
ends). `check()` runs before every permission decision, after every call of a tool that
runs code, and between cells; any difference from the baseline is tampering: it is
restored and the caller ends the run with a security error.
"""

from __future__ import annotations

import copy
import dataclasses
import os
import re
import sys
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any, Literal

__all__ = ["CodeSeal", "PolicyGuard", "PolicySeal", "Watched"]

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
        return _deep(value)
    return copy.copy(value) if how == "shallow" else None


#: values no code can change in place (a compiled pattern is immutable, as deepcopy treats it)
_ATOMS = (str, int, float, bool, type(None), bytes, re.Pattern)


def _deep(value: Any) -> Any:
    """`copy.deepcopy` for what a policy holds (containers, paths, rules, atoms), a few
    times faster: a seal is taken whenever a session starts and after every approval.
    Paths are made anew (their attributes could be rebound), frozen dataclasses field by
    field; anything else goes to `copy.deepcopy`. Policies hold no cycles."""
    kind = type(value)
    if kind in _ATOMS:
        return value
    if kind is dict:
        return {key: _deep(item) for key, item in value.items()}
    if kind is list:
        return [_deep(item) for item in value]
    if kind is tuple:
        return tuple(_deep(item) for item in value)
    if kind is set:
        return {_deep(item) for item in value}
    if isinstance(value, PurePath):
        return kind(os.fspath(value))
    params = getattr(kind, "__dataclass_params__", None)
    if params is not None and params.frozen and not hasattr(value, "__slots__"):
        fresh = object.__new__(kind)
        for field in dataclasses.fields(value):
            object.__setattr__(fresh, field.name, _deep(getattr(value, field.name)))
        return fresh
    return copy.deepcopy(value)


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


class CodeSeal:
    """The package's code as it was (module and class attributes, by identity). Code never
    changes legitimately, so one seal serves a whole kernel session; taking it costs ~2 ms,
    so a guard takes it only when code the model wrote is about to run (`arm`)."""

    def __init__(self) -> None:
        self._entries = _code_entries()
        # grouped by namespace, so a check reads each namespace once (a check runs after
        # every call that runs code: it must cost well under a millisecond)
        groups: dict[int, tuple[Any, list[tuple[str, Any]]]] = {}
        for owner, name, original in self._entries:
            groups.setdefault(id(owner), (owner, []))[1].append((name, original))
        self._groups = list(groups.values())

    def breaches(self) -> list[str]:
        found = []
        for owner, names in self._groups:
            get = (owner if owner is sys.modules else vars(owner)).get
            for name, original in names:
                if get(name, _MISSING) is not original:
                    found.append(f"{_describe(owner, name)} was replaced")
        return found

    def restore(self) -> None:
        for owner, name, original in self._entries:
            if _current(owner, name) is original:
                continue
            if owner is sys.modules:
                sys.modules[name] = original
            elif isinstance(owner, type):
                type.__setattr__(owner, name, original)
            else:
                setattr(owner, name, original)


class PolicySeal:
    """A snapshot of the policy's state; `breaches()` says what changed, `restore()`
    undoes it."""

    def __init__(self, watched: list[Watched]) -> None:
        self._values = [_Value(w, getattr(w.owner, w.attr, _MISSING),
                               _copy(w.how, getattr(w.owner, w.attr, _MISSING)))
                        for w in watched]

    def breaches(self) -> list[str]:
        """What changed since the seal, one line each (empty: intact)."""
        return [f"{value.watched.name} was changed" for value in self._values
                if self._changed(value)]

    @staticmethod
    def _changed(value: _Value) -> bool:
        now = getattr(value.watched.owner, value.watched.attr, _MISSING)
        return now is not value.original or (
            value.watched.how != "identity" and not _equal(now, value.copy))

    def restore(self) -> None:
        """Put back what changed (an immutable value comes back as an equal copy: take a
        new seal afterwards)."""
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
        self.code: CodeSeal | None = None

    def watch(self, owner: Any, attr: str, how: How = "value", label: str = "") -> None:
        """Add `owner.attr` to the policy (the notebook adds its defaults, ...) and take
        the baseline again."""
        self.watched.append(Watched(owner, attr, how, label))
        self.reseal()

    def arm(self, code: CodeSeal | None = None) -> None:
        """Watch the package's code from now on (`code`: a seal taken earlier in this
        process, e.g. by the previous cell's guard, so no gap opens between the two)."""
        if self.code is None:
            self.code = code or CodeSeal()

    def reseal(self) -> None:
        """The policy as it stands is legitimate (it changed on the approval path)."""
        self.baseline = PolicySeal(self.watched)

    def check(self) -> list[str]:
        """What changed since the baseline (restored before returning); [] if intact."""
        breaches = self.baseline.breaches()
        if self.code is not None:
            breaches += self.code.breaches()
        if breaches:
            if self.code is not None:
                self.code.restore()
            self.baseline.restore()
            self.reseal()
        return breaches
