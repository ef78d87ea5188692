"""MCP server configurations: their shapes (as the comparable SDK's users write them) and
one parser that checks them before anything starts.

`parse_mcp_servers` takes what `mcp_servers=` may be: `{name: config}`, the `.mcp.json`
shape `{"mcpServers": {...}}`, a JSON string of either, or the path of a JSON file of
either. Every problem is a `ConfigurationError` naming the server and the field, so a typo
reads as one line, not a traceback from a subprocess. In JSON (string or file), `${VAR}`
and `${VAR:-default}` in commands, arguments, env values, URLs and headers are replaced
from the environment, as `.mcp.json` files expect; Python dicts are taken literally.
What a connection could not carry is refused here too, after that expansion, so query(),
a notebook's `--mcp-config` and ACP's `session/new` refuse it alike instead of failing to
connect later: a control character (a tab, a line break, NUL, DEL, C1) in a remote
server's URL or header value, a header name that is no HTTP token, NUL in a stdio
server's command, arguments, environment or folder.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, NotRequired, TypedDict
from urllib.parse import urlsplit

from ...errors import ConfigurationError
from .names import server_name_problem

__all__ = [
    "McpHttpServerConfig",
    "McpSSEServerConfig",
    "McpSdkServerConfig",
    "McpServerConfig",
    "McpServerConnectionStatus",
    "McpServerInfo",
    "McpServerStatus",
    "McpServerStatusConfig",
    "McpStatusResponse",
    "McpStdioServerConfig",
    "McpToolAnnotations",
    "McpToolAnnotationsInfo",
    "McpToolInfo",
    "parse_mcp_servers",
]


class McpStdioServerConfig(TypedDict):
    """A server run as a subprocess, spoken to over its stdin/stdout.

    `env` is merged over this process's environment; `cwd` (our addition) defaults to the
    session's working directory, and a relative one is taken from there."""

    type: NotRequired[Literal["stdio"]]
    command: str
    args: NotRequired[list[str]]
    env: NotRequired[dict[str, str]]
    cwd: NotRequired[str]


class McpSSEServerConfig(TypedDict):
    """A remote server on the older HTTP+SSE transport."""

    type: Literal["sse"]
    url: str
    headers: NotRequired[dict[str, str]]


class McpHttpServerConfig(TypedDict):
    """A remote server on the streamable HTTP transport."""

    type: Literal["http"]
    url: str
    headers: NotRequired[dict[str, str]]


class McpSdkServerConfig(TypedDict):
    """An in-process server (`create_sdk_mcp_server`, or any `mcp.server.Server`)."""

    type: Literal["sdk"]
    name: str
    instance: Any


McpServerConfig = (McpStdioServerConfig | McpSSEServerConfig | McpHttpServerConfig
                   | McpSdkServerConfig)


class McpServerInfo(TypedDict):
    name: str
    version: str


class McpToolAnnotationsInfo(TypedDict, total=False):
    readOnly: bool
    destructive: bool
    openWorld: bool


#: the comparable SDK's name for the same shape
McpToolAnnotations = McpToolAnnotationsInfo
McpServerConnectionStatus = Literal["connected", "failed", "needs-auth", "pending", "disabled"]
#: a server's config as its status reports it (an in-process server without `instance`)
McpServerStatusConfig = dict[str, Any]


class McpToolInfo(TypedDict):
    name: str
    description: NotRequired[str]
    annotations: NotRequired[McpToolAnnotationsInfo]


class McpServerStatus(TypedDict):
    """One server as `McpServers.status()` reports it (the comparable SDK's shape)."""

    name: str
    status: McpServerConnectionStatus
    serverInfo: NotRequired[McpServerInfo]
    error: NotRequired[str]
    tools: NotRequired[list[McpToolInfo]]


class McpStatusResponse(TypedDict):
    """What `FuxiSDKClient.get_mcp_status()` returns."""

    mcpServers: list[McpServerStatus]


