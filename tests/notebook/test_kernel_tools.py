"""The kernel tools against a real in-process IPython shell."""

from __future__ import annotations

import asyncio
import base64
import json
import signal
import sys

import pytest

from fuxi_notebook._internal.notebook.kernel.tools import (
    InsertCellTool,
    InspectTool,
    NotebookReadTool,
    PythonTool,
    VariablesTool,
    kernel_tools,
    notebook_path,
)
from fuxi_notebook._internal.tools.base import Tool, ToolError, ToolOutput


async def python(shell, ctx, code: str) -> ToolOutput:
    return await PythonTool(shell).run({"code": code}, ctx)


def text_of(output: ToolOutput) -> str:
    assert isinstance(output.content, list)
    assert output.content[0]["type"] == "text"
    return output.content[0]["text"]


def images_of(output: ToolOutput) -> list[dict]:
    assert isinstance(output.content, list)
    return [block for block in output.content if block["type"] == "image"]


# --- kernel_tools ------------------------------------------------------------------------


def test_kernel_tools_builds_the_five_tools_bound_to_the_shell(shell):
    tools = kernel_tools(shell)
    assert [tool.name for tool in tools] == [
        "Python", "Variables", "Inspect", "NotebookRead", "InsertCell"]
    assert [tool.kind for tool in tools] == ["execute", "read", "read", "read", "edit"]
    for tool in tools:
        assert isinstance(tool, Tool)
        assert tool.shell is shell
        assert tool.input_schema["additionalProperties"] is False
        assert tool.description


# --- Python: output ----------------------------------------------------------------------


async def test_python_reports_stdout_stderr_and_last_value(shell, ctx):
    code = "import sys\nprint('hello')\nprint('oops', file=sys.stderr)\n1 + 1"
    out = await python(shell, ctx, code)
    assert not out.is_error
    assert text_of(out) == "stdout:\nhello\n\nstderr:\noops\n\nresult:\n2"
    assert images_of(out) == []


async def test_python_variables_persist_in_the_user_namespace(shell, ctx):
    await python(shell, ctx, "answer = 41")
    assert shell.user_ns["answer"] == 41
    out = await python(shell, ctx, "answer + 1")
    assert text_of(out) == "result:\n42"


async def test_python_without_output_says_so_and_semicolon_hides_the_value(shell, ctx):
    assert text_of(await python(shell, ctx, "y = 1")) == "(no output)"
    assert text_of(await python(shell, ctx, "y + 1;  # quiet")) == "(no output)"
    assert text_of(await python(shell, ctx, "None")) == "(no output)"


async def test_python_top_level_await(shell, ctx):
    code = "import asyncio\nvalue = await asyncio.sleep(0, result=7)\nvalue * 2"
    assert text_of(await python(shell, ctx, code)) == "result:\n14"
    out = await python(shell, ctx, "await asyncio.sleep(0, result='done')")
    assert text_of(out) == "result:\n'done'"


async def test_python_returns_a_coroutine_value_without_awaiting_it(shell, ctx):
    out = await python(shell, ctx, "async def job():\n    return 1\nc = job()\nc")
    assert "coroutine" in text_of(out)
    shell.user_ns["c"].close()


async def test_python_accepts_ipython_magics(shell, ctx):
    out = await python(shell, ctx, "zeta = 1\n%who_ls")
    assert text_of(out) == "result:\n['zeta']"


async def test_python_refuses_to_start_a_nested_agent_cell(shell, ctx):
    with pytest.raises(ToolError, match="fuxi"):
        await python(shell, ctx, "%%fuxi\nhello")


# --- Python: errors ----------------------------------------------------------------------


async def test_python_error_shows_output_so_far_and_a_traceback_of_user_frames(shell, ctx):
    code = "def f():\n    raise ValueError('bad value')\nprint('before')\nf()"
    out = await python(shell, ctx, code)
    assert out.is_error
    text = text_of(out)
    assert text.startswith("stdout:\nbefore\n\nerror:\nTraceback (most recent call last):")
    assert "<fuxi-python-" in text
    assert "raise ValueError('bad value')" in text
    assert text.endswith("ValueError: bad value")
    assert "kernel_python" not in text and "_evaluate" not in text
    assert sys.stdout is sys.__stdout__ or not hasattr(sys.stdout, "text")


async def test_python_syntax_error_is_an_error_result(shell, ctx):
    out = await python(shell, ctx, "def (:")
    assert out.is_error
    assert "SyntaxError" in text_of(out)


