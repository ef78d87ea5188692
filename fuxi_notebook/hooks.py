"""Hook registration and dispatch (the `hooks=` option of FuxiAgentOptions).

`HookRunner` validates `{event: [HookMatcher, ...]}` up front, so a typo fails at configuration
time instead of silently never firing; `run()` calls the matching callbacks concurrently and
merges their outputs into one `HookOutcome` for the loop and the permission engine. Hooks are
often security policy, so a callback that raises, times out or answers with something we cannot
read FAILS CLOSED where the event can be refused (security.md §1.7, row 37). Imports only `errors`.
"""

from __future__ import annotations

import asyncio
import copy
import difflib
import inspect
import math
import re
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from ._internal.common.foreign_loop import on_callers_loop
from .errors import ConfigurationError

__all__ = ["DEFAULT_HOOK_TIMEOUT", "HOOK_EVENTS", "HookCallback", "HookEvent", "HookMatcher",
           "HookOutcome", "HookRunner"]

_Decision = Literal["allow", "deny", "ask"]
HookEvent = Literal["PreToolUse", "PostToolUse", "PostToolUseFailure", "UserPromptSubmit", "Stop",
                    "SubagentStart", "SubagentStop", "PreCompact", "Notification",
                    "PermissionRequest"]
HOOK_EVENTS: tuple[str, ...] = get_args(HookEvent)
HookCallback = Callable[[dict[str, Any], str | None, dict[str, Any]], Awaitable[dict[str, Any]]]
DEFAULT_HOOK_TIMEOUT = 60.0
MAX_HOOK_STRING = 10_000

_MATCHERLESS = frozenset({"UserPromptSubmit", "Stop"})
_EXACT_MATCHER = re.compile(r"[A-Za-z0-9_\- ,|]*")
_RANK = {"allow": 1, "ask": 2, "deny": 3}
_TOP_KEYS = frozenset({"continue", "continue_", "async", "async_", "asyncTimeout", "suppressOutput",
                       "stopReason", "decision", "reason", "systemMessage", "hookSpecificOutput"})
_CONTEXT_ONLY = frozenset({"hookEventName", "additionalContext"})
_SPECIFIC_KEYS: dict[str, frozenset[str]] = {
    "PreToolUse": _CONTEXT_ONLY | {"permissionDecision", "permissionDecisionReason",
                                   "updatedInput"},
    "PostToolUse": _CONTEXT_ONLY | {"updatedToolOutput", "updatedMCPToolOutput"},
    "UserPromptSubmit": _CONTEXT_ONLY | {"sessionTitle", "suppressOriginalPrompt"},
    "PostToolUseFailure": _CONTEXT_ONLY, "Notification": _CONTEXT_ONLY,
    "SubagentStart": _CONTEXT_ONLY, "SubagentStop": _CONTEXT_ONLY, "Stop": _CONTEXT_ONLY,
    "PreCompact": frozenset({"hookEventName"}),
    "PermissionRequest": frozenset({"hookEventName", "decision"}),
}
_PERMISSION_KEYS = frozenset({"behavior", "updatedInput", "updatedPermissions", "message",
                              "interrupt"})


@dataclass
class HookMatcher:
    """Callbacks for one event, optionally limited to matching names (tool, agent type, ...)."""

    matcher: str | None = None
    hooks: list[HookCallback] = field(default_factory=list)
    timeout: float | None = None  # seconds per callback; None = DEFAULT_HOOK_TIMEOUT


