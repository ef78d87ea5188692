"""Issue 35, findings 2-4, as they were seen in a real kernel: `%fuxi undo` puts a name or
a file back only if it is still exactly as the agent cell left it (else it is kept and
named), names when the cell ends whatever it cannot take back, and never writes through
a link planted since."""

from __future__ import annotations

import os
from pathlib import Path

from fuxi_notebook.testing import Turn, text, tool_use

ALLOWED = "--allowed-tools Python,Bash --permission-mode acceptEdits"


def _markdown(result) -> str:
    return "\n".join(d["data"].get("text/markdown", "") for d in result.displays)


def _agent(kernel, api, *calls: dict) -> str:
    """An agent cell making `calls` (tool name -> input) one a turn; its stderr."""
    api.add(*(Turn([tool_use(name, tool_input)]) for call in calls
              for name, tool_input in call.items()), Turn([text("Done.")]))
    result = kernel.run(f"%%fuxi {ALLOWED}\ndo it")
    assert result.status == "ok", result.messages
    return result.stderr


def _printed(kernel, code: str) -> str:
    result = kernel.run(code)
    assert result.status == "ok", result.messages
    return result.stdout.strip()


def test_finding_2_a_name_the_user_changed_inside_since_is_kept(fresh, api):
    fresh.run("rows = [1, 2]")
    _agent(fresh, api, {"Python": {"code": "rows.append(3)"}})
    fresh.run("rows.append(4)")  # the user's own later work
    undone = _markdown(fresh.run("%fuxi undo"))
    assert "name rows: changed since the cell (kept as it is)" in undone, undone
    assert _printed(fresh, "print(rows)") == "[1, 2, 3, 4]"


def test_finding_2_a_rebound_name_the_user_changed_inside_since_is_kept(fresh, api):
    fresh.run("table = {'a': 1}")
    _agent(fresh, api, {"Python": {"code": "table = {'a': 1, 'b': 2}"}})
    fresh.run("table['mine'] = 3")
    undone = _markdown(fresh.run("%fuxi undo"))
    assert "name table: changed since the cell (kept as it is)" in undone, undone
    assert _printed(fresh, "print(table)") == "{'a': 1, 'b': 2, 'mine': 3}"


def test_finding_2_a_name_as_the_cell_left_it_is_still_put_back(fresh, api):
    fresh.run("rows = [1, 2]\nalias = rows")
    _agent(fresh, api, {"Python": {"code": "rows.append(3)"}})
    assert _printed(fresh, "print(rows)") == "[1, 2, 3]"
    undone = _markdown(fresh.run("%fuxi undo"))
    assert "1 restored" in undone, undone
    assert _printed(fresh, "print(rows, alias is rows)") == "[1, 2] True"


def test_finding_3_an_object_only_copied_one_level_deep_is_named(fresh, api):
    fresh.run("import threading\nrows = [threading.Lock(), [1, 2]]")
    said = _agent(fresh, api, {"Python": {"code": "rows[1].append(3)"}})
    assert "%fuxi undo cannot take back all this cell changed" in said, said
    assert "name rows" in said
    listed = _markdown(fresh.run("%fuxi undo --list"))
    assert "name rows" in listed, listed


def test_finding_3_an_augmented_assignment_is_a_change_inside(fresh, api):
    fresh.run("rows = [1, 2]\nalias = rows")
    _agent(fresh, api, {"Python": {"code": "rows += [3]"}})
    listed = _markdown(fresh.run("%fuxi undo --list"))
    assert "name rows changed inside" in listed, listed
    fresh.run("%fuxi undo")
    assert _printed(fresh, "print(rows, alias is rows)") == "[1, 2] True"


