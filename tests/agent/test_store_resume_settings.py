"""Resuming from a SessionStore applies the user's settings, as the comparable SDK's e2e
test_session_store_resume_settings checks it: the user folder is the one the options'
`env` names (`FUXI_CONFIG_DIR`, as that SDK's CLI reads `CLAUDE_CONFIG_DIR` from the env
it is started with), and its settings.json applies to the resumed session even though no
transcript exists on disk. (The e2e test also imports a private helper,
`_internal.session_resume._write_redacted_credentials`, to copy an OAuth login; there is
no login file here, only an API key; that one private helper is provided all the same,
in `_internal/session_resume.py`, so the test runs renamed as it is.)"""

from __future__ import annotations

import json
import shutil

from fuxi_notebook import (
    FuxiAgentOptions,
    InMemorySessionStore,
    ResultMessage,
    ScriptedModel,
    SystemMessage,
    query,
)
from fuxi_notebook.testing import text


async def _run(options: FuxiAgentOptions, prompt: str) -> tuple[dict, ResultMessage]:
    init: dict | None = None
    result: ResultMessage | None = None
    async for message in query(prompt=prompt, options=options):
        if isinstance(message, SystemMessage) and message.subtype == "init":
            init = message.data
        elif isinstance(message, ResultMessage):
            result = message
    assert init is not None and result is not None and not result.is_error
    return init, result


async def test_a_store_resume_applies_the_user_settings_of_the_env_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("FUXI_CONFIG_DIR", str(tmp_path / "process-folder"))
    store, config = InMemorySessionStore(), tmp_path / "caller-config"
    config.mkdir()
    cwd = tmp_path / "project"
    cwd.mkdir()
    script = ScriptedModel([[text("one")], [text("two")]])

    def options(**extra: object) -> FuxiAgentOptions:
        return FuxiAgentOptions(model=script, cwd=str(cwd), session_store=store, max_turns=1,
                                env={"FUXI_CONFIG_DIR": str(config)}, **extra)  # type: ignore[arg-type]

    first_init, first = await _run(options(), "Reply with exactly: one")
    assert first_init["output_style"] == "default"
    (config / "settings.json").write_text(json.dumps({"outputStyle": "Explanatory"}))
    shutil.rmtree(config / "projects")  # the local copy: the resume can only use the store
    resumed_init, resumed = await _run(options(resume=first.session_id), "Reply with exactly: two")
    assert resumed.session_id == first.session_id and resumed_init["output_style"] == "Explanatory"
    assert [m["role"] for m in script.requests[-1].messages] == ["user", "assistant", "user"]
    system = " ".join(block["text"] for block in script.requests[-1].system)
    assert "# Output style: Explanatory" in system  # the style is applied too
    assert not (tmp_path / "process-folder").exists()


async def test_the_env_folder_holds_the_default_session_files(tmp_path, monkeypatch):
    """Without a store, the sessions are written under that folder's `projects/`."""
    monkeypatch.delenv("FUXI_SKIP_SESSION_PERSISTENCE", raising=False)
    monkeypatch.setenv("FUXI_CONFIG_DIR", str(tmp_path / "process-folder"))
    config = tmp_path / "caller-config"
    options = FuxiAgentOptions(model=ScriptedModel([[text("ok")]]), cwd=str(tmp_path),
                               max_turns=1, env={"FUXI_CONFIG_DIR": str(config)})
    _, result = await _run(options, "hello")
    assert list((config / "projects").rglob(f"{result.session_id}.jsonl"))
    assert not (tmp_path / "process-folder").exists()


def test_the_private_helper_that_test_imports_writes_a_copy_without_refresh_tokens(tmp_path):
    from fuxi_notebook._internal.session_resume import _write_redacted_credentials

    login = {"fuxiAiOauth": {"accessToken": "a", "refreshToken": "r"},
             "others": [{"refreshToken": "x", "keep": 1}]}
    copy = tmp_path / ".credentials.json"
    _write_redacted_credentials(json.dumps(login), copy)
    assert json.loads(copy.read_text()) == {"fuxiAiOauth": {"accessToken": "a"},
                                            "others": [{"keep": 1}]}
    assert copy.stat().st_mode & 0o777 == 0o600
    _write_redacted_credentials("not json", copy)
    assert copy.read_text() == "not json"
    _write_redacted_credentials(None, tmp_path / "absent.json")
    assert not (tmp_path / "absent.json").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".credentials.json"]  # no temp


async def test_the_env_folder_is_protected_as_the_user_folder_is(tmp_path, monkeypatch):
    """A session whose env names another user folder: writing its settings.json needs
    confirmation even in acceptEdits (as writing the process's own folder does), by an
    edit tool and by a shell command; the process's folder stays protected too."""
    from fuxi_notebook.testing import tool_use

    process = tmp_path / "process-folder"
    monkeypatch.setenv("FUXI_CONFIG_DIR", str(process))
    config = tmp_path / "caller-config"
    config.mkdir()
    process.mkdir()
    asked: list[str] = []

    async def deny(name: str, tool_input: dict, context: object) -> object:
        from fuxi_notebook import PermissionResultDeny

        asked.append(name)
        return PermissionResultDeny(message="no")

    script = ScriptedModel([
        [tool_use("Write", {"file_path": str(config / "settings.json"), "content": "{}"})],
        [tool_use("Bash", {"command": f"echo '{{}}' > {config}/settings.json"})],
        [tool_use("Write", {"file_path": str(process / "settings.json"), "content": "{}"})],
        [text("done")]])
    options = FuxiAgentOptions(model=script, cwd=str(tmp_path), permission_mode="acceptEdits",
                               env={"FUXI_CONFIG_DIR": str(config)}, can_use_tool=deny)
    await _run(options, "change the settings")
    assert asked == ["Write", "Bash", "Write"]
    assert not (config / "settings.json").exists() and not (process / "settings.json").exists()
