"""Every Python example of the seed pages runs with only its import line changed.

The examples live verbatim in `tests/seed_examples/`; when the seed pages are present
(beside the repository, as in CI) a test proves the copies match them. Each example runs
as its own process, reaching the fake server through ANTHROPIC_BASE_URL, like a user's
script would.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from fuxi_notebook.testing import Turn, text, tool_use

EXAMPLES = Path(__file__).parent / "seed_examples"
SEEDS = Path(__file__).resolve().parents[2] / "shared" / "seeds"
IMPORTS = ("from fuxi_agent_sdk import", "from claude_agent_sdk import")


def _seed_code() -> dict[str, str]:
    ja = (SEEDS / "agent-loop.ja.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python Python theme=\{null\}\n(.*?)```", ja, re.S)
    zh = (SEEDS / "agent-loop.zh.md").read_text(encoding="utf-8")
    start = zh.index("import asyncio")
    end = zh.index("asyncio.run(main())", start) + len("asyncio.run(main())")
    codes = [textwrap.dedent(block).rstrip() + "\n" for block in blocks] + [zh[start:end] + "\n"]
    names = ["ja_handle_messages.py", "ja_put_it_all_together.py", "zh_handle_messages.py"]
    return dict(zip(names, codes, strict=True))


@pytest.mark.skipif(not SEEDS.is_dir(), reason="seed pages not beside the repository")
def test_examples_are_the_seed_code_with_only_the_import_changed():
    for name, code in _seed_code().items():
        for old in IMPORTS:
            code = code.replace(old, "from fuxi_notebook import")
        assert (EXAMPLES / name).read_text(encoding="utf-8") == code, name


def _run(name: str, server, cwd: Path) -> str:
    env = {**os.environ, "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "test-key",
           "FUXI_BLOCK_REAL_API": "1"}
    done = subprocess.run([sys.executable, str(EXAMPLES / name)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_ja_handle_messages(fake_api, tmp_path):
    fake_api.add(Turn([text("Let me look around."), tool_use("Glob", {"pattern": "*"}),
                       tool_use("Bash", {"command": "rm -rf build"})]),
                 Turn([text("A tiny project.")]))
    out = _run("ja_handle_messages.py", fake_api, tmp_path)
    assert out.splitlines() == ["Turn completed: 1 content blocks"] * 4 + ["A tiny project."]
    # reading inside cwd needs no rule; nothing else is allowed by default
    globbed, denied = fake_api.requests[1]["messages"][-1]["content"][:2]
    assert not globbed.get("is_error")
    assert denied["is_error"] and "not granted" in denied["content"]


def test_zh_handle_messages(fake_api, tmp_path):
    fake_api.add(Turn([text("Looking."), tool_use("Glob", {"pattern": "*"})]),
                 Turn([text("Summary.")]))
    out = _run("zh_handle_messages.py", fake_api, tmp_path)
    assert out.splitlines() == ["Claude: Looking.", "Tool call: Glob", "Claude: Summary.",
                                "Summary."]


def test_ja_put_it_all_together_fixes_a_bug(fake_api, tmp_path):
    (tmp_path / "auth.py").write_text("def check(pw):\n    return pw == 'secret'[::-1]\n")
    (tmp_path / "FUXI.md").write_text("Run tests with python3 test_auth.py\n")
    (tmp_path / "test_auth.py").write_text("from auth import check\nassert check('secret')\n")
    fake_api.add(
        Turn([tool_use("Read", {"file_path": "auth.py"})]),
        Turn([tool_use("Edit", {"file_path": "auth.py", "old_string": "'secret'[::-1]",
                                "new_string": "'secret'"})]),
        Turn([tool_use("Bash", {"command": "python3 test_auth.py"})]),
        Turn([text("Fixed the comparison in auth.py.")]),
    )
    out = _run("ja_put_it_all_together.py", fake_api, tmp_path)
    lines = out.splitlines()
    assert lines[0] == "Done: Fixed the comparison in auth.py."
    assert re.fullmatch(r"Cost: \$\d+\.\d{4}", lines[1])
    assert "return pw == 'secret'\n" in (tmp_path / "auth.py").read_text()
    first = fake_api.requests[0]
    assert first["output_config"] == {"effort": "high"}
    assert "python3 test_auth.py" in first["system"][-1]["text"]  # FUXI.md loaded
    bash_result = fake_api.requests[3]["messages"][-1]["content"][0]
    assert not bash_result.get("is_error")


def test_ja_put_it_all_together_reports_the_turn_limit(fake_api, tmp_path):
    fake_api.add(*[Turn([tool_use("Glob", {"pattern": f"*{i}"})]) for i in range(31)])
    out = _run("ja_put_it_all_together.py", fake_api, tmp_path)
    lines = out.splitlines()
    assert lines[0].startswith("Hit turn limit. Resume session ")
    assert lines[2].startswith("Session ended with an error: Reached maximum number of turns")
