"""The kernel tools on a live kernel outside this process (`fuxi-acp --kernel FILE`).

Python, Variables and Inspect are offered as the notebook offers them, with the same
declarations (schema, kind, description: taken from the tools themselves); each call is
one `execute_request` to that kernel, which runs the notebook's own tool there
(notebook/kernel/remote.py: the same capture, redaction and caps) and publishes the
result. The kernel's history and execution count are left alone (`store_history` off);
a frontend showing that kernel's notebook does not show these requests' outputs (they are
not its own). An interrupted call interrupts the kernel (a control-channel request).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import queue
from pathlib import Path
from typing import Any

from ..notebook.kernel.remote import REMOTE_TOOLS, RESULT_MIME, remote_tool
from ..tools.base import DeclaredTool, ToolContext, ToolError, ToolOutput

__all__ = ["KernelLink", "RemoteKernelTool", "remote_kernel_tools"]

#: how long a kernel may take to answer its first request
READY_TIMEOUT = 30.0
#: how often a running call checks that the kernel is still alive (its heartbeat)
POLL_SECONDS = 1.0
#: how long an interrupted call waits for the kernel to say it stopped
INTERRUPT_GRACE = 5.0


class KernelLink:
    """One connection to a running kernel (its connection file), shared by the tools."""

    def __init__(self, connection_file: str | Path) -> None:
        self.connection_file = Path(connection_file).expanduser()
        self._client: Any = None
        self._lock = asyncio.Lock()  # one call at a time: the kernel runs one anyway

    async def client(self) -> Any:
        if self._client is None:
            from jupyter_client.asynchronous.client import AsyncKernelClient

            client = AsyncKernelClient()
            try:
                client.load_connection_file(str(self.connection_file))
            except (OSError, ValueError, KeyError) as error:
                raise ToolError(f"cannot read the kernel's connection file "
                                f"{self.connection_file}: {error}") from None
            client.start_channels()
            try:
                await client.wait_for_ready(timeout=READY_TIMEOUT)
            except RuntimeError as error:
                client.stop_channels()
                raise ToolError(f"the kernel of {self.connection_file} does not answer: "
                                f"{error}") from None
            self._client = client
        return self._client

    async def call(self, name: str, tool_input: dict[str, Any]) -> ToolOutput:
        async with self._lock:
            client = await self.client()
            code = ("import fuxi_notebook._internal.notebook.kernel.remote as _fuxi_remote\n"
                    f"await _fuxi_remote.run_tool({name!r}, "
                    f"__import__('json').loads({json.dumps(tool_input)!r}))")
            msg_id = client.execute(code, silent=False, store_history=False,
                                    allow_stdin=False)
            try:
                return await self._result(client, msg_id, name)
            except asyncio.CancelledError:
                await self._interrupt(client, msg_id)
                raise

    async def _result(self, client: Any, msg_id: str, name: str) -> ToolOutput:
        found: ToolOutput | None = None
        failure = ""
        while True:
            try:
                message = await client.get_iopub_msg(timeout=POLL_SECONDS)
            except queue.Empty:
                if not await client.is_alive():
                    self.close()
                    raise ToolError(f"the kernel stopped answering while {name} ran (it "
                                    "died or was shut down); what the call did is unknown") \
                        from None
                continue
            if message.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind, content = message["header"]["msg_type"], message["content"]
            if kind == "display_data" and RESULT_MIME in content.get("data", {}):
                result = content["data"][RESULT_MIME]
                found = ToolOutput(result.get("content") or "",
                                   is_error=bool(result.get("is_error")))
            elif kind == "error":
                failure = f"{content.get('ename')}: {content.get('evalue')}"
            elif kind == "status" and content.get("execution_state") == "idle":
                break
        if found is not None:
            return found
        if "fuxi_notebook" in failure and "ModuleNotFoundError" in failure:
            raise ToolError("the kernel cannot import fuxi_notebook: install it in the "
                            "kernel's environment to run the kernel tools there")
        raise ToolError(f"the kernel did not run {name}: {failure or 'no result'}")

    async def _interrupt(self, client: Any, msg_id: str) -> None:
        """Interrupt the kernel, then wait (briefly) for the call to end there."""
        request = client.session.msg("interrupt_request", {})
        client.control_channel.send(request)
        with contextlib.suppress(TimeoutError, ToolError):
            await asyncio.wait_for(self._result(client, msg_id, "the call"), INTERRUPT_GRACE)

    def close(self) -> None:
        if self._client is not None:
            self._client.stop_channels()
            self._client = None


class RemoteKernelTool(DeclaredTool):
    """A kernel tool whose calls run in the linked kernel; its declaration is the
    notebook tool's own."""

    def __init__(self, name: str, link: KernelLink) -> None:
        declared = remote_tool(name, None)
        self.name, self.description = declared.name, declared.description
        self.input_schema = declared.input_schema
        self.kind = declared.kind
        self._declared = declared
        self.link = link

    def reach(self, input: dict[str, Any]) -> Any:
        return self._declared.reach(input)

    def always_allow(self, input: dict[str, Any]) -> str:
        return str(self._declared.always_allow(input))

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        return await self.link.call(self.name, input)


def remote_kernel_tools(link: KernelLink) -> list[RemoteKernelTool]:
    """Python, Variables and Inspect on the linked kernel."""
    return [RemoteKernelTool(name, link) for name in REMOTE_TOOLS]