async def test_python_system_exit_is_reported_not_raised(shell, ctx):
    out = await python(shell, ctx, "raise SystemExit(3)")
    assert out.is_error
    assert "SystemExit: 3" in text_of(out)


async def test_python_long_traceback_is_capped(shell, ctx):
    code = "def f0():\n    raise RuntimeError('deep')\n"
    code += "".join(f"def f{i}():\n    return f{i - 1}()\n" for i in range(1, 30)) + "f29()"
    text = text_of(await python(shell, ctx, code))
    error = text.split("error:\n", 1)[1]
    assert len(error.split("\n")) <= 41
    assert "traceback lines omitted" in error
    assert error.endswith("RuntimeError: deep")


async def test_python_output_sections_are_capped_keeping_head_and_tail(shell, ctx):
    out = await python(shell, ctx, "print('A' + 'x' * 100_000 + 'Z')\n'B' + 'y' * 100_000 + 'C'")
    text = text_of(out)
    assert len(text) < 45_000
    stdout, result = text.split("\n\nresult:\n")
    assert "truncated" in stdout and "A" in stdout[:20] and stdout.endswith("Z")
    assert "truncated" in result and result.startswith("'B") and result.endswith("C'")


async def test_python_huge_error_message_is_capped(shell, ctx):
    out = await python(shell, ctx, "raise ValueError('q' * 10_000_000)")
    text = text_of(out)
    assert out.is_error and len(text) < 45_000
    assert "truncated" in text and text.rstrip().endswith("q")


# --- Python: displays and figures ---------------------------------------------------------


async def test_what_python_shows_in_the_cell_is_capped(shell, ctx, displays):
    code = ("from IPython.display import display, HTML\n"
            "for i in range(50):\n    display(HTML('<p>' + 'z' * 200_000 + '</p>'))\n"
            "display(HTML('x' * 2_000_000))")
    await python(shell, ctx, code)
    shown = sum(len(v) for o in displays.outputs for v in o["data"].values())
    assert len(displays.outputs) == 51 and shown < 5_100_000
    assert "over the 1000 KB limit for one display" in displays.outputs[-1]["data"]["text/plain"]
    assert "reached the 5 MB limit" in displays.outputs[30]["data"]["text/plain"]
    assert displays.outputs[0]["data"]["text/html"].startswith("<p>zzz")


async def test_a_displayed_secret_is_redacted_in_the_cell(shell, ctx, displays):
    token = "sk-ant-api03-" + "T" * 40
    await python(shell, ctx, f"from IPython.display import display, HTML\n"
                             f"display('{token}')\ndisplay(HTML('<i>{token}</i>'))")
    published = repr([o["data"] for o in displays.outputs])
    assert token not in published and "[REDACTED]" in published


async def test_python_rich_display_is_republished_and_described(shell, ctx, displays):
    code = "from IPython.display import HTML, display\ndisplay(HTML('<b>hi</b>'))\nprint('x')"
    out = await python(shell, ctx, code)
    assert [o["data"]["text/html"] for o in displays.outputs] == ["<b>hi</b>"]
    assert text_of(out) == "stdout:\nx\n\ndisplayed:\n<IPython.core.display.HTML object>"


async def test_python_dataframe_display_gives_the_model_its_text(shell, ctx, displays):
    code = ("import pandas as pd\nfrom IPython.display import display\n"
            "display(pd.DataFrame({'a': [1, 2], 'b': ['u', 'v']}))")
    out = await python(shell, ctx, code)
    assert "text/html" in displays.outputs[0]["data"]
    shown = text_of(out).split("displayed:\n", 1)[1]
    assert shown.split() == ["a", "b", "0", "1", "u", "1", "2", "v"]


async def test_python_matplotlib_figure_comes_back_as_an_image_and_is_closed(shell, ctx, displays):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.close("all")
    out = await python(shell, ctx, "import matplotlib.pyplot as plt\nplt.plot([1, 3, 2]);")
    images = images_of(out)
    assert len(images) == 1
    assert images[0]["source"]["media_type"] == "image/png"
    assert base64.b64decode(images[0]["source"]["data"]).startswith(b"\x89PNG")
    assert plt.get_fignums() == []
    assert [sorted(o["data"]) for o in displays.outputs] == [["image/png", "text/plain"]]
    assert text_of(out) == "(no output)"


async def test_python_leaves_untouched_figures_alone(shell, ctx, displays):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.close("all")
    figure = plt.figure()
    figure.canvas.draw()
    try:
        out = await python(shell, ctx, "1")
        assert images_of(out) == [] and displays.outputs == []
        assert plt.get_fignums() == [figure.number]
    finally:
        plt.close("all")


