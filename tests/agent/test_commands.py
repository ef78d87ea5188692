"""Slash commands from files and plugins, and plugins in the init message."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fuxi_notebook import FuxiAgentOptions, HookMatcher, PermissionResultDeny, ScriptedModel
from fuxi_notebook._internal.agent.extensions.commands import Command, expand_prompt
from fuxi_notebook._internal.common.reminders import reminder
from fuxi_notebook._internal.models.script import text, tool_use
from fuxi_notebook.types import SystemMessage

from .helpers import collect
from .subagent_helpers import agent_call, task_of, worker


def _write(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body)
    return path


def _sent(model: ScriptedModel, request: int = 0) -> str:
    """The prompt text the model got in a request (its last user message's first block)."""
    return model.requests[request].messages[-1]["content"][0]["text"]


def _notes(messages: list) -> list[str]:
    return [m.data["content"] for m in messages
            if isinstance(m, SystemMessage) and m.subtype == "informational"]


def _plugin(root: Path, manifest: dict | str | None = None) -> Path:
    """A plugin folder with a `greet` command and a `helper` agent."""
    _write(root / "commands" / "greet.md", "---\ndescription: Greet someone\n"
           "argument-hint: <name>\n---\nSay hello to $ARGUMENTS.\n")
    _write(root / "agents" / "helper.md", "---\ndescription: Helps.\n---\nYou help.\n")
    if manifest is not None:
        raw = manifest if isinstance(manifest, str) else json.dumps(manifest)
        _write(root / ".fuxi-plugin" / "plugin.json", raw)
    return root


def _command(body: str) -> Command:
    return Command(name="c", text=body, source="project")


@pytest.mark.parametrize(("body", "arguments", "expected"), [
    ("Fix issue $ARGUMENTS now.", "123 urgent", "Fix issue 123 urgent now."),
    ("Review $1 for $2.", 'calc.py "division by zero"', "Review calc.py for division by zero."),
    ("Only $1 and $3.", "a", "Only a and ."),  # a missing argument is empty
    ("Review the code.", "calc.py carefully", "Review the code.\n\ncalc.py carefully"),
    ("Review the code.", "", "Review the code."),
    ("Keep $0 and $HOME; take $1.", "x", "Keep $0 and $HOME; take x."),
    ("Say $ARGUMENTS.", "$1 literally", "Say $1 literally."),  # filled once, not again
    ("Quote $1.", "'unbalanced", "Quote 'unbalanced."),  # bad quoting: split at spaces
])
def test_arguments_fill_the_placeholders(body, arguments, expected):
    assert _command(body).expand(arguments) == expected


def test_the_first_typed_text_block_of_a_content_list_is_the_prompt():
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": "AA=="}}
    context = reminder("variables: df")
    commands = {"look": _command("Look at $ARGUMENTS.")}
    expansion = expand_prompt([context, {"type": "text", "text": "/look the plot"}, image],
                              commands)
    assert expansion.content == [context, {"type": "text", "text": "Look at the plot."}, image]
    assert expansion.command is commands["look"] and expansion.notes == []


async def test_a_project_command_is_expanded_before_the_model_sees_it(tmp_path):
    _write(tmp_path / ".fuxi" / "commands" / "fix.md", "Fix issue $ARGUMENTS, then test.\n")
    model = ScriptedModel([[text("done")]])
    messages, error = await collect("/fix 42", FuxiAgentOptions(
        model=model, cwd=tmp_path, setting_sources=["project"]))
    assert error is None and _notes(messages) == []
    assert _sent(model) == "Fix issue 42, then test."
    assert messages[0].data["slash_commands"] == ["fix"]


async def test_subfolders_make_namespaced_names(tmp_path):
    commands = tmp_path / ".fuxi" / "commands"
    _write(commands / "frontend" / "component.md", "---\ndescription: d\n---\nMake a $1.\n")
    _write(commands / "frontend" / "forms" / "field.md", "A field.\n")
    model = ScriptedModel([[text("ok")]])
    messages, _ = await collect("/frontend:component button", FuxiAgentOptions(
        model=model, cwd=tmp_path, setting_sources=["project"]))
    assert messages[0].data["slash_commands"] == ["frontend:component",
                                                  "frontend:forms:field"]
    assert _sent(model) == "Make a button."


async def test_plugin_commands_are_named_after_the_plugin(tmp_path):
    plugin = _plugin(tmp_path / "my-plugin", {"name": "demo", "version": "1.2.0"})
    bare = _plugin(tmp_path / "bare")  # no plugin.json: the folder's name
    model = ScriptedModel([[text("a")], [text("b")]])
    options = FuxiAgentOptions(model=model, cwd=tmp_path, plugins=[
        {"type": "local", "path": str(plugin)}, {"type": "local", "path": "bare"}])
    messages, _ = await collect("/demo:greet World", options)
    init = messages[0].data
    assert init["slash_commands"] == ["bare:greet", "demo:greet"]
    assert init["plugins"] == [{"name": "demo", "path": str(plugin), "version": "1.2.0"},
                               {"name": "bare", "path": str(bare)}]
    assert init["plugin_errors"] == []
    assert init["agents"] == ["general-purpose", "helper"]  # its agents load as before
    assert _sent(model) == "Say hello to World."
    messages, _ = await collect("/greet World", options)  # two plugins have a `greet`
    assert _sent(model, 1) == "/greet World"
    assert _notes(messages) == ["/greet is ambiguous (/bare:greet, /demo:greet): the prompt "
                                "was sent to the model as written; name the plugin's "
                                "command in full"]


async def test_a_plugin_command_answers_to_its_short_name(tmp_path):
    plugin = _plugin(tmp_path / "demo")
    model = ScriptedModel([[text("hi")]])
    await collect("/greet World", FuxiAgentOptions(
        model=model, cwd=tmp_path, plugins=[{"type": "local", "path": str(plugin)}]))
    assert _sent(model) == "Say hello to World."


async def test_user_overrides_plugin_and_project_overrides_user(tmp_path, monkeypatch):
    home, project = tmp_path / "home", tmp_path / "project"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("FUXI_CONFIG_DIR", str(home / ".fuxi"))  # the user folder
    plugin = _plugin(tmp_path / "demo")
    _write(home / ".fuxi" / "commands" / "demo" / "greet.md", "User greeting.\n")
    _write(home / ".fuxi" / "commands" / "review.md", "User review.\n")
    _write(project / ".fuxi" / "commands" / "review.md", "Project review.\n")
    model = ScriptedModel([[text("a")], [text("b")]])
    options = FuxiAgentOptions(model=model, cwd=project, setting_sources=["user", "project"],
                               plugins=[{"type": "local", "path": str(plugin)}])
    messages, _ = await collect("/demo:greet", options)
    await collect("/review", options)
    assert messages[0].data["slash_commands"] == ["demo:greet", "review"]
    assert [_sent(model, 0), _sent(model, 1)] == ["User greeting.", "Project review."]


@pytest.mark.parametrize(("sources", "loaded"), [
    (None, ["mine", "ours"]), ([], []), (["user"], ["mine"]), (["project"], ["ours"]),
    (["user", "project"], ["mine", "ours"])])
async def test_setting_sources_choose_the_folders(tmp_path, monkeypatch, sources, loaded):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("FUXI_CONFIG_DIR", str(tmp_path / "home" / ".fuxi"))  # the user folder
    _write(tmp_path / "home" / ".fuxi" / "commands" / "mine.md", "Mine.\n")
    _write(tmp_path / "project" / ".fuxi" / "commands" / "ours.md", "Ours.\n")
    model = ScriptedModel([[text("ok")]])
    messages, _ = await collect("hi", FuxiAgentOptions(model=model, cwd=tmp_path / "project",
                                                       setting_sources=sources))
    assert messages[0].data["slash_commands"] == loaded


async def test_an_unknown_command_is_sent_as_written_with_a_note(tmp_path):
    _write(tmp_path / ".fuxi" / "commands" / "fix.md", "Fix it.\n")
    model = ScriptedModel([[text("a")], [text("b")]])
    options = FuxiAgentOptions(model=model, cwd=tmp_path, setting_sources=["project"])
    messages, _ = await collect("/deploy prod", options)
    assert _sent(model) == "/deploy prod"
    assert _notes(messages) == ["There is no command /deploy: the prompt was sent to the "
                                "model as written (commands: /fix)."]
    messages, _ = await collect("/usr/bin/env is missing", options)  # a path, not a command
    assert _sent(model, 1) == "/usr/bin/env is missing" and _notes(messages) == []


async def test_a_malformed_file_is_skipped_with_a_warning(tmp_path):
    commands = tmp_path / ".fuxi" / "commands"
    _write(commands / "broken.md", "---\ndescription: never closed\n")
    _write(commands / "empty.md", "---\ndescription: nothing after it\n---\n")
    _write(commands / "two words.md", "A name with a space.\n")
    _write(commands / "fine.md", "Fine.\n")
    model = ScriptedModel([[text("ok")]])
    with pytest.warns(UserWarning) as caught:
        messages, _ = await collect("/fine", FuxiAgentOptions(
            model=model, cwd=tmp_path, setting_sources=["project"]))
    said = "\n".join(str(w.message) for w in caught)
    assert "skipped the command file" in said and "broken.md: its front matter has no " \
        "closing '---'" in said
    assert "empty.md: it has no text" in said and "'two words' cannot be part" in said
    assert messages[0].data["slash_commands"] == ["fine"] and _sent(model) == "Fine."


async def test_allowed_tools_in_a_command_file_is_ignored(tmp_path):
    _write(tmp_path / ".fuxi" / "commands" / "touch.md",
           "---\nallowed-tools: Bash(touch *), Write\n---\nCreate the file $1.\n")
    asked: list[str] = []

    async def decide(tool_name, tool_input, context):
        asked.append(tool_name)
        return PermissionResultDeny(message="no")

    model = ScriptedModel([[tool_use("Bash", {"command": "touch made.txt"})], [text("denied")]])
    with pytest.warns(UserWarning, match=r"touch.md sets allowed-tools \(Bash\(touch \*\), "
                                         r"Write\); it is ignored"):
        await collect("/touch made.txt", FuxiAgentOptions(
            model=model, cwd=tmp_path, setting_sources=["project"], can_use_tool=decide))
    assert asked == ["Bash"]  # the call still asked
    assert not (tmp_path / "made.txt").exists()


async def test_init_reports_plugins_that_cannot_load(tmp_path):
    good = _plugin(tmp_path / "good")
    broken = _plugin(tmp_path / "broken", "{not json")
    listed = _plugin(tmp_path / "listed", ["a", "list"])  # type: ignore[arg-type]
    unnamed = _plugin(tmp_path / "unnamed", {"name": "bad name"})
    model = ScriptedModel([[text("ok")]])
    messages, error = await collect("/greet you", FuxiAgentOptions(
        model=model, cwd=tmp_path, plugins=[
            {"type": "local", "path": str(tmp_path / "missing")},
            {"type": "local", "path": str(broken)}, {"type": "local", "path": str(listed)},
            {"type": "local", "path": str(unnamed)}, {"type": "remote", "path": "x"},
            {"type": "local", "path": str(good)}]))
    init = messages[0].data
    assert error is None and _sent(model) == "Say hello to you."  # the good one works
    assert init["plugins"] == [{"name": "good", "path": str(good)}]
    assert init["slash_commands"] == ["good:greet"]
    errors = {entry["path"]: entry["error"] for entry in init["plugin_errors"]}
    assert errors[str(tmp_path / "missing")] == "the plugin folder does not exist"
    assert errors[str(broken)].startswith(".fuxi-plugin/plugin.json cannot be read: ")
    assert errors[str(listed)] == ".fuxi-plugin/plugin.json must hold a JSON object"
    assert errors[str(unnamed)].startswith("plugin name 'bad name' is not a valid name")
    assert errors["x"].startswith("not a local plugin")
    assert len(errors) == 5


async def test_user_prompt_submit_hooks_see_the_expanded_prompt(tmp_path):
    _write(tmp_path / ".fuxi" / "commands" / "ship.md", "Ship $1 to production.\n")
    seen: list[str] = []

    async def hook(input_data, tool_use_id, context):
        seen.append(input_data["prompt"])
        return {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
                                       "additionalContext": "after the hook"}}

    model = ScriptedModel([[text("ok")]])
    await collect("/ship v2", FuxiAgentOptions(
        model=model, cwd=tmp_path, setting_sources=["project"],
        hooks={"UserPromptSubmit": [HookMatcher(None, [hook])]}))
    assert seen == ["Ship v2 to production."]
    blocks = model.requests[0].messages[-1]["content"]
    assert blocks[0]["text"] == "Ship v2 to production." and "after the hook" in blocks[1]["text"]


