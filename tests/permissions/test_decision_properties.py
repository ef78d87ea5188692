"""Property tests of the decision: random compound commands built from allowed and denied
parts are never allowed when any part is denied, and are allowed when every part is."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from fuxi_notebook import FuxiAgentOptions
from fuxi_notebook._internal.permissions.engine import PermissionEngine

ALLOWED = ["git status", "ls -la", "echo hi", "pwd", "git log --oneline"]
DENIED = ["rm -rf x", "curl -s evil.sh", "r\\m x", '"rm" x', "timeout 5 rm x", "command rm x",
          "FOO=1 curl x", "$'\\x72m' x", "nice -n 3 rm x", "xargs rm"]
SEPARATORS = [" && ", " || ", "; ", " | ", " |& ", " & ", "\n"]


def _wrap(draw: st.DrawFn, part: str) -> str:
    kind = draw(st.sampled_from(["plain", "plain", "subst", "backtick", "subshell", "if", "pipe"]))
    if kind == "subst":
        return f'echo "$({part})"'
    if kind == "backtick":
        return f"echo `{part}`"
    if kind == "subshell":
        return f"({part})"
    if kind == "if":
        return f"if true; then {part}; fi"
    if kind == "pipe":
        return f"echo a | {part}"
    return part


@st.composite
def compound(draw: st.DrawFn, *, with_denied: bool) -> str:
    parts = draw(st.lists(st.sampled_from(ALLOWED), min_size=0, max_size=4))
    if with_denied:
        parts.insert(draw(st.integers(0, len(parts))), draw(st.sampled_from(DENIED)))
    parts = [_wrap(draw, p) for p in parts] if with_denied else parts
    command = parts[0]
    for part in parts[1:]:
        command += draw(st.sampled_from(SEPARATORS)) + part
    return command


def _engine(cwd: Path) -> PermissionEngine:
    options = FuxiAgentOptions(
        allowed_tools=["Bash(git status)", "Bash(git log *)", "Bash(ls *)", "Bash(echo *)",
                       "Bash(pwd)", "Bash(xargs *)", "Bash(if *)"],
        disallowed_tools=["Bash(rm *)", "Bash(curl *)"])
    return PermissionEngine(options, cwd=cwd)


_CWD = Path(__file__).parent


@settings(max_examples=300, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(compound(with_denied=True))
def test_a_denied_part_is_never_allowed(command):
    decision = asyncio.run(_engine(_CWD).decide("Bash", {"command": command}, "toolu_p"))
    assert decision.behavior == "deny", command


def _newline_after_long_pipeline(separators: list[str]) -> bool:
    """tree-sitter-bash 0.25 can mis-parse a script that goes on after a newline that
    follows a 3-stage pipeline; the analysis detects it and asks (so without a callback
    the call is denied). The property leaves these scripts out; the known one is pinned."""
    stages = 1
    for separator in separators:
        if separator == "\n" and stages >= 3:
            return True
        stages = stages + 1 if separator == " | " else 1
    return False


def _joined(parts: list[str], separators: list[str]) -> str:
    command = parts[0]
    for separator, part in zip(separators, parts[1:], strict=False):
        command += separator + part
    return command


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(st.sampled_from(ALLOWED), min_size=1, max_size=5),
       st.lists(st.sampled_from([" && ", " || ", "; ", "\n", " | "]), min_size=4, max_size=4))
def test_compounds_of_allowed_parts_are_allowed(parts, separators):
    assume(not _newline_after_long_pipeline(separators[:len(parts) - 1]))
    command = _joined(parts, separators)
    decision = asyncio.run(_engine(_CWD).decide("Bash", {"command": command}, "toolu_p"))
    assert decision.behavior == "allow", command


@pytest.mark.parametrize(("parts", "separators"), [
    (["git status"] * 5, [" | ", " | ", "\n", " && "]),  # found by a random draw in CI
    (["ls -la"] * 3, [" | ", "\n"]),
])
def test_a_newline_after_a_three_stage_pipeline_asks_rather_than_misjudging(parts, separators):
    command = _joined(parts, separators)
    decision = asyncio.run(_engine(_CWD).decide("Bash", {"command": command}, "toolu_p"))
    # the misparse is detected and asked about (denied here: no callback), never allowed
    # on a wrong reading; a two-stage pipeline parses correctly
    expected = "deny" if _newline_after_long_pipeline(separators) else "allow"
    assert decision.behavior == expected, command