@dataclass
class HookOutcome:
    """The merged result of all callbacks that ran for one event."""

    ran: int = 0  # callbacks that ran (failed ones included)
    decision: _Decision | None = None  # PreToolUse: deny > (defer) > ask > allow
    defer: bool = False  # PreToolUse: a callback deferred the call (and none denied it)
    block: bool = False  # some callback returned decision "block"
    reason: str | None = None  # reasons of the winning decision (or of the blocks), "; "-joined
    updated_input: dict[str, Any] | None = None  # from the winning allow/ask, last registered
    updated_output: Any = None  # PostToolUse updatedToolOutput
    additional_context: list[str] = field(default_factory=list)
    system_messages: list[str] = field(default_factory=list)
    stop: bool = False  # some callback returned continue=False
    stop_reason: str | None = None
    permission_request: dict[str, Any] | None = None  # PermissionRequest {behavior, ...}
    session_title: str | None = None  # UserPromptSubmit sessionTitle (the last one given)
    failures: list[str] = field(default_factory=list)  # one line per failed callback


@dataclass
class _Entry:
    """One registered callback with its compiled matcher and timeout."""

    event: str
    matches: Callable[[str | None], bool]
    callback: HookCallback
    timeout: float


class _InvalidOutput(Exception):
    """A callback returned something that is not a valid hook output."""


def _check_event(event: object) -> None:
    """Reject unknown event names with the valid list and the closest spelling."""
    if event in HOOK_EVENTS:
        return
    message = f"unknown hook event {event!r}; valid events: {', '.join(HOOK_EVENTS)}"
    if isinstance(event, str):
        lowered = {name.lower(): name for name in HOOK_EVENTS}
        close = difflib.get_close_matches(event.lower(), list(lowered), n=1, cutoff=0.6)
        if close:
            message += f" (did you mean {lowered[close[0]]!r}?)"
    raise ConfigurationError(message)


def _compile_matcher(event: str, matcher: object) -> Callable[[str | None], bool]:
    """Turn a matcher string into a predicate, with the comparable SDK's semantics."""
    if matcher is not None and not isinstance(matcher, str):
        raise ConfigurationError(f"{event} matcher must be a string or None, got {matcher!r}")
    if matcher is None or matcher.strip() in ("", "*"):
        return lambda _name: True
    pattern = None
    if not _EXACT_MATCHER.fullmatch(matcher):  # reject a broken regex even where it is ignored
        try:
            pattern = re.compile(matcher)
        except re.error as exc:
            raise ConfigurationError(
                f"{event} matcher {matcher!r} is not a valid regex: {exc}") from exc
    if event in _MATCHERLESS:
        return lambda _name: True
    if pattern is None:  # exact name or list
        names = frozenset(p.strip() for p in re.split(r"[|,]", matcher) if p.strip())
        return lambda name: name in names
    return lambda name: name is not None and pattern.search(name) is not None


def _check_timeout(event: str, timeout: object) -> float:
    """A timeout must be a positive finite number of seconds (None = the default)."""
    if timeout is None:
        return DEFAULT_HOOK_TIMEOUT
    if (isinstance(timeout, bool) or not isinstance(timeout, int | float)
            or not math.isfinite(timeout) or timeout <= 0):
        raise ConfigurationError(
            f"{event} hook timeout must be a positive number of seconds, got {timeout!r}")
    return float(timeout)


def _entries_for(event: str, matchers: object) -> list[_Entry]:
    """Validate one event's matchers and flatten them into entries in registration order."""
    if not isinstance(matchers, list | tuple):
        raise ConfigurationError(f"hooks[{event!r}] must be a list of HookMatcher")
    entries: list[_Entry] = []
    for item in matchers:
        if not isinstance(item, HookMatcher):
            raise ConfigurationError(
                f"hooks[{event!r}] must contain HookMatcher objects, got {type(item).__name__}")
        predicate = _compile_matcher(event, item.matcher)
        timeout = _check_timeout(event, item.timeout)
        if not isinstance(item.hooks, list | tuple):
            raise ConfigurationError(f"{event} HookMatcher.hooks must be a list of callbacks")
        for callback in item.hooks:
            async_call = callable(callback) and inspect.iscoroutinefunction(type(callback).__call__)
            if not (inspect.iscoroutinefunction(callback) or async_call):
                raise ConfigurationError(
                    f"{event} hook {callback!r} must be an async function "
                    "(async def cb(input_data, tool_use_id, context) -> dict)")
            entries.append(_Entry(event, predicate, callback, timeout))
    return entries


