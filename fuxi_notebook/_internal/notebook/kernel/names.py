"""What the agent's Python did to the kernel's names, kept so that a cell can be undone.

Around each Python call the namespace is compared before and after: names created,
rebound and deleted are known exactly (the earlier objects are kept, so undoing rebinds
them). A change *inside* an object (`df["x"] = 1`, `rows.append(r)`) leaves the name
bound to the same object, so it is undone from a copy taken before the call, for the
objects the code names and may change (it assigns into them, deletes from them, calls one
of their mutating methods or `inplace=True`, or passes them to a function) and that copy
cheaply: pandas and NumPy objects, lists, dicts, sets and bytearrays, each under
`FUXI_UNDO_MAX_COPY_MB` (default 64) and within the cell's budget of the same size. An
object that cannot be copied so (a container holding something that cannot be deep-copied
included: a copy one level deep would miss a change further in) is named as not undoable
when the code may have changed it. Changes made through another name (an alias) are not
seen.

When the cell ends, what each changed name holds is kept too (`left_as`: a digest of a
pandas or NumPy object, a copy of a list, dict, set or bytearray), so that undo puts a
name back only if it still holds exactly that; other objects are compared by identity.
"""

from __future__ import annotations

import ast
import copy
import os
import sys
from dataclasses import dataclass, field
from typing import Any

from .values import HIDDEN_NAMES, size_of

__all__ = ["Left", "NameChanges", "NameState", "NameWatch", "left_as", "undo_copy_cap"]

#: methods that change their object (lists, dicts, sets, pandas, NumPy)
_MUTATING = frozenset({
    "append", "extend", "insert", "pop", "remove", "sort", "reverse", "clear", "update",
    "setdefault", "popitem", "add", "discard", "difference_update", "intersection_update",
    "symmetric_difference_update", "fill", "resize", "itemset", "put", "setflags"})
#: functions that only read their arguments (passing a name to them changes nothing)
_READERS = frozenset({
    "print", "len", "repr", "str", "type", "isinstance", "display", "sorted", "list",
    "tuple", "set", "frozenset", "dict", "sum", "min", "max", "any", "all", "enumerate",
    "zip", "range", "id", "hash", "format", "int", "float", "bool", "abs", "round",
    "hasattr", "getattr", "callable", "iter", "next", "reversed", "map", "filter"})
_MB = 1024 * 1024


def undo_copy_cap() -> int:
    """The bytes of copies one cell may keep (`FUXI_UNDO_MAX_COPY_MB`, default 64)."""
    raw = os.environ.get("FUXI_UNDO_MAX_COPY_MB", "").strip()
    try:
        return int(float(raw) * _MB) if raw else 64 * _MB
    except ValueError:
        return 64 * _MB


@dataclass
class NameState:
    """A name before the cell's first change to it: unbound (`bound` False), or bound to
    `value`; `copy` is the copy of `value` taken before a change inside it (None: none
    was taken), and `why` says why it could not be taken."""

    bound: bool
    value: Any = None
    copy: Any = None
    copied: bool = False
    why: str | None = None


@dataclass
class NameChanges:
    """One cell's changes to the kernel's names: each name's state before the cell."""

    before: dict[str, NameState] = field(default_factory=dict)
    copied_bytes: int = 0


class NameWatch:
    """The Python tool's watch over one cell's calls (see the module docstring)."""

    def __init__(self, namespace: dict[str, Any], changes: NameChanges | None = None,
                 *, copy_cap: int | None = None) -> None:
        self.namespace = namespace
        self.changes = changes if changes is not None else NameChanges()
        self.copy_cap = copy_cap if copy_cap is not None else undo_copy_cap()

    def before(self, code: str) -> dict[str, Any]:
        """The namespace before a call (a shallow copy: a dict of a few hundred names
        costs microseconds), and copies of the objects the code may change inside."""
        prior = {name: value for name, value in self.namespace.items() if _watched(name)}
        for name in sorted(may_change(code) & set(prior)):
            if name not in self.changes.before:
                self.changes.before[name] = self._taken(prior[name])
        return prior

    def after(self, prior: dict[str, Any]) -> None:
        """Names created, rebound or deleted by the call join the cell's changes."""
        now = {name: value for name, value in self.namespace.items() if _watched(name)}
        for name in set(prior) | set(now):
            if name in self.changes.before:
                continue
            if name not in prior:
                self.changes.before[name] = NameState(bound=False)
            elif name not in now or now[name] is not prior[name]:
                self.changes.before[name] = NameState(bound=True, value=prior[name])

    def _taken(self, value: Any) -> NameState:
        """The state of a name the code may change inside: its object and a copy."""
        state = NameState(bound=True, value=value)
        size = size_of(value) or 0
        if not _copyable(value):
            state.why = f"a {type(value).__name__} has no cheap copy"
        elif size > self.copy_cap or self.changes.copied_bytes + size > self.copy_cap:
            state.why = f"it is too big to copy ({size / _MB:.0f} MB)"
        else:
            try:
                state.copy = _copy(value)
                state.copied = True
                self.changes.copied_bytes += size
            except Exception as error:  # a copy that fails is a name not undoable
                state.why = f"it could not be copied ({type(error).__name__})"
        return state


