"""What a notebook of `%%fuxi` cells costs on disk, measured as sizes and ratios in one run.

1. A 50-cell conversation (one tool turn pair per cell): each record holds only its own
   messages and links to its parent, so records stay flat and the notebook grows linearly;
   records copying the whole history would grow quadratically. Then one cell running a
   50-turn tool loop: its record grows linearly with its own turns.
2. Ten cells that each show a PNG figure and return it to the model in a Python tool
   result: records referring to the shown figure (`shown_images`) against records storing
   it twice. `join_records` must give back the exact base64 image blocks (asserted).

Seeded, so the sizes are the same on every run. Run: .venv/bin/python benchmarks/bench_storage.py
"""

from __future__ import annotations

import base64
import io
import json
import random
from itertools import accumulate
from typing import Any

import nbformat
from nbformat.v4 import new_code_cell, new_notebook, new_output

from fuxi_notebook._internal.sessions.history import join_records
from fuxi_notebook._internal.sessions.record import (
    RECORD_MIME,
    build_record,
    image_digest,
    record_to_output,
)
from fuxi_notebook._internal.sessions.text.transcript import (
    render_transcript,
    render_transcript_text,
)
from fuxi_notebook.types import ResultMessage

MODEL = "claude-sonnet-5-5"
SESSION = "3f2a1b9c-0000-4000-8000-000000000001"
OPTIONS = {"model": MODEL, "max_turns": 8, "permission_mode": "default",
           "allowed_tools": ["Read", "Grep", "Bash", "Python"]}
VOLATILE = {"cost_usd": 0.0123, "usage": {"input_tokens": 1200, "output_tokens": 180},
            "duration_ms": 4321, "duration_api_ms": 3900, "finished_at": "2025-01-01T00:00:00"}
WORDS = ("the", "column", "rows", "mean", "value", "test", "passed", "data", "frame", "shape",
         "missing", "file", "module", "function", "returns", "error", "fixed", "sorted",
         "grouped", "total")


def sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def text(rng: random.Random, words: int) -> dict[str, str]:
    return {"type": "text", "text": sentence(rng, words)}


def tool_output(rng: random.Random) -> tuple[str, dict[str, Any], str]:
    """(tool, input, a 300-800 character result) like a Bash or Python call prints."""
    if rng.random() < 0.5:
        lines = [f"tests/test_mod{rng.randrange(30)}.py::test_{rng.choice(WORDS)}_{i} PASSED"
                 f" [{rng.randrange(100):3d}%]" for i in range(rng.randrange(6, 15))]
        lines.append(f"===== {len(lines)} passed in {rng.uniform(0.2, 9):.2f}s =====")
        return "Bash", {"command": "pytest -q tests"}, "\n".join(lines)
    rows = [f"{i:<4}{rng.gauss(50, 15):>10.3f}{rng.randrange(10_000):>8}  {rng.choice(WORDS)}"
            for i in range(rng.randrange(10, 24))]
    code = f"df = pd.read_csv('data/run{rng.randrange(99)}.csv')\ndf.describe()"
    return "Python", {"code": code}, "     value   count  label\n" + "\n".join(rows)


