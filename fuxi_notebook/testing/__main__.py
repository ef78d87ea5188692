"""`python -m fuxi_notebook.testing serve --script FILE.json`: run the fake API standalone.

For tests whose client lives in another process (a Jupyter kernel reaching the server
through `ANTHROPIC_BASE_URL`). Prints exactly one `FAKE_API_URL=...` line on stdout so the
parent can read the address, then serves until SIGTERM or SIGINT and exits 0.

`--provider bedrock|vertex|foundry` serves the same script behind that provider's fake
(`provider_fakes`) and prints a second line, `FAKE_API_ENV={...}`: the variables (JSON)
with which the provider's client reaches it, `FUXI_USE_<PROVIDER>=1` included (Vertex's
service-account key file is written into a temporary folder, removed at the end).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import Any

from .._internal.models.script import load_script
from .fake_server import FakeMessagesServer
from .provider_fakes import FakeBedrockServer, FakeFoundryServer, FakeVertexServer

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
    serve.add_argument("--provider", choices=["anthropic", "bedrock", "vertex", "foundry"],
                       default="anthropic", help="whose wire to speak")
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
    kinds: dict[str, type[FakeMessagesServer]] = {
        "anthropic": FakeMessagesServer, "bedrock": FakeBedrockServer,
        "vertex": FakeVertexServer, "foundry": FakeFoundryServer}
    options: dict[str, Any] = {"chunk": args.chunk, "cache_min_tokens": args.cache_min_tokens,
                               "host": args.host, "port": args.port}
    if args.provider == "anthropic":  # the providers name the model the URL asked for
        options["model"] = args.model
    server = kinds[args.provider](list(steps), **options)
    with server, tempfile.TemporaryDirectory(prefix="fuxi-fake-keys-") as keys:
        print(f"FAKE_API_URL={server.url}", flush=True)
        if isinstance(server, FakeVertexServer):
            env = server.credentials_env(Path(keys))
        elif isinstance(server, FakeBedrockServer | FakeFoundryServer):
            env = server.client_env()
        else:
            env = {"ANTHROPIC_BASE_URL": server.url}
        if args.provider != "anthropic":
            env[f"FUXI_USE_{args.provider.upper()}"] = "1"
            print(f"FAKE_API_ENV={json.dumps(env)}", flush=True)
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
