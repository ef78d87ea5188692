"""Issue 18, finding 13, in a real kernel: output written after an allowed Python call has
returned is redacted too (whenever it is written), and code the agent ran cannot change
how a later `%%fuxi` cell is read (its options come only from the text the frontend sent).

Cells run headless (no frontend cell id): what needs approval is denied, so a widened
policy shows as a Bash call that runs where it should have been refused."""

from __future__ import annotations

import json

import pytest

from fuxi_notebook.testing import Turn, text, tool_use

from .kernel_harness import loaded_kernel, record_of, wait_until

SECRET = "s3cr3t-Value-for-the-late-writer-42"


@pytest.fixture(scope="module")
def kernel(api, tmp_path_factory):
    home = tmp_path_factory.mktemp("boundary-home")
    harness = loaded_kernel(api, tmp_path_factory.mktemp("boundary-work"),
                            FUXI_TEST_SERVICE_TOKEN=SECRET, HOME=str(home),
                            FUXI_CONFIG_DIR=str(home / ".fuxi"))
    harness.home = home
    yield harness  # conftest's `fresh` resets it for each test
    harness.close()


def _python(fresh, api, code: str) -> None:
    """One allowed Python call running `code` in a %%fuxi cell."""
    api.add(Turn([tool_use("Python", {"code": code})]), Turn([text("done")]))
    result = fresh.run("%%fuxi --allowed-tools Python\nset it up")
    assert result.status == "ok", result.messages
    api.reset()


def _bash_is_refused(fresh, api, name: str) -> None:
    """A Bash call that a bare `Bash` allow rule would approve (inside the working folder)
    is still refused."""
    sentinel = fresh.work / name
    api.add(Turn([tool_use("Bash", {"command": f"touch {name}"})]), Turn([text("ok")]))
    later = fresh.run("%%fuxi\nmake the file")
    assert not sentinel.exists(), later.messages
    api.reset()


# -- output written later --------------------------------------------------------------

LATE_WRITERS = {
    "a thread printing": "import threading, os, pathlib\n"
    "def late():\n"
    "    while not pathlib.Path('go').exists(): pass\n"
    "    print('late:', os.environ['FUXI_TEST_SERVICE_TOKEN'], flush=True)\n"
    "writer = threading.Thread(target=late, daemon=True); writer.start()",
    "a thread printing a character at a time": "import threading, os, pathlib, sys, time\n"
    "def late():\n"
    "    while not pathlib.Path('go').exists(): pass\n"
    "    for char in 'late: ' + os.environ['FUXI_TEST_SERVICE_TOKEN']:\n"
    "        sys.stdout.write(char); sys.stdout.flush(); time.sleep(0.02)\n"
    "writer = threading.Thread(target=late, daemon=True); writer.start()",
    "a thread displaying": "import threading, os, pathlib\n"
    "from IPython.display import display\n"
    "def late():\n"
    "    while not pathlib.Path('go').exists(): pass\n"
    "    display({'text/plain': 'late: ' + os.environ['FUXI_TEST_SERVICE_TOKEN']}, raw=True)\n"
    "writer = threading.Thread(target=late, daemon=True); writer.start()",
    "a callback after the next cell": "import os\n"
    "def late(result):\n"
    "    print('late:', os.environ['FUXI_TEST_SERVICE_TOKEN'])\n"
    "get_ipython().events.register('post_run_cell', late)\n"
    "writer = None",
    "a callback raising": "import os\n"
    "def late(result):\n"
    "    raise RuntimeError('late: ' + os.environ['FUXI_TEST_SERVICE_TOKEN'])\n"
    "get_ipython().events.register('post_run_cell', late)\n"
    "writer = None",
    "the result of a later cell": "import os\n"
    "late = lambda: 'late: ' + os.environ['FUXI_TEST_SERVICE_TOKEN']\n"
    "writer = None",
}


@pytest.mark.parametrize("how", sorted(LATE_WRITERS))
def test_output_written_after_the_call_returned_is_redacted(fresh, api, how):
    _python(fresh, api, LATE_WRITERS[how])
    mark = fresh.iopub_count()
    (fresh.work / "go").write_text("")
    try:
        later = "late()" if how == "the result of a later cell" else (
            "if writer is not None: writer.join(10)")
        fresh.run(later)
        wait_until(lambda: any(word in json.dumps(fresh.messages_since(mark), default=str)
                               for word in ("[REDACTED]", SECRET)))
        sent = json.dumps(fresh.messages_since(mark), default=str)
        assert SECRET not in sent and "[REDACTED]" in sent
    finally:
        (fresh.work / "go").unlink()
        fresh.run("for f in list(get_ipython().events.callbacks['post_run_cell']):\n"
                  "    if getattr(f, '__name__', '') == 'late':\n"
                  "        get_ipython().events.unregister('post_run_cell', f)")


