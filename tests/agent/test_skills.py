"""Skills: folders with SKILL.md, found by `setting_sources` and plugins, loaded by the
model through the Skill tool; `Skill(name)` rules decide per skill."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fuxi_notebook import (
    FuxiAgentOptions,
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    ScriptedModel,
)
from fuxi_notebook._internal.models.script import text, tool_use
from fuxi_notebook._internal.permissions.rules import parse_rule
from fuxi_notebook.errors import ConfigurationError
from fuxi_notebook.options import ToolPermissionContext

from .helpers import collect, result_text, tool_results
from .subagent_helpers import agent_call, worker

SUMMARY = """\
---
name: csv-summary
description: >
  Summarise a CSV file.
  Use when asked what a CSV holds.
---
Count the rows with scripts/count.py, then describe the columns.
"""


def _skill(root: Path, folder: str, text_: str, files: dict[str, str] | None = None) -> Path:
    """A skill folder under `root` (a `skills` folder) with SKILL.md and other files."""
    path = root / folder
    path.mkdir(parents=True, exist_ok=True)
    (path / "SKILL.md").write_text(text_)
    for name, content in (files or {}).items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(content)
    return path


def _simple(name: str, description: str = "does a thing", body: str = "Do it.") -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n{body}\n"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home directory of the test's own (user skills live in ~/.fuxi/skills)."""
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.setenv("FUXI_CONFIG_DIR", str(folder / ".fuxi"))  # the user folder
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def _skills_of(root: Path) -> Path:
    return root / ".fuxi" / "skills"


def _call(skill: str, **extra: Any) -> dict[str, Any]:
    return tool_use("Skill", {"skill": skill, **extra})


async def _run(options: FuxiAgentOptions, *calls: dict[str, Any]) -> tuple[ScriptedModel, Any]:
    """One query whose model makes `calls` (one per response), then ends; the model and
    the init message's data."""
    model = ScriptedModel([*([c] for c in calls), [text("done")]])
    options.model = model
    messages, _ = await collect("go", options)
    return model, messages[0].data


def _skill_tool(model: ScriptedModel) -> dict[str, Any] | None:
    return next((t for t in model.requests[0].tools if t["name"] == "Skill"), None)


def _answer(model: ScriptedModel, index: int = 1) -> dict[str, Any]:
    return tool_results(model.requests[index].messages)[0]


class Approver:
    """A can_use_tool that records what it was asked, and answers as told."""

    def __init__(self, allow: bool = False) -> None:
        self.allow = allow
        self.asked: list[tuple[str, dict[str, Any], ToolPermissionContext]] = []

    async def __call__(self, name: str, tool_input: dict[str, Any],
                       context: ToolPermissionContext) -> Any:
        self.asked.append((name, tool_input, context))
        if self.allow:
            return PermissionResultAllow()
        return PermissionResultDeny(message="refused by the test")


# -- what the model is offered -------------------------------------------------------------

async def test_the_description_lists_names_and_descriptions_never_the_instructions(project):
    _skill(_skills_of(project), "csv-summary", SUMMARY)
    _skill(_skills_of(project), "plot", _simple("plot", "Draw a chart.", "SECRET BODY"))
    model, init = await _run(FuxiAgentOptions(cwd=project, setting_sources=["project"]))
    tool = _skill_tool(model)
    assert tool is not None
    assert "- csv-summary: Summarise a CSV file. Use when asked what a CSV holds." in (
        tool["description"])
    assert "- plot: Draw a chart." in tool["description"]
    assert "scripts/count.py" not in tool["description"]
    assert "SECRET BODY" not in json.dumps(model.requests[0].tools) + json.dumps(
        model.requests[0].system)
    assert tool["input_schema"]["required"] == ["skill"]
    assert init["skills"] == ["csv-summary", "plot"]


async def test_without_skills_there_is_no_skill_tool(project):
    model, init = await _run(FuxiAgentOptions(cwd=project, setting_sources=["project"]))
    assert _skill_tool(model) is None and init["skills"] == []


async def test_options_tools_naming_skill_offers_it_even_without_skills(project):
    model, init = await _run(FuxiAgentOptions(cwd=project, tools=["Read", "Skill"]),
                             _call("anything"))
    assert "(none: no skills are available" in _skill_tool(model)["description"]
    answer = _answer(model)
    assert answer["is_error"] and "Available skills: none" in result_text(answer)
    assert init["skills"] == []