_TYPES = ("stdio", "http", "sse", "sdk")
#: what no HTTP request line or header can carry: C0 controls (tab and line breaks among
#: them), DEL and C1 controls
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
#: an HTTP header name (RFC 9110's token)
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def parse_mcp_servers(value: Mapping[str, Any] | str | Path, *,
                      base: Path | None = None) -> dict[str, McpServerConfig]:
    """The checked configurations by server name (`type` filled in, `args` a list).

    `base` is where a relative file path is found (default: the current directory).
    Raises `ConfigurationError` for anything unusable, naming the server and field.
    """
    from ..common.reading import check_depth, parse_json  # lazy: settings/ imports this

    expand = False
    if isinstance(value, Path) or (isinstance(value, str) and not value.lstrip().startswith(
            ("{", "["))):
        value, expand = _read_file(Path(value), base), True
    elif isinstance(value, str):
        value, expand = parse_json(value, "the mcp_servers JSON"), True
    if not isinstance(value, Mapping):
        raise ConfigurationError(
            "mcp_servers must be {name: config}, {'mcpServers': {...}}, a JSON string or a "
            f"file path, not {type(value).__name__}")
    check_depth(value, "mcp_servers")  # a Python value too: errors repr() what they name
    servers = value.get("mcpServers", value) if "mcpServers" in value else value
    if not isinstance(servers, Mapping):
        raise ConfigurationError("mcpServers must be an object of {name: config}")
    return {_name(name): _server(str(name), config, expand) for name, config in
            servers.items()}


def _read_file(path: Path, base: Path | None) -> Any:
    from ..common.reading import read_json_file

    path = path.expanduser()
    if not path.is_absolute():
        path = (base or Path.cwd()) / path
    return read_json_file(path, f"MCP config file {path}")


def _name(name: object) -> str:
    problem = server_name_problem(name)
    if problem:
        raise ConfigurationError(f"MCP server {name!r}: {problem}")
    return str(name)


def _server(name: str, config: Any, expand: bool) -> McpServerConfig:
    if not isinstance(config, Mapping):
        raise ConfigurationError(f"MCP server {name!r}: the config must be an object, not "
                                 f"{type(config).__name__}")
    kind = config.get("type")
    if kind is None:
        if "url" in config:
            raise ConfigurationError(f"MCP server {name!r}: 'type' is missing; a server "
                                     "with a 'url' needs type 'http' or 'sse'")
        kind = "stdio"
    if kind not in _TYPES:
        raise ConfigurationError(f"MCP server {name!r}: unknown type {kind!r} (expected one "
                                 f"of {', '.join(_TYPES)})")
    field = _Fields(name, expand)
    if kind == "stdio":
        return _stdio(field, config)
    if kind == "sdk":
        return _sdk(name, config)
    url = field.sendable("url", field.text(config, "url"))
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigurationError(f"MCP server {name!r}: url must be an http:// or https:// "
                                 f"URL with a host, not {url!r}")
    remote: dict[str, Any] = {"type": kind, "url": url}
    if "headers" in config:
        remote["headers"] = {field.header_name(key): field.sendable(f"headers[{key!r}]", value)
                             for key, value in field.mapping(config, "headers").items()}
    return remote  # type: ignore[return-value]


def _stdio(field: _Fields, config: Mapping[str, Any]) -> McpStdioServerConfig:
    """A stdio server's fields; NUL, which no command line or environment can hold, is
    refused here rather than when the process fails to start."""
    command = field.no_nul("command", field.text(config, "command"))
    stdio: McpStdioServerConfig = {"type": "stdio", "command": command,
                                   "args": [field.no_nul("args", arg)
                                            for arg in field.texts(config, "args")]}
    if "env" in config:
        stdio["env"] = {field.no_nul("env", key): field.no_nul(f"env[{key!r}]", value)
                        for key, value in field.mapping(config, "env").items()}
    if "cwd" in config:
        stdio["cwd"] = field.no_nul("cwd", field.text(config, "cwd"))
    return stdio


