"""The README's main job: `python -m fuxi_notebook demo`, without and with an API key."""

from __future__ import annotations

import os
import subprocess
import sys

from fuxi_notebook._internal.demo import demo_script


def _demo(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fuxi_notebook", "demo"], env=env,
                          capture_output=True, text=True, timeout=120, check=False)


def test_demo_without_key_plays_the_recorded_session_and_fixes_the_bug(tmp_path):
    env = {k: v for k, v in os.environ.items()
           if k not in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL")}
    done = _demo({**env, "TMPDIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "fake Messages API" in out
    assert f"Workspace: {tmp_path}/fuxi-demo-" in out  # it ran there...
    assert "[tool result] test_calc: ok" in out
    assert "[result] success · 5 turns" in out
    assert out.rstrip().endswith("return a + b")
    assert list(tmp_path.iterdir()) == []  # ...and left nothing behind


def test_demo_with_key_uses_the_configured_api(fake_api):
    fake_api.add(*demo_script())
    env = {**os.environ, "ANTHROPIC_API_KEY": "key-for-test", "ANTHROPIC_BASE_URL": fake_api.url,
           "FUXI_MODEL": "claude-haiku-5-5"}
    done = _demo(env)
    assert done.returncode == 0, done.stderr
    assert "the real API plays the model" in done.stdout
    assert len(fake_api.requests) == 5
    assert fake_api.requests[0]["model"] == "claude-haiku-5-5"
    assert fake_api.request_headers[0]["authorization"] == "Bearer key-for-test"
