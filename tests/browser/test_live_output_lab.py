"""Issue 36, point 6: what the agent's Python call prints shows while it runs, in a real
JupyterLab (headless chromium): visible on the page, not only present in the markdown (a
card's body is a collapsed `<details>`, where the output so far was hidden until the call
ended and the final transcript replaced the view).

The call waits for a file the test writes once the printed line is seen, so the run
provably cannot end before: no timing assumption.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from fuxi_notebook.testing import Turn, text, tool_use

from .lab import MS

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]

CODE = ("import pathlib, time\n"
        "print('loading rows: first batch read', flush=True)\n"
        "deadline = time.monotonic() + 90\n"
        "while not pathlib.Path('release-the-call').exists() and time.monotonic() < deadline:\n"
        "    time.sleep(0.05)\n"
        "print('loading rows: all batches read')\n")


def test_what_a_running_python_call_prints_is_visible_before_it_ends(notebook, api, lab):
    api.add(Turn([tool_use("Python", {"code": CODE})]), Turn([text("All rows loaded.")]))
    page = notebook(["%load_ext fuxi_notebook",
                     "%%fuxi --allowed-tools Python\nload the rows"])
    page.run_and_wait(0)
    page.run_cell(1)
    # innerText: what is rendered, not what a collapsed <details> holds out of sight
    expect(page.outputs(1)).to_contain_text("loading rows: first batch read",
                                            use_inner_text=True, timeout=60 * MS)
    assert page.is_running(1)
    (lab.root / "release-the-call").write_text("")
    page.wait_done(1, timeout=60)
    page.wait_output(1, "All rows loaded.")
