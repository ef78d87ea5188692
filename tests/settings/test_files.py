"""Settings sources: which files, precedence, unknown keys, and errors that name the file."""

from __future__ import annotations

import pytest

from fuxi_notebook._internal.permissions.settings import load_settings
from fuxi_notebook._internal.settings.files import check_sources, settings_path
from fuxi_notebook._internal.settings.project import load_project_settings
from fuxi_notebook.errors import ConfigurationError

from .helpers import project_settings, user_dir, write_json

ALL = ["user", "project", "local"]


def test_the_three_files(tmp_path):
    assert settings_path("user", tmp_path) == user_dir() / "settings.json"
    assert settings_path("project", tmp_path) == tmp_path / ".fuxi" / "settings.json"
    assert settings_path("local", tmp_path) == tmp_path / ".fuxi" / "settings.local.json"


def test_sources_are_checked_and_put_in_precedence_order():
    assert check_sources(["local", "user"]) == ("user", "local")
    with pytest.raises(ConfigurationError, match="unknown setting source 'global'"):
        check_sources(["global"])
    with pytest.raises(ConfigurationError, match="must be a list"):
        check_sources("project")


def test_scalars_local_over_project_over_user(tmp_path):
    write_json(user_dir() / "settings.json", {"model": "user-model", "outputStyle": "Learning",
                                              "permissions": {"defaultMode": "plan"}})
    project_settings(tmp_path, {"model": "project-model",
                                "permissions": {"defaultMode": "dontAsk"}})
    project_settings(tmp_path, {"model": "local-model"}, "settings.local.json")
    settings = load_project_settings(ALL, tmp_path)
    assert (settings.model, settings.model_source) == ("local-model", "local")
    assert settings.mode == "dontAsk"  # local sets none: the project's applies
    assert settings.output_style.name == "Learning"
    only_user = load_project_settings(["user"], tmp_path)
    assert (only_user.model, only_user.mode) == ("user-model", "plan")


def test_rules_add_up_and_env_merges_per_key(tmp_path):
    write_json(user_dir() / "settings.json", {
        "env": {"A": "user", "B": "user"},
        "permissions": {"allow": ["Read"], "deny": ["Bash(curl *)"], "ask": ["Write"]}})
    project_settings(tmp_path, {"env": {"B": "project", "C": "project"},
                                "permissions": {"allow": ["Edit"], "deny": ["Read(.env)"]}})
    project_settings(tmp_path, {"env": {"C": "local"}, "permissions": {"ask": ["Bash(git *)"]}},
                     "settings.local.json")
    settings = load_project_settings(ALL, tmp_path, trusted=True)
    assert settings.env == {"A": "user", "B": "project", "C": "local"}
    assert settings.rules("allow") == ["Read", "Edit"]
    assert settings.rules("deny") == ["Bash(curl *)", "Read(.env)"]
    assert settings.rules("ask") == ["Write", "Bash(git *)"]
    roots = [p.root for p in settings.permissions]
    assert roots == [user_dir(), tmp_path.resolve(), tmp_path.resolve()]


def test_a_source_not_named_is_not_read(tmp_path):
    project_settings(tmp_path, {"model": "project-model"})
    assert load_project_settings(["user"], tmp_path).model is None
    assert load_project_settings([], tmp_path).files == []


def test_unknown_keys_are_warnings_not_errors(tmp_path):
    project_settings(tmp_path, {
        "$schema": "https://example/schema.json", "spinnerTipsEnabled": False,
        "statusLine": {"type": "command"},
        "permissions": {"deny": ["Bash(rm *)"], "disableBypassPermissionsMode": "disable"},
        "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "touch X"}]}],
                  "pretooluse": [],
                  "Stop": [{"hooks": [{"type": "prompt", "prompt": "Check"},
                                      {"type": "command", "command": "true", "async": True}]}]}})
    settings = load_project_settings(["project"], tmp_path)
    text = "\n".join(settings.warnings)
    assert "spinnerTipsEnabled, statusLine" in text and "$schema" not in text
    assert "disableBypassPermissionsMode" in text
    assert "'SessionStart' is not supported" in text
    assert "did you mean 'PreToolUse'" in text
    assert "type 'prompt'" in text and "key(s) async" in text
    assert settings.rules("deny") == ["Bash(rm *)"]
    assert [spec.command for spec in settings.hook_commands] == []  # untrusted
    trusted = load_project_settings(["project"], tmp_path, trusted=True)
    assert [(s.event, s.command) for s in trusted.hook_commands] == [("Stop", "true")]


def test_invalid_json_names_the_file(tmp_path):
    path = project_settings(tmp_path, '{"model": "x",}')
    with pytest.raises(ConfigurationError, match=f"settings file {path}: invalid JSON"):
        load_project_settings(["project"], tmp_path)