# --- Python: the notebook's own state -----------------------------------------------------


async def test_python_leaves_in_out_underscore_and_execution_count_unchanged(shell, ctx):
    shell.run_cell("a = 1", store_history=True)
    shell.run_cell("a + 1", store_history=True)
    before = (list(shell.user_ns["In"]), dict(shell.user_ns["Out"]), shell.user_ns["_"],
              shell.user_ns["__"], shell.execution_count)
    assert before[2] == 2
    await python(shell, ctx, "a + 10")
    await python(shell, ctx, "print('x')\nraise ValueError")
    after = (list(shell.user_ns["In"]), dict(shell.user_ns["Out"]), shell.user_ns["_"],
             shell.user_ns["__"], shell.execution_count)
    assert after == before


async def test_keyboard_interrupt_becomes_cancellation_and_restores_everything(
    shell, ctx, displays
):
    def custom_handler(signum, frame):  # pragma: no cover - never called
        pass

    previous = signal.signal(signal.SIGINT, custom_handler)
    stdout, stderr = sys.stdout, sys.stderr
    try:
        code = ("import signal\nfrom IPython.display import display\n"
                "seen = signal.getsignal(signal.SIGINT)\ndisplay('partial')\n"
                "raise KeyboardInterrupt")
        with pytest.raises(asyncio.CancelledError, match="interrupted by the user"):
            await python(shell, ctx, code)
        assert signal.getsignal(signal.SIGINT) is custom_handler
    finally:
        signal.signal(signal.SIGINT, previous)
    assert shell.user_ns["seen"] is signal.default_int_handler
    assert (sys.stdout, sys.stderr) == (stdout, stderr)
    assert shell.display_pub is displays
    assert [o["data"]["text/plain"] for o in displays.outputs] == ["'partial'"]


async def test_cancelling_an_awaiting_run_propagates_and_restores(shell, ctx, displays):
    stdout = sys.stdout
    code = "import asyncio\nprint('waiting')\nawait asyncio.sleep(30)"
    task = asyncio.ensure_future(python(shell, ctx, code))
    while "asyncio" not in shell.user_ns:
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert sys.stdout is stdout and shell.display_pub is displays


# --- Variables -----------------------------------------------------------------------------


async def test_variables_table_lists_user_data_and_hides_the_rest(shell, ctx):
    import numpy as np
    import pandas as pd

    shell.user_ns.update(
        frame=pd.DataFrame({"a": [1, 2, 3], "b": [4.0, 5.0, 6.0]}),
        arr=np.arange(4), items=[1, 2, 3], _private=1, json=json, secret=object(),
    )
    shell.user_ns_hidden["secret"] = shell.user_ns["secret"]
    out = await VariablesTool(shell).run({}, ctx)
    lines = out.content.split("\n")
    assert lines[0].split() == ["name", "type", "shape/len", "size", "preview"]
    assert [line.split()[0] for line in lines[1:]] == ["arr", "frame", "items"]
    arr, frame, items = lines[1:]
    assert arr.split()[1:3] == ["numpy.ndarray", "(4,)"] and "array([0, 1, 2, 3])" in arr
    assert frame.split()[1:4] == ["pandas.DataFrame", "(3,", "2)"]
    assert "columns: a, b" in frame
    assert items.split()[1:3] == ["list", "len=3"] and items.endswith("[1, 2, 3]")
    for name in ("In", "Out", "exit", "quit", "get_ipython", "_private", "json", "secret"):
        assert f"\n{name} " not in out.content


SECRET = "hunter2-correct-horse-battery"


async def test_secret_named_variables_are_masked_by_variables_and_inspect(shell, ctx):
    class Config:
        api_token = SECRET

    shell.user_ns.update({"db_password": SECRET, "AWS_SECRET_ACCESS_KEY": SECRET,
                          "config": Config(), "tokenizer": "visible-tokenizer"})
    table = (await VariablesTool(shell).run({}, ctx)).content
    assert SECRET not in table and table.count("[masked: named like a secret; str") == 2
    assert "visible-tokenizer" in table  # whole words only: a tokenizer is not a token
    for path in ("db_password", "config.api_token", "AWS_SECRET_ACCESS_KEY"):
        described = (await InspectTool(shell).run({"name": path}, ctx)).content
        assert SECRET not in described and "29 characters" in described, path
    code = await python(shell, ctx, "len(db_password)")  # usable in code by name
    assert text_of(code).endswith("29")