def _sdk(name: str, config: Mapping[str, Any]) -> McpSdkServerConfig:
    instance = config.get("instance")
    if instance is None:
        raise ConfigurationError(
            f"MCP server {name!r}: an 'sdk' server needs its 'instance' (made by "
            "create_sdk_mcp_server in Python; it cannot come from JSON)")
    from mcp.server import Server  # lazy: only sessions with MCP servers load mcp
    from mcp.server.mcpserver import MCPServer

    if not isinstance(instance, Server | MCPServer):
        raise ConfigurationError(f"MCP server {name!r}: 'instance' must be an mcp Server or "
                                 f"MCPServer, not {type(instance).__name__}")
    label = config.get("name")
    return {"type": "sdk", "name": label if isinstance(label, str) else name,
            "instance": instance}


class _Fields:
    """Reads one server's fields, with errors that name the server and the field."""

    def __init__(self, server: str, expand: bool) -> None:
        self.server, self.expand = server, expand

    def _fail(self, field: str, problem: str) -> ConfigurationError:
        return ConfigurationError(f"MCP server {self.server!r}: {field} {problem}")

    def _value(self, field: str, text: str) -> str:
        if not self.expand:
            return text

        def replace(match: re.Match[str]) -> str:
            found = os.environ.get(match[1], match[2])
            if found is None:
                raise self._fail(field, f"uses ${{{match[1]}}}, which is not set (write "
                                        f"${{{match[1]}:-default}} for a default)")
            return found

        return _VARIABLE.sub(replace, text)

    def sendable(self, field: str, value: str) -> str:
        """`value` (a URL, a header value), refused if HTTP cannot carry it: a control
        character would fail the connection later, or split a header in two."""
        found = _CONTROL.search(value)
        if found is not None:
            raise self._fail(field, f"holds the control character U+{ord(found[0]):04X} "
                                    f"at position {found.start()}, which HTTP cannot carry")
        return value

    def header_name(self, name: str) -> str:
        if not _TOKEN.fullmatch(name):
            raise self._fail(f"headers[{name!r}]", "is not an HTTP header name (letters, "
                                                   "digits and !#$%&'*+-.^_`|~ only)")
        return name

    def no_nul(self, field: str, value: str) -> str:
        if "\x00" in value:
            raise self._fail(field, "holds a NUL character, which no command line or "
                                    "environment can carry")
        return value

    def text(self, config: Mapping[str, Any], field: str) -> str:
        value = config.get(field)
        if value is None:
            raise self._fail(field, "is missing")
        if not isinstance(value, str) or not value.strip():
            raise self._fail(field, f"must be a non-empty string, not {value!r}")
        return self._value(field, value)

    def texts(self, config: Mapping[str, Any], field: str) -> list[str]:
        value = config.get(field, [])
        if not isinstance(value, list | tuple):
            raise self._fail(field, f"must be a list of strings, not {type(value).__name__}")
        bad = [item for item in value if not isinstance(item, str)]
        if bad:
            raise self._fail(field, f"must hold only strings; {bad[0]!r} is "
                                    f"{type(bad[0]).__name__}")
        return [self._value(field, item) for item in value]

    def mapping(self, config: Mapping[str, Any], field: str) -> dict[str, str]:
        value = config.get(field)
        if not isinstance(value, Mapping):
            raise self._fail(field, f"must be an object of strings, not "
                                    f"{type(value).__name__}")
        bad = [key for key, item in value.items()
               if not isinstance(key, str) or not isinstance(item, str)]
        if bad:
            raise self._fail(f"{field}[{bad[0]!r}]", f"must be a string, not "
                                                     f"{type(value[bad[0]]).__name__}")
        return {key: self._value(f"{field}[{key!r}]", item) for key, item in value.items()}