def test_an_empty_file_is_no_settings(tmp_path):
    project_settings(tmp_path, "  \n")
    assert load_project_settings(["project"], tmp_path).model is None


@pytest.mark.parametrize(("data", "key"), [
    ([1, 2], "expected a JSON object"),
    ({"model": 3}, "model must be a non-empty string"),
    ({"outputStyle": ["x"]}, "outputStyle must be a non-empty string"),
    ({"env": ["A=1"]}, "env must be an object"),
    ({"env": {"PORT": 8080}}, "env.PORT must be a string"),
    ({"permissions": []}, "'permissions' must be an object"),
    ({"permissions": {"allow": "Bash"}}, "permissions.allow must be a list of strings"),
    ({"permissions": {"defaultMode": "yolo"}}, "permissions.defaultMode 'yolo' is not a mode"),
    ({"hooks": []}, "hooks must be an object"),
    ({"hooks": {"PreToolUse": {}}}, "hooks.PreToolUse must be a list"),
    ({"hooks": {"PreToolUse": [{"matcher": 1, "hooks": []}]}}, r"hooks.PreToolUse\[0\].matcher"),
    ({"hooks": {"PreToolUse": [{"matcher": "Bash(", "hooks": []}]}}, "not a valid regex"),
    ({"hooks": {"PreToolUse": [{"matcher": "Bash"}]}}, r"hooks.PreToolUse\[0\].hooks must be"),
    ({"hooks": {"Stop": [{"hooks": [{"type": "command"}]}]}},
     r"hooks.Stop\[0\].hooks\[0\].command must be a non-empty string"),
    ({"hooks": {"Stop": [{"hooks": [{"command": "x", "timeout": 0}]}]}},
     r"hooks.Stop\[0\].hooks\[0\].timeout must be a positive number"),
    ({"hooks": {"Stop": [{"hooks": [{"command": "x", "timeout": True}]}]}}, "timeout"),
    ({"disableAllHooks": "yes"}, "disableAllHooks must be true or false"),
])
def test_a_wrong_type_names_the_file_and_the_key(tmp_path, data, key):
    path = project_settings(tmp_path, data)
    with pytest.raises(ConfigurationError, match=key) as caught:
        load_project_settings(["project"], tmp_path)
    assert str(path) in str(caught.value)


def test_user_file_errors_name_the_user_file(tmp_path):
    path = write_json(user_dir() / "settings.json", "{nope")
    with pytest.raises(ConfigurationError, match=str(path)):
        load_project_settings(["user"], tmp_path)


def test_a_settings_file_that_links_out_of_the_project_is_skipped(tmp_path):
    outside = write_json(tmp_path / "elsewhere" / "s.json", {"model": "x"})
    project = tmp_path / "project"
    (project / ".fuxi").mkdir(parents=True)
    (project / ".fuxi" / "settings.json").symlink_to(outside)
    settings = load_project_settings(["project"], project)
    assert settings.model is None
    assert any("leads outside" in w for w in settings.warnings)


def test_a_fifo_is_not_read(tmp_path):
    import os

    (tmp_path / ".fuxi").mkdir()
    os.mkfifo(tmp_path / ".fuxi" / "settings.json")
    settings = load_project_settings(["project"], tmp_path)  # returns: nothing blocks
    assert any("not a regular file" in w for w in settings.warnings)


def test_the_project_in_the_home_folder_is_read_once(tmp_path, monkeypatch):
    """root = the folder holding the user folder: its .fuxi/settings.json is the user's own
    file, read as "user" (trusted), not a second time as "project" (held back)."""
    monkeypatch.setenv("FUXI_CONFIG_DIR", str(tmp_path / ".fuxi"))
    project_settings(tmp_path, {"permissions": {"allow": ["Bash(make *)"]}})
    (tmp_path / ".fuxi" / "FUXI.md").write_text("mine")
    settings = load_project_settings(ALL, tmp_path)
    assert settings.rules("allow") == ["Bash(make *)"] and not settings.needs_trust
    assert [m.source for m in settings.memory] == ["user"]


def test_load_settings_keeps_its_strict_behaviour(tmp_path):
    path = project_settings(tmp_path, {"permissions": {"allow": ["Read"], "bogus": 1}})
    with pytest.raises(ConfigurationError, match="unknown permissions key"):
        load_settings(str(path), tmp_path)
    ok = load_settings('{"permissions": {"deny": ["Bash"], "defaultMode": "plan"}}', tmp_path)
    assert ok.deny == ["Bash"] and ok.default_mode == "plan" and ok.root == tmp_path