def _cap(text: str) -> str:
    """Hook strings are capped so one callback cannot flood the context."""
    return text[:MAX_HOOK_STRING]


def _field(data: dict[str, Any], key: str, kind: type | tuple[type, ...]) -> Any:
    """Return `data[key]` (None if absent or null) after checking its type."""
    value = data.get(key)
    if value is not None and not isinstance(value, kind):
        names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
        raise _InvalidOutput(f"{key} must be {names}, got {value!r:.80}")
    return _cap(value) if isinstance(value, str) else value


def _reject_unknown(data: dict[str, Any], allowed: frozenset[str], where: str) -> None:
    """Unknown keys are errors: a misplaced `permissionDecision` must not be silently ignored."""
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise _InvalidOutput(f"unknown key(s) in {where}: {', '.join(map(str, unknown))}")


def _parse(event: str, raw: object) -> HookOutcome:
    """Read one callback's output; raise _InvalidOutput when it is not a valid hook output."""
    if not isinstance(raw, dict):
        raise _InvalidOutput(f"expected a dict, got {type(raw).__name__}")
    _reject_unknown(raw, _TOP_KEYS, "the output")
    if _field(raw, "async_", bool) or _field(raw, "async", bool):
        return HookOutcome(ran=1)  # "proceed without waiting": no opinion
    _field(raw, "suppressOutput", bool)
    _field(raw, "asyncTimeout", (int, float))
    op = HookOutcome(ran=1)
    message = _field(raw, "systemMessage", str)
    op.system_messages += [message] if message else []
    op.stop = _field(raw, "continue_", bool) is False or _field(raw, "continue", bool) is False
    stop_reason = _field(raw, "stopReason", str)
    op.stop_reason = stop_reason if op.stop else None
    reason = _field(raw, "reason", str)
    decision = raw.get("decision")
    if decision not in (None, "block", "approve"):
        raise _InvalidOutput(f"decision must be 'block', got {decision!r:.80}")
    specific = raw.get("hookSpecificOutput")
    if specific is not None and _parse_specific(event, specific, op) == "defer":
        op.defer, op.updated_input = True, None  # updatedInput is ignored with defer
        return op
    if event == "PreToolUse" and decision is not None:  # legacy approve/block spelling
        legacy: _Decision = "deny" if decision == "block" else "allow"
        if op.decision is None or _RANK[legacy] > _RANK[op.decision]:
            op.decision, op.reason = legacy, reason
    elif decision == "block":
        op.block, op.reason = True, reason
    return op


def _parse_specific(event: str, spec: object, op: HookOutcome) -> str | None:
    """Read `hookSpecificOutput` into `op`; return "defer" for a deferred PreToolUse."""
    if not isinstance(spec, dict):
        raise _InvalidOutput(f"hookSpecificOutput must be a dict, got {type(spec).__name__}")
    if spec.get("hookEventName") != event:
        raise _InvalidOutput(
            f"hookSpecificOutput.hookEventName is {spec.get('hookEventName')!r:.80}, "
            f"expected {event!r}")
    _reject_unknown(spec, _SPECIFIC_KEYS[event], "hookSpecificOutput")
    context = _field(spec, "additionalContext", str)
    op.additional_context += [context] if context else []
    if event == "PreToolUse":
        decision = spec.get("permissionDecision")
        if decision not in (None, "allow", "deny", "ask", "defer"):
            raise _InvalidOutput(f"permissionDecision must be allow, deny, ask or defer, "
                                 f"got {decision!r:.80}")
        op.reason = _field(spec, "permissionDecisionReason", str)
        op.updated_input = _field(spec, "updatedInput", dict)
        op.decision = None if decision == "defer" else decision
        return decision
    if event == "PostToolUse":
        op.updated_output = spec.get("updatedToolOutput", spec.get("updatedMCPToolOutput"))
    elif event == "UserPromptSubmit":
        op.session_title = (_field(spec, "sessionTitle", str) or "").strip()[:200] or None
        _field(spec, "suppressOriginalPrompt", bool)  # no block message quotes the prompt
    elif event == "PermissionRequest" and spec.get("decision") is not None:
        op.permission_request = _parse_permission(spec["decision"])
    return None


