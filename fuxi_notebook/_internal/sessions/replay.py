"""Replaying a recorded cell: whether it may be replayed, its approvals, its divergences.

During a replay the model's turns come from the record (`models.replay.ReplayModel`) while
the tools run again for real. Three things decide whether the re-run is faithful:

- the cell must still be the recorded cell (`why_not_replayable`: prompt, options, parent);
- recorded approvals are re-applied without asking (`RecordedApprovals`), except where no
  recorded decision can stand in for the user: a critical path or an ask rule, and paths
  outside the working directories. Deny rules and the path boundary apply as in a live
  run, so a forged record gets no further than a live model would;
- each re-executed tool result is compared with the recorded one (`first_divergence`),
  after the same redaction and truncation as recording and this normalisation, applied to
  both sides: the run's working directory (each side its own) becomes `<cwd>`, the home
  folder `~`, paths in the temp folder `<tmp>/…`, memory addresses `0x…`, durations
  `<N> s`, line ends are stripped of spaces, and images are compared by type only (a
  figure redrawn by another library version differs in its bytes, not in what it shows).
"""

from __future__ import annotations

import difflib
import os
import re
import tempfile
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...options import (
    PermissionResult,
    PermissionResultAllow,
    PermissionResultDeny,
    PermissionRuleValue,
    PermissionUpdate,
    ToolPermissionContext,
)
from ..common.rule_lists import split_rules
from .record import ApprovalRecord, SessionRecord, json_safe, record_content
from .text.transcript import input_summary, result_text

__all__ = ["Divergence", "RecordedApprovals", "first_divergence", "normalize_result",
           "recorded_calls", "recorded_results", "why_not_replayable"]

#: Options that choose how a cell runs rather than what it does: not compared on replay.
RUN_OPTIONS = frozenset({"replay", "new", "resume", "fork", "cell_id"})

_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]{6,}\b")
_DURATION = re.compile(r"\b\d+(?:\.\d+)? ?(?:s|ms|sec|seconds)\b")


def why_not_replayable(record: SessionRecord, *, prompt: str, options: dict[str, Any],
                       parent: str | None, secrets: Iterable[str] = ()) -> str | None:
    """Why this run of the cell is not the recorded one (None: it may be replayed)."""
    from .redact import redact

    if redact(prompt.strip("\n"), secrets=tuple(secrets)) != record.prompt:
        return "the prompt changed since it was recorded"
    wanted = {k: v for k, v in redact(json_safe(options), secrets=tuple(secrets)).items()
              if k not in RUN_OPTIONS}
    recorded = {k: v for k, v in record.options.items() if k not in RUN_OPTIONS}
    if wanted != recorded:
        changed = sorted(k for k in set(wanted) | set(recorded)
                         if wanted.get(k) != recorded.get(k))
        return f"its options changed since it was recorded ({', '.join(changed)})"
    if parent != record.parent:
        was = f"cell {record.parent}" if record.parent else "a new conversation"
        now = f"cell {parent}" if parent else "a new conversation"
        return (f"it was recorded continuing {was}, but here it would continue {now} "
                f"(use --resume {record.parent} or --new to choose)" if record.parent
                else f"it was recorded as {was}, but here it would continue {now} "
                     "(add --new to replay it)")
    return None


Approver = Callable[[str, dict[str, Any], ToolPermissionContext], Awaitable[PermissionResult]]


class RecordedApprovals:
    """A `can_use_tool` that re-applies the decisions recorded for each call.

    Where a recorded decision cannot stand in for the user (see the module docstring), or
    there is none, `fallback` decides (a live approval card), else the call is denied.
    `applied` lists what was decided, in the record's own form, for the new record.
    """

    def __init__(self, approvals: Iterable[ApprovalRecord], *, fallback: Approver | None) -> None:
        self._by_id: dict[str, ApprovalRecord] = {}
        for approval in approvals:
            self._by_id.setdefault(approval.tool_use_id, approval)
        self.fallback = fallback
        #: the declared kind of a tool (set by the cell from its session): a question
        #: ("ask") is the user's answer, which the record holds, not an approval
        self.kind_of: Callable[[str], str | None] = lambda name: (
            "ask" if name == "AskUserQuestion" else None)
        self.refused: list[str] = []
        self.asked_live = 0
        #: (tool, reason) -> what the engine tells the model when nobody could approve:
        #: a call the recording's policy denied is denied with the same words again
        self.policy: Callable[[str, str | None], str] | None = None

    async def __call__(self, tool_name: str, tool_input: dict[str, Any],
                       context: ToolPermissionContext) -> PermissionResult:
        recorded = self._by_id.get(context.tool_use_id or "")
        problem = self._cannot_reapply(tool_name, recorded, context,
                                       question=self.kind_of(tool_name) == "ask")
        if recorded is not None and recorded.decision == "deny" and (
                recorded.source == "policy") and self.policy is not None:
            return PermissionResultDeny(message=self.policy(tool_name,
                                                            context.decision_reason))
        if problem is None and recorded is not None:
            return _reapply(recorded, tool_input)
        if self.fallback is not None:
            self.asked_live += 1
            return await self.fallback(tool_name, tool_input, context)
        self.refused.append(f"{tool_name}: {problem}")
        return PermissionResultDeny(message=f"Replay did not run this {tool_name} call: "
                                    f"{problem}. Run the cell live to approve it.")

    @staticmethod
    def _cannot_reapply(tool_name: str, recorded: ApprovalRecord | None,
                        context: ToolPermissionContext, *, question: bool) -> str | None:
        if recorded is None or recorded.tool_name != tool_name:
            return "the record holds no decision for it"
        if recorded.decision == "deny":
            return None
        if context.hard_ask and not question:
            why = context.decision_reason or "it always needs the user"
            return f"a recorded approval cannot stand in for the user here ({why})"
        if context.blocked_path:
            return (f"{context.blocked_path} is outside the working directories, and a "
                    "recorded approval does not reach outside them")
        return None


