"""The Inspect tool: a structured look at one object of the user's namespace.

Names are resolved by attribute access only (`df.columns`, `np.linalg`), never by `eval`:
the tool is read-only, and a dotted path is the most that can be resolved without running
arbitrary code (properties still run, which is accepted).
"""

from __future__ import annotations

import builtins
import difflib
import inspect
import re
import sys
import types
from typing import Any

from ...common.secret_names import is_secret_variable_name
from ...tools.base import DeclaredTool, ToolContext, ToolError, ToolOutput
from ...tools.truncate import cap_head_tail
from .values import RedactedRepr, format_size, masked, shape_of, size_of, type_name

__all__ = ["InspectTool", "describe_object", "resolve_path"]

MAX_OUTPUT_CHARS = 20_000
DOC_LINES = 40
SOURCE_LINES = 80
MAX_COLUMNS = 100
MAX_MODULE_NAMES = 100
MAX_MEMBERS = 50
_PATH_RE = re.compile(r"[^\W\d]\w*(?:\.[^\W\d]\w*)*")

_REPR = RedactedRepr()  # its cuts are made in redacted text
_REPR.maxlevel = 3
_REPR.maxstring = 2000
_REPR.maxother = 2000
for _attr in ("maxlist", "maxtuple", "maxset", "maxfrozenset", "maxdeque", "maxarray"):
    setattr(_REPR, _attr, 50)
_REPR.maxdict = 30


class InspectTool(DeclaredTool):
    """Describe one variable or attribute path in detail, without evaluating code."""

    name = "Inspect"
    description = (
        "Describes one object from the user's live Jupyter kernel in detail. `name` is a "
        "variable name or a dotted attribute path (`df`, `df.columns`, `np.linalg`, "
        "`model.fit`); calls, indexing and other expressions are not accepted (use the "
        "Python tool for those). DataFrames: shape, dtypes, null counts, memory and the "
        "first rows. Series and numpy arrays: dtype, shape, range and a preview. Functions: "
        "signature, docstring and source location. Classes: MRO and methods. Modules: "
        "summary and public names. Other objects: type, repr and public attributes."
    )

    kind = "read"

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.input_schema: dict[str, Any] = {
            "type": "object",
            "properties": {
                "name": {
                    "type": "string",
                    "description": "Variable name or dotted attribute path, e.g. `df.dtypes`.",
                },
            },
            "required": ["name"],
            "additionalProperties": False,
        }

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """Resolve the path, then describe by kind, capped."""
        path = input["name"].strip()
        value = resolve_path(self.shell, path)
        if is_secret_variable_name(path):
            return ToolOutput(content=f"{path}: {masked(value)}")
        try:
            text = describe_object(path, value)
        except Exception as exc:
            problem = f"{type(exc).__name__}: {exc}"
            text = f"{path}: {type_name(value)}\n(could not describe it: {problem})"
        return ToolOutput(content=cap_head_tail(text, MAX_OUTPUT_CHARS))


def resolve_path(shell: Any, path: str) -> Any:
    """The object at a dotted path, starting in `user_ns` (then builtins)."""
    if not _PATH_RE.fullmatch(path):
        raise ToolError(
            f"{path!r} is not a variable name or dotted attribute path (like `df` or "
            "`df.columns`). Inspect does not evaluate expressions; use the Python tool."
        )
    first, *attributes = path.split(".")
    namespace = shell.user_ns
    if first in namespace:
        value = namespace[first]
    elif hasattr(builtins, first):
        value = getattr(builtins, first)
    else:
        names = [name for name in namespace if not name.startswith("_")]
        raise ToolError(f"No variable named {first!r} in the kernel.{_suggest(first, names)}")
    for index, attribute in enumerate(attributes):
        prefix = ".".join([first, *attributes[:index]])
        try:
            value = getattr(value, attribute)
        except AttributeError:
            hint = _suggest(attribute, _public_dir(value))
            raise ToolError(f"{prefix} has no attribute {attribute!r}.{hint}") from None
        except Exception as exc:
            raise ToolError(
                f"Reading {prefix}.{attribute} raised {type(exc).__name__}: {exc}"
            ) from None
    return value


def _suggest(word: str, candidates: list[str]) -> str:
    close = difflib.get_close_matches(word, candidates, n=5, cutoff=0.6)
    return f" Close matches: {', '.join(close)}." if close else ""


def _public_dir(value: Any) -> list[str]:
    try:
        return [name for name in dir(value) if not name.startswith("_")]
    except Exception:
        return []


def describe_object(path: str, value: Any) -> str:
    """A kind-specific description; the first line is always `path: type`."""
    pandas = sys.modules.get("pandas")
    numpy = sys.modules.get("numpy")
    header = f"{path}: {type_name(value)}"
    if pandas is not None and isinstance(value, pandas.DataFrame):
        body = _dataframe(value)
    elif pandas is not None and isinstance(value, pandas.Series):
        body = _series(value)
    elif numpy is not None and isinstance(value, numpy.ndarray):
        body = _ndarray(numpy, value)
    elif isinstance(value, types.ModuleType):
        body = _module(value)
    elif isinstance(value, type):
        body = _class(value)
    elif callable(value):
        body = _callable(value)
    else:
        body = _other(value)
    return f"{header}\n{body}"


def _dataframe(frame: Any) -> str:
    rows, columns = frame.shape
    lines = [f"shape: ({rows}, {columns})",
             f"memory: {format_size(size_of(frame))} (not counting object contents)",
             "columns (name  dtype  nulls):"]
    nulls = frame.isna().sum()
    for position, column in enumerate(list(frame.columns[:MAX_COLUMNS])):
        dtype = frame.dtypes.iloc[position]
        lines.append(f"  {column}  {dtype}  {int(nulls.iloc[position])}")
    if columns > MAX_COLUMNS:
        lines.append(f"  ... and {columns - MAX_COLUMNS} more columns")
    lines.append("head(5):")
    lines.append(frame.head(5).to_string(max_cols=30, max_colwidth=60))
    return "\n".join(lines)