def test_finding_3_a_mode_only_change_is_undone(fresh, api):
    work = Path(fresh.work)
    script = work / "tool.sh"
    script.write_text("echo hi\n")
    script.chmod(0o644)
    _agent(fresh, api, {"Bash": {"command": "chmod 755 tool.sh"}})
    assert script.stat().st_mode & 0o777 == 0o755
    listed = _markdown(fresh.run("%fuxi undo --list"))
    assert "tool.sh changed" in listed, listed
    fresh.run("%fuxi undo")
    assert script.stat().st_mode & 0o777 == 0o644
    assert script.read_text() == "echo hi\n"


def test_finding_3_a_link_the_code_wrote_through_stays_a_link(fresh, api):
    work = Path(fresh.work)
    (work / "data.txt").write_text("original\n")
    (work / "current.txt").symlink_to("data.txt")
    _agent(fresh, api, {"Bash": {"command": "printf 'new\\n' > current.txt"}})
    assert (work / "data.txt").read_text() == "new\n"
    undone = _markdown(fresh.run("%fuxi undo"))
    assert (work / "current.txt").is_symlink(), undone
    assert os.readlink(work / "current.txt") == "data.txt"
    assert (work / "data.txt").read_text() == "original\n"


def test_finding_4_undo_never_writes_through_a_link_planted_since(fresh, api, tmp_path):
    work = Path(fresh.work)
    (work / "d").mkdir()
    (work / "d" / "usercustomize.py").write_text("# the user's\n")
    site = tmp_path / "site-packages"
    site.mkdir()
    _agent(fresh, api, {"Python": {"code": "import os\nos.remove('d/usercustomize.py')"}})
    assert not (work / "d" / "usercustomize.py").exists()
    # later, d becomes a link to a folder outside the working folders
    (work / "d").rmdir()
    (work / "d").symlink_to(site)
    result = fresh.run("%fuxi undo")
    undone = _markdown(result)
    assert not (site / "usercustomize.py").exists(), undone
    assert "restored file" not in undone, undone
    assert "not undone: file" in undone and "d/usercustomize.py: a folder on its path is a " \
        "link" in undone, undone
    assert "Traceback" not in undone and "Traceback" not in result.stderr


def test_finding_2_a_user_augmented_assignment_since_is_a_change(fresh, api):
    fresh.run("rows = [1, 2]")
    _agent(fresh, api, {"Python": {"code": "rows.append(3)"}})
    fresh.run("rows += [4]")  # the same object, extended in place
    undone = _markdown(fresh.run("%fuxi undo"))
    assert "name rows: changed since the cell (kept as it is)" in undone, undone
    assert _printed(fresh, "print(rows)") == "[1, 2, 3, 4]"


def test_finding_2_a_dataframe_changed_in_place_since_is_kept(fresh, api):
    fresh.run("import pandas as pd\nsales = pd.DataFrame({'x': [1, 2]})")
    _agent(fresh, api, {"Python": {"code": "sales['y'] = sales.x * 2"}})
    fresh.run("sales.loc[0, 'y'] = 99")
    undone = _markdown(fresh.run("%fuxi undo"))
    assert "name sales: changed since the cell (kept as it is)" in undone, undone
    assert _printed(fresh, "print(sales.y.tolist())") == "[99, 4]"


def test_finding_3_a_file_changed_since_is_kept_even_over_the_cap(api, tmp_path_factory):
    """A file over the size cap after the cell is compared by its digest: a later edit
    is seen, never overwritten."""
    from .kernel_harness import loaded_kernel

    kernel = loaded_kernel(api, tmp_path_factory.mktemp("undo-big"),
                           FUXI_UNDO_MAX_FILE_MB="0.001")
    try:
        api.reset()
        big = Path(kernel.work) / "big.txt"
        big.write_text("small\n")
        _agent(kernel, api, {"Python": {"code": "open('big.txt', 'wb').write(bytes(5000))"}})
        big.write_bytes(b"\1" * 5000)  # the same size, other bytes: the user's
        undone = _markdown(kernel.run("%fuxi undo"))
        assert "big.txt: changed since the cell (kept as it is)" in undone, undone
        assert big.read_bytes() == b"\1" * 5000
    finally:
        kernel.close()
