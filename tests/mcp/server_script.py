"""A small MCP server (mcp's `MCPServer`) that the MCP tests run as a real process.

    python server_script.py                 stdio
    python server_script.py --http          streamable HTTP on 127.0.0.1, port printed
    python server_script.py --sse           HTTP+SSE on 127.0.0.1, port printed
    --exit-now MESSAGE                      write MESSAGE to stderr and exit 2 at once
    --touch FILE --wait-for FILE            create FILE, then serve only once the other
                                            file exists (proves two servers start together)
    --child PIDFILE                         start a grandchild (sleeping) and write its pid
    --stubborn                              ignore SIGTERM and stdin EOF (must be killed)
"""

import argparse
import base64
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
JPEG = b"\xff\xd8\xff\xe0" + b"\x00" * 32


def build() -> object:
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.server.mcpserver.utilities.types import Image
    from mcp.types import ToolAnnotations

    server = MCPServer("test-server")

    @server.tool(description="Echo the text back.",
                 annotations=ToolAnnotations(read_only_hint=True))
    def echo(text: str) -> str:
        return text

    @server.tool(description="Add two integers.")
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool(name="get.weather", description="Weather for a city (a dotted name).",
                 annotations=ToolAnnotations(read_only_hint=True))
    def weather(city: str) -> str:
        return f"sunny in {city}"

    @server.tool(description="A small PNG image.")
    def picture() -> Image:
        return Image(data=PNG, format="png")

    @server.tool(description="JPEG bytes declared as PNG.")
    def mislabelled() -> Image:
        return Image(data=JPEG, format="png")

    @server.tool(description="Always fails with a message.")
    def fail(message: str) -> str:
        raise ToolError(message)

    @server.tool(description="Exit the server process in the middle of the call.")
    def crash() -> str:
        sys.stderr.write("crashing on purpose\n")
        sys.stderr.flush()
        os._exit(3)

    @server.tool(description="The value of a request header (HTTP transports).")
    def header(name: str, ctx: Context) -> str:
        return (ctx.headers or {}).get(name.lower(), "<missing>")

    @server.tool(description="Sleep for a while.")
    async def slow(seconds: float) -> str:
        import anyio

        await anyio.sleep(seconds)
        return "woke up"

    return server


def serve_http(server: object, sse: bool) -> None:
    import anyio
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    print(sock.getsockname()[1], flush=True)
    app = server.sse_app() if sse else server.streamable_http_app()  # type: ignore[attr-defined]
    config = uvicorn.Config(app, log_level="error")
    anyio.run(uvicorn.Server(config).serve, [sock])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--sse", action="store_true")
    parser.add_argument("--exit-now")
    parser.add_argument("--touch")
    parser.add_argument("--wait-for")
    parser.add_argument("--child")
    parser.add_argument("--stubborn", action="store_true")
    args = parser.parse_args()
    if args.exit_now:
        sys.stderr.write(args.exit_now + "\n")
        sys.exit(2)
    if args.touch:
        Path(args.touch).touch()
    if args.wait_for:
        deadline = time.monotonic() + 60
        while not Path(args.wait_for).exists():
            if time.monotonic() > deadline:
                sys.exit("the other server never started")
            time.sleep(0.01)
    if args.child:
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        Path(args.child).write_text(str(child.pid))
    if args.stubborn:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    server = build()
    if args.http or args.sse:
        serve_http(server, sse=args.sse)
    else:
        server.run()  # type: ignore[attr-defined]
    if args.stubborn:
        while True:
            time.sleep(60)


if __name__ == "__main__":
    main()
