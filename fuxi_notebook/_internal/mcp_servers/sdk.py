"""In-process MCP tools, written the way the comparable SDK's users write them:

    @tool("add", "Add two numbers", {"a": float, "b": float})
    async def add(args):
        return {"content": [{"type": "text", "text": str(args["a"] + args["b"])}]}

    calculator = create_sdk_mcp_server("calculator", tools=[add])
    options = FuxiAgentOptions(mcp_servers={"calc": calculator},
                               allowed_tools=["mcp__calc__add"])

The server is an `mcp` low-level `Server` that runs in this process (no subprocess, no
JSON-RPC framing), as the config's `instance` for whoever speaks MCP to it. A session
calls its tools directly (`in_process_tools`, connection.py): the same listing, input
check, handler and `CallToolResult`, without the protocol's session, streams and tasks
in between (≈0.45 ms of CPU a call, issue 36). Arguments are checked against the tool's
schema before the handler runs; invalid input, an unknown tool or a handler that raises
becomes an `is_error` result with the message, so the model can correct itself. A plain
`def` handler runs on a worker thread (as `mcp`'s own server runs sync tools), so it
cannot stall the event loop.
"""

from __future__ import annotations

import inspect
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from .config import McpSdkServerConfig
from .schema import input_json_schema

if TYPE_CHECKING:
    from mcp.types import CallToolResult, ToolAnnotations

__all__ = ["SdkMcpTool", "ToolAnnotations", "call_in_process", "create_sdk_mcp_server",
           "in_process_tools", "tool"]

T = TypeVar("T")
Handler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]] | dict[str, Any]]


def __getattr__(name: str) -> Any:
    """`ToolAnnotations` is mcp's own type, imported only when asked for."""
    if name == "ToolAnnotations":
        from mcp.types import ToolAnnotations

        return ToolAnnotations
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass
class SdkMcpTool(Generic[T]):
    """A tool of an in-process server: what `@tool` makes of a handler."""

    name: str
    description: str
    input_schema: type[T] | dict[str, Any]
    handler: Handler
    annotations: ToolAnnotations | dict[str, Any] | None = None


def tool(name: str, description: str, input_schema: type | dict[str, Any],
         annotations: ToolAnnotations | dict[str, Any] | None = None
         ) -> Callable[[Handler], SdkMcpTool[Any]]:
    """Make `handler` (`async def h(args) -> {"content": [...]}`) a tool.

    `annotations` are hints for clients (`readOnlyHint=True` lets the call run alongside
    other read-only calls); camelCase and snake_case keys are both accepted.
    """

    def decorator(handler: Handler) -> SdkMcpTool[Any]:
        return SdkMcpTool(name=name, description=description, input_schema=input_schema,
                          handler=handler, annotations=annotations)

    return decorator


def create_sdk_mcp_server(name: str, version: str = "1.0.0",
                          tools: list[SdkMcpTool[Any]] | None = None) -> McpSdkServerConfig:
    """An in-process MCP server serving `tools`, as a config for `mcp_servers`."""
    import mcp.types as types
    from mcp.server import Server

    entries = {t.name: _Entry(t) for t in tools or []}
    if len(entries) != len(tools or []):
        raise ValueError(f"two tools of server {name!r} have the same name")
    listed = types.ListToolsResult(tools=[entry.listing() for entry in entries.values()])

    async def on_list_tools(ctx: Any, params: Any) -> Any:
        return listed

    async def on_call_tool(ctx: Any, params: Any) -> Any:
        return await call_in_process(entries, params.name, params.arguments or {})

    server = Server(name, version=version, on_list_tools=on_list_tools,
                    on_call_tool=on_call_tool)
    _MADE_HERE[server] = entries
    return {"type": "sdk", "name": name, "instance": server}


#: the servers `create_sdk_mcp_server` made, and their tools (weakly: a dropped config's
#: server goes away)
_MADE_HERE: weakref.WeakKeyDictionary[Any, dict[str, _Entry]] = weakref.WeakKeyDictionary()