def _reapply(recorded: ApprovalRecord, tool_input: dict[str, Any]) -> PermissionResult:
    if recorded.decision == "deny":
        why = f" Their reason: {recorded.reason}" if recorded.reason else ""
        return PermissionResultDeny(message=f"The user denied this {recorded.tool_name} "
                                    f"call.{why}")
    updated = {**tool_input, "answers": recorded.answers} if recorded.answers else None
    updates = None
    if recorded.decision == "always_allow" and recorded.rule:
        rules = [PermissionRuleValue.from_text(r) for r in split_rules(recorded.rule)]
        updates = [PermissionUpdate(type="addRules", behavior="allow", rules=rules,
                                    destination="session")]
    return PermissionResultAllow(updated_input=updated, updated_permissions=updates)


def recorded_results(record: SessionRecord) -> dict[str, dict[str, Any]]:
    """tool_use_id -> the recorded tool_result block."""
    found: dict[str, dict[str, Any]] = {}
    for message in record.messages:
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                found.setdefault(str(block.get("tool_use_id")), block)
    return found


def recorded_calls(record: SessionRecord) -> dict[str, dict[str, Any]]:
    """tool_use_id -> the recorded tool_use block."""
    found: dict[str, dict[str, Any]] = {}
    for message in record.messages:
        content = message.get("content")
        if message.get("role") != "assistant" or not isinstance(content, list):
            continue
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                found[str(block.get("id"))] = block
    return found


def normalize_result(content: Any, *, cwd: str | None) -> str:
    """A tool result's content as comparable text (see the module docstring)."""
    text = result_text(content)
    places = [(cwd, "<cwd>")] if cwd else []
    places += [(str(Path(tempfile.gettempdir()).resolve()), "<tmp>"),
               (tempfile.gettempdir(), "<tmp>"), (str(Path.home()), "~")]
    for place, token in sorted(places, key=lambda p: -len(p[0] or "")):
        if place and place not in ("/", "."):
            text = text.replace(place.rstrip(os.sep), token)
    text = re.sub(r"<tmp>/[^/\s'\"]+", "<tmp>/…", text)
    text = _ADDRESS.sub("0x…", text)
    text = _DURATION.sub("<N> s", text)
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


@dataclass(frozen=True)
class Divergence:
    """A re-executed tool result that differs from the recorded one."""

    tool_use_id: str
    tool_name: str
    summary: str
    diff: str

    def report(self) -> str:
        """Readable: which call, then a unified diff (recorded → now)."""
        return f"{self.tool_name} {self.summary} ({self.tool_use_id}) gave a different " \
               f"result than recorded:\n{self.diff}"


def first_divergence(record: SessionRecord, tool_use_id: str, live_content: Any,
                     live_is_error: bool, *, live_cwd: str | None,
                     secrets: Iterable[str] = ()) -> Divergence | None:
    """How a re-executed result differs from the recorded one (None: it does not)."""
    recorded = recorded_results(record).get(tool_use_id)
    call = recorded_calls(record).get(tool_use_id, {})
    name = str(call.get("name", "tool"))
    before = normalize_result(recorded.get("content") if recorded else None, cwd=record.cwd)
    after = normalize_result(record_content(live_content, secrets=secrets), cwd=live_cwd)
    was_error = bool(recorded.get("is_error")) if recorded else False
    if recorded is not None and before == after and was_error == live_is_error:
        return None
    if recorded is None:
        before = "(no recorded result)"
    if was_error != live_is_error:
        before += "\n(error)" if was_error else ""
        after += "\n(error)" if live_is_error else ""
    diff = "\n".join(difflib.unified_diff(before.splitlines(), after.splitlines(),
                                          fromfile="recorded", tofile="now", lineterm="", n=2))
    summary = input_summary(name, call.get("input") or {})
    return Divergence(tool_use_id, name, f"`{summary}`", _cap(diff, 4000))


def _cap(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n… ({len(text) - limit} more)"
