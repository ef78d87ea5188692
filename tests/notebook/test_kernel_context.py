"""KernelContext: the user's variables and the cells they ran since the agent last looked."""

from __future__ import annotations

from fuxi_notebook._internal.notebook.kernel.tools import KernelContext


def run(shell, *cells: str) -> None:
    for cell in cells:
        result = shell.run_cell(cell, store_history=True)
        assert result.success, result


def fake_cell(shell, raw: str, parsed: str | None = None) -> None:
    """Record a finished cell in history without executing it (e.g. a `%%fuxi` cell)."""
    shell.history_manager.store_inputs(shell.execution_count, parsed or raw, raw)
    shell.execution_count += 1


def test_nothing_to_say_returns_none(shell):
    assert KernelContext(shell).describe() is None


def test_first_call_reports_variables_and_the_last_five_cells(shell):
    run(shell, *(f"v{i} = {i}" for i in range(1, 8)))
    text = KernelContext(shell).describe()
    variables, cells = text.split("\n\n", 1)
    assert variables == ("Variables in the kernel (7): v1: int; v2: int; v3: int; v4: int; "
                         "v5: int; v6: int; v7: int")
    assert cells.startswith("Cells the user ran recently:\n\n[In 3]\nv3 = 3\n\n[In 4]")
    assert "[In 2]" not in cells and cells.endswith("[In 7]\nv7 = 7")


def test_later_calls_report_only_new_cells_with_their_out_value(shell):
    context = KernelContext(shell)
    run(shell, "import pandas as pd", "df = pd.DataFrame({'a': [1, 2, 3]})")
    first = context.describe()
    assert "df: pandas.DataFrame (3, 1)" in first and "pd.DataFrame({'a'" in first
    assert context.describe() == "Variables in the kernel (1): df: pandas.DataFrame (3, 1)"
    run(shell, "total = int(df.a.sum())", "total * 2")
    text = context.describe()
    assert text.endswith(
        "Cells the user ran since your last turn:\n\n[In 3]\ntotal = int(df.a.sum())\n\n"
        "[In 4]\ntotal * 2\n[Out 4] 12")
    assert "[In 2]" not in text


def test_agent_cells_empty_cells_and_the_running_cell_are_skipped(shell):
    context = KernelContext(shell)
    run(shell, "x = 1")
    fake_cell(shell, "%%fuxi\nplot x", "get_ipython().run_cell_magic('fuxi', '', 'plot x\\n')")
    fake_cell(shell, "   \n")
    run(shell, "%who_ls")
    shell.user_ns["context"] = context
    run(shell, "report = context.describe()")  # the agent's own cell, still running
    text = shell.user_ns["report"]
    assert "[In 1]\nx = 1" in text and "[In 4]\n%who_ls\n[Out 4] ['x']" in text
    assert "plot x" not in text and "[In 2]" not in text and "[In 3]" not in text
    assert "[In 5]" not in text and "report" not in text
    run(shell, "y = 2")
    assert context.describe().endswith("since your last turn:\n\n[In 6]\ny = 2")


def test_long_cells_are_truncated_and_say_so(shell):
    run(shell, "y = 1\n# " + "z" * 3000)
    text = KernelContext(shell).describe(max_chars=10_000)
    assert "... (cell truncated, 1508 more characters)" in text
    assert len(text) < 2000


def test_max_chars_is_respected_dropping_older_cells_first(shell):
    run(shell, *(f"name_{i} = '{'q' * 300}'" for i in range(12)))
    context = KernelContext(shell)
    text = context.describe(max_chars=900)
    assert len(text) <= 900
    assert "[In 12]" in text and "earlier cells omitted" in text
    assert "more)" in text.split("\n")[0]
    run(shell, *(f"more_{i} = 1" for i in range(60)))
    assert len(context.describe(max_chars=300)) <= 300
    assert len(KernelContext(shell).describe(max_chars=50)) <= 50


def test_output_is_deterministic(shell):
    run(shell, "b = [1, 2]", "a = {'k': 1}", "c = 'text'")
    assert KernelContext(shell).describe() == KernelContext(shell).describe()
    first_line = KernelContext(shell).describe().split("\n")[0]
    assert first_line == "Variables in the kernel (3): a: dict len=1; b: list len=2; c: str len=4"