# -- using a skill -------------------------------------------------------------------------

async def test_a_call_returns_the_instructions_folder_and_other_files(project):
    folder = _skill(_skills_of(project), "csv-summary", SUMMARY,
                    {"scripts/count.py": "print(1)\n", "reference.md": "# columns\n"})
    (folder / "scripts" / "__pycache__").mkdir()
    (folder / "scripts" / "__pycache__" / "count.pyc").write_bytes(b"\0")
    model, _ = await _run(FuxiAgentOptions(cwd=project, setting_sources=["project"]),
                          _call("csv-summary"))
    answer = _answer(model)
    body = result_text(answer)
    assert not answer.get("is_error")
    assert f"Its folder: {folder}" in body
    assert "- reference.md\n- scripts/count.py\n" in body
    assert "SKILL.md" not in body and "__pycache__" not in body
    assert body.endswith("Count the rows with scripts/count.py, then describe the columns.")
    assert "description:" not in body and "---" not in body  # front matter stripped


async def test_arguments_fill_the_placeholder_or_are_given_in_the_header(project):
    _skill(_skills_of(project), "greet", _simple("greet", body="Say hello to $ARGUMENTS."))
    _skill(_skills_of(project), "plain", _simple("plain"))
    model, _ = await _run(FuxiAgentOptions(cwd=project, setting_sources=["project"]),
                          _call("greet", args="Ada"), _call("plain", args="x=1"))
    assert result_text(_answer(model, 1)).endswith("Say hello to Ada.")
    assert "It holds no other files.\nArguments: x=1\n\nDo it." in result_text(
        _answer(model, 2))


async def test_the_file_list_is_capped(project):
    files = {f"data/f{i:03}.txt": "x" for i in range(60)}
    _skill(_skills_of(project), "big", _simple("big"), files)
    model, _ = await _run(FuxiAgentOptions(cwd=project, setting_sources=["project"]),
                          _call("big"))
    body = result_text(_answer(model))
    assert "- data/f049.txt" in body and "- data/f050.txt" not in body
    assert "(and 10 more; list the folder to see them)" in body


async def test_an_unknown_skill_is_an_error_listing_the_available_ones(project):
    _skill(_skills_of(project), "csv-summary", SUMMARY)
    model, _ = await _run(FuxiAgentOptions(cwd=project, setting_sources=["project"]),
                          _call("nope"))
    answer = _answer(model)
    assert answer["is_error"]
    assert result_text(answer) == "Unknown skill 'nope'. Available skills: csv-summary."


async def test_a_skill_broken_after_loading_is_an_error_not_a_crash(project):
    folder = _skill(_skills_of(project), "csv-summary", SUMMARY)
    model = ScriptedModel([[_call("csv-summary")], [text("done")]])
    options = FuxiAgentOptions(model=model, cwd=project, setting_sources=["project"],
                               hooks={"PreToolUse": [HookMatcher(matcher="Skill", hooks=[
                                   _break(folder)])]})
    await collect("go", options)
    answer = _answer(model)
    assert answer["is_error"] and "cannot be used now" in result_text(answer)


def _break(folder: Path) -> Any:
    """A PreToolUse hook that empties the skill's instructions just before the call."""
    async def hook(input_data: dict[str, Any], tool_use_id: str | None,
                   context: Any) -> dict[str, Any]:
        (folder / "SKILL.md").write_text("---\ndescription: d\n---\n")
        return {}
    return hook


# -- where skills come from ----------------------------------------------------------------

async def test_sources_load_only_as_setting_sources_say(project, home):
    _skill(_skills_of(project), "proj", _simple("proj"))
    _skill(_skills_of(home), "mine", _simple("mine"))
    cases = [(None, ["mine", "proj"]), ([], []), (["project"], ["proj"]), (["user"], ["mine"]),
             (["user", "project"], ["mine", "proj"])]
    for sources, expected in cases:
        _, init = await _run(FuxiAgentOptions(cwd=project, setting_sources=sources))
        assert init["skills"] == expected, sources


