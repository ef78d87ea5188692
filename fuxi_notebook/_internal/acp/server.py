"""`fuxi-acp` (also `python -m fuxi_notebook acp`): the loop as an ACP agent on stdio.

Stdout carries the protocol alone: anything else the process would print there (a
library's warning, a tool's stray print) goes to stderr instead, so a client never reads
a line that is not JSON-RPC. Bad arguments (ours or argparse's, a `--notebook` no server
here has open, a `--kernel` file that is not there) are one line on stderr and exit
status 2; anything else that stops the command is one line and exit status 1, never a
traceback (guard.py: the requests' side of the same promise).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path
from typing import Any, NoReturn, cast

__all__ = ["acp_main", "add_arguments", "run", "serve"]

_PROG = "fuxi-acp"


class _Parser(argparse.ArgumentParser):
    """argparse's own errors (an unknown option, a number that is none) in one line."""

    def error(self, message: str) -> NoReturn:
        _usage_error(message)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", help="the model (default: FUXI_MODEL, else the "
                        "package's default); a session's config option changes it")
    parser.add_argument("--permission-mode", default=None,
                        help="the mode sessions start in (default: default)")
    parser.add_argument("--max-budget-usd", type=float, default=None, metavar="USD",
                        help="each session stops once it has cost this much")
    parser.add_argument("--kernel", metavar="CONNECTION_FILE",
                        help="a running kernel's connection file: the Python, Variables and "
                        "Inspect tools work on its namespace (fuxi_notebook must be "
                        "importable in that kernel)")
    parser.add_argument("--notebook", metavar="PATH",
                        help="as --kernel, with the kernel of this notebook, open on a Jupyter "
                        "server running on this machine")
    parser.add_argument("--setting-sources", default=None, metavar="LIST",
                        help="comma-separated: user,project,local (default: all three)")


def acp_main(argv: list[str] | None = None) -> int:
    parser = _Parser(
        prog=_PROG, description="Run the fuxi agent over the Agent Client Protocol "
        "(JSON-RPC on stdin/stdout), for jupyter-ai, Zed, marimo, JetBrains and others.")
    add_arguments(parser)
    return run(parser.parse_args(argv), parser)


def run(args: argparse.Namespace, parser: argparse.ArgumentParser | None = None) -> int:
    """Serve with the options `args` give: a bad one is one line on stderr and exit status
    2, any other failure one line and status 1 (the exit status is returned). `parser` is
    not used: its error() would print the usage too."""
    from ...errors import ConfigurationError
    from .guard import describe, log_in_one_line
    from .jupyter_servers import NoKernel

    log_in_one_line()
    try:
        options, kernel = _setup(args)
        asyncio.run(serve(options, kernel=kernel))
    except SystemExit:
        raise
    except (ConfigurationError, NoKernel) as error:
        _usage_error(describe(error))
    except KeyboardInterrupt:
        return 130
    except Exception as error:
        print(f"{_PROG}: error: {describe(error, where=True)}", file=sys.stderr, flush=True)
        return 1
    return 0


def _usage_error(message: str) -> NoReturn:
    from .guard import one_line

    print(f"{_PROG}: error: {one_line(message)}", file=sys.stderr, flush=True)
    raise SystemExit(2)


def _setup(args: argparse.Namespace) -> tuple[Any, Any]:
    """The sessions' options and the live kernel (None: none) the arguments give; raises
    ConfigurationError / NoKernel for a bad one."""
    from ...errors import ConfigurationError
    from ...options import FuxiAgentOptions
    from ..permissions.engine import check_mode

    sources = None
    if args.setting_sources is not None:
        sources = [s.strip() for s in args.setting_sources.split(",") if s.strip()]
        unknown = [s for s in sources if s not in ("user", "project", "local")]
        if unknown:
            raise ConfigurationError(f"unknown setting source(s): {', '.join(unknown)}")
    mode = check_mode(args.permission_mode) if args.permission_mode else None
    if args.max_budget_usd is not None and not args.max_budget_usd > 0:
        raise ConfigurationError("--max-budget-usd must be above 0")
    options = FuxiAgentOptions(model=args.model, permission_mode=mode,
                               setting_sources=sources, max_budget_usd=args.max_budget_usd)
    return options, _kernel(args)


def _kernel(args: argparse.Namespace) -> Any:
    """The live kernel the options name (None: no kernel)."""
    from ...errors import ConfigurationError
    from .kernel import KernelLink

    if args.kernel is not None and args.notebook is not None:
        raise ConfigurationError("give --kernel or --notebook, not both")
    if args.notebook is not None:
        from .jupyter_servers import kernel_of_notebook

        return KernelLink(kernel_of_notebook(args.notebook))
    if args.kernel is not None:
        if not Path(args.kernel).expanduser().is_file():
            raise ConfigurationError(f"no kernel connection file {args.kernel}")
        return KernelLink(args.kernel)
    return None


async def serve(options: Any, input_stream: Any = None, output_stream: Any = None, *,
                kernel: Any = None) -> None:
    """Answer ACP on stdio (or the given streams: the agent's writer, its reader) until
    the client closes them."""
    from acp import run_agent

    from .agent import FuxiAcpAgent
    from .guard import AnsweringAgent

    agent = FuxiAcpAgent(options, kernel=kernel)
    try:
        if input_stream is None:
            input_stream, output_stream = await _protocol_stdio()
        # every request is answered through the guard: one JSON-RPC error, no traceback
        await run_agent(cast(Any, AnsweringAgent(agent)), input_stream, output_stream)
    finally:
        await agent.close()


#: the largest JSON-RPC line read (an image attached to a prompt is a long line)
STDIN_LIMIT = 64 * 1024 * 1024


async def _protocol_stdio() -> tuple[asyncio.StreamWriter, asyncio.StreamReader]:
    """The protocol's streams: stdin, and a duplicate of fd 1 that only the protocol
    writes to; fd 1 itself and `sys.stdout` become stderr (subprocesses, prints)."""
    loop = asyncio.get_running_loop()
    protocol_out = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    reader = asyncio.StreamReader(limit=STDIN_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, flow = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin,
                                                    protocol_out)
    return asyncio.StreamWriter(transport, flow, None, loop), reader
