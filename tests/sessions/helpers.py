"""A realistic recorded run shared by the session tests."""

from __future__ import annotations

from typing import Any

from fuxi_notebook.types import ResultMessage


def result_message(**overrides: Any) -> ResultMessage:
    fields: dict[str, Any] = {
        "subtype": "success", "duration_ms": 1234, "duration_api_ms": 999, "is_error": False,
        "num_turns": 4, "session_id": "3f2a1b9c-0000-4000-8000-000000000001",
        "stop_reason": "end_turn", "total_cost_usd": 0.0123,
        "usage": {"input_tokens": 100, "output_tokens": 50}, "result": "All tests pass.",
    }
    fields.update(overrides)
    return ResultMessage(**fields)


def run_messages() -> list[dict[str, Any]]:
    """Prompt, thinking + Bash, Edit, a denied Bash, final text."""
    return [
        {"role": "user", "content": "Fix the failing test"},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "Run the tests first.", "signature": "c2ln"},
            {"type": "text", "text": "Let me run the tests."},
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "npm test"}},
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "1 failing: add()",
             "is_error": True},
        ]},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "t2", "name": "Edit", "input": {
                "file_path": "src/add.js", "old_string": "return a - b;",
                "new_string": "return a + b;"}},
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t2", "content": "Edited src/add.js"},
        ]},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "t3", "name": "Bash",
             "input": {"command": "rm -rf node_modules"}},
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t3", "is_error": True,
             "content": "Permission denied: deleting dependencies"},
        ]},
        {"role": "assistant", "content": [{"type": "text", "text": "All tests pass."}]},
    ]


def run_approvals() -> list[dict[str, Any]]:
    return [
        {"tool_use_id": "t1", "tool_name": "Bash", "decision": "allow", "source": "user"},
        {"tool_use_id": "t2", "tool_name": "Edit", "decision": "always_allow", "source": "user",
         "rule": "Edit(src/**)"},
        {"tool_use_id": "t3", "tool_name": "Bash", "decision": "deny", "source": "policy",
         "reason": "deleting dependencies"},
    ]


def build_kwargs(**overrides: Any) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "cell_id": "c1", "session_id": "3f2a1b9c-0000-4000-8000-000000000001", "parent": None,
        "model": "claude-sonnet-5-5", "prompt": "Fix the failing test",
        "options": {"model": "claude-sonnet-5-5", "max_turns": 8,
                    "permission_mode": "default", "allowed_tools": ["Read", "Grep"]},
        "messages": run_messages(), "approvals": run_approvals(), "result": result_message(),
    }
    kwargs.update(overrides)
    return kwargs
