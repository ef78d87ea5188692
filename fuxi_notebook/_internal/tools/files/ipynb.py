"""Render a Jupyter notebook (`.ipynb` JSON) as readable text for the Read tool.

Raw notebook JSON is noisy (escaped sources, base64 images, metadata); the model reads
cells far better as source plus short text outputs. Parsed with the stdlib `json` only.
"""

from __future__ import annotations

from typing import Any

from ..truncate import cap_head_tail, strip_ansi

__all__ = ["render_notebook"]

OUTPUT_LIMIT = 2000
"""Characters kept of each cell output (head and tail)."""


def render_notebook(notebook: dict[str, Any]) -> str:
    """All cells as `<cell N [type] id=...>` headers, sources and text outputs."""
    cells = notebook.get("cells")
    if not isinstance(cells, list):
        raise ValueError("notebook has no 'cells' list")
    if not cells:
        return "(notebook has no cells)"
    return "\n\n".join(_render_cell(index, cell) for index, cell in enumerate(cells))


def _render_cell(index: int, cell: Any) -> str:
    """One cell; a malformed cell is marked, never hides the others."""
    if not isinstance(cell, dict):
        return f"<cell {index} [invalid: not a JSON object]>"
    try:
        return _render_fields(index, cell)
    except (TypeError, AttributeError, ValueError) as error:
        return f"<cell {index} [invalid: {type(error).__name__}: {error}]>"


def _render_fields(index: int, cell: dict[str, Any]) -> str:
    kind = cell.get("cell_type", "unknown")
    header = f"<cell {index} [{kind}]"
    if cell.get("id"):
        header += f" id={cell['id']}"
    parts = [header + ">", _text(cell.get("source"))]
    outputs = cell.get("outputs") or []
    if not isinstance(outputs, list):
        rendered = [f"[invalid outputs: a {type(outputs).__name__}, not a list]"]
    else:
        rendered = [_render_output(out) if isinstance(out, dict) else "[invalid output]"
                    for out in outputs]
    rendered = [text for text in rendered if text]
    if rendered:
        parts.append("<outputs>")
        parts.extend(rendered)
        parts.append("</outputs>")
    parts.append(f"</cell {index}>")
    return "\n".join(parts)


def _render_output(output: dict[str, Any]) -> str:
    kind = output.get("output_type")
    if kind == "stream":
        text = _text(output.get("text"))
    elif kind in ("execute_result", "display_data"):
        data = output.get("data") or {}
        text = _render_data(data) if isinstance(data, dict) else "[invalid output data]"
    elif kind == "error":
        text = f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"
    else:
        text = f"[{kind} output]"
    return cap_head_tail(strip_ansi(text.rstrip("\n")), OUTPUT_LIMIT)


def _render_data(data: dict[str, Any]) -> str:
    """text/plain if present; images (and, without text/plain, other types) only named."""
    has_text = "text/plain" in data
    lines = [_text(data["text/plain"])] if has_text else []
    for mime in (m for m in data if isinstance(m, str)):
        if mime.startswith("image/") or (not has_text and mime != "text/plain"):
            lines.append(f"[{mime} output]")
    return "\n".join(lines)


def _text(value: Any) -> str:
    """Notebook text fields are a string or a list of line strings."""
    if isinstance(value, list):
        return "".join(str(part) for part in value)
    return "" if value is None else str(value)
