"""The comparable SDK's `system_prompt` and `tools` presets, after the rename."""

from __future__ import annotations

import warnings

import pytest

from fuxi_notebook import FuxiAgentOptions, ScriptedModel
from fuxi_notebook._internal.agent.assemble import build_session
from fuxi_notebook._internal.agent.prompt import DEFAULT_SYSTEM_PROMPT
from fuxi_notebook._internal.models.script import text
from fuxi_notebook.errors import ConfigurationError


def _session(tmp_path, **options):
    return build_session(FuxiAgentOptions(model=ScriptedModel([[text("hi")]]), cwd=tmp_path,
                                    **options))


def _system(session):
    return [block["text"] for block in session.system]


@pytest.mark.parametrize("preset", ["fuxi_code", "claude_code"])
def test_the_preset_is_the_built_in_prompt_plus_what_is_appended(tmp_path, preset):
    session = _session(tmp_path, system_prompt={"type": "preset", "preset": preset,
                                                "append": "Answer in French."})
    first = DEFAULT_SYSTEM_PROMPT.split("{", 1)[0]
    assert _system(session)[0].startswith(first) and _system(session)[1] == "Answer in French."
    assert _system(_session(tmp_path, system_prompt={"type": "preset", "preset": preset})) \
        == _system(_session(tmp_path))  # without `append`: the built-in prompt alone


def test_custom_and_file_prompts_replace_it(tmp_path):
    assert _system(_session(tmp_path, system_prompt={"type": "custom", "prompt": "Be brief."})) \
        == ["Be brief."]
    (tmp_path / "prompt.md").write_text("From a file.")
    assert _system(_session(tmp_path, system_prompt={"type": "file", "path": "prompt.md"})) \
        == ["From a file."]


@pytest.mark.parametrize("prompt, needle", [
    ({"type": "preset", "preset": "other"}, "system_prompt must be"),
    ({"type": "file", "path": "missing.md"}, "cannot be read"),
    (42, "system_prompt must be"),
])
def test_a_bad_system_prompt_is_refused_at_startup(tmp_path, prompt, needle):
    with pytest.raises(ConfigurationError, match=needle):
        _session(tmp_path, system_prompt=prompt)


def test_the_tools_preset_offers_every_built_in(tmp_path):
    preset = _session(tmp_path, tools={"type": "preset", "preset": "fuxi_code"})
    assert preset.registry.names() == _session(tmp_path).registry.names()
    with pytest.raises(ConfigurationError, match=r"options\.tools must be"):
        _session(tmp_path, tools={"type": "preset", "preset": "everything"})


def test_env_chooses_the_model_and_the_thinking_budget_as_the_sdks_cli_would(tmp_path,
                                                                              monkeypatch):
    monkeypatch.delenv("FUXI_MODEL", raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-used-0000000000")  # no request
    session = build_session(FuxiAgentOptions(cwd=tmp_path, env={"ANTHROPIC_MODEL": "claude-opus-5",
                                                          "MAX_THINKING_TOKENS": "4096"}))
    assert session.model_name == "claude-opus-5"
    assert session.request_params()["thinking"] == {"type": "enabled", "budget_tokens": 4096}
    explicit = build_session(FuxiAgentOptions(cwd=tmp_path, model="claude-haiku-5-5",
                                        env={"ANTHROPIC_MODEL": "claude-opus-5"}))
    assert explicit.model_name == "claude-haiku-5-5"  # the option wins over env
    with pytest.raises(ConfigurationError, match="MAX_THINKING_TOKENS must be a whole number"):
        build_session(FuxiAgentOptions(cwd=tmp_path, env={"MAX_THINKING_TOKENS": "lots"}))


async def test_a_clean_run_sends_stderr_nothing(tmp_path):
    """As the comparable SDK's e2e test_stderr_callback: no debug mode, no lines."""
    from .helpers import collect

    lines: list[str] = []
    options = FuxiAgentOptions(model=ScriptedModel([[text("2")]]), cwd=tmp_path,
                               stderr=lines.append)
    await collect("What is 1+1?", options)
    assert lines == []


async def test_debug_sends_a_line_per_request_response_and_tool_call(tmp_path):
    from fuxi_notebook._internal.models.script import tool_use

    from .helpers import collect

    lines: list[str] = []
    log = tmp_path / "debug.log"
    model = ScriptedModel([[tool_use("Glob", {"pattern": "*"})], [text("done")]])
    options = FuxiAgentOptions(model=model, cwd=tmp_path, allowed_tools=["Glob"],
                               stderr=lines.append,
                               extra_args={"debug": None, "debug-file": str(log)})
    await collect("look", options)
    assert log.read_text().splitlines() == lines  # the same lines, in the file too
    said = [line.split("] ", 1)[1] for line in lines]
    assert [line.split(" ")[0] for line in said] == ["request", "response", "tool",
                                                    "request", "response"]
    assert said[0] == "request 1 to scripted-model: 1 messages"
    assert said[2].startswith("tool Glob (") and " finished in " in said[2]


def test_user_is_accepted_and_extra_args_warn_that_they_do_nothing(tmp_path):
    _session(tmp_path, user="analyst")
    with pytest.warns(UserWarning, match=r"\['verbose'\] have no effect"):
        _session(tmp_path, extra_args={"verbose": None, "replay-user-messages": None})
    with warnings.catch_warnings():  # the flags that mean something here
        warnings.simplefilter("error")
        _session(tmp_path, extra_args={"replay-user-messages": None, "debug": None,
                                       "debug-file": str(tmp_path / "debug.log")})
