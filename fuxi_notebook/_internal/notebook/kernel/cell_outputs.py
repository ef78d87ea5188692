"""What a cell run by the agent (RunCell) shows in that cell: the outputs it would show if
the user ran it, built from what the Python tool captured.

The model gets text and images (python.py); the cell gets the full bundles: stdout and
stderr as streams, each display as it was displayed (HTML tables, widgets' fallbacks,
JSON), the last expression's value as an `execute_result`, figures, and an error as an
`error` output. Everything is redacted and held to the display size caps, as the agent
cell's own outputs are (the notebook is saved, and must stay usable).
"""

from __future__ import annotations

from typing import Any

from .capture import (
    MAX_CALL_DISPLAY_BYTES,
    Capture,
    RenderedFigure,
    capped_bundle,
    safe_bundle,
)

__all__ = ["cell_outputs"]


def cell_outputs(shell: Any, capture: Capture, *, value: Any, show_value: bool,
                 error: BaseException | None, traceback_text: str,
                 figures: list[RenderedFigure], stream_chars: int) -> list[dict[str, Any]]:
    """nbformat outputs for the cell (see the module docstring)."""
    from ...sessions.redact import redact

    found: list[dict[str, Any]] = []
    for name, stream in (("stdout", capture.stdout), ("stderr", capture.stderr)):
        text = stream.text(stream_chars)
        if text:
            found.append({"output_type": "stream", "name": name, "text": redact(text)})
    budget = [MAX_CALL_DISPLAY_BYTES]
    for output in capture.displays.outputs:
        if not output.get("update"):
            found.append(_display(safe_bundle(output["data"]), output.get("metadata"),
                                  budget))
    for figure in figures:
        if figure.png is not None:
            found.append(_display({"image/png": figure.png, "text/plain": repr(figure.figure)},
                                  {}, budget))
    if show_value and value is not None:
        try:
            data, metadata = shell.display_formatter.format(value)
        except Exception:
            data, metadata = {"text/plain": repr(value)}, {}
        found.append({**_display(safe_bundle(data), metadata, budget),
                      "output_type": "execute_result", "execution_count": None})
    if error is not None:
        found.append({"output_type": "error", "ename": type(error).__name__,
                      "evalue": str(redact(str(error))),
                      "traceback": str(redact(traceback_text)).split("\n")})
    return found


def _display(data: dict[str, Any], metadata: Any, budget: list[int]) -> dict[str, Any]:
    return {"output_type": "display_data", "data": capped_bundle(data, budget),
            "metadata": dict(metadata or {})}