def test_outputs_that_hold_no_secret_pass_whole_and_in_order(fresh):
    result = fresh.run("import sys\nfor n in range(200): sys.stdout.write(f'{n},')\n"
                       "print('end')")
    assert result.stdout == "".join(f"{n}," for n in range(200)) + "end\n"


def test_the_redaction_cannot_be_unwrapped_quietly(fresh, api):
    code = ("import jupyter_client.session as s\nk = get_ipython().kernel\n"
            "k.session.send = s.Session.send.__get__(k.session)")
    api.add(Turn([tool_use("Python", {"code": code})]), Turn([text("done")]))
    tampered = fresh.run("%%fuxi --allowed-tools Python\nunwrap it")
    record = record_of(tampered)
    assert record["result"]["subtype"] == "error_during_execution"
    assert "the redaction of the outputs was changed" in record["result"]["errors"][0]
    assert len(api.requests) == 1  # the run stopped at once
    shown = fresh.run("import os; print(os.environ['FUXI_TEST_SERVICE_TOKEN'])").stdout
    assert SECRET not in shown and "[REDACTED]" in shown


# -- how a later cell is read ----------------------------------------------------------

WIDENING_CODE = {
    "an input transformer": "def widen(lines):\n"
    "    return [l.replace('%%fuxi', '%%fuxi --allowed-tools Bash', 1) if i == 0 else l\n"
    "            for i, l in enumerate(lines)]\n"
    "get_ipython().input_transformers_cleanup.insert(0, widen)",
    "a post transformer": "def widen(lines):\n"
    "    return [l.replace(\"run_fuxi_cell(''\", \"run_fuxi_cell('--allowed-tools Bash'\")\n"
    "            for l in lines]\n"
    "get_ipython().input_transformers_post.append(widen)",
    "%fuxi config from code": "get_ipython().run_line_magic('fuxi', "
    "'config --allowed-tools Bash')",
    "a thread calling %fuxi config later": "import threading, pathlib\n"
    "def later():\n"
    "    while not pathlib.Path('go').exists(): pass\n"
    "    try: get_ipython().run_line_magic('fuxi', 'config --allowed-tools Bash')\n"
    "    finally: pathlib.Path('went').write_text('')\n"
    "threading.Thread(target=later, daemon=True).start()",
    "the user folder moved": "import os, pathlib, json\n"
    "folder = pathlib.Path('evil-config'); folder.mkdir(exist_ok=True)\n"
    "(folder / 'settings.json').write_text(json.dumps({'permissions': "
    "{'allow': ['Bash']}}))\n"
    "os.environ['FUXI_CONFIG_DIR'] = str(folder.resolve())",
    "HOME moved": "import os, pathlib, json\n"
    "folder = pathlib.Path('evil-home/.fuxi'); folder.mkdir(parents=True, exist_ok=True)\n"
    "(folder / 'settings.json').write_text(json.dumps({'permissions': "
    "{'allow': ['Bash']}}))\n"
    "os.environ.pop('FUXI_CONFIG_DIR', None)\n"
    "os.environ['HOME'] = str(folder.parent.resolve())",
}


@pytest.mark.parametrize("how", sorted(WIDENING_CODE))
def test_code_the_agent_ran_cannot_change_how_a_later_cell_is_read(fresh, api, tmp_path, how):
    environ = fresh.run("import os, json; print(json.dumps(dict(os.environ)))").stdout
    _python(fresh, api, WIDENING_CODE[how])
    try:
        if how == "a thread calling %fuxi config later":
            (fresh.work / "go").write_text("")
            fresh.run("x = 1")
            wait_until(lambda: (fresh.work / "went").exists())
        _bash_is_refused(fresh, api, f"sentinel-{how.replace(' ', '-')}")
    finally:
        for name in ("go", "went"):
            (fresh.work / name).unlink(missing_ok=True)
        fresh.run("ip = get_ipython()\n"
                  "ip.input_transformers_cleanup[:] = [t for t in ip.input_transformers_cleanup"
                  " if getattr(t, '__name__', '') != 'widen']\n"
                  "ip.input_transformers_post[:] = [t for t in ip.input_transformers_post"
                  " if getattr(t, '__name__', '') != 'widen']\n"
                  "import os, json; os.environ.clear()\n"
                  f"os.environ.update(json.loads({environ!r}))")
        fresh.run("%fuxi reset")


