"""What in a project's settings needs the user's trust, each thing described as it would run.

Needs trust (from the "project" and "local" sources; the user's own files are trusted):

- `hook`: a hook command runs a shell command at every matching event;
- `mcp_server`: a server in `.mcp.json` starts a process or talks to a URL;
- `allow_rule`: an `allow` rule runs calls without asking;
- `mode`: a `defaultMode` that approves more (acceptEdits, auto, bypassPermissions);
  "default", "plan" and "dontAsk" only narrow and apply at once;
- `directory`: `additionalDirectories` opens more of the disk;
- `env`: variables reach the API client and every command (`ANTHROPIC_BASE_URL` sends the
  user's key elsewhere, `PATH` and `LD_PRELOAD` choose what runs).
- `api_key_helper`: `apiKeyHelper` runs a shell command to get the API key (before the
  first request, then again after its TTL or a refused key).

Applies without trust: `deny` / `ask` rules (they narrow), memory, output styles, and
`model`: a model id runs nothing and reaches only the API the user configured; the cost
it can add is bounded by `max_budget_usd` and shown in every result, and the session
reports which source chose the model (`ProjectSettings.model_source`).

Each item is a `HeldBack` whose description shows exactly what would run (the full
command, the server's command line or URL, the rule), secrets redacted; its `raw` value
(unredacted, never shown or stored) is what the fingerprint covers.
"""

from __future__ import annotations

import json
import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ...errors import ConfigurationError
from ..common.reading import Outside, parse_json, read_config
from ..common.secret_names import is_secret_env_name
from ..mcp_servers.config import McpServerConfig, parse_mcp_servers
from ..permissions.modes import NARROW_MODES
from .files import SourceSettings

__all__ = ["MCP_FILE", "HeldBack", "HeldBackKind", "McpFile",
           "describe_server", "directory_of", "gated_items", "mcp_items", "read_mcp_file",
           "redact_line"]

HeldBackKind = Literal["hook", "mcp_server", "allow_rule", "mode", "directory", "env",
                      "api_key_helper"]
MCP_FILE = ".mcp.json"
_MAX_MCP_CHARS = 1 << 20


@dataclass(frozen=True)
class HeldBack:
    """One thing that needs trust: its kind, the source and file it comes from, and what
    it would do, in one line. `raw` is the exact content the fingerprint covers."""

    kind: HeldBackKind
    source: str
    file: Path
    description: str
    raw: Any = field(default=None, repr=False, compare=False)

    def line(self) -> str:
        """`[project .fuxi/settings.json] hook: ...`, as a list shows it."""
        return f"[{self.source} {self.file}] {self.kind}: {self.description}"


@dataclass
class McpFile:
    """A project's `.mcp.json`: the checked servers and each one's config as written."""

    path: Path
    servers: dict[str, McpServerConfig]
    raw: dict[str, Any]


def redact_line(text: str) -> str:
    """`text` with credential-looking parts replaced (sessions/redact.py)."""
    from ..sessions.redact import redact_text  # lazy: sessions/ loads pydantic

    return redact_text(text)


def _env_pair(name: str, value: str) -> str:
    return f"{name}=[REDACTED]" if is_secret_env_name(name) and value else redact_line(
        f"{name}={value}")


def read_mcp_file(root: Path, warnings: list[str]) -> McpFile | None:
    """`<root>/.mcp.json`, read once (the servers checked are the servers fingerprinted),
    or None. Unusable content is a ConfigurationError naming the file."""
    path = root / MCP_FILE
    try:
        text = read_config(path, root, _MAX_MCP_CHARS, "MCP config file")
    except Outside as why:
        warnings.append(f"skipped the MCP config: {why}")
        return None
    if text is None:
        return None
    data = parse_json(text, f"MCP config file {path}") if text.strip() else {}
    raw = data.get("mcpServers", data) if isinstance(data, dict) else None
    if not isinstance(raw, dict):
        raise ConfigurationError(f"MCP config file {path}: expected a JSON object of "
                                 '{"mcpServers": {name: config}}')
    servers: dict[str, McpServerConfig] = {}
    for name, config in raw.items():
        # one server at a time: a server the user cannot start (`${TOKEN}` unset, a typo)
        # is skipped with a warning, and the rest of the project still loads
        try:
            servers |= parse_mcp_servers(json.dumps({"mcpServers": {name: config}}))
        except ConfigurationError as error:
            warnings.append(f"MCP config file {path}: skipped: {error}")
    return McpFile(path, servers, {name: raw[name] for name in servers})


def describe_server(name: str, config: McpServerConfig) -> str:
    """`MCP server 'x' runs: cmd args` or `... connects to URL`, secrets redacted."""
    data: dict[str, Any] = dict(config)
    if data.get("type", "stdio") == "stdio":
        line = f"MCP server {name!r} runs: {shlex.join([data['command'], *data.get('args', [])])}"
        if data.get("env"):
            line += " with " + " ".join(_env_pair(k, v) for k, v in data["env"].items())
        if data.get("cwd"):
            line += f" in {data['cwd']}"
        return redact_line(line)
    line = f"MCP server {name!r} connects to {data.get('url')} ({data.get('type')})"
    if data.get("headers"):
        line += " with headers " + ", ".join(sorted(data["headers"]))
    return redact_line(line)


def _directory(settings: SourceSettings, entry: str) -> str:
    path = Path(entry).expanduser()
    return os.path.realpath(path if path.is_absolute() else settings.root / path)


def gated_items(source: SourceSettings) -> list[HeldBack]:
    """What in one project settings file needs trust, in the file's order of keys."""
    items: list[HeldBack] = []

    def add(kind: HeldBackKind, description: str, raw: dict[str, Any]) -> None:
        items.append(HeldBack(kind, source.source, source.path, description,
                              {"kind": kind, "source": source.source, **raw}))

    for spec in source.hooks:
        which = "" if spec.matcher in (None, "", "*") else f" for {spec.matcher}"
        limit = f" (timeout {spec.timeout:g} s)" if spec.timeout is not None else ""
        add("hook", redact_line(f"{spec.event} hook{which} runs: {spec.command}{limit}"),
            {"event": spec.event, "matcher": spec.matcher, "command": spec.command,
             "timeout": spec.timeout})
    permissions = source.permissions
    for rule in permissions.allow:
        add("allow_rule", f"allow rule {rule}", {"rule": rule})
    mode = permissions.default_mode
    if mode is not None and mode not in NARROW_MODES:
        add("mode", f"permission mode {mode}", {"mode": mode})
    for entry in permissions.directories:
        resolved = _directory(source, entry)
        add("directory", f"additional directory {resolved}", {"entry": entry,
                                                               "resolved": resolved})
    for name, value in source.env.items():
        add("env", f"environment variable {_env_pair(name, value)}",
            {"name": name, "value": value})
    if source.api_key_helper is not None:
        add("api_key_helper", redact_line(f"apiKeyHelper runs: {source.api_key_helper}"),
            {"command": source.api_key_helper})
    return items


def mcp_items(mcp: McpFile) -> list[HeldBack]:
    """One item per server of a project's `.mcp.json`."""
    return [HeldBack("mcp_server", "project", mcp.path, describe_server(name, config),
                     {"kind": "mcp_server", "source": "project", "name": name,
                      "config": mcp.raw.get(name)})
            for name, config in mcp.servers.items()]


def directory_of(source: SourceSettings, entry: str) -> Path:
    """An `additionalDirectories` entry as an absolute path (relative to the source's
    root, `~` expanded, symlinks resolved)."""
    return Path(_directory(source, entry))
