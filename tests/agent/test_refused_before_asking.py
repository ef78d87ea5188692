"""What a tool will refuse is decided before the hooks and the permission check (issue 39
(1)): the call is never put to the user (`can_use_tool`), is not a permission denial,
and grants nothing; a call the tool would make is asked as before."""

from __future__ import annotations

from typing import Any

from fuxi_notebook import FuxiAgentOptions, PermissionResultAllow, PermissionUpdate
from fuxi_notebook._internal.models.scripted import ScriptedModel
from fuxi_notebook.testing import text, tool_use

from .helpers import collect, result_text, tool_results


async def test_calls_the_tool_would_refuse_are_not_asked_and_grant_nothing(tmp_path):
    (tmp_path / "notes.txt").write_text("mine\n")
    (tmp_path / "folder").mkdir()
    asked: list[tuple[str, dict[str, Any]]] = []

    async def approve(name, tool_input, context):
        asked.append((name, tool_input))
        return PermissionResultAllow(updated_permissions=[PermissionUpdate(
            type="addRules", rules=[{"toolName": "Edit"}], behavior="allow")])

    calls = [tool_use("Write", {"file_path": "notes.txt", "content": "theirs"}),
             tool_use("Write", {"file_path": "folder", "content": "x"}),
             tool_use("Edit", {"file_path": "notes.txt", "old_string": "mine",
                               "new_string": "yours"}),
             tool_use("Edit", {"file_path": "notes.txt", "old_string": "same",
                               "new_string": "same"}),
             tool_use("Edit", {"file_path": "gone.txt", "old_string": "a", "new_string": "b"})]
    model = ScriptedModel([calls, [text("None of it worked.")]])
    messages, error = await collect("change the notes", FuxiAgentOptions(
        model=model, cwd=tmp_path, can_use_tool=approve))
    assert error is None
    assert asked == []  # nobody was asked, so nothing was granted
    results = [result_text(r) for r in tool_results(model.requests[1].messages)]
    assert "File has not been read yet" in results[0]
    assert "is a directory" in results[1]
    assert "File has not been read yet" in results[2]
    assert "identical" in results[3]
    assert "gone.txt" in results[4]
    assert messages[-1].permission_denials == []  # refused by the tool, not denied
    assert (tmp_path / "notes.txt").read_text() == "mine\n"


async def test_a_call_the_tool_would_make_is_still_asked(tmp_path):
    (tmp_path / "notes.txt").write_text("mine\n")
    asked: list[str] = []

    async def approve(name, tool_input, context):
        asked.append(name)
        return PermissionResultAllow()

    model = ScriptedModel([[tool_use("Read", {"file_path": "notes.txt"})],
                           [tool_use("Edit", {"file_path": "notes.txt", "old_string": "mine",
                                              "new_string": "yours"})],
                           [text("Changed.")]])
    _, error = await collect("change the notes", FuxiAgentOptions(
        model=model, cwd=tmp_path, can_use_tool=approve))
    assert error is None
    assert asked == ["Edit"] and (tmp_path / "notes.txt").read_text() == "yours\n"