async def test_variables_filter_and_empty_namespace(shell, ctx):
    tool = VariablesTool(shell)
    assert "No user variables" in (await tool.run({}, ctx)).content
    shell.user_ns.update(df_sales=1, df_costs=2, model=3)
    out = await tool.run({"filter": "^df_"}, ctx)
    assert [line.split()[0] for line in out.content.split("\n")[1:]] == ["df_costs", "df_sales"]
    out = await tool.run({"filter": "sales["}, ctx)  # invalid regex: plain substring
    assert "No user variables match" in out.content


async def test_variables_survive_hostile_objects_and_cap_the_table(shell, ctx):
    class Hostile:
        def __len__(self):
            raise RuntimeError("no len")

        def __repr__(self):
            raise RuntimeError("no repr")

    shell.user_ns.update({f"v{i:03}": i for i in range(205)})
    shell.user_ns["hostile"] = Hostile()
    out = await VariablesTool(shell).run({}, ctx)
    lines = out.content.split("\n")
    assert len(lines) == 1 + 200 + 1
    assert lines[-1] == "... and 6 more (use `filter` to narrow)"
    hostile = lines[1].split()
    assert hostile[0] == "hostile" and "Hostile instance" in lines[1]


# --- Inspect -------------------------------------------------------------------------------


async def inspect_(shell, ctx, name: str) -> str:
    return (await InspectTool(shell).run({"name": name}, ctx)).content


async def test_inspect_dataframe(shell, ctx):
    import pandas as pd

    shell.user_ns["df"] = pd.DataFrame({"x": [1.0, None, 3.0], "label": ["a", "b", None]})
    text = await inspect_(shell, ctx, "df")
    assert text.startswith("df: pandas.DataFrame\nshape: (3, 2)\n")
    label_dtype = shell.user_ns["df"]["label"].dtype
    assert "  x  float64  1" in text and f"  label  {label_dtype}  1" in text
    assert "head(5):" in text and "NaN" in text


async def test_inspect_array_series_and_dotted_path(shell, ctx):
    import numpy as np
    import pandas as pd

    shell.user_ns["arr"] = np.array([[3, 1], [4, 1]])
    text = await inspect_(shell, ctx, "arr")
    assert "shape: (2, 2)" in text and "dtype: int64" in text and "min: 1" in text
    assert "max: 4" in text
    assert (await inspect_(shell, ctx, "arr.T")).startswith("arr.T: numpy.ndarray\n")
    shell.user_ns["s"] = pd.Series([1, 2], name="n")
    assert "length: 2" in await inspect_(shell, ctx, "s")
    shell.user_ns["np"] = np
    assert (await inspect_(shell, ctx, "np.linalg")).startswith("np.linalg: module\n")
    shell.user_ns["empty"] = np.array([], dtype=float)
    empty = await inspect_(shell, ctx, "empty")
    assert "size: 0" in empty and "min:" not in empty


async def test_inspect_function_and_class(shell, ctx):
    shell.run_cell("def add(a, b=2):\n    '''Add two numbers.'''\n    return a + b\n"
                   "class Point:\n    '''A point.'''\n    def norm(self):\n        return 0\n")
    text = await inspect_(shell, ctx, "add")
    assert "signature: (a, b=2)" in text and "Add two numbers." in text
    assert "return a + b" in text
    point = await inspect_(shell, ctx, "Point")
    assert "mro: Point -> object" in point and "public methods (1): norm" in point


async def test_inspect_module(shell, ctx):
    shell.user_ns["json"] = json
    text = await inspect_(shell, ctx, "json")
    assert text.startswith("json: module\nfile: ")
    assert "dumps" in text and "JSON (JavaScript Object Notation)" in text


async def test_inspect_missing_names_suggest_close_matches(shell, ctx):
    import pandas as pd

    shell.user_ns["frame"] = pd.DataFrame({"a": [1]})
    with pytest.raises(ToolError, match=r"No variable named 'frme'.*Close matches: frame"):
        await inspect_(shell, ctx, "frme")
    with pytest.raises(ToolError, match=r"frame has no attribute 'colums'.*columns"):
        await inspect_(shell, ctx, "frame.colums")


@pytest.mark.parametrize("expression", ["__import__('os')", "frame[0]", "a + b", "x.", "1x"])
async def test_inspect_rejects_expressions(shell, ctx, expression):
    with pytest.raises(ToolError, match="does not evaluate expressions"):
        await inspect_(shell, ctx, expression)


# --- NotebookRead and InsertCell -------------------------------------------------------------


