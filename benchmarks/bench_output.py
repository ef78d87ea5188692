"""What redacting every output costs: print-heavy cells with and without the redaction.

Once `%load_ext fuxi_notebook` has run, every output the kernel sends passes redaction
(notebook/output_redaction.py). Three kernels run the same cells, alternating: one with the
extension loaded, one with it loaded and the redaction taken out again (so the ratio is
the redaction's own cost, not that of the modules the extension preloads), and one without
the extension. The cells print many short lines (many small stream messages), a few big
chunks, and show displays. Prints the medians of the time to the cell's reply and the
ratios, per kind of cell, and a secret printed one character at a time as the cell shows
it (it must come out redacted).

Run: .venv/bin/python benchmarks/bench_output.py [--runs N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.notebook.kernel_harness import KernelHarness

SECRET = "bench-Secret-value-0123456789"
CELLS = {
    "20,000 short lines": "for n in range(20_000): print('line', n)",
    "20 chunks of 100 KB": "import sys\nfor n in range(20): sys.stdout.write('x' * 100_000)",
    "200 displays": "from IPython.display import display\n"
                    "for n in range(200): display({'text/plain': f'value {n}'}, raw=True)",
}


def _kernel(load: bool, work: str, *, redact: bool = True) -> KernelHarness:
    harness = KernelHarness(cwd=work, env={"FUXI_BLOCK_REAL_API": "1",
                                           "BENCH_SERVICE_TOKEN": SECRET})
    if load:
        assert harness.run("%load_ext fuxi_notebook").status == "ok"
    if load and not redact:
        unwrap = "k = get_ipython().kernel\nk.session.send = k.session.send.__self__._send"
        assert harness.run(unwrap).status == "ok"
    return harness


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="fuxi-output-")
    kernels = {"redacted": _kernel(True, work), "loaded": _kernel(True, work, redact=False),
               "plain": _kernel(False, work)}
    try:
        times: dict[tuple[str, str], list[float]] = {}
        for _ in range(args.runs):
            for name, code in CELLS.items():
                for which, harness in kernels.items():
                    start = time.perf_counter()
                    assert harness.run(code, timeout=120).status == "ok"
                    times.setdefault((name, which), []).append(time.perf_counter() - start)
        print(f"{'cell':<22}{'redacted':>10}{'loaded':>9}{'plain':>8}   (ms)"
              f"{'redacted/loaded':>18}{'redacted/plain':>16}")
        for name in CELLS:
            redacted, loaded, plain = (statistics.median(times[(name, which)]) * 1000
                                       for which in ("redacted", "loaded", "plain"))
            print(f"{name:<22}{redacted:>10.0f}{loaded:>9.0f}{plain:>8.0f}"
                  f"{redacted / loaded:>23.2f}{redacted / plain:>16.2f}")
        slow = ("import os, sys, time\nfor c in os.environ['BENCH_SERVICE_TOKEN']:\n"
                "    sys.stdout.write(c); sys.stdout.flush(); time.sleep(0.01)")
        shown = kernels["redacted"].run(slow).stdout
        print(f"a secret printed a character at a time shows as: {shown!r}")
    finally:
        for harness in kernels.values():
            harness.close()


if __name__ == "__main__":
    main()
