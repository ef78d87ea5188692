"""The scripts in `examples/` run as a user runs them, against the fake Messages API.

Each runs as its own process with this checkout first on its path, reaching the fake
server through ANTHROPIC_BASE_URL; the assertions are on what it prints and does.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from fuxi_notebook.testing import Turn, text, tool_use

ROOT = Path(__file__).resolve().parents[1]


def _run(name: str, server, cwd: Path, args: list[str] | None = None) -> str:
    env = {**os.environ, "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "test-key",
           "FUXI_BLOCK_REAL_API": "1", "PYTHONPATH": str(ROOT), "FUXI_MODEL": "claude-sonnet-5-5"}
    done = subprocess.run([sys.executable, str(ROOT / "examples" / name), *(args or [])],
                          cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_structured_output_example(fake_api, tmp_path):
    (tmp_path / "sales.csv").write_text("region,total\nNorth,94000\nSouth,83000\n")
    fake_api.add(
        Turn([tool_use("Glob", {"pattern": "*.csv"})]),
        Turn([tool_use("StructuredOutput", {"region": "North", "total": "a lot"})]),
        Turn([text("North leads."), tool_use("StructuredOutput", {
            "region": "North", "total": 94000, "reason": "highest total in sales.csv"})]))
    out = _run("structured_output.py", fake_api, tmp_path)
    assert out.strip() == "North: 94,000 (highest total in sales.csv)"
    assert len(fake_api.requests) == 3  # the invalid answer was sent back once


def test_client_control_example(fake_api, tmp_path):
    fake_api.add(
        Turn([tool_use("Write", {"file_path": "notes.txt", "content": "hello\n"})]),
        Turn([text("Wrote notes.txt.")]),
        Turn([text("A file saying hello.")]))
    out = _run("client_control.py", fake_api, tmp_path)
    assert out.splitlines() == ["model claude-sonnet-5-5, mode default",
                                "first: Wrote notes.txt.", "second: A file saying hello.",
                                "third: error_during_execution"]
    assert (tmp_path / "notes.txt").read_text() == "hello\n"  # no approval was needed
    assert [r["model"] for r in fake_api.requests] == ["claude-sonnet-5-5"] * 2 + [
        "claude-opus-5"]  # the essay never reached the model


def test_subagents_example(fake_api, tmp_path):
    (tmp_path / "calc.py").write_text("def divide(a, b):\n    return a / b\n")
    fake_api.add(
        Turn([tool_use("Agent", {"description": "review calc.py", "prompt": "Review calc.py",
                                 "subagent_type": "code-reviewer"})]),
        Turn([tool_use("Read", {"file_path": "calc.py"})]),
        Turn([text("calc.py: divide() does not handle b == 0.")]),
        Turn([text("The reviewer found one issue: divide() does not handle b == 0.")]))
    out = _run("subagents.py", fake_api, tmp_path)
    assert out.splitlines() == [
        "delegated to code-reviewer: review calc.py",
        "  [Read] calc.py",
        "answer: The reviewer found one issue: divide() does not handle b == 0."]
    assert [r["model"] for r in fake_api.requests] == [
        "claude-sonnet-5-5", "claude-haiku-5-5", "claude-haiku-5-5", "claude-sonnet-5-5"]
    assert [t["name"] for t in fake_api.requests[1]["tools"]] == ["Read", "Glob", "Grep"]


def test_sessions_example(fake_api, tmp_path):
    fake_api.add(Turn([text("Shelly.")]), Turn([text("It has a shell.")]),
                 Turn([text("Tortellini.")]))
    out = _run("sessions.py", fake_api, tmp_path)
    assert out.splitlines() == [
        "first: Shelly.", "resumed: It has a shell. (same session: True)",
        "forked: Tortellini. (new session: True)",
        "Turtle names, take two: 6 messages",
        "Suggest a name for a pet turtle. One word.: 4 messages"]
    said = [[m["content"][0]["text"] for m in r["messages"]] for r in fake_api.requests]
    assert said[1][-1] == "Why that name?" and len(said[1]) == 3  # resumed: the history went
    assert said[2] == [*said[1], "It has a shell.", "Suggest a different one."]


def test_mcp_tools_example(fake_api, tmp_path):
    fake_api.add(
        Turn([tool_use("mcp__calc__add", {"a": 2, "b": 40})]),
        Turn([tool_use("mcp__demo__echo", {"text": "42"})]),
        Turn([text("2 + 40 = 42.")]))
    out = _run("mcp_tools.py", fake_api, tmp_path,
               args=[str(ROOT / "tests" / "mcp" / "server_script.py")])
    assert out.splitlines() == [
        "server calc: connected", "server demo: connected",
        "tools: mcp__calc__add, mcp__demo__add, mcp__demo__crash, mcp__demo__echo, "
        "mcp__demo__fail, mcp__demo__get_weather, mcp__demo__header, mcp__demo__mislabelled, "
        "mcp__demo__picture, mcp__demo__slow",
        "call mcp__calc__add {'a': 2, 'b': 40}", "call mcp__demo__echo {'text': '42'}",
        "result: 2 + 40 = 42."]
    calc, echo = (fake_api.requests[i]["messages"][-1]["content"][0] for i in (1, 2))
    assert calc["content"] == "42" and echo["content"] == "42"


def test_plugins_example(fake_api, tmp_path):
    fake_api.add(Turn([text("Hello, World! Lovely to meet you.")]))
    out = _run("plugins.py", fake_api, tmp_path)
    assert out.splitlines() == [
        "plugin: greetings 0.1.0", "slash commands: /greetings:greet",
        "agents: general-purpose, poet", "result: Hello, World! Lovely to meet you."]
    request = fake_api.requests[0]
    assert request["messages"][0]["content"][0]["text"] == (
        "Greet World warmly, in one short sentence.")  # the command, not "/greet World"
    assert "Agent" in [t["name"] for t in request["tools"]]  # the plugin's agent


def test_skills_example(fake_api, tmp_path):
    fake_api.add(
        Turn([tool_use("Skill", {"skill": "csv-summary"})]),
        Turn([tool_use("Read", {"file_path": "sales.csv"})]),
        Turn([text("sales.csv has 2 rows (region, total); North is largest at 94000.")]))
    out = _run("skills.py", fake_api, tmp_path)
    assert out.splitlines() == [
        "skills: csv-summary", "[Skill] {'skill': 'csv-summary'}",
        "[Read] {'file_path': 'sales.csv'}",
        "result: sales.csv has 2 rows (region, total); North is largest at 94000."]
    first = fake_api.requests[0]
    skill_tool = next(t for t in first["tools"] if t["name"] == "Skill")
    assert "- csv-summary: Summarise a CSV file." in skill_tool["description"]
    assert "largest value" not in str(first)  # the instructions wait until used
    loaded = fake_api.requests[1]["messages"][-1]["content"][0]
    assert not loaded.get("is_error") and "largest value" in str(loaded["content"])


def test_file_checkpointing_example(fake_api, tmp_path):
    """Write, Edit and Bash change three files and add one; after resuming the session,
    rewind_files to the prompt's uuid puts every one back."""
    fake_api.add(
        Turn([tool_use("Read", {"file_path": "config.ini"})]),
        Turn([tool_use("Edit", {"file_path": "config.ini", "old_string": "debug = true",
                                "new_string": "debug = false"}),
              tool_use("Write", {"file_path": "README.md", "content": "# Tidy\n"}),
              tool_use("Bash", {"command": "rm old.log"})]),
        Turn([text("Tidied.")]))
    out = _run("file_checkpointing.py", fake_api, tmp_path)
    assert out.splitlines() == [
        "after the agent: README.md, config.ini",
        "restored: config.ini, old.log",
        "removed: README.md",
        "after the rewind: config.ini, old.log",
        "config.ini: ['[app]', 'debug = true']"]
    assert (tmp_path / "old.log").read_text() == "yesterday's log\n"
    results = [b for m in fake_api.requests[-1]["messages"] if m["role"] == "user"
               for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]
    assert len(results) == 4 and not any(r.get("is_error") for r in results)  # all ran
    assert len(fake_api.requests) == 3  # the empty prompt asked the model nothing


