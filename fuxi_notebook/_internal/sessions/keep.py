"""`python -m fuxi_notebook sessions keep NB.ipynb`: records from outputs into metadata.

For notebooks run where nothing copies a cell's record into its metadata (a frontend
without the extension, `jupyter execute`, papermill): after this, Clear Outputs and
nbstripout leave the records (run it before nbstripout, e.g. as the pre-commit hook
`.pre-commit-hooks.yaml` defines). Only cells whose metadata changes are touched, and the
file is written the way Jupyter writes it (indent 1, sorted keys), atomically, only when
something changed. Core: plain JSON, no IPython.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from .cell_record import keep_in_metadata
from .notebook_file import read_document, split_fuxi_source

__all__ = ["Kept", "keep_records", "notebook_json"]


@dataclass
class Kept:
    """What `keep_records` did to one notebook."""

    kept: list[str] = field(default_factory=list)  # cells whose metadata got the record
    same: int = 0  # cells whose metadata already held it
    conflicts: list[str] = field(default_factory=list)  # cells left as they were
    text: str | None = None  # the notebook's new JSON text (None: unchanged)


def notebook_json(document: Any) -> str:
    """A notebook as Jupyter writes it (what JupyterLab and nbformat produce)."""
    return json.dumps(document, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def keep_records(path: str | Path, *, from_outputs: bool = False) -> Kept:
    """Copy each `%%fuxi` cell's record output into its metadata (see the module
    docstring); `from_outputs` also overwrites a metadata record that differs. Raises
    ConfigurationError with one line for a file that is not a notebook."""
    path = Path(path).expanduser()
    document = read_document(path)
    cells = document["cells"]
    kept = Kept()
    for index, cell in enumerate(cells):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source")
        text = "".join(source) if isinstance(source, list) else source
        if not isinstance(text, str) or split_fuxi_source(text) is None:
            continue
        if cell.get("metadata") is not None and not isinstance(cell.get("metadata"), dict):
            kept.conflicts.append(f"cell #{index + 1}: its metadata is not an object")
            continue
        name = cast(str, cell.get("id")) if isinstance(cell.get("id"), str) else f"#{index + 1}"
        outcome = keep_in_metadata(cell, from_outputs=from_outputs)
        if outcome == "kept":
            kept.kept.append(name)
        elif outcome == "same":
            kept.same += 1
        elif outcome == "conflict":
            kept.conflicts.append(f"cell {name}: the record in its metadata differs from the "
                                  "one in its outputs (--from-outputs takes the outputs')")
    if kept.kept:
        kept.text = notebook_json(document)
    return kept