def _watched(name: str) -> bool:
    return not name.startswith("_") and name not in HIDDEN_NAMES


def _copyable(value: Any) -> bool:
    module = (type(value).__module__ or "").split(".")[0]
    if module in ("pandas", "numpy"):
        return hasattr(value, "copy")
    return isinstance(value, list | dict | set | bytearray)


def _copy(value: Any) -> Any:
    """A copy that a change anywhere inside `value` does not reach (raises when there is
    none: a shallower copy would hide such a change)."""
    module = (type(value).__module__ or "").split(".")[0]
    if module == "pandas":
        return value.copy(deep=True)
    if module == "numpy":
        return value.copy()
    return copy.deepcopy(value)


@dataclass(frozen=True)
class Left:
    """What a name's object held when the cell ended (see the module docstring):
    `taken` is its digest or copy; `why` says why none could be taken (then whether it
    changed since cannot be told); neither: it is compared by identity only."""

    taken: Any = None
    why: str | None = None
    digest: bool = False

    def still(self, value: Any) -> bool | None:
        """Whether `value` still holds what was left (None: it cannot be told)."""
        if self.why is not None:
            return None
        if self.taken is None:
            return True
        if self.digest:
            return bool(_digest(value) == self.taken)
        return same(value, self.taken)


def left_as(value: Any, room: int) -> tuple[Left, int]:
    """What `value` holds now, within `room` bytes of copies; the bytes used."""
    if not _copyable(value):
        return Left(), 0
    size = size_of(value) or 0
    try:
        digest = _digest(value)
        if digest is not None:
            return Left(digest, digest=True), 0
        if size > room:
            return Left(why=f"it is too big to copy ({size / _MB:.0f} MB)"), 0
        return Left(_copy(value)), size
    except Exception as error:
        return Left(why=f"it could not be copied ({type(error).__name__})"), 0


def _digest(value: Any) -> str | None:
    """A digest of a pandas or NumPy object's values, labels and types (None: another
    kind of object, or values a digest cannot cover: unhashable Python objects in it)."""
    import hashlib

    module = (type(value).__module__ or "").split(".")[0]
    if module == "numpy" and getattr(value, "dtype", None) is not None and \
            value.dtype.kind != "O":
        head = f"{value.dtype.str}{value.shape}".encode()
        return hashlib.sha256(head + value.tobytes()).hexdigest()
    if module == "pandas" and hasattr(value, "dtypes"):
        pandas: Any = sys.modules["pandas"]  # loaded: `value` is one of its objects
        try:
            hashed = pandas.util.hash_pandas_object(value, index=True).to_numpy()
        except TypeError:  # unhashable Python objects in it: compared from a copy
            return None
        head = f"{type(value).__name__}{list(getattr(value, 'columns', []))}" \
               f"{value.dtypes}{getattr(value, 'name', None)}".encode()
        return hashlib.sha256(head + hashed.tobytes()).hexdigest()
    return None


def same(a: Any, b: Any) -> bool:
    """Whether an object still equals the copy taken before (no change inside it)."""
    module = (type(a).__module__ or "").split(".")[0]
    try:
        if module == "pandas":
            return bool(a.equals(b))
        if module == "numpy":
            import numpy

            return bool(numpy.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
        return bool(a == b)
    except Exception:
        return False


def may_change(code: str) -> set[str]:
    """The names whose objects the code may change inside (see the module docstring)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:  # IPython syntax (`%pip`, `!ls`): nothing is known, nothing named
        return set()
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Delete):
            targets = node.targets if isinstance(node, ast.Assign | ast.Delete) else [
                node.target]
            for target in targets:
                found.update(_inside_roots(target))
                if isinstance(node, ast.AugAssign) and isinstance(target, ast.Name):
                    found.add(target.id)  # `rows += [1]` extends the list in place
        elif isinstance(node, ast.Call):
            found.update(_call_roots(node))
    return found


def _inside_roots(target: ast.AST) -> set[str]:
    """`x[...] = `, `x.a = `, `del x[...]`: the root name `x`."""
    if isinstance(target, ast.Tuple | ast.List):
        return set().union(*(_inside_roots(t) for t in target.elts))
    if isinstance(target, ast.Subscript | ast.Attribute):
        root = _root(target.value)
        return {root} if root else set()
    return set()


def _call_roots(call: ast.Call) -> set[str]:
    found: set[str] = set()
    function = call.func
    if isinstance(function, ast.Attribute):
        root = _root(function.value)
        if root and (function.attr in _MUTATING or any(
                keyword.arg == "inplace" for keyword in call.keywords)):
            found.add(root)
    reader = isinstance(function, ast.Name) and function.id in _READERS
    if not reader:
        for argument in [*call.args, *(k.value for k in call.keywords)]:
            if isinstance(argument, ast.Name):
                found.add(argument.id)
    return found


def _root(node: ast.AST) -> str | None:
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None
