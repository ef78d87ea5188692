"""Hook commands: what their exit codes mean, and that no process of theirs outlives them."""

from __future__ import annotations

import asyncio
import json

import pytest

from fuxi_notebook._internal.settings.command_hooks import (
    MAX_STDOUT,
    CommandHook,
    CommandSpec,
    HookCommandError,
    command_matchers,
    run_command,
)
from fuxi_notebook.hooks import MAX_HOOK_STRING, HookRunner

from .helpers import alive, read_pid, wait_for


def _runner(tmp_path, event, command, *, timeout=None, matcher=None, on_error="block"):
    specs = [CommandSpec(event, matcher, command, timeout)]
    return HookRunner(command_matchers(specs, root=tmp_path, env={"FROM_SETTINGS": "yes"},
                                       on_error=on_error))


async def _pre_tool_use(runner, tool="Bash"):
    return await runner.run("PreToolUse", {"tool_name": tool, "tool_input": {"command": "ls"},
                                           "session_id": "s"}, tool_use_id="t1", match=tool)


async def test_exit_0_json_is_the_hook_output_and_input_comes_on_stdin(tmp_path):
    answer = {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                     "permissionDecision": "deny",
                                     "permissionDecisionReason": "policy says no"}}
    command = (f"cat > seen.json; printf '%s\\n' \"$FUXI_PROJECT_DIR $FROM_SETTINGS\" > env.txt;"
               f" echo '{json.dumps(answer)}'")
    outcome = await _pre_tool_use(_runner(tmp_path, "PreToolUse", command, matcher="Bash"))
    assert (outcome.decision, outcome.reason) == ("deny", "policy says no")
    seen = json.loads((tmp_path / "seen.json").read_text())  # cwd = the project folder
    assert seen["tool_name"] == "Bash" and seen["hook_event_name"] == "PreToolUse"
    assert seen["tool_input"] == {"command": "ls"}
    assert (tmp_path / "env.txt").read_text() == f"{tmp_path} yes\n"


async def test_the_matcher_selects_tools(tmp_path):
    runner = _runner(tmp_path, "PreToolUse", "touch ran", matcher="Edit|Write")
    assert (await _pre_tool_use(runner, "Bash")).ran == 0
    assert (await _pre_tool_use(runner, "Write")).ran == 1
    assert (tmp_path / "ran").exists()


async def test_exit_0_with_plain_text(tmp_path):
    prompt = _runner(tmp_path, "UserPromptSubmit", "echo 'the build is red'")
    outcome = await prompt.run("UserPromptSubmit", {"prompt": "hi"})
    assert outcome.additional_context == ["the build is red"] and not outcome.block
    other = await _pre_tool_use(_runner(tmp_path, "PreToolUse", "echo hello"))
    assert other.decision is None and other.failures == [] and other.additional_context == []


async def test_exit_0_with_invalid_hook_json_fails_closed(tmp_path):
    runner = _runner(tmp_path, "PreToolUse", """echo '{"permissionDecision": "allow"}'""")
    outcome = await _pre_tool_use(runner)
    assert outcome.decision == "deny" and "invalid output" in outcome.reason


@pytest.mark.parametrize(("event", "input_data", "check"), [
    ("PreToolUse", {"tool_name": "Bash"},
     lambda o: o.decision == "deny" and o.reason == "no rm here"),
    ("UserPromptSubmit", {"prompt": "x"}, lambda o: o.block and o.reason == "no rm here"),
    ("Stop", {"stop_hook_active": False}, lambda o: o.block and o.reason == "no rm here"),
    ("PostToolUse", {"tool_name": "Bash"}, lambda o: o.block),
    ("PermissionRequest", {"tool_name": "Bash"},
     lambda o: o.permission_request == {"behavior": "deny", "message": "no rm here"}),
    ("Notification", {"message": "m"},
     lambda o: not o.block and o.system_messages == ["no rm here"]),
])
async def test_exit_2_blocks_with_stderr_as_the_reason(tmp_path, event, input_data, check):
    runner = _runner(tmp_path, event, "echo '{\"ignored\": 1}'; echo 'no rm here' >&2; exit 2")
    outcome = await runner.run(event, input_data, match="Bash")
    assert outcome.failures == [] and check(outcome)


async def test_other_exit_codes_fail_closed_by_default(tmp_path):
    outcome = await _pre_tool_use(_runner(tmp_path, "PreToolUse", "echo oops >&2; exit 1"))
    assert outcome.decision == "deny"
    assert "exited with code 1: oops" in outcome.failures[0]
    stop = await _runner(tmp_path, "Stop", "exit 3").run("Stop", {})
    assert not stop.block and "exited with code 3" in stop.failures[0]  # nothing to refuse


