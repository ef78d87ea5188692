"""The house rules, measured from the package's own source (docs/architecture.md):

- no import circle, counting the imports inside functions;
- imports point down the layers (a module imports its own layer or lower ones);
- no folder holds more than 15 modules, no function is over 60 lines;
- the internal packages' `__init__` modules import nothing, so importing a module never
  runs a sibling it did not ask for (and the graph below is the whole truth).

`python tests/test_architecture.py` prints the measurements.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "fuxi_notebook"
MAX_MODULES_PER_FOLDER = 15
MAX_FUNCTION_LINES = 60

#: Bottom to top; a module may import modules of its own layer and of the layers below.
#: A module belongs to the last (longest) prefix that names it.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("fuxi_notebook.types", "fuxi_notebook.errors", "fuxi_notebook.option_types",
     "fuxi_notebook.hook_types", "fuxi_notebook.extra_types", "fuxi_notebook._internal.common"),
    ("fuxi_notebook.hooks", "fuxi_notebook._internal.models"),
    ("fuxi_notebook.options",),
    ("fuxi_notebook._internal.tools",),
    ("fuxi_notebook._internal.checkpoints",),
    ("fuxi_notebook._internal.context",),
    ("fuxi_notebook._internal.permissions",),
    ("fuxi_notebook._internal.mcp_servers",),
    ("fuxi_notebook._internal.sessions",),
    ("fuxi_notebook._internal.settings",),
    # the agent, bottom to top: what a session is made of; the session; the loop that
    # runs it; subagents (their runner drives the loop); the assembler; the entry points
    tuple(f"fuxi_notebook._internal.agent.{name}" for name in (
        "extensions", "prompt", "structured", "project_link", "mcp_link", "subagents.files",
        "subagents.agent_tool")),
    ("fuxi_notebook._internal.agent.session",),
    ("fuxi_notebook._internal.agent.own_tools", "fuxi_notebook._internal.agent.loop"),
    ("fuxi_notebook._internal.agent.subagents",),
    ("fuxi_notebook._internal.agent.assemble",),
    ("fuxi_notebook._internal.agent",),
    ("fuxi_notebook._internal.notebook",),
    # the loop as an ACP agent: an entry point, over the agent (and, with a live kernel,
    # the notebook's kernel tools, run in that kernel)
    ("fuxi_notebook._internal.acp",),
    # batches of notebook runs on Dask: over the sessions' records, never the loop itself
    # (each run is a kernel of its own)
    ("fuxi_notebook._internal.batch",),
    ("fuxi_notebook.testing",),
    ("fuxi_notebook", "fuxi_notebook.__main__", "fuxi_notebook._internal.demo"),
)


@dataclass
class Package:
    """The package's modules, their imports (module -> modules) and their functions."""

    files: dict[str, Path] = field(default_factory=dict)
    imports: dict[str, set[str]] = field(default_factory=dict)
    functions: list[tuple[int, str]] = field(default_factory=list)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _targets(node: ast.Import | ast.ImportFrom, here: str, is_package: bool,
             known: dict[str, Path]) -> Iterator[str]:
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
        return
    base = here.split(".") if is_package else here.split(".")[:-1]
    if node.level:
        base = base[:len(base) - (node.level - 1)]
        module = ".".join([*base, *([node.module] if node.module else [])])
    else:
        module = node.module or ""
    for alias in node.names:
        submodule = f"{module}.{alias.name}"
        yield submodule if submodule in known else module


def read_package() -> Package:
    package = Package()
    for path in sorted((ROOT / PACKAGE).rglob("*.py")):
        if "labextension" not in path.parts:
            package.files[_module_name(path)] = path
    for name, path in package.files.items():
        tree = ast.parse(path.read_text(), str(path))
        found: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                for target in _targets(node, name, path.name == "__init__.py", package.files):
                    while target not in package.files and "." in target:
                        target = target.rsplit(".", 1)[0]
                    if target in package.files and target != name:
                        found.add(target)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                where = f"{path.relative_to(ROOT)}:{node.lineno} {node.name}"
                package.functions.append((length, where))
        package.imports[name] = found
    return package


def cycles(imports: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in imports:
        if start in index:
            continue
        work = [(start, iter(sorted(imports[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(imports[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def layer_of(module: str) -> int:
    best, best_length = -1, -1
    for level, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_length:
                best, best_length = level, len(prefix)
    return best


def upward_imports(imports: dict[str, set[str]]) -> list[str]:
    return [f"{module} -> {target}" for module, targets in sorted(imports.items())
            for target in sorted(targets) if layer_of(target) > layer_of(module)]


def oversized_folders(package: Package) -> list[str]:
    counts: dict[Path, int] = {}
    for path in package.files.values():
        counts[path.parent] = counts.get(path.parent, 0) + 1
    return [f"{folder.relative_to(ROOT)}: {count} modules"
            for folder, count in sorted(counts.items()) if count > MAX_MODULES_PER_FOLDER]


PACKAGE_SOURCE = read_package()

def test_every_module_has_a_layer():
    assert [name for name in PACKAGE_SOURCE.files if layer_of(name) < 0] == []


def test_no_import_circle_counting_imports_inside_functions():
    assert cycles(PACKAGE_SOURCE.imports) == []


def test_imports_point_down_the_layers():
    assert upward_imports(PACKAGE_SOURCE.imports) == []


def test_no_folder_holds_more_than_15_modules():
    assert oversized_folders(PACKAGE_SOURCE) == []


def test_no_function_is_over_60_lines():
    assert sorted(where for length, where in PACKAGE_SOURCE.functions
                  if length > MAX_FUNCTION_LINES) == []


def test_internal_package_inits_import_nothing():
    inits = [name for name, path in PACKAGE_SOURCE.files.items()
             if path.name == "__init__.py" and ".__init__" not in name
             and name.startswith(f"{PACKAGE}._internal")]
    assert [name for name in inits if PACKAGE_SOURCE.imports[name]] == []


def test_the_checks_see_a_circle_an_upward_import_and_a_long_function():
    """The measurements above can fail: a made-up graph shows each fault."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert upward_imports({"fuxi_notebook._internal.tools.shell": {
        "fuxi_notebook._internal.agent.session"}, "fuxi_notebook._internal.agent.session": set()
    }) == ["fuxi_notebook._internal.tools.shell -> fuxi_notebook._internal.agent.session"]
    assert layer_of("fuxi_notebook._internal.notebook.cell.magic") > layer_of(
        "fuxi_notebook._internal.agent.session")
    assert any(length > 1 for length, _ in PACKAGE_SOURCE.functions)


if __name__ == "__main__":
    source = PACKAGE_SOURCE
    print(f"{len(source.files)} modules, "
          f"{sum(len(t) for t in source.imports.values())} imports between them")
    for component in cycles(source.imports):
        print(f"circle of {len(component)}: {' '.join(component)}")
    for line in upward_imports(source.imports):
        print("upward:", line)
    for line in oversized_folders(source):
        print("folder:", line)
    for length, where in sorted(source.functions, reverse=True):
        if length > MAX_FUNCTION_LINES:
            print(f"function: {length} lines {where}")
    sys.exit(0)
