"""What a batch runs: parameters as papermill takes them, and the grid they make.

`-p NAME VALUE` (the value read as papermill's command line reads it: an int, a float,
True/False/None, else the text), `-y YAML` (a mapping), `-f FILE.yaml`. A name given with
`-p` more than once makes a grid: one run per combination, in the order the values were
given. Every name must be one the notebook's `parameters` cell assigns (papermill would
only warn and inject it anyway): a misspelt name is one clear line, before anything runs.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ...errors import ConfigurationError

__all__ = ["BatchInputError", "check_names", "declared_parameters", "make_grid", "parse_value"]


class BatchInputError(ConfigurationError):
    """Bad input to a batch: one line, nothing run."""


def parse_value(text: str) -> Any:
    """A `-p` value as papermill's command line reads it."""
    if text == "True":
        return True
    if text == "False":
        return False
    if text == "None":
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            continue
    return text


def _yaml_mapping(text: str, where: str) -> dict[str, Any]:
    import yaml

    try:
        loaded = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise BatchInputError(f"{where} is not valid YAML: {' '.join(str(error).split())}") \
            from None
    if loaded is None:
        return {}
    if not isinstance(loaded, dict) or not all(isinstance(k, str) for k in loaded):
        raise BatchInputError(f"{where} must be a mapping of parameter names to values")
    return dict(loaded)


def make_grid(pairs: Sequence[tuple[str, str]] = (), yamls: Sequence[str] = (),
              files: Sequence[Path] = ()) -> list[dict[str, Any]]:
    """The parameters of each run: the files' and YAML mappings' values (later ones win),
    then `-p` values; a name given with `-p` several times takes each of its values in
    turn, every combination with the other such names."""
    from ..common.reading import read_bounded

    fixed: dict[str, Any] = {}
    for path in files:
        data = read_bounded(Path(path), limit=1_000_000, where=f"cannot read {path}")
        if data is None:
            raise BatchInputError(f"cannot read {path}: No such file or directory")
        fixed.update(_yaml_mapping(data.decode("utf-8", errors="replace"), str(path)))
    for text in yamls:
        fixed.update(_yaml_mapping(text, "-y"))
    varying: dict[str, list[Any]] = {}
    for name, value in pairs:
        varying.setdefault(name, []).append(parse_value(value))
    for name in varying:
        fixed.pop(name, None)
    names = list(varying)
    return [{**fixed, **dict(zip(names, values, strict=True))}
            for values in itertools.product(*(varying[n] for n in names))]


def declared_parameters(document: dict[str, Any]) -> set[str] | None:
    """The names the notebook's cell tagged `parameters` assigns (None: no such cell)."""
    for cell in document.get("cells", []):
        tags = (cell.get("metadata") or {}).get("tags") or []
        if cell.get("cell_type") != "code" or "parameters" not in tags:
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        try:
            tree = ast.parse(source)
        except SyntaxError:
            return set()
        names: set[str] = set()
        for node in tree.body:
            targets = (node.targets if isinstance(node, ast.Assign)
                       else [node.target] if isinstance(node, ast.AnnAssign) else [])
            for target in targets:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        return names
    return None


def check_names(names: Iterable[str], declared: set[str] | None, notebook: str) -> None:
    """Every name one the notebook declares, else one line naming what it declares."""
    given = sorted(set(names))
    if not given:
        return
    if declared is None:
        raise BatchInputError(
            f"{notebook} has no cell tagged 'parameters', so it takes no parameter "
            f"({', '.join(given)} given): tag the cell that sets them 'parameters'")
    unknown = [name for name in given if name not in declared]
    if unknown:
        known = ", ".join(sorted(declared)) or "none"
        raise BatchInputError(
            f"{notebook} has no parameter {', '.join(unknown)} (its parameters cell sets: "
            f"{known})")
