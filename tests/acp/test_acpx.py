"""A real ACP client from outside the project, acpx (npm; scripts/test.sh installs it into
.venv/acpx), runs `fuxi-acp`: the protocol as others speak it, both permission answers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fuxi_notebook.testing import Turn, text, tool_use

from ..missing import missing_part
from .acp_client import agent_env

ACPX = Path(__file__).resolve().parents[2] / ".venv" / "acpx" / "node_modules" / ".bin" / "acpx"

pytestmark = [] if ACPX.exists() else missing_part(
    "acpx is not installed (bash scripts/test.sh installs it into .venv/acpx)")


#: acpx's exit status when it denied a permission ask (its EXIT_CODES.PERMISSION_DENIED)
PERMISSION_DENIED = 5


def _acpx(server, cwd: Path, home: Path, policy: str, prompt: str) -> list[dict]:
    home.mkdir(exist_ok=True)
    done = subprocess.run(
        [str(ACPX), "--agent", f"{sys.executable} -m fuxi_notebook acp", policy,
         "--format", "json", "--cwd", str(cwd), "exec", prompt],
        env={**agent_env(server), "HOME": str(home)}, capture_output=True, text=True,
        timeout=120, check=False)
    assert done.returncode == (0 if policy == "--approve-all" else PERMISSION_DENIED), \
        done.stderr
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def _updates(lines: list[dict], kind: str) -> list[dict]:
    return [m["params"]["update"] for m in lines if m.get("method") == "session/update"
            and m["params"]["update"]["sessionUpdate"] == kind]


@pytest.mark.parametrize("policy", ["--approve-all", "--deny-all"])
def test_acpx_runs_a_prompt_with_a_diff_and_answers_the_permission_ask(
        fake_api, tmp_path, policy):
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "notes.txt").write_text("old\n")
    fake_api.add(Turn([tool_use("Read", {"file_path": "notes.txt"})]),
                 Turn([tool_use("Write", {"file_path": "notes.txt", "content": "new\n"})]),
                 Turn([text("Done with the note.")]))
    lines = _acpx(fake_api, folder, tmp_path / "home", policy, "fix the note")
    asked = [m for m in lines if m.get("method") == "session/request_permission"]
    assert len(asked) == 1 and asked[0]["params"]["toolCall"]["title"] == \
        "Write `notes.txt` (+1 more field)"
    write = _updates(lines, "tool_call")[1]
    assert write["content"][0] == {"type": "diff", "path": str(folder / "notes.txt"),
                                   "oldText": "old\n", "newText": "new\n"}
    ends = [u["status"] for u in _updates(lines, "tool_call_update")]
    approved = policy == "--approve-all"
    assert ends == ["completed", "completed" if approved else "failed"]
    assert (folder / "notes.txt").read_text() == ("new\n" if approved else "old\n")
    assert "".join(u["content"]["text"] for u in _updates(lines, "agent_message_chunk")) \
        == "Done with the note."
    [result] = [m["result"] for m in lines if "stopReason" in m.get("result", {})]
    assert result["stopReason"] == "end_turn"
