"""How fast an approval click reaches a running `%%fuxi` cell in a real ipykernel.

A kernel (jupyter_client) runs `%%fuxi` cells whose fake model asks to run a command; the
benchmark clicks "Allow" the way ipywidgets' ButtonView does and measures the time from
sending the click to the card turning into its decided line (the kernel's own
`update_display_data`). Prints the median and the worst of N clicks.

Run: .venv/bin/python benchmarks/bench_click.py [--clicks N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fuxi_notebook.testing import FakeMessagesServer, Turn, text, tool_use
from tests.notebook.kernel_harness import KernelHarness


def _decided(harness: KernelHarness, msg_id: str, after: int) -> None:
    harness.wait_for(lambda m: m["msg_type"] == "update_display_data"
                     and m["parent_header"].get("msg_id") == msg_id
                     and "Allowed" in m["content"]["data"].get("text/plain", "")
                     and harness._iopub.index(m) >= after)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clicks", type=int, default=10)
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="fuxi-click-")
    latencies = []
    with FakeMessagesServer() as api:
        harness = KernelHarness(cwd=work, env={
            "ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "sk-bench",
            "FUXI_BLOCK_REAL_API": "1", "FUXI_MODEL": "claude-sonnet-5-5"})
        try:
            harness.run("%load_ext fuxi_notebook")
            for n in range(args.clicks):
                api.add(Turn([tool_use("Bash", {"command": f"touch f{n}"})]), Turn([text("ok")]))
                mark = harness.iopub_count()
                msg_id = harness.send(f"%%fuxi --new\nmake f{n}", cell_id=f"cell-{n}")
                button = harness.button("Allow", after=mark)
                after = harness.iopub_count()
                started = time.perf_counter()
                harness.click(button)
                _decided(harness, msg_id, after)
                latencies.append((time.perf_counter() - started) * 1000)
                harness.wait(msg_id)
        finally:
            harness.close()
    print(f"approval click -> decision in the kernel, {len(latencies)} clicks: "
          f"median {statistics.median(latencies):.1f} ms, worst {max(latencies):.1f} ms "
          "(target: well under 1000 ms)")


if __name__ == "__main__":
    main()