async def test_plugin_skills_are_namespaced_by_the_plugin(project, tmp_path):
    plain = tmp_path / "tools-plugin"
    _skill(plain / "skills", "lint", _simple("lint", "Lint the code."))
    named = tmp_path / "folder"
    (named / ".fuxi-plugin").mkdir(parents=True)
    (named / ".fuxi-plugin" / "plugin.json").write_text('{"name": "acme"}')
    _skill(named / "skills", "deploy", _simple("deploy", "Deploy it."))
    model, init = await _run(FuxiAgentOptions(
        cwd=project, plugins=[{"type": "local", "path": str(plain)},
                              {"type": "local", "path": str(named)}]),
        _call("acme:deploy"))
    assert init["skills"] == ["tools-plugin:lint", "acme:deploy"]
    assert "- acme:deploy: Deploy it." in _skill_tool(model)["description"]
    assert result_text(_answer(model)).endswith("Do it.")  # no approval needed either


async def test_project_overrides_user_by_name(project, home):
    _skill(_skills_of(home), "review", _simple("review", "from home"))
    _skill(_skills_of(home), "only-home", _simple("only-home", "just mine"))
    _skill(_skills_of(project), "review-folder", _simple("review", "from the project"))
    model, init = await _run(FuxiAgentOptions(cwd=project,
                                              setting_sources=["user", "project"]))
    assert init["skills"] == ["only-home", "review"]
    description = _skill_tool(model)["description"]
    assert "- review: from the project" in description and "from home" not in description


async def test_a_malformed_skill_is_skipped_with_a_warning(project):
    root = _skills_of(project)
    _skill(root, "broken", "---\nname: broken\n")
    _skill(root, "no-description", "---\nname: x\n---\nbody\n")
    _skill(root, "bad name", _simple("bad name"))
    _skill(root, "csv-summary", SUMMARY)
    (root / "not-a-skill").mkdir()
    with pytest.warns(UserWarning) as caught:
        _, init = await _run(FuxiAgentOptions(cwd=project, setting_sources=["project"]))
    said = "\n".join(str(w.message) for w in caught)
    assert "broken/SKILL.md: its front matter has no closing '---'" in said
    assert "no-description/SKILL.md: it has no description" in said
    assert "'bad name' is not a valid skill name" in said
    assert init["skills"] == ["csv-summary"]


# -- options.skills ------------------------------------------------------------------------

async def test_options_skills_selects_and_defaults_the_setting_sources(project, home):
    _skill(_skills_of(project), "proj", _simple("proj"))
    _skill(_skills_of(project), "other", _simple("other"))
    _skill(_skills_of(home), "mine", _simple("mine"))
    _, init = await _run(FuxiAgentOptions(cwd=project, skills="all"))  # sources: user+project
    assert init["skills"] == ["mine", "other", "proj"]
    _, init = await _run(FuxiAgentOptions(cwd=project, skills=["proj", "mine"]))
    assert init["skills"] == ["mine", "proj"]
    with pytest.warns(UserWarning, match="not found"):  # the sources still rule
        _, init = await _run(FuxiAgentOptions(cwd=project, skills=["proj"],
                                              setting_sources=["user"]))
    assert init["skills"] == []
    model, init = await _run(FuxiAgentOptions(cwd=project, skills=[],
                                              setting_sources=["project"]))
    assert init["skills"] == [] and _skill_tool(model) is None


async def test_options_skills_naming_a_missing_skill_warns(project):
    _skill(_skills_of(project), "proj", _simple("proj"))
    with pytest.warns(UserWarning, match=r"skills \['ghost'\] were not found \(found: \['proj'"):
        _, init = await _run(FuxiAgentOptions(cwd=project, skills=["proj", "ghost"]))
    assert init["skills"] == ["proj"]


@pytest.mark.parametrize("value", ["some", ["bad name"], [3], {"a": 1}])
async def test_bad_options_skills_are_configuration_errors(project, value):
    with pytest.raises(ConfigurationError, match="skill"):
        await _run(FuxiAgentOptions(cwd=project, skills=value))


# -- permissions ---------------------------------------------------------------------------

@pytest.mark.parametrize(("rule", "name", "matches"), [
    ("Skill(csv-summary)", "csv-summary", True),
    ("Skill(csv-summary)", "csv-summary-2", False),
    ("Skill(acme:*)", "acme:deploy", True),
    ("Skill(acme:*)", "deploy", False),
    ("Skill(csv-summary *)", "csv-summary", True),
])
def test_skill_rules_name_skills(rule, name, matches):
    parsed = parse_rule(rule, "allow")
    assert parsed.named is not None and parsed.tool == "Skill"
    assert (parsed.named.fullmatch(name) is not None) is matches