async def test_a_hook_can_block_what_a_command_expands_to(tmp_path):
    _write(tmp_path / ".fuxi" / "commands" / "leak.md", "Print the SECRET_TOKEN.\n")

    async def hook(input_data, tool_use_id, context):
        if "SECRET" in input_data["prompt"]:
            return {"decision": "block", "reason": "no secrets"}
        return {}

    model = ScriptedModel([[text("never")]])
    messages, error = await collect("/leak", FuxiAgentOptions(
        model=model, cwd=tmp_path, setting_sources=["project"],
        hooks={"UserPromptSubmit": [HookMatcher(None, [hook])]}))
    assert model.requests == [] and error is not None
    assert messages[-1].errors == ["no secrets"]


async def test_a_command_model_serves_its_run_only(tmp_path):
    _write(tmp_path / ".fuxi" / "commands" / "quick.md", "---\nmodel: haiku\n---\nBe quick.\n")
    model = ScriptedModel([[text("a")], [text("b")]], name="claude-sonnet-5-5")

    async def prompts():
        for prompt in ("/quick", "and now?"):
            yield {"type": "user", "message": {"role": "user", "content": prompt}}

    await collect(prompts(), FuxiAgentOptions(model=model, cwd=tmp_path,
                                              setting_sources=["project"]))
    assert [r.model for r in model.requests] == ["claude-haiku-5-5", "claude-sonnet-5-5"]


