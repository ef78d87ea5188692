"""Agents defined in files: `.fuxi/agents/*.md`, `~/.fuxi/agents/*.md`, plugins."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuxi_notebook import FuxiAgentOptions, ScriptedModel
from fuxi_notebook._internal.agent.subagents.files import AgentFileError, parse_agent_file
from fuxi_notebook._internal.models.script import text
from fuxi_notebook.options import AgentDefinition

from .helpers import collect, result_text, tool_results
from .subagent_helpers import agent_call

REVIEWER = """\
---
name: reviewer
description: Reviews a change for bugs.
tools: Read, Grep
model: haiku
maxTurns: 3
color: blue
---
You review code.
"""


def _write(folder: Path, name: str, body: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(body)


async def _init(options: FuxiAgentOptions) -> dict:
    messages, _ = await collect("hi", options)
    return messages[0].data


def test_front_matter_forms():
    name, definition = parse_agent_file(REVIEWER, default_name="x")
    assert name == "reviewer"
    assert definition == AgentDefinition(description="Reviews a change for bugs.",
                                         prompt="You review code.", tools=["Read", "Grep"],
                                         model="haiku", maxTurns=3)
    name, definition = parse_agent_file(
        "---\ndescription: |\n  Two lines\n  of text\n# a comment\ntools: [Read, 'Glob']\n"
        "disallowedTools:\n  - Bash\n  - Edit\npermissionMode: plan\n---\n\nBody\n",
        default_name="from-file")
    assert name == "from-file" and definition.description == "Two lines\nof text"
    assert definition.tools == ["Read", "Glob"] and definition.disallowedTools == ["Bash", "Edit"]
    assert definition.permissionMode == "plan" and definition.prompt == "Body"


@pytest.mark.parametrize(("text_", "why"), [
    ("no front matter\n", "does not start with '---'"),
    ("---\ndescription: d\n", "no closing '---'"),
    ("---\nname: x\n---\nprompt\n", "no description"),
    ("---\ndescription: d\n---\n", "no prompt"),
    ("---\ndescription: d\nmaxTurns: many\n---\np\n", "maxTurns 'many' is not a number"),
    ("---\ndescription: d\njust words\n---\np\n", "is not 'key: value'"),
    ("---\ndescription: d\npermissionMode: yolo\n---\np\n", "unknown permissionMode"),
])
def test_malformed_files_say_why(text_, why):
    with pytest.raises(AgentFileError, match=why):
        parse_agent_file(text_, default_name="x")


async def test_project_agents_load_with_the_project_setting_source(tmp_path):
    _write(tmp_path / ".fuxi" / "agents", "reviewer.md", REVIEWER)
    model = ScriptedModel([[text("a")], [text("b")]])
    none = FuxiAgentOptions(model=model, cwd=tmp_path, setting_sources=["user"])
    assert (await _init(none))["agents"] == []
    init = await _init(FuxiAgentOptions(model=model, cwd=tmp_path))  # None: every source
    assert init["agents"] == ["general-purpose", "reviewer"]


async def test_a_file_agent_runs_with_its_settings(tmp_path):
    _write(tmp_path / ".fuxi" / "agents", "reviewer.md", REVIEWER)
    (tmp_path / "FUXI.md").write_text("Project rule: be brief.")
    model = ScriptedModel([[agent_call("review it", "reviewer")], [text("looks fine")],
                           [text("done")]], name="claude-sonnet-5-5")
    await collect("go", FuxiAgentOptions(model=model, cwd=tmp_path, setting_sources=["project"]))
    child = model.requests[1]
    assert child.model == "claude-haiku-5-5"
    assert [t["name"] for t in child.tools] == ["Read", "Grep"]
    assert child.system[0]["text"].startswith("You review code.")
    assert "Project rule: be brief." in child.system[-1]["text"]  # FUXI.md, as the parent
    assert result_text(tool_results(model.requests[2].messages)[0]).startswith("looks fine")


async def test_user_and_plugin_agents_and_what_overrides_what(tmp_path, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("FUXI_CONFIG_DIR", str(home / ".fuxi"))  # the user folder
    project = tmp_path / "project"
    plugin = tmp_path / "plugin"
    _write(plugin / "agents", "helper.md", "---\ndescription: from the plugin\n---\nP\n")
    _write(plugin / "agents", "shared.md", "---\ndescription: plugin shared\n---\nP\n")
    _write(home / ".fuxi" / "agents", "shared.md", "---\ndescription: user shared\n---\nU\n")
    _write(project / ".fuxi" / "agents", "reviewer.md", REVIEWER)
    model = ScriptedModel([[text("a")], [text("b")]])
    options = FuxiAgentOptions(model=model, cwd=project, setting_sources=["user", "project"],
                               plugins=[{"type": "local", "path": str(plugin)}],
                               agents={"reviewer": AgentDefinition(description="in code",
                                                                   prompt="C")})
    init = await _init(options)
    assert init["agents"] == ["general-purpose", "helper", "shared", "reviewer"]
    description = next(t for t in model.requests[0].tools if t["name"] == "Agent")["description"]
    assert "- shared: user shared" in description  # user overrides the plugin
    assert "- reviewer: in code" in description  # options.agents override files


async def test_a_malformed_file_is_skipped_with_a_warning(tmp_path):
    folder = tmp_path / ".fuxi" / "agents"
    _write(folder, "broken.md", "---\nname: broken\n")
    _write(folder, "reviewer.md", REVIEWER)
    model = ScriptedModel([[text("a")]])
    with pytest.warns(UserWarning, match=r"skipped the agent file .*broken.md: .*closing"):
        init = await _init(FuxiAgentOptions(model=model, cwd=tmp_path,
                                            setting_sources=["project"]))
    assert init["agents"] == ["general-purpose", "reviewer"]


async def test_a_file_may_not_widen_the_mode(tmp_path):
    _write(tmp_path / ".fuxi" / "agents", "yolo.md",
           "---\ndescription: d\npermissionMode: bypassPermissions\n---\nGo.\n")
    model = ScriptedModel([[agent_call("write", "yolo")],
                           [{"type": "tool_use", "name": "Write",
                             "input": {"file_path": "x.txt", "content": "x"}}],
                           [text("tried")], [text("done")]])
    with pytest.warns(UserWarning, match="would approve more than its parent.s .default."):
        await collect("go", FuxiAgentOptions(model=model, cwd=tmp_path,
                                             setting_sources=["project"]))
    assert not (tmp_path / "x.txt").exists()  # default mode, no approval: denied
