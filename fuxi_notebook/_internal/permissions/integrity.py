"""Policy integrity: code the model runs in this process must not change the policy.

Allowing the Python tool gives the model the kernel's privileges; nothing in-process is a
sandbox against that. What we can promise is that the policy does not change *silently*.
`PolicyGuard` keeps a baseline (`PolicySeal`) of

- the policy's state (rules, mode, working directories, the approval callback, the
  notebook's defaults, rules granted along the conversation — whatever was `watch`ed),
  compared by value or by identity;
- the package's code (`CodeSeal`): every attribute of every loaded `fuxi_notebook` module
  and of the classes defined there (a replaced method, a rebound function, a tool's
  re-declared kind), by identity, watched from the first call of a tool that runs code
  (`arm`), so sessions that never run code do not pay for it.

The baseline moves only on the approval path (`reseal()` after the engine applies an
update, when a session starts, after the user's `%fuxi config` / `reset` and when a cell
ends). `check()` runs before every permission decision, after every call of a tool that
runs code, and between cells; any difference from the baseline is tampering: it is
restored and the caller ends the run with a security error.

An in-process MCP tool (`create_sdk_mcp_server`, `@fuxi_tool`) counts as code that runs:
the user wrote the handler, but the model chooses what it is given, and a handler that
evaluates, imports or runs what it is given runs the model's code in this process. So
its calls are checked after they return and before the next decision, as the Python
tool's are. Both checks stay: the one after a call stops a change before the call's
result reaches hooks or the next request (a rebound redaction would leak in it); the one
before a decision catches what code left running (a thread, a task, a loop callback)
changed since.

What makes the code checks cheap, with nothing skipped (issue 36: a full read of 6-10k
entries cost 0.3-0.6 ms, twice a call, and each session took a new seal, 10-25 ms):

- One seal serves the process (`CodeSeal.current()`): the last one taken is reused once
  a check finds it intact, and takes in the modules imported since; a change found then
  (the user's own patch between sessions) gets a new seal, as each session took its own.
- A check reads a namespace by identity only if its dict was written to. CPython
  3.11-3.13 gives a dict a new version tag (PEP 509, from a process-wide counter) on every
  write that changes it — `setattr`, `vars(m)[k] = v`, `update`, `del`, `pop`, a `global`
  assignment, a class attribute set through `type` — so a rebinding, which leaves the
  dict's size and keys as they were (a fingerprint of those misses it), moves the tag.
  The tags are read (ctypes, read-only, after a self-test of those writes) before the
  values they vouch for, so a write in between makes the next check read that namespace.
  Elsewhere (other interpreters, free-threaded builds, 3.14+, a failed self-test) every
  entry is read, as before. Only code that writes the dict's memory itself moves no tag;
  such code could as well rewrite this checker, which no in-process check survives.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import gc
import itertools
import operator
import os
import re
import sys
import types
from collections.abc import Callable
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


def _package_modules(modules: dict[str, Any], known: set[str]) -> list[tuple[str, Any]]:
    """The package's loaded modules not in `known`, in import order."""
    return [(name, module) for name, module in list(modules.items())
            if module is not None and name not in known
            and (name == _PACKAGE or name.startswith(_PACKAGE + "."))]


def _namespace(owner: Any) -> Any:
    """The dict itself behind `vars(owner)` (a class shows it through a read-only proxy;
    the proxy's one referent is the class's dict), else the live proxy. Held by the seal,
    so a check reads the namespace the code runs with even if `__dict__` lookups were
    diverted."""
    mapping = vars(owner)
    if type(mapping) is dict:
        return mapping
    inner = [d for d in gc.get_referents(mapping) if type(d) is dict]
    return inner[0] if len(inner) == 1 else mapping


class _Unversioned:
    """The tag of a namespace whose dict the seal could not reach: it moves at every
    read, so every check reads that namespace."""

    def __init__(self) -> None:
        self._counter = itertools.count()

    @property
    def value(self) -> int:
        return -1 - next(self._counter)


