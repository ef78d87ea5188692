"""The system prompt: the built-in agent prompt, or the user's, plus project memory.

The text is byte-stable for a session (no timestamps), so the prompt cache stays warm.
The project's FUXI.md files (settings/memory.py, per `setting_sources`) are appended:
persistent rules belong there; an output style adds to (or replaces) the built-in prompt.

`snapshot` (on the preset and custom forms, True unless set False) is the comparable SDK
0.2.189's flag: the prompt as built at the session's first model request is frozen for
the session (`refresh_system`, which the loop calls before each request), so FUXI.md
edited later, or a `cd` in the shell, does not change it (nor break the prompt cache).
`snapshot: False` builds it again before every request: the memory files are read again
and the working directory is the shell's current one. A session here is one `query()`,
one `FuxiSDKClient` connection (until `/clear`) or one notebook cell.
"""

from __future__ import annotations

import platform
from pathlib import Path
from typing import Any

from ...options import FuxiAgentOptions

__all__ = ["DEFAULT_SYSTEM_PROMPT", "MAX_PROMPT_FILE_CHARS", "PRESETS", "SystemBlocks",
           "refresh_system", "snapshot_of", "system_blocks", "system_prompt_texts"]

DEFAULT_SYSTEM_PROMPT = """\
You are Fuxi, an autonomous software agent working for the user through tools.
Work in small verified steps: look before you change, read a file before editing it, and
check the result of every command. Prefer the dedicated tools (Read, Edit, Write, Glob,
Grep) over shell equivalents. When a tool call is denied, do not retry the same call:
adapt, or explain what you need. Finish with a short, plain answer of what you did.

Environment:
- Working directory: {cwd}
- Platform: {platform}
"""

PRESETS = ("fuxi_code", "claude_code")  # the comparable SDK's name, after the rename too
#: a `system_prompt` file longer than this is refused: about a million tokens, more than
#: any model's context window holds
MAX_PROMPT_FILE_CHARS = 4 << 20


def system_prompt_texts(prompt: Any, cwd: Path) -> list[str]:
    """The prompt text(s) of `system_prompt`: None or `{"type": "preset", "preset":
    "fuxi_code", "append": ...}` is the built-in agent prompt (plus `append`), a string or
    `{"type": "custom", "prompt": ...}` replaces it, `{"type": "file", "path": ...}` reads
    it from a file. Anything else is a ConfigurationError naming what was given."""
    from ...errors import ConfigurationError

    default = DEFAULT_SYSTEM_PROMPT.format(cwd=cwd, platform=platform.system())
    if prompt is None or isinstance(prompt, str):
        return [default if prompt is None else prompt]
    kind = prompt.get("type") if isinstance(prompt, dict) else None
    if kind in ("preset", "custom"):
        snapshot_of(prompt)  # a bad flag is one line, now
    if kind == "preset" and prompt.get("preset") in PRESETS:
        append = prompt.get("append")
        return [default, *([str(append)] if append else [])]
    if kind == "custom" and isinstance(prompt.get("prompt"), str):
        return [prompt["prompt"]]
    if kind == "file" and isinstance(prompt.get("path"), str | Path):
        path = Path(prompt["path"]).expanduser()
        if not path.is_absolute():
            path = cwd / path
        return [_prompt_file(path)]
    raise ConfigurationError(
        "system_prompt must be None, a string, {'type': 'preset', 'preset': 'fuxi_code', "
        "'append': ...}, {'type': 'custom', 'prompt': ...} or {'type': 'file', 'path': ...}; "
        f"not {prompt!r:.200}")


def snapshot_of(prompt: Any) -> bool:
    """Whether `system_prompt` is frozen at the first request (`snapshot`, True unless a
    preset or custom form sets it False; a value that is not a bool is one line)."""
    if not isinstance(prompt, dict) or "snapshot" not in prompt:
        return True
    from ...errors import ConfigurationError

    value = prompt["snapshot"]
    if not isinstance(value, bool):
        raise ConfigurationError(f"system_prompt snapshot must be True or False, not "
                                 f"{value!r:.80}")
    return value


def _prompt_file(path: Path) -> str:
    """The whole text of a `system_prompt` file, through the bounded reader (a FIFO, a
    device, a file over MAX_PROMPT_FILE_CHARS or not UTF-8 is one ConfigurationError line
    naming it: half a prompt is never sent)."""
    from ...errors import ConfigurationError
    from ..common.reading import read_config

    text = read_config(path, None, MAX_PROMPT_FILE_CHARS, "system_prompt file")
    if text is None:
        raise ConfigurationError(f"system_prompt file {path} cannot be read: No such file "
                                 "or directory")
    return text


class SystemBlocks(list[dict[str, Any]]):
    """The `system` parameter as built, and whether it may still change: `snapshot` (it
    is to be frozen at the first request) and `frozen` (it is never built again)."""

    snapshot: bool = True
    frozen: bool = False


def system_blocks(options: FuxiAgentOptions, cwd: Path, project: Any = None
                  ) -> SystemBlocks:
    """The `system` parameter for the session's requests: the prompt, the output style
    (after the built-in prompt, or instead of it when the style does not keep the coding
    instructions), then FUXI.md (`project`: settings/project.py). Built again at the first
    request, then kept (`snapshot`), or before every request (see `refresh_system`)."""
    texts = system_prompt_texts(options.system_prompt, cwd)
    style = project.output_style if project is not None else None
    if style is not None and style.text:
        prompt = options.system_prompt
        builtin = prompt is None or (isinstance(prompt, dict) and prompt.get("type") == "preset")
        if builtin and not style.keep_coding_instructions:
            texts = [style.text, *texts[1:]]  # instead of the built-in prompt (`append` stays)
        else:
            texts = [*texts, style.text]
    memory = project.memory_blocks() if project is not None else []
    blocks = SystemBlocks({"type": "text", "text": part} for part in [*texts, *memory] if part)
    blocks.snapshot = snapshot_of(options.system_prompt)
    return blocks


def refresh_system(session: Any) -> None:
    """Before a model request: the first one builds the prompt as it is now (the memory
    files read again) and, under `snapshot`, freezes it for the session; without it,
    every request builds it again, in the shell's current directory. Nothing changed: the
    very same list stays (the request meter and the prompt cache key on it). A prompt that
    cannot be built now (a file gone) stays as it was."""
    current = session.system
    if not isinstance(current, SystemBlocks) or current.frozen:
        return
    from ...errors import ConfigurationError

    try:
        fresh = _rebuilt(session, current.snapshot)
    except (ConfigurationError, OSError):
        fresh = current
    if fresh == current:
        current.frozen = current.snapshot
        return
    fresh.frozen = current.snapshot
    session.system = fresh


def _rebuilt(session: Any, snapshot: bool) -> SystemBlocks:
    """The prompt of `session` built now: its project with its memory files read again;
    the working directory is the session's (`snapshot`) or the shell's current one."""
    import dataclasses

    from ..common.switches import config_dir_of
    from ..settings.files import user_folder
    from ..settings.memory import load_memory
    from ..settings.project import ProjectSettings

    project = session.project
    if isinstance(project, ProjectSettings):
        with config_dir_of(session.options.env):
            memory, _ = load_memory(project.sources, project.root, user_folder=user_folder())
        project = dataclasses.replace(project, memory=memory)
    cwd = session.cwd if snapshot else (session.tool_ctx.shell_cwd or session.cwd)
    return system_blocks(session.options, cwd, project)