def _series(series: Any) -> str:
    lines = [f"dtype: {series.dtype}", f"length: {len(series)}", f"name: {series.name!r}",
             f"nulls: {int(series.isna().sum())}",
             f"memory: {format_size(size_of(series))}", "head(5):",
             series.head(5).to_string(max_rows=5)]
    return "\n".join(lines)


def _ndarray(numpy: Any, array: Any) -> str:
    lines = [f"shape: {shape_of(array)}", f"dtype: {array.dtype}", f"size: {array.size}",
             f"memory: {format_size(array.nbytes)}"]
    numeric = numpy.issubdtype(array.dtype, numpy.number)
    if numeric and array.size and not numpy.issubdtype(array.dtype, numpy.complexfloating):
        with numpy.errstate(all="ignore"):
            lines.append(f"min: {array.min()}  max: {array.max()}")
    preview = numpy.array2string(array, threshold=60, edgeitems=3, max_line_width=100)
    lines += ["preview:", cap_head_tail(preview, 3000)]
    return "\n".join(lines)


def _callable(value: Any) -> str:
    lines = [f"signature: {_signature(value)}"]
    lines += _location(value)
    doc = _doc(value)
    if doc:
        lines += ["docstring:", doc]
    if getattr(value, "__module__", None) == "__main__":
        lines += _source(value)
    return "\n".join(lines)


def _class(cls: type) -> str:
    mro = " -> ".join(type_name_of_class(base) for base in cls.__mro__)
    lines = [f"mro: {mro}", f"constructor: {cls.__name__}{_signature(cls)}", *_location(cls)]
    doc = _doc(cls)
    if doc:
        lines += ["docstring:", doc]
    methods = [name for name in _public_dir(cls) if _is_method(cls, name)]
    shown = ", ".join(methods[:MAX_MODULE_NAMES])
    lines.append(f"public methods ({len(methods)}): {shown}{_more(len(methods), MAX_MODULE_NAMES)}")
    return "\n".join(lines)


def _is_method(cls: type, name: str) -> bool:
    attribute = inspect.getattr_static(cls, name, None)
    return isinstance(attribute, (classmethod, staticmethod)) or callable(attribute)


def type_name_of_class(cls: type) -> str:
    """A class's qualified name (`object`, `pandas.core.frame.DataFrame`)."""
    module = getattr(cls, "__module__", "") or ""
    if module in ("builtins", "__main__", ""):
        return cls.__qualname__
    return f"{module}.{cls.__qualname__}"


def _module(module: types.ModuleType) -> str:
    lines = [f"file: {getattr(module, '__file__', None) or '(built-in)'}"]
    doc = (inspect.getdoc(module) or "").strip()
    if doc:
        summary = doc.split("\n\n")[0].split("\n")[:20]
        lines += ["docstring (summary):", *summary]
    exported = getattr(module, "__all__", None)
    if isinstance(exported, (list, tuple)) and all(isinstance(n, str) for n in exported):
        names = list(exported)
    else:
        names = sorted(n for n in vars(module) if not n.startswith("_"))
    shown = ", ".join(names[:MAX_MODULE_NAMES])
    lines.append(f"public names ({len(names)}): {shown}{_more(len(names), MAX_MODULE_NAMES)}")
    return "\n".join(lines)


def _other(value: Any) -> str:
    lines = []
    shape = shape_of(value)
    if shape:
        lines.append(f"shape/len: {shape}")
    lines.append(f"size: {format_size(size_of(value))}")
    try:
        text = _REPR.repr(value)
    except Exception as exc:
        text = f"<repr failed: {type(exc).__name__}: {exc}>"
    lines += ["repr:", cap_head_tail(text, 2000)]
    attributes = _public_dir(value)
    if attributes:
        shown = ", ".join(attributes[:MAX_MEMBERS])
        lines.append(f"public attributes: {shown}{_more(len(attributes), MAX_MEMBERS)}")
    return "\n".join(lines)


def _more(total: int, shown: int) -> str:
    return f" ... and {total - shown} more" if total > shown else ""


def _signature(value: Any) -> str:
    try:
        return str(inspect.signature(value))
    except (TypeError, ValueError):
        return "(signature not available)"


def _doc(value: Any) -> str:
    try:
        doc = inspect.getdoc(value) or ""
    except Exception:
        return ""
    lines = doc.strip().split("\n")
    if len(lines) > DOC_LINES:
        lines = [*lines[:DOC_LINES], f"... ({len(lines) - DOC_LINES} more docstring lines)"]
    return "\n".join(lines) if doc.strip() else ""


def _location(value: Any) -> list[str]:
    try:
        filename = inspect.getsourcefile(value) or inspect.getfile(value)
    except (TypeError, OSError):
        return []
    try:
        line = inspect.getsourcelines(value)[1]
    except (TypeError, OSError):
        return [f"defined in: {filename}"]
    return [f"defined in: {filename}:{line}"]


def _source(value: Any) -> list[str]:
    """The source of a function the user defined in the notebook (capped)."""
    try:
        lines, _ = inspect.getsourcelines(value)
    except (TypeError, OSError):
        return []
    if len(lines) > SOURCE_LINES:
        lines = [*lines[:SOURCE_LINES], f"... ({len(lines) - SOURCE_LINES} more lines)\n"]
    return ["source:", "".join(lines).rstrip()]
