"""The demo: an agent fixes a failing test in a tiny project, printed as it streams.

Without `ANTHROPIC_API_KEY` the model is played by the fake Messages API server from a
recorded script (the real `anthropic` client talks to it over HTTP on 127.0.0.1); the
tools run for real in a temporary folder. With the key set, the real API plays the model.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import ResultError
from ..options import FuxiAgentOptions
from ..types import (
    AssistantMessage,
    Message,
    ResultMessage,
    SystemMessage,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from .agent.query import query
from .models.anthropic import AnthropicModel, resolve_model
from .models.base import Model
from .models.script import Turn, text, tool_use

__all__ = ["DEMO_FILES", "DEMO_PROMPT", "demo_script", "run_demo"]

DEMO_PROMPT = "The test in this project fails. Find the bug, fix it, and run the test."
DEMO_FILES = {
    "calc.py": 'def add(a, b):\n    """Return the sum of a and b."""\n    return a - b\n',
    "test_calc.py": (
        "from calc import add\n\nassert add(2, 3) == 5, add(2, 3)\nprint('test_calc: ok')\n"
    ),
}
DEMO_ALLOWED = ["Read", "Glob", "Grep", "Edit", "Bash(python3 test_calc.py)"]


def demo_script() -> list[Turn]:
    """The recorded session the fake server plays."""
    return [
        Turn([text("I'll look at the project first."), tool_use("Glob", {"pattern": "**/*.py"})]),
        Turn([tool_use("Read", {"file_path": "calc.py"}),
              tool_use("Read", {"file_path": "test_calc.py"})]),
        Turn([text("`add` subtracts instead of adding. Fixing it."),
              tool_use("Edit", {"file_path": "calc.py", "old_string": "return a - b",
                                "new_string": "return a + b"})]),
        Turn([tool_use("Bash", {"command": "python3 test_calc.py"})]),
        Turn([text("Fixed: `add` in calc.py returned `a - b`; it now returns `a + b`, "
                   "and `python3 test_calc.py` passes.")]),
    ]


def _short(value: Any, limit: int = 300) -> str:
    rendered = value if isinstance(value, str) else json.dumps(value)
    return rendered if len(rendered) <= limit else rendered[:limit] + " …"


def describe(message: Message) -> str | None:
    """One readable line (or a few) for a message; None for messages not shown."""
    if isinstance(message, SystemMessage):
        data = message.data
        return f"[init] session {data['session_id'][:8]} · model {data['model']} · tools " \
               f"{', '.join(data['tools'])}"
    if isinstance(message, AssistantMessage):
        block = message.content[0]
        if isinstance(block, TextBlock):
            return f"[fuxi] {block.text}"
        if isinstance(block, ThinkingBlock):
            return f"[thinking] {_short(block.thinking)}"
        if isinstance(block, ToolUseBlock):
            return f"[tool call] {block.name} {_short(block.input)}"
    if isinstance(message, UserMessage) and isinstance(message.content, list):
        block = message.content[0]
        if isinstance(block, ToolResultBlock):
            mark = "error" if block.is_error else "result"
            return f"[tool {mark}] {_short(block.content).replace(chr(10), chr(10) + '    ')}"
    if isinstance(message, ResultMessage):
        from .models.pricing import format_cost  # "price unknown", never a made-up $0

        return (f"[result] {message.subtype} · {message.num_turns} turns · "
                f"{message.usage and message.usage['output_tokens']} output tokens · "
                f"{format_cost(message.total_cost_usd, estimate=True)} · "
                f"{message.duration_ms} ms")
    return None


async def run_demo(emit: Callable[[str], None] = print, *, model: Model | None = None) -> int:
    """Run the demo and print each message; returns a process exit code. The workspace
    is a temporary folder, removed when the demo ends (also on an error or Ctrl-C)."""
    with tempfile.TemporaryDirectory(prefix="fuxi-demo-") as name:
        folder = Path(name)
        for file, content in DEMO_FILES.items():
            (folder / file).write_text(content, encoding="utf-8")
        return await _run_in(folder, emit, model)


async def _run_in(folder: Path, emit: Callable[[str], None], model: Model | None) -> int:
    from .sessions.store import InMemorySessionStore

    # the workspace is thrown away afterwards: so is the session (nothing in ~/.fuxi)
    options = FuxiAgentOptions(model=model, cwd=folder, allowed_tools=DEMO_ALLOWED, max_turns=10,
                               session_store=InMemorySessionStore())
    emit(f"Workspace: {folder} (removed at the end)\nPrompt: {DEMO_PROMPT}\n")
    try:
        async for message in query(prompt=DEMO_PROMPT, options=options):
            line = describe(message)
            if line:
                emit(line)
    except ResultError as error:
        emit(f"The run ended with an error: {error}")
        return 1
    emit(f"\ncalc.py now reads:\n{(folder / 'calc.py').read_text(encoding='utf-8')}")
    return 0


async def demo_main(emit: Callable[[str], None] = print) -> int:
    """`python -m fuxi_notebook demo`: the fake server unless ANTHROPIC_API_KEY is set."""
    if os.environ.get("ANTHROPIC_API_KEY"):
        emit("ANTHROPIC_API_KEY is set: the real API plays the model.")
        return await run_demo(emit, model=resolve_model(None))
    from ..testing import FakeMessagesServer

    with FakeMessagesServer(demo_script()) as server:
        emit(f"No ANTHROPIC_API_KEY: the fake Messages API at {server.url} plays a recorded "
             "session.")
        model = AnthropicModel(os.environ.get("FUXI_MODEL") or "claude-sonnet-5-5",
                               api_key="demo-key", base_url=server.url)
        return await run_demo(emit, model=model)