def _parse_permission(decision: object) -> dict[str, Any]:
    """Validate a PermissionRequest `decision` and keep only the documented keys."""
    if not isinstance(decision, dict):
        raise _InvalidOutput(f"decision must be a dict, got {type(decision).__name__}")
    _reject_unknown(decision, _PERMISSION_KEYS, "hookSpecificOutput.decision")
    if decision.get("behavior") not in ("allow", "deny"):
        raise _InvalidOutput(f"decision.behavior must be allow or deny, "
                             f"got {decision.get('behavior')!r:.80}")
    result: dict[str, Any] = {"behavior": decision["behavior"]}
    for key, kind in (("updatedInput", dict), ("updatedPermissions", list), ("message", str),
                      ("interrupt", bool)):
        value = _field(decision, key, kind)
        if value is not None:
            result[key] = value
    return result


def _failed(event: str, line: str) -> HookOutcome:
    """The outcome of a failed callback: fail closed where the event can be refused."""
    line = _cap(line)
    op = HookOutcome(ran=1, failures=[line])
    if event == "PreToolUse":
        op.decision, op.reason = "deny", line
    elif event == "PermissionRequest":
        op.permission_request = {"behavior": "deny", "message": line}
    elif event == "UserPromptSubmit":
        op.block, op.reason = True, line
    return op


def _join(parts: Iterable[str | None]) -> str | None:
    """Join the non-empty reasons with "; " (None when there are none)."""
    return "; ".join(p for p in parts if p) or None


def _merge(opinions: list[HookOutcome]) -> HookOutcome:
    """Merge per-callback outcomes in registration order: deny > ask > allow, any block wins."""
    out = HookOutcome(ran=len(opinions))
    for op in opinions:
        out.failures += op.failures
        out.additional_context += op.additional_context
        out.system_messages += op.system_messages
        out.block = out.block or op.block
        out.stop = out.stop or op.stop
        if op.updated_output is not None:
            out.updated_output = op.updated_output
        out.session_title = op.session_title or out.session_title
    out.stop_reason = _join(op.stop_reason for op in opinions)
    _merge_decision(out, opinions)
    if out.decision is None and out.block:
        out.reason = _join(op.reason for op in opinions if op.block)
    out.permission_request = _merge_permission(opinions)
    return out


def _merge_decision(out: HookOutcome, opinions: list[HookOutcome]) -> None:
    """Pick the strictest PreToolUse decision and the updatedInput that goes with it."""
    ranked = [op for op in opinions if op.decision]
    if not ranked and any(op.defer for op in opinions):
        out.defer, out.reason = True, _join(op.reason for op in opinions if op.defer)
        return
    if not ranked:  # updatedInput without a decision: normal evaluation of the new input
        inputs = [op.updated_input for op in opinions if op.updated_input is not None]
        out.updated_input = inputs[-1] if inputs else None
        return
    top = max(_RANK[op.decision] for op in ranked if op.decision)
    if top < _RANK["deny"] and any(op.defer for op in opinions):  # deny > defer > ask > allow
        out.defer, out.reason = True, _join(op.reason for op in opinions if op.defer)
        return
    winners = [op for op in ranked if op.decision and _RANK[op.decision] == top]
    out.decision = winners[0].decision
    out.reason = _join(op.reason for op in winners)
    if out.decision != "deny":
        inputs = [op.updated_input for op in winners if op.updated_input is not None]
        out.updated_input = inputs[-1] if inputs else None


