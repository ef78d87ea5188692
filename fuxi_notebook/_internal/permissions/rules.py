"""Permission rules: `Tool` or `Tool(specifier)`, parsed once, matched many times.

Specifier kinds:
- `Bash(npm test *)`: a command pattern, `*` matches anything (spaces included); a
  trailing ` *` also matches the bare command and keeps a word boundary (`ls *` does not
  match `lsof`); legacy `npm:*` means `npm *`.
- `Read(...)`, `Edit(...)`, `Write(...)`, `Glob(...)`, `Grep(...)`: gitignore patterns
  with four anchors: `//abs/path`, `~/in/home`, `/relative/to/settings/root` (for
  options: the session cwd), and `relative` or `./relative` (to cwd). A bare name
  (`.env`) matches at any depth; a deny/ask `secrets/**` matches any `secrets` folder.
- `WebFetch(domain:example.com)`: the exact host after normalisation;
  `domain:*.example.com` = subdomains only; `domain:*` = any host.
- `mcp__server` / `mcp__server__*` (every tool of a server), `mcp__server__tool`; deny
  and ask rules may use tool-name globs (`mcp__*`, `*`), allow rules only after a
  literal `mcp__<server>__`.
- `Skill(name)`: the thing a call names (for Skill, the input's `skill`), `*` matching
  anything (`Skill(myplugin:*)`); `Skill(name *)` (with any arguments) = `Skill(name)`.
An invalid rule raises `ConfigurationError` with the reason; nothing is silently ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from ...errors import ConfigurationError
from ...options import PermissionRuleValue
from .paths import CASE_INSENSITIVE

__all__ = ["NAMED_RULES", "PATH_RULES", "Behavior", "PathPattern", "Rule", "parse_rule",
           "parse_rules"]

Behavior = Literal["allow", "deny", "ask"]
#: The rule language's path rules (not a classification of tools: a `Read(...)` rule covers
#: every read any tool declares, an `Edit(...)` rule every write; see judge.py).
PATH_RULES = frozenset({"Read", "Edit", "Write", "Glob", "Grep"})
#: Rules whose specifier names what a call is about: tool -> the input field it matches.
NAMED_RULES: dict[str, str] = {"Skill": "skill"}
#: `\Z`, not `$` (which also matches before a final newline)
_RULE = re.compile(r"^(?P<tool>[A-Za-z0-9_\-*]+)(?:\((?P<spec>.*)\))?\Z", re.DOTALL)
_MCP = re.compile(r"^mcp__(?P<server>[A-Za-z0-9_\-]+?)(?:__(?P<tool>[A-Za-z0-9_\-*]+))?\Z")
_PARAM_RULE = re.compile(r"^(command|timeout|description|run_in_background|file_path|url):")


@dataclass(frozen=True)
class PathPattern:
    """A gitignore pattern anchored at a directory."""

    anchor: Path
    pattern: str
    spec: Any = field(compare=False)

    def matches(self, path: Path, *, as_dir: bool = False) -> bool:
        """Whether `path` (absolute) matches; `as_dir` also tries a child of `path`."""
        anchor, target = str(self.anchor), str(path)
        if CASE_INSENSITIVE:
            anchor, target = anchor.casefold(), target.casefold()
        if target != anchor and not target.startswith(anchor.rstrip("/") + "/"):
            return False
        rel = target[len(anchor):].lstrip("/") or "."
        candidates = [rel] + ([f"{rel}/x"] if as_dir else [])
        return any(self.spec.match_file(c) for c in candidates if c != ".") or (
            rel == "." and self.pattern in ("**", "*", "**/*"))


@dataclass(frozen=True)
class Rule:
    """One parsed rule; `text` is what the user wrote."""

    text: str
    behavior: Behavior
    tool: str
    specifier: str | None = None
    tool_glob: re.Pattern[str] | None = None
    bash: re.Pattern[str] | None = None
    path: PathPattern | None = None
    domain: re.Pattern[str] | None = None
    named: re.Pattern[str] | None = None

    def __str__(self) -> str:
        return self.text

    @property
    def is_bare(self) -> bool:
        return self.specifier is None

    def names(self, tool_name: str) -> bool:
        """Whether the rule is about this tool at all (before any specifier)."""
        if self.tool_glob is not None:
            return self.tool_glob.fullmatch(tool_name) is not None
        return tool_name == self.tool


def _bash_pattern(spec: str) -> re.Pattern[str]:
    if spec.endswith(":*"):
        spec = spec[:-2] + " *"
    optional_tail = spec.endswith(" *")
    core = spec[:-2] if optional_tail else spec
    regex = ".*".join(re.escape(part) for part in core.split("*"))
    return re.compile(regex + (r"(?: .*)?" if optional_tail else ""), re.DOTALL)


def _named_pattern(spec: str) -> re.Pattern[str]:
    """`Skill(name)`: a name glob; arguments are not part of the match."""
    if spec.endswith(" *"):
        spec = spec[:-2].rstrip()
    return re.compile(".*".join(re.escape(part) for part in spec.split("*")), re.DOTALL)


def _domain_pattern(text: str, spec: str) -> re.Pattern[str] | None:
    if not spec.startswith("domain:"):
        raise ConfigurationError(f"permission rule {text!r}: WebFetch takes 'domain:HOST'")
    host = spec[len("domain:"):].strip().lower().rstrip(".")
    if host in ("", "*"):
        return None
    if host.startswith("*."):
        return re.compile(r"(?:[^.]+\.)+" + re.escape(host[2:]))
    return re.compile(r"[^.]*".join(re.escape(p) for p in host.split("*")))


def _path_pattern(text: str, spec: str, behavior: Behavior, cwd: Path,
                  root: Path) -> PathPattern:
    import pathspec  # lazy: only sessions with path rules pay for it

    if spec.startswith("//"):
        anchor, pattern = Path("/"), spec[2:]
    elif spec == "~" or spec.startswith("~/"):
        anchor, pattern = Path.home(), spec[2:] or "**"
    elif spec.startswith("/"):
        anchor, pattern = root, spec[1:]
    elif spec.startswith("./"):
        anchor, pattern = cwd, spec[2:]
    else:
        anchor, pattern = cwd, spec
        single_dir = re.fullmatch(r"[^/*?\[]+/(\*\*)?", pattern)
        if behavior != "allow" and single_dir:
            pattern = "**/" + pattern  # deny `secrets/**` = any secrets folder
    try:
        compiled = pathspec.GitIgnoreSpec.from_lines([pattern])
        compiled.match_file("probe")
    except (re.error, ValueError) as error:
        raise ConfigurationError(
            f"permission rule {text!r}: invalid path pattern ({error})") from error
    return PathPattern(anchor=anchor, pattern=pattern, spec=compiled)


def _tool_glob(text: str, tool: str, behavior: Behavior) -> re.Pattern[str] | None:
    mcp = _MCP.match(tool)
    if mcp and mcp["tool"] is None:  # `mcp__server` = every tool of the server
        return re.compile(re.escape(tool) + r"__.+")
    if "*" not in tool:
        return None
    literal_server = mcp and "*" not in mcp["server"] and tool.startswith(
        f"mcp__{mcp['server']}__")
    if behavior == "allow" and not literal_server:
        raise ConfigurationError(
            f"permission rule {text!r}: allow rules may use '*' in a tool name only after "
            "a literal 'mcp__<server>__' prefix (e.g. 'mcp__github__*')")
    return re.compile(".*".join(re.escape(part) for part in tool.split("*")))


def parse_rule(value: str | PermissionRuleValue, behavior: Behavior = "allow",
               *, cwd: Path | None = None, root: Path | None = None) -> Rule:
    """Parse one rule for `behavior`; raise `ConfigurationError` when it is invalid.

    `cwd` anchors relative path rules; `root` (default `cwd`) anchors `/path` rules.
    """
    text = str(value).strip()
    match = _RULE.match(text)
    if not match:
        raise ConfigurationError(
            f"invalid permission rule {text!r}: expected 'Tool' or 'Tool(specifier)', "
            "e.g. 'Read', 'Bash(git status)' or 'Read(./src/**)'")
    tool, spec = match["tool"], match["spec"]
    if spec is not None and spec.strip() in ("", "*"):
        spec = None
    rule = Rule(text=text, behavior=behavior, tool=tool, specifier=spec,
                tool_glob=_tool_glob(text, tool, behavior))
    if spec is None:
        return rule
    cwd = cwd or Path.cwd()
    return _with_specifier(rule, spec.strip(), cwd, root or cwd)


def _with_specifier(rule: Rule, spec: str, cwd: Path, root: Path) -> Rule:
    text, tool = rule.text, rule.tool
    if tool == "Bash":
        if _PARAM_RULE.match(spec):
            raise ConfigurationError(
                f"permission rule {text!r}: parameter rules are not supported; write the "
                "command pattern itself, e.g. 'Bash(rm *)'")
        return replace(rule, bash=_bash_pattern(spec))
    if tool in PATH_RULES:
        return replace(rule, path=_path_pattern(text, spec, rule.behavior, cwd, root))
    if tool == "WebFetch":
        domain = _domain_pattern(text, spec)
        return replace(rule, domain=domain, specifier=None if domain is None else spec)
    if tool in NAMED_RULES:
        return replace(rule, named=_named_pattern(spec))
    raise ConfigurationError(
        f"permission rule {text!r}: {tool} does not take a specifier; use the bare name "
        f"{tool!r} (specifiers work for Bash, {', '.join(sorted(PATH_RULES))}, WebFetch "
        f"and {', '.join(sorted(NAMED_RULES))})")


def parse_rules(values: list[str] | None, behavior: Behavior, *, cwd: Path,
                root: Path | None = None) -> list[Rule]:
    """Parse a list of rules of one behavior."""
    return [parse_rule(value, behavior, cwd=cwd, root=root) for value in values or []]