def test_stderr_callback_example(fake_api, tmp_path):
    """The comparable SDK's stderr example and e2e test, in our words: a clean run sends
    the callback nothing; debug mode sends the loop's debug log."""
    fake_api.add(Turn([text("4")]), Turn([text("4")]))
    out = _run("stderr_callback.py", fake_api, tmp_path)
    assert out.splitlines() == [
        "success - 0 stderr lines", "success - 2 stderr lines in debug mode",
        "first: request 1 to claude-sonnet-5-5: 1 messages"]


def test_max_budget_usd_example(fake_api, tmp_path):
    """The comparable SDK's budget example, in our words: within budget a run succeeds;
    over it, the run stops before the next request with `error_max_budget_usd`, and the
    single-shot query() raises ResultError after yielding that result (the seed: the
    raise is deliberate, for every error result; the comparable SDK raises too)."""
    (tmp_path / "README.md").write_text("# Notes\nA short file.\n")
    fake_api.add(Turn([text("4")]), Turn([text("4")]),
                 Turn([tool_use("Read", {"file_path": "README.md"})]))
    out = _run("max_budget_usd.py", fake_api, tmp_path)
    lines = out.splitlines()
    assert lines[0].startswith("no budget: success after 1 turn(s), $0.0")
    assert lines[1].startswith("$0.10: success after 1 turn(s), $0.0")
    assert lines[2].startswith("$0.0001: error_max_budget_usd after 1 turn(s), $0.0")
    assert lines[3] == ("$0.0001: raised ResultError (budget_exhausted): "
                        "Reached maximum budget ($0.0001)")
    assert len(lines) == 4 and len(fake_api.requests) == 3  # the Read's result was never sent