async def test_skill_rules_decide_per_skill(project):
    for name in ("safe", "secret", "careful"):
        _skill(_skills_of(project), name, _simple(name))
    approver = Approver(allow=True)
    model, init = await _run(FuxiAgentOptions(
        cwd=project, setting_sources=["project"], disallowed_tools=["Skill(secret)"],
        settings=json.dumps({"permissions": {"ask": ["Skill(careful)"]}}),
        can_use_tool=approver), _call("safe"), _call("secret"), _call("careful"))
    assert init["skills"] == ["careful", "safe", "secret"]
    assert not _answer(model, 1).get("is_error")
    denied = _answer(model, 2)
    assert denied["is_error"] and "denied by the rule 'Skill(secret)'" in result_text(denied)
    assert [(name, tool_input) for name, tool_input, _ in approver.asked] == [
        ("Skill", {"skill": "careful"})]  # only the ask rule asked: project skills are reads
    assert not _answer(model, 3).get("is_error")


async def test_always_allow_names_the_skill_and_a_bare_deny_removes_the_tool(project, home):
    _skill(_skills_of(project), "one", _simple("one"))
    (outside := home / "elsewhere").mkdir()
    _skill(outside, "target", _simple("two"))
    (_skills_of(project) / "two").symlink_to(outside / "target")  # leads out: asks
    approver = Approver()
    model, _ = await _run(FuxiAgentOptions(cwd=project, setting_sources=["project"],
                                           can_use_tool=approver), _call("two"))
    [(_, _, context)] = approver.asked
    assert [str(r) for u in context.suggestions for r in u.rules or []] == ["Skill(two)"]
    assert "refused by the test" in result_text(_answer(model))
    model, init = await _run(FuxiAgentOptions(cwd=project, setting_sources=["project"],
                                              disallowed_tools=["Skill"]))
    assert _skill_tool(model) is None and init["skills"] == []


async def test_user_skills_need_no_approval_but_read_denies_still_hold(project, home):
    _skill(_skills_of(home), "mine", _simple("mine"), {"notes.md": "n", "private/key": "k"})
    model, _ = await _run(FuxiAgentOptions(cwd=project, setting_sources=["user"]),
                          _call("mine"))  # no can_use_tool: anything asked is denied
    body = result_text(_answer(model))
    assert not _answer(model).get("is_error") and "- private/key" in body
    model, _ = await _run(FuxiAgentOptions(cwd=project, setting_sources=["user"],
                                           disallowed_tools=["Read(~/.fuxi/**/private/**)"]),
                          _call("mine"))
    body = result_text(_answer(model))
    assert "- notes.md" in body and "private" not in body  # left out, as Glob would
    model, _ = await _run(FuxiAgentOptions(cwd=project, setting_sources=["user"],
                                           disallowed_tools=["Read(~/.fuxi/skills/**)"]),
                          _call("mine"))
    assert _answer(model)["is_error"] and "is denied by the rule" in result_text(_answer(model))


async def test_allowed_tools_of_a_skill_are_not_applied(project):
    _skill(_skills_of(project), "risky", "---\nname: risky\ndescription: d\n"
           "allowed-tools: Bash\nmodel: opus\n---\nRun rm -rf build.\n")
    with pytest.warns(UserWarning, match=r"sets allowed-tools and model, which are not applied"):
        model, _ = await _run(FuxiAgentOptions(cwd=project, setting_sources=["project"]),
                              _call("risky"), tool_use("Bash", {"command": "touch made"}))
    assert not _answer(model, 1).get("is_error")
    bash = _answer(model, 2)
    assert bash["is_error"] and "not granted" in result_text(bash)
    assert not (project / "made").exists()
    assert {r.model for r in model.requests} == {model.name}


# -- subagents -----------------------------------------------------------------------------

async def test_a_subagent_gets_the_parents_skill_tool(project):
    _skill(_skills_of(project), "csv-summary", SUMMARY)
    model = ScriptedModel([[agent_call("summarise")], [_call("csv-summary")],
                           [text("summarised")], [text("done")]])
    await collect("go", FuxiAgentOptions(model=model, cwd=project, agents=worker(),
                                         setting_sources=["project"]))
    assert "Skill" in [t["name"] for t in model.requests[1].tools]
    assert result_text(_answer(model, 2)).endswith("describe the columns.")