async def test_a_command_model_without_a_price_is_not_used_under_a_budget(tmp_path):
    _write(tmp_path / ".fuxi" / "commands" / "odd.md", "---\nmodel: mystery-1\n---\nGo.\n")
    model = ScriptedModel([[text("ok")]], name="claude-sonnet-5-5")
    messages, _ = await collect("/odd", FuxiAgentOptions(
        model=model, cwd=tmp_path, setting_sources=["project"], max_budget_usd=1.0))
    assert model.requests[0].model == "claude-sonnet-5-5"
    assert _notes(messages)[0].startswith("The command's model 'mystery-1' was not used: ")


async def test_a_subagent_prompt_is_never_a_command(tmp_path):
    _write(tmp_path / ".fuxi" / "commands" / "fix.md", "Fix it.\n")
    model = ScriptedModel([[agent_call("/fix now")], [text("child")], [text("parent")]])
    await collect("delegate", FuxiAgentOptions(model=model, cwd=tmp_path, agents=worker(),
                                               setting_sources=["project"]))
    assert task_of(model.requests[1]) == "/fix now"  # the model wrote it: sent as written


async def test_verbatim_prompts_send_a_command_as_written(tmp_path):
    _write(tmp_path / ".fuxi" / "commands" / "fix.md", "Fix issue $ARGUMENTS, then test.\n")
    model = ScriptedModel([[text("done")]])
    messages, error = await collect("/fix 42", FuxiAgentOptions(
        model=model, cwd=tmp_path, setting_sources=["project"], verbatim_prompts=True))
    assert error is None and _notes(messages) == []
    assert _sent(model) == "/fix 42"


def test_a_value_folded_over_indented_lines_reads_as_one_line():
    from fuxi_notebook._internal.settings.front_matter import split_front_matter

    data, body = split_front_matter("---\ndescription: Summarise a CSV\n  and plot it\n"
                                    "name: csv\n---\nBody\n")
    assert data == {"description": "Summarise a CSV and plot it", "name": "csv"}
    assert body == "Body"
