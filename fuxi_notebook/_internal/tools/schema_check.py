"""Checking a tool call's input against its JSON schema, fast, for the common subset.

Every built-in and kernel tool's schema uses a small part of JSON Schema (types,
properties, required, additionalProperties, enum, items, anyOf and a few bounds).
`jsonschema` costs about 1.5 s to import (its optional format checkers pull in large
libraries), which the first tool call of a session would pay; this checker covers that
subset in microseconds. A schema with any other keyword (an MCP server's, say) returns
`None` from `supported`, and the registry uses `jsonschema` for it.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["problems", "supported"]

_KEYWORDS = frozenset({
    "type", "properties", "required", "additionalProperties", "enum", "items", "anyOf",
    "minItems", "maxItems", "minLength", "maxLength", "minimum", "maximum",
    "default", "description", "title", "examples", "$schema"})
_TYPES = {"string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,),
          "array": (list,), "object": (dict,), "null": (type(None),)}


def supported(schema: Any) -> bool:
    """Whether `schema` uses only what `problems` checks."""
    if isinstance(schema, bool):
        return True
    if not isinstance(schema, dict) or not set(schema) <= _KEYWORDS:
        return False
    types = schema.get("type", "object")
    if any(t not in _TYPES for t in (types if isinstance(types, list) else [types])):
        return False
    subschemas = [*(schema.get("properties") or {}).values(), *(schema.get("anyOf") or [])]
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            subschemas.append(schema[key])
    return all(supported(s) for s in subschemas)


def _is(value: Any, kind: str) -> bool:
    if isinstance(value, bool) and kind in ("integer", "number"):
        return False
    if kind == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _TYPES[kind])


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 80 else text[:77] + "..."


def problems(schema: Any, value: Any, path: str = "") -> list[tuple[str, str]]:
    """(where, message) for each way `value` breaks `schema` (a `supported` one)."""
    if schema is True or schema == {}:
        return []
    if schema is False:
        return [(path, f"{_show(value)} is not allowed here")]
    found: list[tuple[str, str]] = []
    if "type" in schema:
        kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_is(value, kind) for kind in kinds):
            return [(path, f"{_show(value)} is not of type {', '.join(map(repr, kinds))}")]
    if "enum" in schema and value not in schema["enum"]:
        found.append((path, f"{_show(value)} is not one of {_show(schema['enum'])}"))
    if "anyOf" in schema and all(problems(s, value, path) for s in schema["anyOf"]):
        found.append((path, f"{_show(value)} is not valid under any of the given schemas"))
    found += _bounds(schema, value, path)
    if isinstance(value, dict):
        found += _object(schema, value, path)
    if isinstance(value, list) and "items" in schema:
        for index, item in enumerate(value):
            found += problems(schema["items"], item, f"{path}.{index}" if path else str(index))
    return found


def _bounds(schema: dict[str, Any], value: Any, path: str) -> list[tuple[str, str]]:
    found = []
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if number and "minimum" in schema and value < schema["minimum"]:
        found.append((path, f"{value} is less than the minimum of {schema['minimum']}"))
    if number and "maximum" in schema and value > schema["maximum"]:
        found.append((path, f"{value} is greater than the maximum of {schema['maximum']}"))
    if isinstance(value, str) and len(value) < schema.get("minLength", 0):
        found.append((path, f"{_show(value)} is too short"))
    if isinstance(value, str) and "maxLength" in schema and len(value) > schema["maxLength"]:
        found.append((path, f"{_show(value)} is too long"))
    if isinstance(value, list) and len(value) < schema.get("minItems", 0):
        found.append((path, f"{_show(value)} should have at least {schema['minItems']} items"))
    if isinstance(value, list) and "maxItems" in schema and len(value) > schema["maxItems"]:
        found.append((path, f"{_show(value)} should have at most {schema['maxItems']} items"))
    return found


def _object(schema: dict[str, Any], value: dict[str, Any], path: str) -> list[tuple[str, str]]:
    found = [(path, f"{name!r} is a required property")
             for name in schema.get("required", []) if name not in value]
    properties = schema.get("properties") or {}
    extra = schema.get("additionalProperties", True)
    unexpected = [name for name in value if name not in properties]
    if extra is False and unexpected:
        found.append((path, "Additional properties are not allowed ("
                            f"{', '.join(map(repr, unexpected))} unexpected)"))
    for name, item in value.items():
        where = f"{path}.{name}" if path else name
        if name in properties:
            found += problems(properties[name], item, where)
        elif isinstance(extra, dict):
            found += problems(extra, item, where)
    return found
