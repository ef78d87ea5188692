"""A plain Python function as a tool, with one decorator:

    @fuxi_tool
    def load_sales(region: str, year: int = 2025) -> str:
        '''Sales of one region as CSV.'''
        ...

The parameters' type hints make the input schema (a parameter with a default is
optional), the docstring the description. The function stays a normal function; the
decorator attaches its tool (`load_sales.fuxi_tool`, an `SdkMcpTool`) and remembers it in
`registered()`, which the notebook offers to `%%fuxi` cells as the in-process server
`notebook` (tools `mcp__notebook__load_sales`). Outside a notebook, pass the tools to
`create_sdk_mcp_server` yourself.

The handler calls the function on the event loop's thread, not a worker thread: kernel
code (pandas, matplotlib) expects the main thread, as the Python tool runs it.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from typing import Any, TypeVar, get_type_hints, overload

from .schema import input_json_schema
from .sdk import SdkMcpTool

__all__ = ["forget_all", "fuxi_tool", "registered"]

F = TypeVar("F", bound=Callable[..., Any])

_REGISTERED: dict[str, SdkMcpTool[Any]] = {}


@overload
def fuxi_tool(function: F) -> F: ...


@overload
def fuxi_tool(*, name: str | None = None, description: str | None = None,
              read_only: bool = False) -> Callable[[F], F]: ...


def fuxi_tool(function: Any = None, *, name: str | None = None,
              description: str | None = None, read_only: bool = False) -> Any:
    """Make `function` a tool the agent can call (see the module docstring).

    Args:
        name: the tool's name (default: the function's name).
        description: what the model reads to decide when to call it (default: the
            docstring).
        read_only: the function only looks (it may then run alongside other read-only
            calls; it is still approved like any tool unless an allow rule says so).
    """

    def decorate(target: F) -> F:
        if not callable(target):
            raise TypeError(f"@fuxi_tool decorates a function, not {target!r}")
        spec: SdkMcpTool[Any] = SdkMcpTool(
            name=name or target.__name__,
            description=description or inspect.getdoc(target)
            or f"Calls the Python function {target.__name__}.",
            input_schema=signature_schema(target), handler=_handler(target),
            annotations={"readOnlyHint": True} if read_only else None)
        target.fuxi_tool = spec  # type: ignore[attr-defined]
        _REGISTERED[spec.name] = spec  # defining it again replaces it, as in a notebook
        return target

    return decorate(function) if function is not None else decorate


def registered() -> list[SdkMcpTool[Any]]:
    """The tools made with `@fuxi_tool` in this process, in name order."""
    return [_REGISTERED[key] for key in sorted(_REGISTERED)]


def forget_all() -> None:
    """Forget every `@fuxi_tool` (for tests and `%fuxi reset --tools`)."""
    _REGISTERED.clear()


def signature_schema(function: Callable[..., Any]) -> dict[str, Any]:
    """The input schema of `function`'s parameters (`*args`/`**kwargs` are not offered;
    a parameter with a default is optional)."""
    try:
        hints = get_type_hints(function, include_extras=True)
    except Exception:  # an unresolvable hint: that parameter becomes a string
        hints = {}
    parameters = [p for p in inspect.signature(function).parameters.values()
                  if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    schema = input_json_schema({p.name: hints.get(p.name, Any) for p in parameters})
    schema["required"] = [p.name for p in parameters if p.default is inspect.Parameter.empty]
    return schema


def _handler(function: Callable[..., Any]) -> Callable[[dict[str, Any]], Any]:
    async def call(args: dict[str, Any]) -> dict[str, Any]:
        value = function(**args)
        if inspect.isawaitable(value):
            value = await value
        return _as_result(value)

    return call


def _as_result(value: Any) -> dict[str, Any]:
    """What the function returned, as a tool result: a result dict as is, text as text,
    other values as JSON when they are JSON, else as their `repr`."""
    if isinstance(value, dict) and "content" in value:
        return value
    if isinstance(value, str):
        text = value
    elif value is None:
        text = "(the function returned None)"
    else:
        try:
            text = json.dumps(value, ensure_ascii=False)
        except (TypeError, ValueError):
            text = repr(value)
    return {"content": [{"type": "text", "text": text}]}