def _version_tags() -> Callable[[dict[str, Any]], Any] | None:
    """A reader of a dict's version tag (PEP 509: CPython gives every dict a new tag
    whenever anything in it is set, rebound or deleted), or None where it cannot be
    trusted: other interpreters, free-threaded builds, CPython 3.14+ (the field was
    dropped), or a build where the self-test below fails. The tag is a read-only look at
    the dict's own struct (`ma_version_tag`, after `ma_used`), through ctypes."""
    import sysconfig

    if (sys.implementation.name != "cpython" or not (3, 11) <= sys.version_info[:2] < (3, 14)
            or sysconfig.get_config_var("Py_GIL_DISABLED")):
        return None
    try:
        import ctypes
    except ImportError:  # pragma: no cover - CPython without ctypes
        return None
    used_at = object.__basicsize__  # PyObject_HEAD, then ma_used, then ma_version_tag

    def reader(mapping: dict[str, Any]) -> Any:
        return ctypes.c_uint64.from_address(id(mapping) + used_at + 8)

    def used(mapping: dict[str, Any]) -> int:
        return int(ctypes.c_ssize_t.from_address(id(mapping) + used_at).value)

    class Probe:
        def method(self) -> None:
            """The probe's method (rebound below)."""

    def rebind() -> None:
        global _probe  # in `scope` below (its globals), never this module's
        _probe = object()  # type: ignore[name-defined]

    module = types.ModuleType("probe")
    scope: dict[str, Any] = vars(module)
    scope["_probe"] = 1
    in_scope = types.FunctionType(rebind.__code__, scope)
    probe = _namespace(Probe)
    tag, class_tag = reader(scope), reader(probe)
    seen = [tag.value]
    for change in (lambda: setattr(module, "_probe", object()), in_scope,
                   lambda: scope.__setitem__("_probe", object()),
                   lambda: scope.update(_probe=object()), lambda: delattr(module, "_probe"),
                   lambda: scope.setdefault("_probe", 2), lambda: scope.pop("_probe")):
        change()
        seen.append(tag.value)
    before = class_tag.value
    type.__setattr__(Probe, "method", lambda self: None)
    if (used(scope) != len(scope) or used(probe) != len(probe) or seen[-1] != tag.value
            or len(set(seen)) != len(seen) or class_tag.value == before):
        return None
    return reader


@functools.cache
def _tag_reader() -> Callable[[dict[str, Any]], Any] | None:
    """`_version_tags()`, decided at the first seal (ctypes is imported only by sessions
    that run code, and the answer, once cached, cannot be swapped from Python)."""
    return _version_tags()


_TAG_VALUE = operator.attrgetter("value")


class _Group:
    """One namespace: its owner (a module, a class, or `sys.modules` itself), the dict
    it lives in (or a class's live proxy of it), and the names sealed there with their
    original values."""

    __slots__ = ("mapping", "names", "owner")

    def __init__(self, owner: Any, mapping: Any, names: list[tuple[str, Any]]) -> None:
        self.owner, self.mapping, self.names = owner, mapping, names


def _spaces(modules: dict[str, Any], found: list[tuple[str, Any]]) -> list[tuple[Any, Any]]:
    """(owner, its dict) for `found` (module name, module): `sys.modules` (for their
    entries there), each module and the classes it defines."""
    spaces: list[tuple[Any, Any]] = [(modules, modules)] if found else []
    for name, module in found:
        mapping = _namespace(module)
        spaces.append((module, mapping))
        spaces.extend((value, _namespace(value)) for value in list(mapping.values())
                      if isinstance(value, type) and value.__module__ == name)
    return spaces


def _describe(owner: Any, name: str) -> str:
    if type(owner) is dict:
        return f"the module {name}"
    where = getattr(owner, "__qualname__", None) or getattr(owner, "__name__", "?")
    return f"{where}.{name}"