async def test_other_exit_codes_can_be_non_blocking(tmp_path):
    runner = _runner(tmp_path, "PreToolUse", "echo oops >&2; exit 1", on_error="continue")
    outcome = await _pre_tool_use(runner)
    assert outcome.decision is None and outcome.failures == []
    assert "exited with code 1: oops" in outcome.system_messages[0]


async def test_a_command_that_cannot_start(tmp_path):
    hook = CommandHook("true", root=tmp_path / "missing", event="Stop")
    with pytest.raises(HookCommandError, match="could not start"):
        await hook({"hook_event_name": "Stop"}, None, {})


async def test_timeout_kills_the_process_group_with_its_children(tmp_path):
    command = "sleep 300 & echo $! > child.pid; echo $$ > shell.pid; wait"
    outcome = await _pre_tool_use(_runner(tmp_path, "PreToolUse", command, timeout=0.5))
    assert outcome.decision == "deny" and "timed out after 0.5 s" in outcome.reason
    pids = [read_pid(tmp_path / "child.pid"), read_pid(tmp_path / "shell.pid")]
    assert None not in pids
    await wait_for(lambda: not any(alive(pid) for pid in pids))


async def test_a_child_that_ignores_sigterm_is_killed(tmp_path):
    command = "trap '' TERM; sleep 300 & echo $! > child.pid; wait; wait"
    result = await run_command(command, stdin=b"", cwd=tmp_path, env={"PATH": "/usr/bin:/bin"},
                               timeout=0.3)
    assert result.timed_out and result.exit_code is None
    await wait_for(lambda: not alive(read_pid(tmp_path / "child.pid")))


async def test_cancelling_the_hook_kills_the_process_group(tmp_path):
    hook = CommandHook("sleep 300 & echo $! > child.pid; wait", root=tmp_path, event="Stop",
                       timeout=300)
    task = asyncio.ensure_future(hook({"hook_event_name": "Stop"}, None, {}))
    await wait_for(lambda: read_pid(tmp_path / "child.pid") is not None)
    child = read_pid(tmp_path / "child.pid")
    assert alive(child)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await wait_for(lambda: not alive(child))


async def test_children_left_behind_after_exit_are_killed_and_do_not_hold_the_hook(tmp_path):
    # the background sleep keeps stdout open: waiting for the pipe would take 300 s
    result = await run_command("sleep 300 & echo $! > child.pid; echo done", stdin=b"",
                               cwd=tmp_path, env={"PATH": "/usr/bin:/bin"}, timeout=60)
    assert (result.exit_code, result.stdout) == (0, "done\n")
    await wait_for(lambda: not alive(read_pid(tmp_path / "child.pid")))


async def test_big_output_is_capped(tmp_path):
    command = "head -c 5000000 /dev/zero | tr '\\0' x; head -c 300000 /dev/zero >&2"
    result = await run_command(command, stdin=b"", cwd=tmp_path,
                               env={"PATH": "/usr/bin:/bin"}, timeout=60)
    assert result.exit_code == 0 and result.truncated
    assert len(result.stdout) == MAX_STDOUT and len(result.stderr) < 300000
    runner = _runner(tmp_path, "UserPromptSubmit", command)
    outcome = await runner.run("UserPromptSubmit", {"prompt": "x"})
    assert len(outcome.additional_context[0]) == MAX_HOOK_STRING


async def test_big_input_to_a_command_that_never_reads_it(tmp_path):
    hook = CommandHook("exit 0", root=tmp_path, event="PreToolUse")
    big = {"hook_event_name": "PreToolUse", "tool_input": {"content": "z" * 5_000_000}}
    assert await hook(big, "t1", {}) == {}


def test_one_matcher_per_command_with_a_longer_runner_timeout(tmp_path):
    specs = [CommandSpec("PreToolUse", "Bash", "a", 5), CommandSpec("PreToolUse", "Bash", "b")]
    matchers = command_matchers(specs, root=tmp_path)["PreToolUse"]
    assert [m.hooks[0].command for m in matchers] == ["a", "b"]
    assert [m.hooks[0].timeout for m in matchers] == [5.0, 60.0]
    assert all(m.timeout > m.hooks[0].timeout for m in matchers)
    assert repr(matchers[0].hooks[0]) == "command 'a'"
