"""Tests for fuxi_notebook.hooks: registration, matching, merging and fail-closed dispatch."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest

from fuxi_notebook.errors import ConfigurationError
from fuxi_notebook.hooks import (
    DEFAULT_HOOK_TIMEOUT,
    HOOK_EVENTS,
    HookMatcher,
    HookOutcome,
    HookRunner,
)


def returning(output: Any, name: str = "cb"):
    """An async callback that always returns `output`."""

    async def cb(input_data, tool_use_id, context):
        return output

    cb.__qualname__ = name
    return cb


def pre(decision: str | None = None, reason: str | None = None, **extra: Any) -> dict:
    """A PreToolUse output."""
    specific: dict[str, Any] = {"hookEventName": "PreToolUse", **extra}
    if decision is not None:
        specific["permissionDecision"] = decision
    if reason is not None:
        specific["permissionDecisionReason"] = reason
    return {"hookSpecificOutput": specific}


async def run(event: str, *callbacks, match: str | None = "Bash", timeout: float | None = None,
              input_data: dict | None = None) -> HookOutcome:
    runner = HookRunner({event: [HookMatcher(hooks=list(callbacks), timeout=timeout)]})
    return await runner.run(event, input_data or {}, tool_use_id="tu_1", match=match)


# ---------------------------------------------------------------- validation


def test_hook_events_and_default() -> None:
    assert len(HOOK_EVENTS) == 10 and "PermissionRequest" in HOOK_EVENTS
    assert DEFAULT_HOOK_TIMEOUT == 60.0


def test_unknown_event_lists_valid_names_and_hints_closest() -> None:
    with pytest.raises(ConfigurationError) as info:
        HookRunner({"pretooluse": [HookMatcher(hooks=[returning({})])]})
    message = str(info.value)
    assert "'pretooluse'" in message and "PostToolUseFailure" in message
    assert "did you mean 'PreToolUse'" in message


def test_unknown_event_without_close_name() -> None:
    with pytest.raises(ConfigurationError, match="unknown hook event 'Zzz'") as info:
        HookRunner({"Zzz": []})
    assert "did you mean" not in str(info.value)


@pytest.mark.parametrize("matchers", [[{"matcher": "Bash"}], ["Bash"], HookMatcher()])
def test_matchers_must_be_a_list_of_hook_matcher(matchers: Any) -> None:
    with pytest.raises(ConfigurationError, match="HookMatcher"):
        HookRunner({"PreToolUse": matchers})


def test_hooks_must_be_a_dict() -> None:
    with pytest.raises(ConfigurationError, match="dict"):
        HookRunner([HookMatcher()])  # type: ignore[arg-type]


def sync_cb(input_data, tool_use_id, context):
    return {}


@pytest.mark.parametrize("callback", [sync_cb, lambda i, t, c: {}, "not callable", None])
def test_callback_must_be_async(callback: Any) -> None:
    with pytest.raises(ConfigurationError, match="must be an async function"):
        HookRunner({"PreToolUse": [HookMatcher(hooks=[callback])]})


async def test_async_callable_object_and_method_are_accepted() -> None:
    class Policy:
        async def __call__(self, input_data, tool_use_id, context):
            return pre("deny", "object")

        async def method(self, input_data, tool_use_id, context):
            return pre("allow")

    policy = Policy()
    runner = HookRunner({"PreToolUse": [HookMatcher(hooks=[policy, policy.method])]})
    outcome = await runner.run("PreToolUse", {}, match="Bash")
    assert (outcome.ran, outcome.decision, outcome.reason) == (2, "deny", "object")


@pytest.mark.parametrize("event", ["PreToolUse", "UserPromptSubmit"])
def test_invalid_regex_matcher(event: str) -> None:
    with pytest.raises(ConfigurationError, match=r"'Edit\(' is not a valid regex"):
        HookRunner({event: [HookMatcher(matcher="Edit(", hooks=[returning({})])]})


def test_matcher_must_be_a_string() -> None:
    with pytest.raises(ConfigurationError, match="matcher must be a string"):
        HookRunner({"PreToolUse": [HookMatcher(matcher=3, hooks=[returning({})])]})  # type: ignore[arg-type]


@pytest.mark.parametrize("timeout", [0, -1, 0.0, float("nan"), float("inf"), True, "5"])
def test_timeout_must_be_positive(timeout: Any) -> None:
    with pytest.raises(ConfigurationError, match="timeout must be a positive number"):
        HookRunner({"Stop": [HookMatcher(hooks=[returning({})], timeout=timeout)]})


async def test_none_registers_nothing_and_has_checks_event() -> None:
    runner = HookRunner(None)
    assert not runner.has("PreToolUse")
    assert await runner.run("PreToolUse", {}, match="Bash") == HookOutcome()
    assert HookRunner({"Stop": [HookMatcher(hooks=[returning({})])]}).has("Stop")
    with pytest.raises(ConfigurationError, match="did you mean 'Stop'"):
        runner.has("stop")
    with pytest.raises(ConfigurationError):
        await runner.run("Nope", {})


# ---------------------------------------------------------------- matching


@pytest.mark.parametrize(("matcher", "name", "expected"), [
    (None, "Bash", True),
    ("", "Bash", True),
    ("*", "mcp__x__y", True),
    ("Bash", "Bash", True),
    ("Bash", "BashOutput", False),
    ("Edit|Write", "Write", True),
    ("Edit|Write", "Read", False),
    ("Edit, Write", "Write", True),
    ("Edit, Write", "Edit", True),
    ("Edit, Write", "Read", False),
    ("Edit", "NotebookEdit", False),
    ("^Notebook", "NotebookEdit", True),
    ("^Notebook", "MyNotebook", False),
    ("Edit.*", "NotebookEdit", True),
    ("mcp__memory__.*", "mcp__memory__save", True),
    ("mcp__memory__.*", "mcp__files__read", False),
    ("Bash", None, False),
])
async def test_matcher_kinds(matcher: str | None, name: str | None, expected: bool) -> None:
    runner = HookRunner({"PreToolUse": [HookMatcher(matcher=matcher, hooks=[returning({})])]})
    outcome = await runner.run("PreToolUse", {}, match=name)
    assert outcome.ran == (1 if expected else 0)


@pytest.mark.parametrize("event", ["UserPromptSubmit", "Stop"])
async def test_prompt_and_stop_ignore_matchers(event: str) -> None:
    runner = HookRunner({event: [HookMatcher(matcher="Bash", hooks=[returning({})])]})
    assert (await runner.run(event, {})).ran == 1
    assert (await runner.run(event, {}, match="Other")).ran == 1


@pytest.mark.parametrize(("event", "name"), [
    ("Notification", "permission_prompt"), ("SubagentStart", "reviewer"),
    ("SubagentStop", "reviewer"), ("PreCompact", "manual"),
])
async def test_event_specific_match_values(event: str, name: str) -> None:
    runner = HookRunner({event: [HookMatcher(matcher=name, hooks=[returning({})]),
                                 HookMatcher(matcher="auto|other", hooks=[returning({})])]})
    assert (await runner.run(event, {}, match=name)).ran == 1


# ---------------------------------------------------------------- calling convention


async def test_callbacks_run_concurrently() -> None:
    barrier = asyncio.Barrier(2)

    async def waiter(input_data, tool_use_id, context):
        await barrier.wait()  # only returns once both callbacks are waiting at the same time
        return pre("allow")

    outcome = await run("PreToolUse", waiter, waiter, timeout=2)
    assert outcome.failures == []
    assert (outcome.ran, outcome.decision) == (2, "allow")


async def test_each_callback_gets_a_private_copy_with_event_name() -> None:
    seen: list[tuple[dict, str | None, dict]] = []

    async def mutating(input_data, tool_use_id, context):
        seen.append((input_data, tool_use_id, context))
        input_data["tool_input"]["command"] = "rm -rf /"
        input_data["extra"] = True
        return {}

    given = {"tool_name": "Bash", "tool_input": {"command": "ls"}}
    outcome = await run("PreToolUse", mutating, mutating, input_data=given)
    assert outcome.ran == 2
    assert given == {"tool_name": "Bash", "tool_input": {"command": "ls"}}
    assert seen[0][0] is not seen[1][0]
    for input_data, tool_use_id, context in seen:
        assert input_data["hook_event_name"] == "PreToolUse"
        assert input_data["tool_name"] == "Bash"
        assert tool_use_id == "tu_1"
        assert context == {"signal": None}


async def test_uncopyable_input_falls_back_to_a_shallow_copy() -> None:
    class NoCopy:
        def __deepcopy__(self, memo):
            raise TypeError("no")

    seen: list[dict] = []

    async def cb(input_data, tool_use_id, context):
        seen.append(input_data)
        return {}

    payload = NoCopy()
    await run("PostToolUse", cb, input_data={"tool_response": payload})
    assert seen[0]["tool_response"] is payload
    assert seen[0]["hook_event_name"] == "PostToolUse"


# ---------------------------------------------------------------- merging


async def test_deny_beats_ask_beats_allow_with_winning_reasons() -> None:
    outcome = await run("PreToolUse", returning(pre("allow", "fine")),
                        returning(pre("deny", "no secrets")), returning(pre("ask", "check")),
                        returning(pre("deny", "not today")))
    assert outcome.decision == "deny"
    assert outcome.reason == "no secrets; not today"
    assert outcome.updated_input is None

    outcome = await run("PreToolUse", returning(pre("allow", "fine")),
                        returning(pre("ask", "check")), returning({}))
    assert (outcome.decision, outcome.reason, outcome.ran) == ("ask", "check", 3)

    outcome = await run("PreToolUse", returning(pre("allow")), returning({}))
    assert (outcome.decision, outcome.reason) == ("allow", None)


async def test_updated_input_comes_from_the_winning_level_last_registered() -> None:
    outcome = await run("PreToolUse", returning(pre("allow", updatedInput={"n": 1})),
                        returning(pre("allow", updatedInput={"n": 2})), returning(pre("allow")))
    assert (outcome.decision, outcome.updated_input) == ("allow", {"n": 2})

    outcome = await run("PreToolUse", returning(pre("ask", updatedInput={"n": 1})),
                        returning(pre("allow", updatedInput={"n": 2})))
    assert (outcome.decision, outcome.updated_input) == ("ask", {"n": 1})

    outcome = await run("PreToolUse", returning(pre(updatedInput={"n": 3})))
    assert (outcome.decision, outcome.updated_input) == (None, {"n": 3})


async def test_context_and_system_messages_keep_registration_order() -> None:
    second_done = asyncio.Event()

    async def first(input_data, tool_use_id, context):
        await second_done.wait()  # finishes last, but was registered first
        return {"systemMessage": "warn 1", "hookSpecificOutput": {
            "hookEventName": "PostToolUse", "additionalContext": "ctx 1"}}

    async def second(input_data, tool_use_id, context):
        second_done.set()
        return {"systemMessage": "warn 2", "hookSpecificOutput": {
            "hookEventName": "PostToolUse", "additionalContext": "ctx 2"}}

    outcome = await run("PostToolUse", first, second, timeout=2)
    assert outcome.additional_context == ["ctx 1", "ctx 2"]
    assert outcome.system_messages == ["warn 1", "warn 2"]


@pytest.mark.parametrize("event", ["UserPromptSubmit", "PostToolUseFailure", "Notification",
                                   "SubagentStart", "SubagentStop", "Stop"])
async def test_additional_context_events(event: str) -> None:
    output = {"hookSpecificOutput": {"hookEventName": event, "additionalContext": "note"}}
    outcome = await run(event, returning(output), match=None)
    assert (outcome.additional_context, outcome.failures) == (["note"], [])


async def test_post_tool_use_updated_output_and_block() -> None:
    outcome = await run("PostToolUse", returning({"decision": "block", "reason": "leaked key"}),
                        returning({"hookSpecificOutput": {"hookEventName": "PostToolUse",
                                                          "updatedToolOutput": "[redacted]"}}))
    assert (outcome.block, outcome.reason) == (True, "leaked key")
    assert outcome.updated_output == "[redacted]"
    assert outcome.decision is None


@pytest.mark.parametrize("event", ["UserPromptSubmit", "Stop", "SubagentStop", "PreCompact"])
async def test_block_is_merged_with_reasons(event: str) -> None:
    outcome = await run(event, returning({"decision": "block", "reason": "a"}), returning({}),
                        returning({"decision": "block", "reason": "b"}), match="manual")
    assert (outcome.block, outcome.reason, outcome.ran) == (True, "a; b", 3)


async def test_legacy_pre_tool_use_block_means_deny() -> None:
    outcome = await run("PreToolUse", returning({"decision": "block", "reason": "legacy"}),
                        returning(pre("allow")))
    assert (outcome.decision, outcome.reason, outcome.block) == ("deny", "legacy", False)


@pytest.mark.parametrize("key", ["continue_", "continue"])
async def test_continue_false_stops(key: str) -> None:
    outcome = await run("PostToolUse", returning({key: False, "stopReason": "enough"}),
                        returning({"continue": True, "stopReason": "ignored"}))
    assert (outcome.stop, outcome.stop_reason) == (True, "enough")


@pytest.mark.parametrize("key", ["async_", "async"])
async def test_async_output_is_no_opinion(key: str) -> None:
    output = {key: True, "asyncTimeout": 1000, **pre("deny", "ignored")}
    outcome = await run("PreToolUse", returning(output))
    assert (outcome.ran, outcome.decision, outcome.failures) == (1, None, [])


async def test_defer_defers_and_ignores_updated_input() -> None:
    outcome = await run("PreToolUse", returning(pre("defer", "later", updatedInput={"a": 1})))
    assert (outcome.defer, outcome.decision, outcome.reason, outcome.updated_input) == (
        True, None, "later", None)
    assert outcome.failures == []


@pytest.mark.parametrize(("others", "defer", "decision"), [
    (["deny"], False, "deny"),  # deny > defer
    (["ask"], True, None),  # defer > ask
    (["allow"], True, None),  # defer > allow
    ([None], True, None),
])
async def test_defer_ranks_below_deny_only(others: list, defer: bool, decision: str | None
                                           ) -> None:
    callbacks = [returning(pre(d, "other"), name=f"cb{i}") for i, d in enumerate(others)]
    outcome = await run("PreToolUse", returning(pre("defer", "later"), name="d"), *callbacks)
    assert (outcome.defer, outcome.decision) == (defer, decision)


async def test_suppress_output_and_empty_output_are_accepted() -> None:
    outcome = await run("Notification", returning({"suppressOutput": True}), returning({}),
                        match=None)
    assert outcome == HookOutcome(ran=2)


async def test_permission_request_decisions() -> None:
    def decide(**decision: Any):
        return returning({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                                                 "decision": decision}})

    outcome = await run("PermissionRequest", decide(behavior="allow"), decide(behavior="maybe"))
    assert "decision.behavior must be allow or deny, got 'maybe'" in outcome.failures[0]
    assert outcome.permission_request == {"behavior": "deny", "message": outcome.failures[0]}

    outcome = await run("PermissionRequest", decide(behavior="allow", unknown=1))
    assert "unknown key(s) in hookSpecificOutput.decision: unknown" in outcome.failures[0]

    outcome = await run("PermissionRequest", decide(behavior="allow", updatedInput={"x": 1}))
    assert outcome.permission_request == {"behavior": "allow", "updatedInput": {"x": 1}}

    outcome = await run("PermissionRequest", decide(behavior="deny", message="a"),
                        decide(behavior="allow"),
                        decide(behavior="deny", message="b", interrupt=True))
    assert outcome.permission_request == {"behavior": "deny", "message": "a; b",
                                          "interrupt": True}


async def test_strings_are_capped_at_10000_chars() -> None:
    long = "x" * 20_000
    outcome = await run("PreToolUse", returning({"systemMessage": long, **pre(
        "deny", long, additionalContext=long)}))
    assert len(outcome.system_messages[0]) == 10_000
    assert len(outcome.additional_context[0]) == 10_000
    assert outcome.reason == "x" * 10_000

    async def loud(input_data, tool_use_id, context):
        raise ValueError(long)

    outcome = await run("Stop", loud)
    assert len(outcome.failures[0]) == 10_000


# ---------------------------------------------------------------- fail closed


async def _raises(input_data, tool_use_id, context):
    raise ValueError("boom")


async def _hangs(input_data, tool_use_id, context):
    await asyncio.Event().wait()
    return {}


async def _returns_none(input_data, tool_use_id, context):
    return None


def _wrong_event_name(event: str):
    other = "Stop" if event != "Stop" else "PreToolUse"
    return returning({"hookSpecificOutput": {"hookEventName": other}}, "wrong_name")


FAILURES: list[tuple[str, Any, str]] = [
    ("raise", lambda event: _raises, "_raises raised ValueError: boom"),
    ("timeout", lambda event: _hangs, "_hangs timed out after 0.05 s"),
    ("non-dict", lambda event: _returns_none, "_returns_none returned invalid output: "
                                              "expected a dict, got NoneType"),
    ("wrong hookEventName", _wrong_event_name, "wrong_name returned invalid output: "
                                               "hookSpecificOutput.hookEventName is"),
    ("unknown key", lambda event: returning({"permissionDecision": "deny"}, "top"),
     "top returned invalid output: unknown key(s) in the output: permissionDecision"),
]
FAILURE_IDS = [kind for kind, _, _ in FAILURES]


@pytest.mark.parametrize(("kind", "make", "text"), FAILURES, ids=FAILURE_IDS)
async def test_pre_tool_use_failure_denies(kind: str, make: Any, text: str) -> None:
    outcome = await run("PreToolUse", make("PreToolUse"), returning(pre("allow", "ok")),
                        timeout=0.05)
    assert len(outcome.failures) == 1
    assert outcome.failures[0].startswith("PreToolUse hook ")
    assert text in outcome.failures[0]
    assert (outcome.decision, outcome.reason) == ("deny", outcome.failures[0])
    assert outcome.updated_input is None


@pytest.mark.parametrize(("kind", "make", "text"), FAILURES, ids=FAILURE_IDS)
async def test_permission_request_failure_denies(kind: str, make: Any, text: str) -> None:
    outcome = await run("PermissionRequest", make("PermissionRequest"), timeout=0.05)
    assert text in outcome.failures[0]
    assert outcome.permission_request == {"behavior": "deny", "message": outcome.failures[0]}


@pytest.mark.parametrize(("kind", "make", "text"), FAILURES, ids=FAILURE_IDS)
async def test_user_prompt_submit_failure_blocks(kind: str, make: Any, text: str) -> None:
    outcome = await run("UserPromptSubmit", make("UserPromptSubmit"), timeout=0.05)
    assert text in outcome.failures[0]
    assert (outcome.block, outcome.reason) == (True, outcome.failures[0])


@pytest.mark.parametrize("event", ["PostToolUse", "PostToolUseFailure", "Stop", "SubagentStart",
                                   "SubagentStop", "PreCompact", "Notification"])
@pytest.mark.parametrize(("kind", "make", "text"), FAILURES, ids=FAILURE_IDS)
async def test_other_event_failures_are_only_recorded(event: str, kind: str, make: Any,
                                                      text: str) -> None:
    outcome = await run(event, make(event), timeout=0.05, match=None)
    assert outcome.failures == [outcome.failures[0]] and text in outcome.failures[0]
    assert outcome.failures[0].startswith(f"{event} hook ")
    assert (outcome.decision, outcome.block, outcome.reason) == (None, False, None)
    assert (outcome.stop, outcome.permission_request) == (False, None)


@pytest.mark.parametrize("output", [
    pre("maybe"), pre("allow", reason=3), pre("allow", updatedInput=["x"]),
    pre(additionalContext=["x"]), {"systemMessage": 1}, {"continue_": "no"},
    {"decision": "deny"}, {"hookSpecificOutput": "PreToolUse"}, {"hookSpecificOutput": {}},
    {"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedToolOutput": 1}},
])
async def test_invalid_pre_tool_use_outputs_deny(output: dict) -> None:
    outcome = await run("PreToolUse", returning(output, "bad"), returning(pre("allow")))
    assert outcome.decision == "deny"
    assert outcome.failures[0].startswith("PreToolUse hook bad returned invalid output: ")


async def test_invalid_permission_decision_value_is_named() -> None:
    outcome = await run("PreToolUse", returning(pre("maybe"), "p"))
    assert "permissionDecision must be allow, deny, ask or defer, got 'maybe'" in outcome.reason
    outcome = await run("PreToolUse", returning({"asyncTimeout": "soon"}, "p"))
    assert "asyncTimeout must be int or float, got 'soon'" in outcome.reason


async def test_failure_deny_is_not_downgraded_by_allow_registered_first() -> None:
    runner = HookRunner({"PreToolUse": [HookMatcher(hooks=[returning(pre("allow"))]),
                                        HookMatcher(hooks=[_raises])]})
    outcome = await runner.run("PreToolUse", {}, match="Bash")
    assert outcome.decision == "deny" and "boom" in outcome.reason


async def test_callback_that_swallows_the_timeout_still_fails_closed() -> None:
    async def stubborn(input_data, tool_use_id, context):
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.Event().wait()
        return pre("allow")

    outcome = await run("PreToolUse", stubborn, timeout=0.05)
    assert outcome.decision == "deny"
    assert outcome.failures == ["PreToolUse hook "
                                "test_callback_that_swallows_the_timeout_still_fails_closed."
                                "<locals>.stubborn timed out after 0.05 s"]


async def test_callback_raising_timeout_error_is_not_reported_as_timed_out() -> None:
    async def own_timeout(input_data, tool_use_id, context):
        raise TimeoutError("upstream")

    outcome = await run("PreToolUse", own_timeout)
    assert outcome.failures[0].endswith("own_timeout raised TimeoutError: upstream")


async def test_callback_raising_cancelled_error_by_itself_fails_closed() -> None:
    async def rogue(input_data, tool_use_id, context):
        raise asyncio.CancelledError

    outcome = await run("PreToolUse", rogue)
    assert outcome.decision == "deny"
    assert outcome.failures[0].endswith("rogue raised CancelledError")


async def test_cancelling_run_cancels_callbacks_and_propagates() -> None:
    started = asyncio.Event()
    cancelled: list[bool] = []

    async def slow(input_data, tool_use_id, context):
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        return {}

    runner = HookRunner({"PreToolUse": [HookMatcher(hooks=[slow])]})
    task = asyncio.create_task(runner.run("PreToolUse", {}, match="Bash"))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert cancelled == [True]