def test_streaming_mode_trio_example(fake_api, tmp_path):
    """The comparable SDK's trio example, in our words: three turns of one conversation
    from `trio.run`, through the real client against the fake Messages API."""
    fake_api.add(Turn([text("42")]), Turn([text("84")]), Turn([text("12.00")]))
    out = _run("streaming_mode_trio.py", fake_api, tmp_path)
    assert out.splitlines() == [
        "User: What's 15 + 27?", "Fuxi: 42", "Result: success",
        "User: Now multiply that result by 2", "Fuxi: 84", "Result: success",
        "User: Divide that by 7 and round to 2 decimal places", "Fuxi: 12.00",
        "Result: success"]
    prompts = [r["messages"][-1]["content"][-1]["text"] for r in fake_api.requests]
    assert prompts[-1] == "Divide that by 7 and round to 2 decimal places"
    assert len(fake_api.requests[-1]["messages"]) == 5  # one conversation


def test_filesystem_agents_example(fake_api, tmp_path):
    """The comparable SDK's filesystem-agents example, in our words: with the default
    setting sources, an agent file of the project is loaded and the local settings'
    `outputStyle` is the one in force (a style file of the project's applies too)."""
    agents = tmp_path / ".fuxi" / "agents"
    agents.mkdir(parents=True)
    (agents / "fs-test-agent.md").write_text(
        "---\nname: fs-test-agent\ndescription: A filesystem test agent\ntools: Read\n---\n"
        "You are a simple test agent.\n")
    styles = tmp_path / ".fuxi" / "output-styles"
    styles.mkdir()
    (styles / "terse.md").write_text("---\nname: Terse\n---\nAnswer in as few words as you can.\n")
    (tmp_path / ".fuxi" / "settings.local.json").write_text('{"outputStyle": "Terse"}')
    fake_api.add(Turn([text("Hello there, friend.")]))
    out = _run("filesystem_agents.py", fake_api, tmp_path)
    assert out.splitlines() == ["agents: general-purpose, fs-test-agent", "output style: Terse",
                                "Fuxi: Hello there, friend.", "result: success"]
    system = " ".join(b["text"] for b in fake_api.requests[0]["system"])
    assert "Answer in as few words as you can." in system
