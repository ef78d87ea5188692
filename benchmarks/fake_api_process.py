"""The fake Messages API in a process of its own, answering after a stated model latency.

    .venv/bin/python benchmarks/fake_api_process.py --turns TURNS.json [--latency 1.0]

For the benchmarks that drive real kernels (bench_first_cell.py, bench_replay.py) and
fresh interpreters (bench_cold_start.py): the server does not share the measuring
process's interpreter, so nothing it does competes with the measured client for a GIL.
`TURNS.json` is a list of turns (each a list of wire content blocks), served in order;
each response starts `--latency` seconds after its request arrived (the model's time to
its first token; the events follow at once). Prints one `FAKE_API_URL=...` line.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

__all__ = ["FakeApiProcess"]


def _delayed(turn: Any, latency: float) -> Callable[[dict[str, Any]], Any]:
    """A step that answers `turn` after `latency` seconds (one client at a time here: the
    server's loop may wait in the step)."""
    def step(body: dict[str, Any]) -> Any:
        time.sleep(latency)
        return turn
    return step


def serve(turns_file: str, latency: float) -> None:
    """Serve the turns until stdin closes (the parent went away) or SIGTERM."""
    from fuxi_notebook.testing import FakeMessagesServer, Turn

    turns = [Turn(list(content)) for content in json.loads(Path(turns_file).read_text())]
    steps = [_delayed(turn, latency) if latency > 0 else turn for turn in turns]
    with FakeMessagesServer(steps) as server:
        print(f"FAKE_API_URL={server.url}", flush=True)
        sys.stdin.read()  # until the parent closes it
        if server.errors:
            print(f"fake API: {server.errors[:3]}", file=sys.stderr, flush=True)


class FakeApiProcess:
    """`with FakeApiProcess(turns, latency=1.0) as url:` the fake API in a child process."""

    def __init__(self, turns: Sequence[Sequence[dict[str, Any]]], *, latency: float = 0.0
                 ) -> None:
        self.turns = [list(turn) for turn in turns]
        self.latency = latency
        self._folder = tempfile.TemporaryDirectory(prefix="fuxi-fake-api-")
        self._process: subprocess.Popen[str] | None = None

    def __enter__(self) -> str:
        path = Path(self._folder.name) / "turns.json"
        path.write_text(json.dumps(self.turns))
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
        self._process = subprocess.Popen(
            [sys.executable, __file__, "--turns", str(path), "--latency", str(self.latency)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        assert self._process.stdout is not None
        line = self._process.stdout.readline().strip()
        if not line.startswith("FAKE_API_URL="):
            self.__exit__(None, None, None)
            raise RuntimeError(f"the fake API did not start: {line!r}")
        return line.split("=", 1)[1]

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self._process is not None:
            assert self._process.stdin is not None
            self._process.stdin.close()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
        self._folder.cleanup()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", required=True, help="a JSON list of turns' content")
    parser.add_argument("--latency", type=float, default=0.0,
                        help="seconds before each response starts")
    args = parser.parse_args()
    serve(args.turns, args.latency)


if __name__ == "__main__":
    main()
