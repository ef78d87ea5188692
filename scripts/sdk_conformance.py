"""How much code written for the comparable SDK runs here, measured on its newest code.

    python scripts/sdk_conformance.py [--repo PATH] [--keep DIR] [--only e2e|examples]

Takes the comparable SDK's `examples/` and `e2e-tests/` from a copy of its repository
(`PATH`: a work tree or a bare git directory, e.g. what the workplace's `fetch` brings:
`/work/.mirror/anthropics+claude-agent-sdk-python/repo`), renames them mechanically
(`claude_agent_sdk` → `fuxi_notebook`, `Claude` → `Fuxi`, `.claude` → `.fuxi`, ...) and
runs them against this checkout, offline: the real `anthropic` client talks to the fake
Messages API, whose "model" here follows the prompts those files send ("Reply with
exactly: X", "Run: CMD", "Call the mcp__x__y tool", "Use the Agent tool ... subagent_type
'a'", sums, structured output from the schema). Prints one row per example file and per
e2e test, then the totals. A row can fail because that fake model is too simple for its
prompt; read the failure before counting it against the package.

Not part of the test suite (it needs the fetched repository and takes minutes).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fuxi_notebook.testing import FakeMessagesServer, Turn, text, thinking, tool_use  # noqa: E402

DEFAULT_REPO = Path("/work/.mirror/anthropics+claude-agent-sdk-python/repo")
#: the mechanical renaming, in order (longer names first)
RENAMES = [
    ("claude_agent_sdk", "fuxi_notebook"), ("ClaudeAgentOptions", "FuxiAgentOptions"),
    ("ClaudeSDKClient", "FuxiSDKClient"), ("ClaudeSDKError", "FuxiSDKError"),
    ("CLAUDE_CONFIG_DIR", "FUXI_CONFIG_DIR"), ("CLAUDE.md", "FUXI.md"),
    ("claude_code", "fuxi_code"), (".claude", ".fuxi"), ("Claude", "Fuxi"),
]
TIMEOUT = 120
#: runs an example made to be pasted into IPython, one banner-separated snippet per cell
IPYTHON_DRIVER = """
import re, sys
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
source = open(sys.argv[1], encoding="utf-8").read()
for snippet in re.split(r"\\n# =+\\n# [^\\n]*\\n# =+\\n", source):
    if not shell.run_cell(snippet).success:
        sys.exit(1)
"""


# -- the fake model: follows the prompts the comparable SDK's files send --------------------

def _texts(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content or [] if isinstance(b, dict)
                     and b.get("type") == "text"
                     and not str(b.get("text", "")).startswith("<system-reminder>"))


def instance(schema: dict[str, Any], about: str = "", name: str = "") -> Any:
    """A value that matches a JSON schema: numbers are 1 and strings "example", except
    that the words, word count and character count of a quoted text the prompt gives
    (`about`) are that text's, as a model asked to analyse it would answer."""
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) else kind
    if kind == "object" or "properties" in schema:
        return {key: instance(sub, about, key)
                for key, sub in schema.get("properties", {}).items()}
    if about and kind in ("integer", "number") and name in ("word_count", "character_count"):
        return len(about.split()) if name == "word_count" else len(about)
    if kind == "array":
        if about and name == "words":
            return about.split()
        return [instance(schema.get("items", {"type": "string"}))]
    return {"integer": 1, "number": 1, "boolean": True, "null": None}.get(str(kind), "example")


def respond(body: dict[str, Any]) -> Turn:
    """The fake model's answer to one request: thinking first when the request enables
    it (as the API streams it), then a call the prompt asks for, else an answer."""
    turn = _answer(body)
    if (body.get("thinking") or {}).get("type") in ("enabled", "adaptive"):
        prompt = next((_texts(m) for m in reversed(body["messages"]) if m["role"] == "user"
                       and _texts(m).strip()), "")
        turn.content.insert(0, thinking(f"Let me think this through: {prompt[:200]}"))
    return turn


