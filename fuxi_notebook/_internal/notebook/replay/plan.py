"""The exact calls a replay of a record executes, or why the record is refused.

A notebook from someone else holds recorded runs, and a record's tool calls are code: a
replay may run only what the consent card showed. So one function reads a record into a
`ReplayPlan`: the assistant turns the replay model serves, and every tool call among
them with this kernel's declaration of its tool. The consent card is drawn from the plan,
the replay model serves the plan's turns, and recorded approvals reach the plan's calls
only. A record that cannot be read one way only is refused whole, with one line
(`ReplayRefused`), and nothing of it runs:

- a call without an id, with an id of another shape than the API gives, or with the id of
  another call (one approval would cover both);
- an input that is not a JSON object (a string streams as whatever JSON it holds);
- a tool this kernel does not declare (MCP tools, named `mcp__…`, are answered from the
  record: a replay starts no MCP server);
- a `kinds` entry that disagrees with this kernel's declaration: what is read-only is
  decided here, never by the file;
- a block the replay cannot play, or a call in a user message;
- two approvals for one call, an approval naming another tool than its call, or an
  "Always allow" rule other than the one the call's tool declares.

The declarations come from the very tool objects the replay runs with (`tools`), and
`with_shown` adds what each call that runs would do beyond its input (RunCell: the cell's
source now), which the card shows and the replay holds it to; `check_runs` refuses a
replay whose session would run a call otherwise than its plan says.

This module imports nothing from IPython.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ....errors import ConfigurationError
from ...common.rule_lists import split_rules
from ...sessions.record import ApprovalRecord, SessionRecord
from ...tools.base import Declaration, ToolError, shown_of

__all__ = ["MCP_PREFIX", "PlannedCall", "ReplayPlan", "ReplayRefused", "check_runs",
           "replay_plan", "with_shown"]

#: Tools of MCP servers: a replay answers them from the record.
MCP_PREFIX = "mcp__"
#: The ids the Messages API gives tool calls (and accepts back in tool results).
_TOOL_USE_ID = re.compile(r"[A-Za-z0-9_-]{1,256}")
#: Blocks an assistant turn may hold; only `tool_use` runs anything.
_PLAYABLE = frozenset({"text", "thinking", "redacted_thinking", "tool_use"})
#: The text each playable block streams (a block without it cannot be played).
_TEXT_FIELD = {"text": "text", "thinking": "thinking", "redacted_thinking": "data"}

#: `(declaration, tool input) -> the rule "Always allow" adds` (None: no valid rule).
RuleOf = Callable[[Declaration, dict[str, Any]], str | None]


class ReplayRefused(ConfigurationError):
    """A record that cannot be replayed as it stands (one line: what and where)."""


@dataclass(frozen=True)
class PlannedCall:
    """One tool call a replay makes, as the consent card lists it."""

    cell_id: str
    tool_use_id: str
    name: str
    input: dict[str, Any]
    #: this kernel's declaration of the call's tool
    declared: Declaration
    #: the recorded decision for this call, if any
    approval: ApprovalRecord | None = None
    #: what it will do beyond its input, as its tool shows it now (`with_shown`)
    shown: dict[str, str] = field(default_factory=dict)

    @property
    def runs(self) -> bool:
        """Whether the replay runs it again (else it answers with the recorded result)."""
        return self.declared.on_replay == "run"

    @property
    def read_only(self) -> bool:
        return self.declared.kind == "read"


@dataclass(frozen=True)
class ReplayPlan:
    """What replaying one record does: the turns served and the calls made in them."""

    record: SessionRecord
    turns: list[list[dict[str, Any]]]
    calls: list[PlannedCall]
    #: the "Always allow" rules its recorded approvals grant, as the tools declare them
    rules: list[str] = field(default_factory=list)
    #: the tool objects the declarations were taken from: the replay runs with these
    tools: tuple[Any, ...] = ()

    @property
    def approvals(self) -> list[ApprovalRecord]:
        return [call.approval for call in self.calls if call.approval is not None]

    @property
    def digest(self) -> str:
        """The identity of what this plan runs (its calls, inputs and approvals): consent
        given for it covers exactly these."""
        shown = [[c.cell_id, c.tool_use_id, c.name, c.input, c.declared.kind, c.runs,
                  c.approval.model_dump() if c.approval else None, c.shown]
                 for c in self.calls]
        text = json.dumps([self.record.cell_id, shown, self.rules], sort_keys=True,
                          ensure_ascii=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()


def replay_plan(record: SessionRecord, declared: Mapping[str, Declaration], *,
                rule_of: RuleOf, tools: tuple[Any, ...] = ()) -> ReplayPlan:
    """The plan of `record` under this kernel's `declared` tools (by name, older names
    included; taken from `tools`, which the replay then runs with); raises ReplayRefused
    (see the module docstring)."""
    where = f"the record of cell {record.cell_id!r}"
    _check_claims(record, declared, where)
    turns: list[list[dict[str, Any]]] = []
    calls: list[PlannedCall] = []
    seen: set[str] = set()
    for number, message in enumerate(record.messages):
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if message["role"] == "user":
            _check_user_blocks(blocks, f"{where}, message {number}")
            continue
        turn = []
        for block in blocks:
            turn.append(_playable(block, f"{where}, message {number}"))
            if block["type"] == "tool_use":
                calls.append(_call(record, block, declared, seen, f"{where}, message {number}"))
        turns.append(turn)
    approved, rules = _approvals(record, calls, rule_of, where)
    return ReplayPlan(record, turns, approved, rules, tools)


#: The label `with_shown` gives a call that cannot run as it stands (a cell gone).
CANNOT_RUN = "cannot run"


async def with_shown(plan: ReplayPlan) -> ReplayPlan:
    """`plan` with what each call that runs again would do beyond its input, as its tool
    shows it now (`Declaration.shown`): the card shows it, the digest covers it, and the
    replay runs such a call only if it would still do exactly that."""
    calls = []
    for call in plan.calls:
        shown: dict[str, str] = {}
        if call.runs and call.declared.shown is not None:
            try:
                shown = await shown_of(call.declared, call.input)
            except ToolError as error:
                shown = {CANNOT_RUN: str(error)}
        calls.append(dataclasses.replace(call, shown=shown))
    return dataclasses.replace(plan, calls=calls)


def check_runs(plan: ReplayPlan, now: Mapping[str, Declaration]) -> None:
    """Refuses (ReplayRefused) a replay whose session would run one of the plan's calls
    otherwise than the plan says: a call the card answers from the record, or lists with
    another kind, that `now` (the declarations of the objects the session runs, by name,
    older names included) would run."""
    where = f"the record of cell {plan.record.cell_id!r}"
    for call in plan.calls:
        declared = now.get(call.name)
        if declared is None or declared.on_replay != "run":
            continue  # not run again: answered from the record, or no such tool here
        if not call.runs or declared.kind != call.declared.kind:
            raise ReplayRefused(f"{where}: its {call.name} call {call.tool_use_id} would run "
                                f"as {declared.kind!r}, but the card was drawn for "
                                f"{'a recorded answer' if not call.runs else call.declared.kind}")


def _check_claims(record: SessionRecord, declared: Mapping[str, Declaration],
                  where: str) -> None:
    for name, claimed in record.kinds.items():
        mine = declared.get(name)
        if mine is not None and not name.startswith(MCP_PREFIX) and claimed != mine.kind:
            raise ReplayRefused(f"{where} says the tool {name!r} is {claimed!r}, but this "
                                f"kernel declares it {mine.kind!r}: a record cannot say "
                                "what is read-only")


def _check_user_blocks(blocks: list[Any], where: str) -> None:
    for block in blocks:
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise ReplayRefused(f"{where} holds a block that is not an object with a type")
        if block["type"] in ("tool_use", "server_tool_use"):
            raise ReplayRefused(f"{where} is a user message holding a tool call")


def _playable(block: Any, where: str) -> dict[str, Any]:
    if not isinstance(block, dict) or block.get("type") not in _PLAYABLE:
        kind = block.get("type") if isinstance(block, dict) else type(block).__name__
        raise ReplayRefused(f"{where} holds a block of type {kind!r}, which a replay "
                            "cannot play")
    text_field = _TEXT_FIELD.get(block["type"])
    if text_field is not None and not isinstance(block.get(text_field), str):
        raise ReplayRefused(f"{where} holds a {block['type']} block without its "
                            f"{text_field!r} text")
    return block


def _call(record: SessionRecord, block: dict[str, Any], declared: Mapping[str, Declaration],
          seen: set[str], where: str) -> PlannedCall:
    tool_id, name, tool_input = block.get("id"), block.get("name"), block.get("input")
    if not isinstance(tool_id, str) or not _TOOL_USE_ID.fullmatch(tool_id):
        raise ReplayRefused(f"{where} holds a tool call without a usable id ({tool_id!r})")
    if tool_id in seen:
        raise ReplayRefused(f"{where} holds two tool calls with the id {tool_id!r}")
    seen.add(tool_id)
    if not isinstance(name, str) or not name:
        raise ReplayRefused(f"{where}: the call {tool_id} names no tool")
    if not isinstance(tool_input, dict):
        raise ReplayRefused(f"{where}: the input of the {name} call {tool_id} is a "
                            f"{type(tool_input).__name__}, not a JSON object")
    declaration = declared.get(name)
    if name.startswith(MCP_PREFIX):  # answered from the record whatever runs here
        declaration = Declaration(name, "execute", None, None, "recorded")
    if declaration is None:
        raise ReplayRefused(f"{where} calls {name!r}, a tool this kernel does not have")
    return PlannedCall(record.cell_id, tool_id, name, tool_input, declaration)


def _approvals(record: SessionRecord, calls: list[PlannedCall], rule_of: RuleOf,
               where: str) -> tuple[list[PlannedCall], list[str]]:
    """The calls with their recorded decisions, and the rules those grant."""
    by_id = {call.tool_use_id: call for call in calls}
    decided: dict[str, ApprovalRecord] = {}
    for approval in record.approvals:
        call = by_id.get(approval.tool_use_id)
        if call is None:
            continue  # a decision for no call of this record decides nothing
        if approval.tool_use_id in decided:
            raise ReplayRefused(f"{where} holds two decisions for the call "
                                f"{approval.tool_use_id}")
        if approval.tool_name != call.name:
            raise ReplayRefused(f"{where}: the decision for the call {call.tool_use_id} "
                                f"names {approval.tool_name!r}, but the call is {call.name!r}")
        if approval.decision == "always_allow":
            expected = rule_of(call.declared, call.input)
            if approval.rule != expected:
                raise ReplayRefused(f"{where}: the 'Always allow' of the call "
                                    f"{call.tool_use_id} grants {approval.rule!r}, but "
                                    f"{call.name} offers {expected!r} for it")
        decided[approval.tool_use_id] = approval
    planned = [dataclasses.replace(c, approval=decided.get(c.tool_use_id)) for c in calls]
    rules = [rule for a in decided.values() if a.decision == "always_allow"
             for rule in split_rules(a.rule)]
    return planned, rules
