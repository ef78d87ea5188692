"""Rule parsing and matching: every specifier kind, anchors, and invalid rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuxi_notebook._internal.permissions.facts import normalise_host
from fuxi_notebook._internal.permissions.rules import parse_rule
from fuxi_notebook.errors import ConfigurationError


@pytest.mark.parametrize(("rule", "command", "matches"), [
    ("Bash(git status)", "git status", True),
    ("Bash(git status)", "git status --short", False),
    ("Bash(npm test *)", "npm test", True),
    ("Bash(npm test *)", "npm test -- --watch", True),
    ("Bash(npm test *)", "npm testing", False),
    ("Bash(ls*)", "lsof", True),
    ("Bash(ls *)", "lsof", False),
    ("Bash(git * main)", "git push origin main", True),
    ("Bash(* install)", "npm install", True),
    ("Bash(npm:*)", "npm install", True),
    ("Bash(git:* push)", "git:x push", True),
])
def test_bash_patterns(rule, command, matches):
    parsed = parse_rule(rule)
    assert parsed.bash is not None
    assert (parsed.bash.fullmatch(command) is not None) is matches


@pytest.mark.parametrize(("rule", "behavior", "path", "matches"), [
    ("Read(.env)", "deny", "W/.env", True),
    ("Read(.env)", "deny", "W/deep/er/.env", True),  # bare names match at any depth
    ("Read(secrets/**)", "deny", "W/a/secrets/key", True),  # deny: any secrets folder
    ("Read(secrets/**)", "allow", "W/a/secrets/key", False),  # allow: only <cwd>/secrets
    ("Read(secrets/**)", "allow", "W/secrets/key", True),
    ("Edit(src/**)", "allow", "W/src/a/b.py", True),
    ("Edit(src/**)", "allow", "W/lib/src/b.py", False),
    ("Read(./docs/*.md)", "allow", "W/docs/a.md", True),
    ("Read(./docs/*.md)", "allow", "W/docs/sub/a.md", False),
    ("Read(//etc/**)", "deny", "/etc/passwd", True),
    ("Read(//etc/**)", "deny", "W/etc/passwd", False),
    ("Read(/config/*.json)", "allow", "W/config/a.json", True),  # settings root = cwd here
    ("Read(~/.ssh/**)", "deny", "HOME/.ssh/id_rsa", True),
])
def test_path_rules_use_gitignore_semantics_and_the_four_anchors(tmp_path, rule, behavior, path,
                                                                  matches):
    cwd = tmp_path / "W"
    parsed = parse_rule(rule, behavior, cwd=cwd)
    concrete = Path(path.replace("W", str(cwd), 1).replace("HOME", str(Path.home()), 1))
    assert parsed.path is not None
    assert parsed.path.matches(concrete) is matches


def test_slash_anchor_is_relative_to_the_settings_root(tmp_path):
    parsed = parse_rule("Read(/data/**)", "deny", cwd=tmp_path / "cwd", root=tmp_path / "proj")
    assert parsed.path.matches(tmp_path / "proj" / "data" / "x")
    assert not parsed.path.matches(tmp_path / "cwd" / "data" / "x")


@pytest.mark.parametrize(("rule", "host", "matches"), [
    ("WebFetch(domain:example.com)", "example.com", True),
    ("WebFetch(domain:example.com)", "www.example.com", False),
    ("WebFetch(domain:*.example.com)", "a.b.example.com", True),
    ("WebFetch(domain:*.example.com)", "example.com", False),
    ("WebFetch(domain:example.*)", "example.org", True),
    ("WebFetch(domain:example.*)", "example.evil.com", False),
    ("WebFetch(domain:Example.COM.)", "example.com", True),
])
def test_webfetch_domains(rule, host, matches):
    parsed = parse_rule(rule)
    assert (parsed.domain.fullmatch(host) is not None) is matches


def test_host_normalisation():
    assert normalise_host("https://EXAMPLE.com./x") == "example.com"
    assert normalise_host("https://bücher.de/") == "xn--bcher-kva.de"
    assert normalise_host("not a url") is None


@pytest.mark.parametrize(("rule", "behavior", "tool", "matches"), [
    ("mcp__github", "allow", "mcp__github__create_issue", True),
    ("mcp__github", "allow", "mcp__gitlab__x", False),
    ("mcp__github__*", "allow", "mcp__github__x", True),
    ("mcp__github__create_issue", "allow", "mcp__github__create_issue", True),
    ("mcp__github__create_issue", "allow", "mcp__github__delete", False),
    ("mcp__*", "deny", "mcp__anything__x", True),
    ("*", "deny", "Bash", True),
])
def test_tool_name_rules(rule, behavior, tool, matches):
    assert parse_rule(rule, behavior).names(tool) is matches


@pytest.mark.parametrize(("rule", "behavior", "needle"), [
    ("Bash((", "allow", "invalid permission rule"),
    ("Re ad", "allow", "invalid permission rule"),
    ("*", "allow", "mcp__<server>__"),
    ("mcp__*", "allow", "mcp__<server>__"),
    ("Agent(model:opus)", "deny", "does not take a specifier"),
    ("WebFetch(example.com)", "allow", "domain:HOST"),
    ("Read([2024-06] Reports/**)", "deny", "invalid path pattern"),
    ("Bash(command:rm *)", "deny", "parameter rules"),
])
def test_invalid_rules_are_clear_errors(rule, behavior, needle):
    with pytest.raises(ConfigurationError, match=needle):
        parse_rule(rule, behavior)