def _answer(body: dict[str, Any]) -> Turn:
    tools = {t["name"]: t for t in body.get("tools", [])}
    messages = body["messages"]
    last = messages[-1]
    answered = isinstance(last["content"], list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in last["content"])
    prompt = next((_texts(m) for m in reversed(messages) if m["role"] == "user"
                   and _texts(m).strip()), "")
    calls = [] if answered else _calls_for(prompt, tools)
    if "StructuredOutput" in tools and not calls:
        schema = tools["StructuredOutput"].get("input_schema", {})
        quoted = re.search(r"text: '([^']+)'", prompt)
        return Turn([tool_use("StructuredOutput",
                              instance(schema, quoted.group(1) if quoted else ""))])
    if answered:
        done = _calls_for(prompt, tools)  # one at a time: the next one not yet made
        made = {b.get("name") for m in messages if m["role"] == "assistant"
                for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_use"}
        rest = [c for c in done if c[0] not in made]
        if "bash sleep" in prompt and done:  # "... in between": the loop goes on
            return Turn([tool_use(*done[0])])
        return Turn([tool_use(*rest[0])] if rest and "one at a time" in prompt
                    else [text("Done.")])
    if calls:
        return Turn([tool_use(*c) for c in (calls[:1] if "one at a time" in prompt else calls)])
    said = re.search(r"[Rr]eply with(?: exactly)?:\s*(.+)", prompt)
    if said:
        return Turn([text(said.group(1).strip().rstrip("."))])
    sum_ = re.search(r"(\d+)\s*([-+*x])\s*(\d+)", prompt)
    if sum_:
        a, op, b = int(sum_.group(1)), sum_.group(2), int(sum_.group(3))
        return Turn([text(str({"+": a + b, "-": a - b}.get(op, a * b)))])
    if "Count from 1 to 100" in prompt:
        return Turn([text(", ".join(str(n) for n in range(1, 101)))])
    return Turn([text("Hello! Test agent activated.")])


def _calls_for(prompt: str, tools: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The tool calls a prompt asks for, in the order it names them."""
    agent = re.search(r"subagent_type '([\w-]+)'", prompt)
    if agent and "Agent" in tools:
        task = re.search(r"prompt '([^']+)'", prompt)
        return [("Agent", {"description": "delegated task", "subagent_type": agent.group(1),
                           "prompt": task.group(1) if task else prompt,
                           "run_in_background": False})]
    named: list[tuple[int, str]] = []
    for name in tools:
        short = name.rsplit("__", 1)[-1]
        for pattern in (rf"\b{re.escape(name)}\b", rf"\bthe {re.escape(short)} tool\b"):
            found = re.search(pattern, prompt)
            if found and name != "StructuredOutput":
                named.append((found.start(), name))
                break
    calls = [(name, _input_for(name, tools[name], prompt)) for _, name in sorted(named)]
    if calls:
        return calls
    sleep = re.search(r"bash sleep (?:command )?for (\d+) seconds?", prompt)
    if sleep and "Bash" in tools:  # a long turn, to be interrupted: again after each result
        return [("Bash", {"command": f"sleep {sleep.group(1)}"})]
    command = re.search(r"(?:^|\b)[Rr]un(?: this bash command| the command)?:\s*(.+)", prompt)
    if command and "Bash" in tools:
        return [("Bash", {"command": command.group(1).strip()})]
    if re.search(r"\b(Use tools|Use Grep|Count how many)", prompt) and "Glob" in tools:
        return [("Glob", {"pattern": "**/*.py"})]
    return []


def _input_for(name: str, tool: dict[str, Any], prompt: str) -> dict[str, Any]:
    """Input from the prompt's `key='value'`s and quoted words, else from the schema."""
    schema = tool.get("input_schema", {})
    value = instance(schema)
    if not isinstance(value, dict):
        return {}
    if name == "Write":
        path = re.search(r"file (\S+)", prompt)
        words = re.search(r"the text (\w+)", prompt)
        return {"file_path": path.group(1) if path else "out.txt",
                "content": words.group(1) if words else "hello"}
    for key in value:
        given = re.search(rf"{re.escape(key)}='([^']*)'", prompt)
        if given:
            value[key] = given.group(1)
    quoted = re.search(rf"{re.escape(name.rsplit('__', 1)[-1])}[^']*'([^']+)'", prompt)
    strings = [k for k, v in value.items() if isinstance(v, str) and v == "example"]
    if quoted and strings:
        value[strings[0]] = quoted.group(1)
    return value


class _PromptFollowingServer(FakeMessagesServer):
    """The fake Messages API with `respond` as its script, for any number of requests."""

    def _take_step(self, body: dict[str, Any], headers: dict[str, str]) -> Any:
        with self._lock:
            self._requests.append(body)
            self._headers.append(headers)
        return respond


# -- the copy, renamed ------------------------------------------------------------------------

def extract(repo: Path, into: Path) -> str:
    """Copy `examples/` and `e2e-tests/` of the repository's HEAD into `into`; its commit."""
    git = ["git", f"--git-dir={repo}"] if (repo / "HEAD").is_file() and not (
        repo / ".git").exists() else ["git", "-C", str(repo)]
    commit = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True,
                            check=True).stdout.strip()
    archive = subprocess.run([*git, "archive", "HEAD", "examples", "e2e-tests"],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return commit


def rename(folder: Path) -> None:
    for path in sorted(folder.rglob("*"), key=lambda p: -len(p.parts)):
        if path.is_file() and path.suffix in (".py", ".md", ".json", ".toml", ".txt"):
            words = path.read_text(encoding="utf-8")
            for old, new in RENAMES:
                words = words.replace(old, new)
            path.write_text(words, encoding="utf-8")
        if ".claude" in path.name:
            path.rename(path.with_name(path.name.replace(".claude", ".fuxi")))


# -- running -----------------------------------------------------------------------------------

def _env(server: FakeMessagesServer, home: Path) -> dict[str, str]:
    home.mkdir(parents=True, exist_ok=True)
    return {**os.environ, "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "fake-key",
            "FUXI_BLOCK_REAL_API": "1", "PYTHONPATH": str(ROOT), "HOME": str(home),
            "FUXI_CONFIG_DIR": str(home / ".fuxi"), "FUXI_MODEL": "claude-sonnet-5-5"}


def run_examples(folder: Path, env: dict[str, str]) -> list[tuple[str, bool, str]]:
    rows = []
    for script in sorted(folder.glob("*.py")):
        source = script.read_text(encoding="utf-8")
        args = ["all"] if "sys.argv" in source and '"all"' in source else []
        command = [sys.executable, str(script), *args]
        if "ipython" in script.name.lower():  # snippets to paste into IPython
            command = [sys.executable, "-c", IPYTHON_DRIVER, str(script)]
        try:
            done = subprocess.run(command, cwd=folder, env=env,
                                  capture_output=True, text=True, timeout=TIMEOUT,
                                  stdin=subprocess.DEVNULL, check=False)
            ok, why = done.returncode == 0, _last_line(done.stderr or done.stdout)
        except subprocess.TimeoutExpired:
            ok, why = False, f"timed out after {TIMEOUT} s"
        rows.append((f"examples/{script.name}", ok, "" if ok else why))
    return rows


def run_e2e(folder: Path, env: dict[str, str], report: Path) -> list[tuple[str, bool, str]]:
    subprocess.run([sys.executable, "-m", "pytest", str(folder), "-q", "-p", "no:cacheprovider",
                    f"--junitxml={report}", "-o", "addopts=", "--timeout", str(TIMEOUT),
                    "--continue-on-collection-errors"],
                   cwd=folder, env=env, capture_output=True, text=True, check=False)
    rows = []
    for case in ET.parse(report).getroot().iter("testcase"):
        problem = next(iter(case.findall("failure") + case.findall("error")), None)
        skipped = case.find("skipped") is not None
        name = f"e2e/{case.get('classname', '').rsplit('.', 1)[-1]}::{case.get('name')}"
        why = "skipped" if skipped else _last_line((problem.get("message") or problem.text or "")
                                                   if problem is not None else "")
        rows.append((name, problem is None and not skipped, "" if problem is None and not
                     skipped else why))
    return rows


def _last_line(output: str) -> str:
    lines = [line.strip() for line in output.strip().splitlines() if line.strip()]
    return (lines[-1] if lines else "")[:160]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, default=DEFAULT_REPO)
    parser.add_argument("--keep", type=Path, help="keep the renamed copy here")
    parser.add_argument("--only", choices=("e2e", "examples"))
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="sdk-conformance-"))
    try:
        commit = extract(args.repo, work)
        rename(work)
        with _PromptFollowingServer(reject_unknown_models=True) as server:
            env = _env(server, work / "home")
            rows = []
            if args.only in (None, "examples"):
                rows += run_examples(work / "examples", env)
            if args.only in (None, "e2e"):
                rows += run_e2e(work / "e2e-tests", env, work / "e2e.xml")
        print(f"the comparable SDK at {commit[:12]}, renamed, against this checkout\n")
        for name, ok, why in rows:
            print(f"{'pass' if ok else 'FAIL'}  {name}" + (f"\n      {why}" if why else ""))
        for kind in ("examples/", "e2e/"):
            part = [ok for name, ok, _ in rows if name.startswith(kind)]
            if part:
                print(f"{kind.rstrip('/')}: {sum(part)}/{len(part)}")
        passed = sum(ok for _, ok, _ in rows)
        print(f"all: {passed}/{len(rows)} ({100 * passed / max(len(rows), 1):.0f} %)")
        if args.json:
            args.json.write_text(json.dumps(
                {"commit": commit, "rows": [{"row": n, "pass": ok, "why": w}
                                            for n, ok, w in rows]}, indent=1))
        if args.keep:
            shutil.copytree(work, args.keep, dirs_exist_ok=True)
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