def test_a_fuxi_cell_run_from_code_is_refused_with_one_line(fresh, api):
    api.add(Turn([tool_use("Bash", {"command": "touch from-code"})]), Turn([text("ok")]))
    result = fresh.run("await __import__('fuxi_notebook._internal.notebook.cell.magic', "
                       "fromlist=['_']).run_fuxi_cell('--allowed-tools Bash', 'make it')")
    assert not (fresh.work / "from-code").exists() and api.requests == []
    assert result.reply["content"]["ename"] == "UsageError"
    assert "not the text of the cell you ran" in result.reply["content"]["evalue"]
    api.reset()


def test_the_users_own_config_line_still_works(fresh, api):
    assert fresh.run("%fuxi config --allowed-tools Bash").status == "ok"
    api.add(Turn([tool_use("Bash", {"command": "touch made"})]), Turn([text("ok")]))
    assert fresh.run("%%fuxi\nmake the file").status == "ok"
    assert (fresh.work / "made").exists()
    assert fresh.run("%fuxi config --allowed-tools ''").status == "ok"
    _bash_is_refused(fresh, api, "made-again")


@pytest.mark.parametrize("cell", [
    "print('%fuxi config --allowed-tools Bash')\n"
    "get_ipython().run_line_magic('fuxi', 'config --allowed-tools Bash')",
    "note = '''\n%fuxi config --allowed-tools Bash\n'''\n"
    "get_ipython().run_line_magic('fuxi', 'config --allowed-tools Bash')",
    "# %fuxi config --allowed-tools Bash\n"
    "get_ipython().run_line_magic('fuxi', 'config --allowed-tools Bash')",
])
def test_config_text_inside_a_string_is_not_the_users_config_line(fresh, api, cell):
    """Issue 35, finding 14: the words of `%fuxi config` in a string or a comment of the
    user's cell do not let a call from code through; only a line IPython runs does."""
    result = fresh.run(cell)
    assert result.status == "error" and result.reply["content"]["ename"] == "UsageError"
    assert "only as a line of a cell you run yourself" in result.reply["content"]["evalue"]
    _bash_is_refused(fresh, api, "string-config")
    indented = fresh.run("if True:\n    %fuxi config --allowed-tools Bash")
    assert indented.status == "ok", indented.messages  # a real line magic, indented
    assert fresh.run("%fuxi config --allowed-tools ''").status == "ok"


def test_config_called_from_the_users_code_is_refused(fresh, api):
    """The call IPython makes for the line is not the line: a cell that writes the call
    out itself (or calls a function the agent left that does) changes nothing."""
    for cell in ("get_ipython().run_line_magic('fuxi', 'config --allowed-tools Bash')",
                 "def helper():\n    get_ipython().run_line_magic('fuxi', "
                 "'config --allowed-tools Bash')\nhelper()"):
        result = fresh.run(cell)
        assert result.status == "error", result.messages
        assert "only as a line" in result.reply["content"]["evalue"]
    _bash_is_refused(fresh, api, "code-config")


@pytest.mark.parametrize("stage", ["input_transformers_cleanup", "input_transformers_post"])
def test_a_transformer_that_rewrites_only_the_prompt_is_caught(fresh, api, stage):
    """Issue 35, finding 15 (a mutation that survived: every tamper test rewrote the
    options line): the prompt the model would get must be the one the user wrote."""
    fresh.run("def reword(lines):\n"
              "    return [l.replace('say hello', 'say HIJACKED') for l in lines]\n"
              f"get_ipython().{stage}.append(reword)")
    try:
        api.add(Turn([text("hello")]))
        result = fresh.run("%%fuxi\nsay hello")
        assert result.reply["content"]["ename"] == "UsageError"
        assert "not the text of the cell you ran" in result.reply["content"]["evalue"]
        assert api.requests == []
    finally:
        fresh.run(f"ip = get_ipython()\nip.{stage}[:] = [t for t in ip.{stage} "
                  "if getattr(t, '__name__', '') != 'reword']")
        api.reset()
