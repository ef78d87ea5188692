"""The system prompt: the built-in agent prompt, or the user's, plus project memory.

The text is byte-stable for a session (no timestamps), so the prompt cache stays warm.
With `setting_sources` containing "project" (or "user"), FUXI.md from the working
directory (or `~/.fuxi/FUXI.md`) is appended: persistent rules belong there.
"""

from __future__ import annotations

import platform
from pathlib import Path
from typing import Any

from ..options import FuxiAgentOptions

__all__ = ["DEFAULT_SYSTEM_PROMPT", "system_blocks"]

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

_MEMORY_FILE = "FUXI.md"


def _memory(options: FuxiAgentOptions, cwd: Path) -> list[str]:
    sources = options.setting_sources or []
    places = []
    if "user" in sources:
        places.append(Path.home() / ".fuxi" / _MEMORY_FILE)
    if "project" in sources:
        places.append(cwd / _MEMORY_FILE)
    texts = []
    for place in places:
        if place.is_file():
            texts.append(f"Contents of {place}:\n\n{place.read_text(encoding='utf-8')}")
    return texts


def system_blocks(options: FuxiAgentOptions, cwd: Path) -> list[dict[str, Any]]:
    """The `system` parameter for every request of the session."""
    if options.system_prompt is None:
        text = DEFAULT_SYSTEM_PROMPT.format(cwd=cwd, platform=platform.system())
    else:
        text = options.system_prompt
    parts = [text, *_memory(options, cwd)]
    return [{"type": "text", "text": part} for part in parts if part]
