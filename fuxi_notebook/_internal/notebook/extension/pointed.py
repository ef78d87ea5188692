"""The cells the user points at, for the prompt's context: "fix this cell", "explain this
output". An agent cell inserted with "Fuxi: insert an agent cell below" is `about` the
cells selected then (the extension keeps their ids in its `metadata.fuxi.about`); its
prompt goes with each of them: place, id, source and what its outputs show (summaries
the extension gives: text, an error's name and value, the kinds of the rest, never image
data), redacted whole and cut to the budget. A prompt about no cell is unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...sessions.redact import redact_text, redacted_head

__all__ = ["POINTED_CHARS", "about_ids", "pointed_context"]

#: the most the pointed cells add to the context, and to it per cell's source / outputs
POINTED_CHARS = 8000
SOURCE_CHARS = 3000
OUTPUTS_CHARS = 1500
MAX_POINTED = 20
TITLE = "Cells the user points at (this agent cell was made for them):"


def about_ids(fuxi: Any) -> list[str]:
    """The ids an agent cell's `metadata.fuxi` says it is about (at most `MAX_POINTED`)."""
    about = fuxi.get("about") if isinstance(fuxi, Mapping) else None
    if not isinstance(about, list):
        return []
    return list(dict.fromkeys(i for i in about if isinstance(i, str) and i))[:MAX_POINTED]


def _cut(text: str, limit: int) -> str:
    head, left = redacted_head(text, limit)  # whole, then cut
    return f"{head}\n… ({left} more characters)" if left else head


def _outputs(summary: Any) -> str:
    """What a cell's outputs show, one line each (the extension's summaries)."""
    outputs = summary.get("outputs") if isinstance(summary, Mapping) else None
    if not isinstance(outputs, list) or not outputs:
        return "Outputs: none"
    lines = []
    for output in outputs:
        if not isinstance(output, Mapping):
            continue
        kind = str(output.get("output_type", "output"))
        if kind == "error":
            lines.append(f"- error {output.get('ename', '')}: {output.get('evalue', '')}")
            continue
        mimes = [str(m) for m in output.get("mimes") or [] if isinstance(m, str)]
        shown = f" ({', '.join(mimes)})" if mimes else ""
        text = str(output.get("text") or "").strip()
        lines.append(f"- {kind}{shown}" + (f": {text}" if text else ""))
    more = summary.get("more") if isinstance(summary, Mapping) else 0
    if isinstance(more, int) and more > 0:
        lines.append(f"- … and {more} more outputs")
    return _cut("Outputs:\n" + "\n".join(lines), OUTPUTS_CHARS)


def pointed_context(cells: Sequence[Mapping[str, Any]], about: Sequence[str],
                    outputs: Mapping[str, Any]) -> str | None:
    """The context block for the cells `about` names, among the live document's `cells`
    (with `outputs`, by cell id); None when it names none."""
    if not about:
        return None
    places = {str(cell.get("id")): index for index, cell in enumerate(cells)}
    blocks: list[str] = []
    used = len(TITLE)
    for cell_id in about:
        index = places.get(cell_id)
        if index is None:
            block = f"[a cell no longer in the notebook, id {cell_id}]"
        else:
            cell = cells[index]
            kind = str(cell.get("cell_type", "code"))
            source = _cut(str(cell.get("source") or "").rstrip(), SOURCE_CHARS)
            parts = [f"[cell {index + 1} · id {cell_id} · {kind}]", source]
            if kind == "code":
                parts.append(_outputs(outputs.get(cell_id)))
            block = "\n".join(parts)
        if blocks and used + len(block) + 2 > POINTED_CHARS:
            blocks.append(f"({len(about) - len(blocks)} more pointed cells left out)")
            break
        blocks.append(block)
        used += len(block) + 2
    return redact_text("\n\n".join([TITLE, *blocks]))
