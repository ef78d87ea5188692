"""JSON Schemas for `@tool` input, from the three forms the comparable SDK's users write.

1. `{"param": type}`: every parameter required; `str`, `int`, `float`, `bool`, `list[T]`,
   `dict`, `Optional[T]` / `T | None`, `Union`, `Literal`, enums, TypedDicts and
   `Annotated[T, "description"]`; anything else becomes a string.
2. A TypedDict class: its keys, with the required ones required.
3. A JSON Schema dict (one whose `type` is a string, e.g. `{"type": "object", ...}`),
   taken as given.
"""

from __future__ import annotations

import enum
import types
import typing
from typing import Any, get_args, get_origin, get_type_hints, is_typeddict

__all__ = ["input_json_schema"]

_SCALARS: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean",
                            type(None): "null"}


def input_json_schema(spec: Any) -> dict[str, Any]:
    """The JSON Schema (an object schema) for a `@tool`'s `input_schema`."""
    if isinstance(spec, dict) and isinstance(spec.get("type"), str):
        return dict(spec)
    if is_typeddict(spec):
        return _typed_dict(spec)
    if isinstance(spec, dict):
        return {"type": "object",
                "properties": {str(key): _schema(value) for key, value in spec.items()},
                "required": [str(key) for key in spec]}
    raise TypeError("input_schema must be {'param': type}, a TypedDict class or a JSON Schema "
                    f"dict, not {spec!r}")


def _typed_dict(cls: Any) -> dict[str, Any]:
    hints = get_type_hints(cls, include_extras=True)
    required = set(getattr(cls, "__required_keys__", hints))
    properties = {}
    for key, hint in hints.items():
        # (string annotations hide NotRequired from the class, not from its hints)
        if get_origin(hint) in (typing.NotRequired, typing.Required):
            (required.discard if get_origin(hint) is typing.NotRequired else required.add)(key)
            hint = get_args(hint)[0]
        properties[key] = _schema(hint)
    return {"type": "object", "properties": properties,
            "required": [key for key in hints if key in required]}


def _schema(hint: Any) -> dict[str, Any]:
    """The JSON Schema of one Python type hint."""
    origin, args = get_origin(hint), get_args(hint)
    if origin is typing.Annotated:
        inner = _schema(args[0])
        notes = [a for a in args[1:] if isinstance(a, str)]
        return {**inner, "description": notes[0]} if notes else inner
    if hint in _SCALARS:
        return {"type": _SCALARS[hint]}
    if origin in (typing.Union, types.UnionType):
        return {"anyOf": [_schema(arg) for arg in args]}
    if origin is typing.Literal:
        return {"enum": list(args)}
    if hint in (list, tuple, set) or origin in (list, tuple, set):
        return {"type": "array", **({"items": _schema(args[0])} if args else {})}
    if hint is dict or origin is dict:
        value = args[1] if len(args) == 2 else None
        return {"type": "object",
                **({"additionalProperties": _schema(value)} if value is not None else {})}
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return {"enum": [member.value for member in hint]}
    if is_typeddict(hint):
        return _typed_dict(hint)
    if hint is Any:
        return {}
    return {"type": "string"}