def in_process_tools(instance: Any) -> dict[str, _Entry] | None:
    """The tools of a server `create_sdk_mcp_server` made, by name, to call without the
    protocol; None for any other server object (a user's own `mcp` server is spoken to
    over MCP)."""
    try:
        return _MADE_HERE.get(instance)
    except TypeError:  # not weakly referable or not hashable: not one of ours
        return None


async def call_in_process(tools: dict[str, _Entry], name: str,
                          args: dict[str, Any]) -> CallToolResult:
    """What the server answers to `tools/call` for `name` (over MCP or directly)."""
    entry = tools.get(name)
    if entry is None:
        return _error(f"Unknown tool: {name}")
    return await entry.call(args)


class _Entry:
    """One tool as the server serves it: its listing, its input check, its handler."""

    def __init__(self, spec: SdkMcpTool[Any]) -> None:
        self.spec = spec
        self.schema = input_json_schema(spec.input_schema)
        self._check: Callable[[dict[str, Any]], list[str]] | None = None

    def listing(self) -> Any:
        import mcp.types as types

        annotations = self.spec.annotations
        if isinstance(annotations, dict):
            annotations = types.ToolAnnotations(**annotations)
        return types.Tool(name=self.spec.name, description=self.spec.description,
                          input_schema=self.schema, annotations=annotations)

    async def call(self, args: dict[str, Any]) -> CallToolResult:
        """The tool's result for `args`; never raises for bad input or a failing handler
        (the model reads what went wrong)."""
        if self._check is None:
            self._check = _checker(self.schema)
        problems = self._check(args)
        if problems:
            return _error(f"Invalid input for tool {self.spec.name!r}:\n" +
                          "\n".join(f"- {p}" for p in problems[:5]))
        try:
            answer = await _invoke(self.spec.handler, args)
        except Exception as error:  # the model reads what went wrong and may retry
            return _error(f"Tool {self.spec.name!r} failed: {type(error).__name__}: {error}")
        return _result(self.spec.name, answer)


async def _invoke(handler: Handler, args: dict[str, Any]) -> Any:
    if inspect.iscoroutinefunction(handler):
        from ..common.foreign_loop import on_callers_loop

        return await on_callers_loop(handler, args)
    import anyio.to_thread

    answer = await anyio.to_thread.run_sync(handler, args)
    return await answer if inspect.isawaitable(answer) else answer


def _result(name: str, answer: Any) -> CallToolResult:
    """The handler's `{"content": [...], "is_error"?: bool}` as an MCP result."""
    import mcp.types as types
    from pydantic import ValidationError

    if isinstance(answer, str):
        answer = {"content": [{"type": "text", "text": answer}]}
    elif answer is None:
        answer = {"content": []}
    if not isinstance(answer, dict):
        return _error(f"Tool {name!r} returned {type(answer).__name__}; a handler returns "
                      "{'content': [{'type': 'text', 'text': ...}], 'is_error': False}")
    fields = {"content": answer.get("content") or [],
              "is_error": bool(answer.get("is_error", answer.get("isError", False)))}
    structured = answer.get("structured_content", answer.get("structuredContent"))
    if structured is not None:
        fields["structured_content"] = structured
    try:
        return types.CallToolResult.model_validate(fields)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        return _error(f"Tool {name!r} returned an invalid result ({where}: {first['msg']})")


def _error(message: str) -> CallToolResult:
    import mcp.types as types

    return types.CallToolResult(content=[types.TextContent(type="text", text=message)],
                                is_error=True)


def _checker(schema: dict[str, Any]) -> Callable[[dict[str, Any]], list[str]]:
    """Input problems as readable lines: the package's fast checker for the subset the
    built-in tools use, `jsonschema` for the rest."""
    from ..tools import schema_check

    if schema_check.supported(schema):
        return lambda args: [f"{where or 'input'}: {message}"
                             for where, message in schema_check.problems(schema, args)]
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema)

    def check(args: dict[str, Any]) -> list[str]:
        errors = sorted(validator.iter_errors(args), key=lambda e: list(e.path))
        return [f"{'.'.join(str(p) for p in e.absolute_path) or 'input'}: {e.message}"
                for e in errors]

    return check