def write_notebook(path) -> None:
    notebook = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "markdown", "id": "intro", "metadata": {}, "source": ["# Sales\n"]},
        {"cell_type": "code", "id": "c1", "metadata": {}, "execution_count": 1,
         "source": ["print('hi')"],
         "outputs": [{"output_type": "stream", "name": "stdout", "text": ["hi\n"]}]},
    ]}
    path.write_text(json.dumps(notebook))


async def test_notebook_read_renders_the_saved_notebook(shell, ctx, tmp_path, monkeypatch):
    write_notebook(tmp_path / "analysis.ipynb")
    monkeypatch.setenv("FUXI_NOTEBOOK", "analysis.ipynb")
    text = (await NotebookReadTool(shell).run({}, ctx)).content
    assert text.startswith(f"Notebook {tmp_path / 'analysis.ipynb'} as saved on disk, 2 cells")
    assert "<cell 0 [markdown] id=intro>\n# Sales" in text
    assert "<cell 1 [code] id=c1>\nprint('hi')\n<outputs>\nhi\n</outputs>" in text
    limited = (await NotebookReadTool(shell).run({"max_cells": 1}, ctx)).content
    assert "<cell 1" not in limited and "1 more cells not shown" in limited


async def test_notebook_read_marks_a_malformed_cell_and_shows_the_rest(shell, ctx, tmp_path,
                                                                        monkeypatch):
    path = tmp_path / "analysis.ipynb"
    write_notebook(path)
    notebook = json.loads(path.read_text())
    notebook["cells"].insert(1, {"cell_type": "code", "id": "bad", "metadata": {},
                                 "source": "x", "outputs": 3})
    path.write_text(json.dumps(notebook))
    monkeypatch.setenv("FUXI_NOTEBOOK", str(path))
    output = await NotebookReadTool(shell).run({}, ctx)
    assert not output.is_error and "[invalid outputs: a int, not a list]" in output.content
    assert "<cell 2 [code] id=c1>\nprint('hi')" in output.content


async def test_notebook_read_without_a_path_explains(shell, ctx, monkeypatch):
    monkeypatch.delenv("FUXI_NOTEBOOK", raising=False)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    with pytest.raises(ToolError, match=r"notebook is unknown.*FUXI_NOTEBOOK"):
        await NotebookReadTool(shell).run({}, ctx)


def test_notebook_path_sources_in_order(shell, monkeypatch):
    monkeypatch.delenv("FUXI_NOTEBOOK", raising=False)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    assert notebook_path(shell) is None
    shell.user_ns["__vsc_ipynb_file__"] = "/vsc.ipynb"
    assert notebook_path(shell) == "/vsc.ipynb"
    shell.user_ns["__session__"] = "/session.ipynb"
    assert notebook_path(shell) == "/session.ipynb"
    monkeypatch.setenv("JPY_SESSION_NAME", "/jpy.ipynb")
    assert notebook_path(shell) == "/jpy.ipynb"
    monkeypatch.setenv("FUXI_NOTEBOOK", "/fuxi.ipynb")
    assert notebook_path(shell) == "/fuxi.ipynb"


async def test_insert_cell_sets_next_input_and_merges_within_one_run(shell, ctx, monkeypatch):
    calls = []
    monkeypatch.setattr(shell, "set_next_input", lambda text, replace=False: calls.append(
        (text, replace)))
    tool = InsertCellTool(shell)
    out = await tool.run({"code": "df.plot()"}, ctx)
    assert calls == [("df.plot()", False)]
    assert "not run" in out.content
    out = await tool.run({"code": "df.describe()"}, ctx)
    assert calls[-1] == ("df.plot()\n\ndf.describe()", False)
    assert "Appended" in out.content
    shell.execution_count += 1
    await tool.run({"code": "x"}, ctx)
    assert calls[-1] == ("x", False)
    with pytest.raises(ToolError):
        await tool.run({"code": "  "}, ctx)


async def test_insert_cell_merges_with_a_kernel_payload_from_this_run(shell, ctx, monkeypatch):
    calls = []
    monkeypatch.setattr(shell, "set_next_input", lambda text, replace=False: calls.append(text))
    shell.payload_manager.write_payload(
        {"source": "set_next_input", "text": "earlier", "replace": False})
    try:
        await InsertCellTool(shell).run({"code": "later"}, ctx)
    finally:
        shell.payload_manager.clear_payload()
    assert calls == ["earlier\n\nlater"]
    shell.payload_manager.write_payload(
        {"source": "set_next_input", "text": "%%fuxi --id x\nhi", "replace": True})
    try:
        await InsertCellTool(shell).run({"code": "alone"}, ctx)
    finally:
        shell.payload_manager.clear_payload()
    assert calls[-1] == "alone"
