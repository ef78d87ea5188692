"""`python -m fuxi_notebook.testing serve --script FILE.json`: run the fake API standalone.

For tests whose client lives in another process (a Jupyter kernel reaching the server
through `ANTHROPIC_BASE_URL`). Prints exactly one `FAKE_API_URL=...` line on stdout so the
parent can read the address, then serves until SIGTERM or SIGINT and exits 0.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Sequence
from types import FrameType

from .._internal.models.script import load_script
from .fake_server import FakeMessagesServer

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fuxi-fake-api", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="serve a script until SIGTERM/SIGINT")
    serve.add_argument("--script", required=True, help="a JSON script file (see load_script)")
    serve.add_argument("--port", type=int, default=0, help="0 picks a free port")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--model", default="claude-sonnet-5-5", help="model id to report")
    serve.add_argument("--chunk", type=int, default=24, help="characters per delta")
    serve.add_argument("--cache-min-tokens", type=int, default=0)
    return parser


def _wait_for_signal() -> None:
    """Block the main thread until SIGTERM or SIGINT arrives."""
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        while not stop.wait(0.1):
            pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def serve(args: argparse.Namespace) -> int:
    """Run the server for `args` until a signal; report what happened on stderr."""
    steps = load_script(args.script)
    server = FakeMessagesServer(
        list(steps), model=args.model, chunk=args.chunk,
        cache_min_tokens=args.cache_min_tokens, host=args.host, port=args.port,
    )
    with server:
        print(f"FAKE_API_URL={server.url}", flush=True)
        _wait_for_signal()
    print(f"fuxi-fake-api: served {len(server.requests)} requests, "
          f"{server.remaining} steps left, errors: {server.errors or 'none'}",
          file=sys.stderr, flush=True)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point (`fuxi-fake-api`)."""
    args = _parser().parse_args(argv)
    if args.command == "serve":
        return serve(args)
    return 2


if __name__ == "__main__":
    sys.exit(main())
