"""The kernel side of the kernel tools run from outside (`fuxi-acp --kernel`).

The agent's process sends the kernel one `execute_request`, `await run_tool(name, input)`,
and reads the result from the display it publishes (`RESULT_MIME`). The tools are the
notebook's own Python, Variables and Inspect, bound to the kernel's shell: the same
capture, redaction and caps as in a `%%fuxi` cell. Nothing else is imported or changed
in the kernel; `fuxi_notebook` must be importable there (the kernel's environment).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

__all__ = ["REMOTE_TOOLS", "RESULT_MIME", "remote_tool", "run_tool"]

RESULT_MIME = "application/vnd.fuxi.tool-result+json"
#: the tools a process outside the kernel may run in it
REMOTE_TOOLS = ("Python", "Variables", "Inspect")


def remote_tool(name: str, shell: Any) -> Any:
    """The kernel tool `name` bound to `shell` (None: the declaration alone)."""
    from .inspect import InspectTool
    from .python import PythonTool
    from .variables import VariablesTool

    made = {"Python": PythonTool, "Variables": VariablesTool, "Inspect": InspectTool}
    if name not in made:
        raise ValueError(f"{name!r} is not a kernel tool ({', '.join(REMOTE_TOOLS)} are)")
    return made[name](shell)


async def run_tool(name: str, tool_input: dict[str, Any]) -> None:
    """Run one call in this kernel and publish its result (redacted) as `RESULT_MIME`."""
    from IPython import get_ipython
    from IPython.display import publish_display_data

    from ...sessions.redact import redact
    from ...tools.base import ToolContext, ToolError, ToolOutput

    shell = get_ipython()
    try:
        output = await remote_tool(name, shell).run(tool_input, ToolContext(cwd=Path.cwd()))
    except ToolError as error:
        output = ToolOutput(str(error), is_error=True)
    except asyncio.CancelledError as stopped:  # interrupted: what it produced so far
        so_far = str(getattr(stopped, "partial_output", "") or "")
        output = ToolOutput(f"Interrupted.\n{so_far}".rstrip(), is_error=True)
    publish_display_data({RESULT_MIME: {"content": redact(output.content),
                                        "is_error": output.is_error},
                          "text/plain": f"(the result of a {name} call)"})
