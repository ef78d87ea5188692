"""The text the frontend sent for the running cell: where a cell's options come from.

Code the agent ran lives in the kernel with everything else: it can add an input
transformer, wrap the magic, or call `%fuxi config` later, so that a cell runs with options
the user never wrote. The frontend's own message cannot be changed that way before the
cell runs: ipykernel keeps the `execute_request` it is running (`kernel.get_parent()`), and
terminal IPython stores each cell's raw text in its history before transforming it. A
`%%fuxi` cell runs only if the line and prompt that reached it are the ones in that text,
and the `%fuxi` commands that change the policy only if the frontend's text holds them.
"""

from __future__ import annotations

from typing import Any

__all__ = ["fuxi_cell_parts", "has_line_magic", "sent_cell_parts", "sent_text"]

_MAGIC = "%%fuxi"


def fuxi_cell_parts(lines: list[str]) -> tuple[str, str] | None:
    """(options line, prompt) of a `%%fuxi` cell's lines, as the cell transformer reads
    them; None for text that is not a `%%fuxi` cell with a prompt."""
    first = 0
    while first < len(lines) and not lines[first].strip():
        first += 1
    if first == len(lines):
        return None
    head = lines[first].rstrip("\n")
    if not (head == _MAGIC or head.startswith((f"{_MAGIC} ", f"{_MAGIC}\t"))):
        return None
    body = "".join(lines[first + 1:])
    if not body.strip():
        return None
    return head[len(_MAGIC):].strip(), body


def sent_text(shell: Any) -> str | None:
    """The code of the request the kernel is running (None: it runs no execute_request),
    or, in terminal IPython, the raw text of the cell being run."""
    kernel = getattr(shell, "kernel", None)
    if kernel is not None:
        parent = kernel.get_parent() or {}
        if (parent.get("header") or {}).get("msg_type") != "execute_request":
            return None
        code = (parent.get("content") or {}).get("code")
        return code if isinstance(code, str) else None
    raw = getattr(getattr(shell, "history_manager", None), "input_hist_raw", None)
    return raw[-1] if raw else None


def sent_cell_parts(shell: Any) -> tuple[str, str] | None:
    """`fuxi_cell_parts` of the frontend's text (None: it is no `%%fuxi` cell)."""
    text = sent_text(shell)
    if text is None:
        return None
    text = text if text.endswith("\n") else text + "\n"  # as IPython's transformer sees it
    return fuxi_cell_parts(text.splitlines(keepends=True))


def has_line_magic(shell: Any, line: str) -> bool:
    """Whether the frontend's text holds the line magic `%fuxi <line>` where IPython runs
    it as one (a `%fuxi config` the user wrote, not one code called): the text is read by
    IPython's own transforms, without the kernel's added ones, so the same words inside a
    string, a comment or a call the code makes do not count."""
    from IPython.core.inputtransformer2 import TransformerManager

    text = sent_text(shell)
    if text is None:
        return False
    try:
        code = TransformerManager().transform_cell(text)  # type: ignore[no-untyped-call]
    except Exception:  # text IPython cannot read runs no line magic either
        return False
    wanted = f"get_ipython().run_line_magic('fuxi', {line!r})"
    written, ran = text.splitlines(), code.splitlines()
    # a line magic is rewritten line for line: the user's line is a `%` line that
    # became the call (the call written out by the code itself is not one)
    return len(written) == len(ran) and any(
        row.strip() == wanted and was.lstrip().startswith("%")
        for was, row in zip(written, ran, strict=True))
