"""Safe, short descriptions of the values in a kernel's user namespace.

Shared by the Variables and Inspect tools and by `KernelContext`. Everything here is
defensive: user objects can have hostile `__len__`, `__repr__` or `__getattr__`, and a
failure to describe one value must never break the listing of the others.
"""

from __future__ import annotations

import builtins
import re
import reprlib
import sys
import types
from collections.abc import Iterator, Sized
from typing import Any

from ...sessions.redact import HOLD_LIMIT, redact_text, redacted_head

__all__ = [
    "HIDDEN_NAMES",
    "RedactedRepr",
    "format_size",
    "is_user_variable",
    "masked",
    "one_line",
    "shape_of",
    "short_repr",
    "size_of",
    "type_name",
    "user_variables",
]

HIDDEN_NAMES = frozenset({"In", "Out", "exit", "quit", "get_ipython"})
"""IPython's own names in `user_ns`, never shown as user variables."""

_ARRAY_PACKAGES = frozenset({"numpy", "pandas"})

class RedactedRepr(reprlib.Repr):
    """reprlib's short reprs, each of its cuts made in redacted text: a string's ends and
    an object's repr are redacted before reprlib keeps their start and end, so a cut
    never leaves the rest of a secret it split."""

    def repr_str(self, x: str, level: int) -> str:
        if len(x) > self.maxstring:
            x = _redacted_ends(x, self.maxstring)
        return super().repr_str(x, level)

    def repr_instance(self, x: Any, level: int) -> str:
        try:
            text = builtins.repr(x)
        except Exception:  # a broken __repr__: reprlib's own line for it
            return super().repr_instance(x, level)
        whole = redact_text(text)  # the repr is whole already: redacted whole, then cut
        if len(whole) <= self.maxother:
            return whole
        start = max(0, (self.maxother - 3) // 2)
        end = max(0, self.maxother - 3 - start)
        return whole[:start] + self.fillvalue + whole[len(whole) - end:]


def _redacted_ends(text: str, keep: int) -> str:
    """`keep` characters of each end of `text`, each redacted with `HOLD_LIMIT` more
    characters around it (so a secret its cut splits is still recognised)."""
    if len(text) <= 2 * (keep + HOLD_LIMIT):
        whole = redact_text(text)
        return whole if len(whole) <= 2 * keep else whole[:keep] + whole[-keep:]
    return (redact_text(text[:keep + HOLD_LIMIT])[:keep]
            + redact_text(text[-(keep + HOLD_LIMIT):])[-keep:])


_REPR = RedactedRepr()
_REPR.maxlevel = 2
_REPR.maxstring = 120
_REPR.maxother = 400
_REPR.maxlong = 60
for _attr in ("maxlist", "maxtuple", "maxset", "maxfrozenset", "maxdeque", "maxarray"):
    setattr(_REPR, _attr, 8)
_REPR.maxdict = 6


def is_user_variable(name: str, value: Any, hidden: dict[str, Any]) -> bool:
    """Whether `name` is something the user made, not IPython or an import.

    A hidden name counts only while it is still bound to the hidden object (like
    IPython's `%who`): a user who rebinds `exit = 3` sees it again.
    """
    if name.startswith("_") or name in HIDDEN_NAMES:
        return False
    if isinstance(value, types.ModuleType):
        return False
    return not (name in hidden and hidden[name] is value)


def user_variables(shell: Any) -> Iterator[tuple[str, Any]]:
    """`(name, value)` of the user's variables in `shell.user_ns`, sorted by name."""
    namespace = dict(shell.user_ns)
    hidden = getattr(shell, "user_ns_hidden", None) or {}
    for name in sorted(namespace):
        value = namespace[name]
        if is_user_variable(name, value, hidden):
            yield name, value


def type_name(value: Any) -> str:
    """`int` for builtins, else the shortest importable path (`pandas.DataFrame`)."""
    cls = type(value)
    module = getattr(cls, "__module__", None) or ""
    qualname = getattr(cls, "__qualname__", cls.__name__)
    if module in ("builtins", "__main__", ""):
        return qualname
    top = module.split(".")[0]
    package = sys.modules.get(top)
    if package is not None and getattr(package, qualname, None) is cls:
        return f"{top}.{qualname}"
    return f"{module}.{qualname}"


def shape_of(value: Any) -> str:
    """`(3, 2)` for arrays and frames, `len=5` for sized containers, else empty.

    `.shape` is read only when the class itself defines it, so objects with a catch-all
    `__getattr__` are not asked for one.
    """
    if hasattr(type(value), "shape"):
        try:
            shape = value.shape
            if isinstance(shape, tuple) and all(isinstance(n, int) for n in shape):
                return str(tuple(shape))
        except Exception:
            pass
    if isinstance(value, Sized) and not isinstance(value, type):
        try:
            return f"len={len(value)}"
        except Exception:
            return ""
    return ""


def size_of(value: Any) -> int | None:
    """Approximate bytes: pandas `memory_usage`, numpy `nbytes`, else `sys.getsizeof`."""
    top = (type(value).__module__ or "").split(".")[0]
    try:
        if top == "pandas" and hasattr(type(value), "memory_usage"):
            usage = value.memory_usage(deep=False)
            return int(usage.sum()) if hasattr(usage, "sum") else int(usage)
        if top in _ARRAY_PACKAGES and hasattr(type(value), "nbytes"):
            return int(value.nbytes)
        return sys.getsizeof(value)
    except Exception:
        return None


def format_size(size: int | None) -> str:
    """`1.5 KB` style; empty when the size is unknown."""
    if size is None:
        return ""
    amount = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if amount < 1024 or unit == "GB":
            return f"{int(amount)} {unit}" if unit == "B" else f"{amount:.1f} {unit}"
        amount /= 1024
    return f"{amount:.1f} TB"  # pragma: no cover - loop always returns


def short_repr(value: Any, limit: int = 80) -> str:
    """A one-line repr of at most `limit` characters, never raising.

    Containers are shown by their first few items (reprlib), so a list of ten million
    numbers costs no more than one of ten.
    """
    top = (type(value).__module__ or "").split(".")[0]
    try:
        if top == "pandas" and hasattr(type(value), "columns"):
            text = "columns: " + ", ".join(str(c) for c in list(value.columns[:20]))
        else:
            text = _REPR.repr(value)
    except Exception as exc:
        text = f"<repr failed: {type(exc).__name__}>"
    return one_line(text, limit)


def one_line(text: str, limit: int) -> str:
    """Whitespace runs collapsed to one space, cut to `limit` characters with `...`:
    redacted whole, then cut, so a cut never leaves the rest of a secret it split."""
    flat = re.sub(r"\s+", " ", text).strip()
    head, left = redacted_head(flat, limit)
    return head[: max(limit - 3, 0)] + "..." if left else head


def masked(value: Any) -> str:
    """What a secret-named value shows instead of itself: its type and size only. The
    model can still use it in code by name; it never sees (nor stores) the value."""
    size = f", {len(value)} characters" if isinstance(value, str | bytes) else ""
    return f"[masked: named like a secret; {type_name(value)}{size}]"