class CodeSeal:
    """The package's code as it was (module and class attributes, by identity).

    Code never changes legitimately, so one seal serves a whole process: `current()`
    hands out the last one taken, once it is checked intact and has taken in the modules
    imported since (a fresh seal, ~10-25 ms, only when it is not). A check compares each
    namespace's version tag first (`_version_tags`) and reads by identity only the
    namespaces whose tag moved; a tag moves with any write to the dict (`setattr`,
    `vars(m)[k] = v`, `global`, `del`, a class attribute set through `type`), so a check
    that skips a namespace skips one nothing was written to. Without tags every entry is
    read, as before."""

    def __init__(self) -> None:
        self._modules: dict[str, Any] = sys.modules
        self._sealed: set[str] = set()
        self._groups: list[_Group] = []
        self._tag_of = _tag_reader()  # once: every group has its tag, or none has
        self._tags: list[Any] | None = [] if self._tag_of is not None else None
        self._known: list[int] = []
        self.extend()

    @classmethod
    def current(cls) -> CodeSeal:
        """The process's seal of the code as it is now (see the class docstring): the
        last seal if nothing it holds changed since (a change the user made between
        sessions, e.g. a test's monkeypatch, is legitimate: a new seal is taken, as each
        session once took its own)."""
        latest = _LATEST.get("seal")
        if latest is not None and not latest.breaches():
            latest.extend()
            return latest
        fresh = cls()
        _LATEST["seal"] = fresh
        return fresh

    def extend(self) -> None:
        """Seal the package's modules imported since, as they are now."""
        found = _package_modules(self._modules, self._sealed)
        if not found:
            return
        spaces = _spaces(self._modules, found)
        # each tag is read before the values it vouches for: a write in between moves
        # the dict's tag past the one kept, and the next check reads that namespace
        tag_of = self._tag_of
        tags = ([tag_of(mapping) if type(mapping) is dict else _Unversioned()
                 for _, mapping in spaces] if tag_of is not None else None)
        known = list(map(_TAG_VALUE, tags)) if tags is not None else []
        names = {name for name, _ in found}
        for owner, mapping in spaces:
            held = ([(name, mapping.get(name, _MISSING)) for name in names]
                    if mapping is self._modules else list(mapping.items()))
            self._groups.append(_Group(owner, mapping, held))
        self._sealed |= names
        if self._tags is not None and tags is not None:
            self._tags += tags
            self._known += known

    def entries(self) -> int:
        """How many attributes the seal holds."""
        return sum(len(group.names) for group in self._groups)

    def breaches(self) -> list[str]:
        """What was replaced or removed since the seal, one line each (empty: intact)."""
        if self._tags is not None:
            now = list(map(_TAG_VALUE, self._tags))
            if now == self._known:
                return []
            # (not strict: another thread's `extend` may be adding groups, then their tags,
            # then the tags it read; a group without its tag yet was sealed just now)
            moved: Any = [i for i, (a, b) in enumerate(zip(now, self._known, strict=False))
                          if a != b]
        else:
            now, moved = [], range(len(self._groups))
        found: list[str] = []
        for index in moved:
            group = self._groups[index]
            get = group.mapping.get
            lost = [f"{_describe(group.owner, name)} was replaced"
                    for name, original in group.names if get(name, _MISSING) is not original]
            if lost:
                found += lost
            elif now:  # written to, but what the seal holds is there: a new name, say
                self._known[index] = now[index]
        return found

    def restore(self) -> None:
        """Put every replaced or removed entry back."""
        for group in self._groups:
            get, owner = group.mapping.get, group.owner
            for name, original in group.names:
                if get(name, _MISSING) is original or original is _MISSING:
                    continue
                if isinstance(owner, type):
                    type.__setattr__(owner, name, original)  # the type's caches follow
                else:
                    group.mapping[name] = original


#: the last seal `CodeSeal.current()` took (a dict changed in place: the seal would see
#: this module's attribute rebound)
_LATEST: dict[str, CodeSeal] = {}


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
            self.code = code or CodeSeal.current()

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