def _merge_permission(opinions: list[HookOutcome]) -> dict[str, Any] | None:
    """Any deny wins (messages joined); otherwise the last registered allow."""
    decisions = [op.permission_request for op in opinions if op.permission_request]
    denies = [d for d in decisions if d["behavior"] == "deny"]
    if not denies:
        return decisions[-1] if decisions else None
    merged: dict[str, Any] = {"behavior": "deny"}
    message = _join(d.get("message") for d in denies)
    if message:
        merged["message"] = message
    if any(d.get("interrupt") for d in denies):
        merged["interrupt"] = True
    return merged


class HookRunner:
    """Validated hook registrations plus the concurrent, fail-closed dispatcher."""

    def __init__(self, hooks: dict[str, list[HookMatcher]] | None) -> None:
        if hooks is not None and not isinstance(hooks, dict):
            raise ConfigurationError(f"hooks must be a dict of event -> [HookMatcher], "
                                     f"got {type(hooks).__name__}")
        self._entries: dict[str, list[_Entry]] = {event: [] for event in HOOK_EVENTS}
        for event, matchers in (hooks or {}).items():
            _check_event(event)
            self._entries[event] += _entries_for(event, matchers)

    def has(self, event: str) -> bool:
        """Whether any callback is registered for `event` (lets the loop skip building input)."""
        _check_event(event)
        return bool(self._entries[event])

    async def run(self, event: str, input_data: dict[str, Any], *, tool_use_id: str | None = None,
                  match: str | None = None) -> HookOutcome:
        """Run every callback whose matcher accepts `match`, concurrently, and merge the results."""
        _check_event(event)
        entries = [e for e in self._entries[event] if e.matches(match)]
        if not entries:
            return HookOutcome()
        opinions = await asyncio.gather(*(_invoke(e, input_data, tool_use_id) for e in entries))
        return _merge(list(opinions))


#: the events whose input always carries `session_crons` (the comparable SDK 0.2.189's
#: stop events): the session's scheduled prompts, always none here (nothing schedules one)
_STOP_EVENTS = frozenset({"Stop", "SubagentStop"})


def _fresh_input(event: str, input_data: dict[str, Any]) -> dict[str, Any]:
    """A private deep copy per callback, so no callback can mutate another's (or our) input."""
    try:
        data = copy.deepcopy(input_data)
    except Exception:  # uncopyable payload (e.g. a live object in tool_response)
        data = dict(input_data)
    data["hook_event_name"] = event
    if event in _STOP_EVENTS:
        data.setdefault("session_crons", [])
    return data


async def _invoke(entry: _Entry, input_data: dict[str, Any],
                  tool_use_id: str | None) -> HookOutcome:
    """Call one callback under its timeout; any failure becomes a fail-closed outcome."""
    prefix = f"{entry.event} hook {getattr(entry.callback, '__qualname__', repr(entry.callback))}"
    scope, raw = asyncio.timeout(entry.timeout), None
    try:
        async with scope:
            raw = await on_callers_loop(entry.callback, _fresh_input(entry.event, input_data),
                                        tool_use_id, {"signal": None})
    except TimeoutError as exc:
        if not scope.expired():
            return _failed(entry.event, f"{prefix} raised TimeoutError: {exc}")
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if task is None or task.cancelling():
            raise  # run() itself was cancelled: never swallow that
        return _failed(entry.event, f"{prefix} raised CancelledError")
    except Exception as exc:
        return _failed(entry.event, f"{prefix} raised {type(exc).__name__}: {exc}")
    if scope.expired():  # also when the callback swallowed the cancellation and returned
        return _failed(entry.event, f"{prefix} timed out after {entry.timeout:g} s")
    try:
        return _parse(entry.event, raw)
    except _InvalidOutput as exc:
        return _failed(entry.event, f"{prefix} returned invalid output: {exc}")