def turn(rng: random.Random, call_id: str) -> list[dict[str, Any]]:
    """One model turn pair: text + a tool call, then the tool's result."""
    tool, tool_input, output = tool_output(rng)
    return [{"role": "assistant", "content": [
                text(rng, rng.randrange(12, 30)),
                {"type": "tool_use", "id": call_id, "name": tool, "input": tool_input}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": call_id, "content": output}]}]


def record(i: int, messages: list[dict[str, Any]], turns: int, **kwargs: Any) -> Any:
    return build_record(cell_id=f"c{i}", session_id=SESSION, parent=f"c{i - 1}" if i else None,
                        model=MODEL, prompt=messages[0]["content"], options=OPTIONS,
                        messages=messages, approvals=[], **kwargs, result=ResultMessage(
                            subtype="success", duration_ms=4321, duration_api_ms=3900,
                            is_error=False, num_turns=turns, session_id=SESSION,
                            stop_reason="end_turn", result="Done."))


def size(rec: Any) -> int:
    """Bytes of the record as JSON (what the notebook stores under RECORD_MIME)."""
    return len(json.dumps(rec.model_dump(mode="json"), ensure_ascii=False).encode())


def notebook_bytes(cells: list[tuple[Any, list[dict[str, Any]]]],
                   shown: list[Any] | None = None) -> int:
    """The .ipynb size: each cell's extra outputs, then its final display (record and
    transcripts, the transcripts rendered from `shown[i]` when given)."""
    nb = new_notebook()
    for index, (rec, extra) in enumerate(cells):
        data, metadata = record_to_output(rec, volatile=VOLATILE)
        assert RECORD_MIME in data
        view = shown[index] if shown else rec
        data = {**data, "text/markdown": render_transcript(view),
                "text/plain": render_transcript_text(view)}
        outputs = [new_output("display_data", data=o["data"], metadata=o.get("metadata", {}))
                   for o in extra]
        outputs.append(new_output("display_data", data=data, metadata=metadata))
        nb.cells.append(new_code_cell(source=f"%%fuxi\n{rec.prompt}", id=rec.cell_id,
                                      outputs=outputs, execution_count=None))
    return len(nbformat.writes(nb).encode())


def conversation(cells: int = 50) -> None:
    rng = random.Random(1)
    ours, naive, history = [], [], []
    for i in range(cells):
        messages = [{"role": "user", "content": sentence(rng, 10)}, *turn(rng, f"t{i}"),
                    {"role": "assistant", "content": [text(rng, 25)]}]
        history += messages
        ours.append(record(i, messages, 2))
        naive.append(record(i, list(history), 2))
    print(f"1. One conversation, {cells} cells, one tool turn pair per cell")
    print(f"   {'cell N':>8} {'record (ours)':>14} {'record (whole history)':>23}")
    for n in (1, 10, 25, 50):
        print(f"   {n:>8} {size(ours[n - 1]):>12,} B {size(naive[n - 1]):>21,} B")
    total_ours, total_naive = sum(map(size, ours)), sum(map(size, naive))
    nb_ours = notebook_bytes([(r, []) for r in ours])
    nb_naive = notebook_bytes([(r, []) for r in naive], shown=ours)  # same transcripts
    print(f"   all records: ours {total_ours:,} B, whole history {total_naive:,} B, "
          f"ratio naive/ours {total_naive / total_ours:.1f}x")
    print(f"   notebook (.ipynb, record + markdown + text transcripts): ours {nb_ours:,} B "
          f"({nb_ours / cells:,.0f} B/cell); with whole-history records {nb_naive:,} B, "
          f"ratio {nb_naive / nb_ours:.1f}x")

    rng = random.Random(2)
    steps = [block for t in range(50) for block in turn(rng, f"L{t}")]
    prompt = {"role": "user", "content": "Run the whole analysis, step by step."}
    final = {"role": "assistant", "content": [{"type": "text", "text": "All steps done."}]}
    print("   one cell running a 50-turn tool loop:")
    sizes = {}
    for turns in (10, 25, 50):
        rec = record(0, [prompt, *steps[:2 * turns], final], turns + 1)
        sizes[turns] = size(rec)
        print(f"   {turns:>8} turns {sizes[turns]:>10,} B  ({sizes[turns] / turns:,.0f} B/turn)")
    print(f"   marginal bytes/turn: 10->25 {(sizes[25] - sizes[10]) / 15:,.0f}, "
          f"25->50 {(sizes[50] - sizes[25]) / 25:,.0f}")


def figures(count: int = 10) -> tuple[list[str], str]:
    """`count` base64 PNGs: 640x480 matplotlib line plots, or random bytes without it."""
    rng = random.Random(3)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        noise = [base64.b64encode(rng.randbytes(22_500)).decode() for _ in range(count)]
        return noise, "random bytes (matplotlib not importable)"
    images = []
    for i in range(count):
        fig, ax = plt.subplots(figsize=(6.4, 4.8), dpi=100)
        walk = list(accumulate(rng.gauss(0, 1) for _ in range(200)))
        ax.plot(walk, label=f"series {i}")
        ax.plot([v * 0.5 + rng.gauss(0, 2) for v in walk], label="noisy half")
        ax.set_title(f"Run {i}")
        ax.legend()
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", metadata={"Software": None})
        plt.close(fig)
        images.append(base64.b64encode(buffer.getvalue()).decode())
    return images, "matplotlib Agg 640x480 line plots"


def deduplication() -> None:
    images, kind = figures()
    rng = random.Random(4)
    cells = []
    for i, png in enumerate(images):
        image_block = {"type": "image",
                       "source": {"type": "base64", "media_type": "image/png", "data": png}}
        call = {"type": "tool_use", "id": f"p{i}", "name": "Python",
                "input": {"code": f"plt.plot(walk{i}); plt.show()"}}
        answer = {"type": "tool_result", "tool_use_id": f"p{i}",
                  "content": [{"type": "text", "text": "ok"}, image_block]}
        messages = [{"role": "user", "content": f"Plot run {i} and describe it."},
                    {"role": "assistant", "content": [text(rng, 12), call]},
                    {"role": "user", "content": [answer]},
                    {"role": "assistant", "content": [text(rng, 30)]}]
        shown = [{"data": {"image/png": png, "text/plain": "<Figure size 640x480 with 1 Axes>"},
                  "metadata": {}}]
        cells.append((i, messages, shown, image_block))
    deduped = [(record(i, m, 2, shown_images={image_digest(s[0]["data"]["image/png"])}), s)
               for i, m, s, _ in cells]
    doubled = [(record(i, m, 2), s) for i, m, s, _ in cells]
    history, pending = join_records([r for r, _ in deduped],
                                    {r.cell_id: s for r, s in deduped})
    assert not pending
    restored = [b for m in history if isinstance(m["content"], list) for r in m["content"]
                if r.get("type") == "tool_result" for b in r["content"] if b["type"] == "image"]
    assert restored == [block for *_, block in cells], "join_records lost a figure"
    assert all(r.model_dump_json().count("base64") == 0 for r, _ in deduped)
    small, big = notebook_bytes(deduped), notebook_bytes(doubled)
    mean_png = sum(len(p) for p in images) / len(images)
    print(f"2. {len(images)} cells, each showing a figure and returning it to the model "
          f"({kind}, mean {mean_png:,.0f} B base64)")
    print(f"   notebook with figure references (shown_images): {small:,} B")
    print(f"   notebook with figures stored twice:             {big:,} B")
    print(f"   ratio stored-twice / referenced: {big / small:.2f}x; saved {big - small:,} B")
    print(f"   join_records restored all {len(restored)} base64 image blocks exactly: yes")


def main() -> None:
    conversation()
    deduplication()


if __name__ == "__main__":
    main()
