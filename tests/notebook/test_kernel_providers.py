"""`%%fuxi` cells on Amazon Bedrock, Google Vertex AI and Microsoft Foundry in a real
ipykernel, configured by nothing but the kernel's environment (issue 38), against each
provider's fake on 127.0.0.1 through the `anthropic` package's own provider clients: a
cell with a tool call answers, `%fuxi` and `%fuxi config` say which provider and region
the cells use, a refused credential is one line naming what to refresh, and a kernel
with no credential at all says in one line what would configure each provider."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fuxi_notebook.testing import (
    FakeBedrockServer,
    FakeFoundryServer,
    FakeMessagesServer,
    FakeVertexServer,
    Turn,
    text,
    tool_use,
)

from .kernel_harness import KernelHarness, loaded_kernel, record_of

#: the first-party variables the harness sets, emptied: only the provider's remain
NO_FIRST_PARTY = {"ANTHROPIC_API_KEY": "", "ANTHROPIC_BASE_URL": "", "ANTHROPIC_AUTH_TOKEN": ""}
#: none of the machine's own AWS files may take part
NO_AWS_FILES = {"AWS_CONFIG_FILE": "/nonexistent/aws-config",
                "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent/aws-credentials"}


def _script() -> list[Turn]:
    return [Turn([text("Reading it."), tool_use("Read", {"file_path": "notes.txt"})]),
            Turn([text("The note says: ship on Friday.")])]


def _kernel(server: FakeMessagesServer, work: Path, env: dict[str, str]) -> KernelHarness:
    work.mkdir(exist_ok=True)
    (work / "notes.txt").write_text("ship on Friday\n")
    return loaded_kernel(server, work, **NO_FIRST_PARTY, **NO_AWS_FILES, **env)


@pytest.fixture(params=["bedrock", "vertex", "foundry"])
def provider(request: Any, tmp_path: Path) -> Iterator[tuple[str, FakeMessagesServer,
                                                             KernelHarness]]:
    name = request.param
    servers = {"bedrock": lambda: FakeBedrockServer(_script()),
               "vertex": lambda: FakeVertexServer(_script()),
               "foundry": lambda: FakeFoundryServer(_script())}
    with servers[name]() as server:
        env = {**server.client_env(), f"FUXI_USE_{name.upper()}": "1"}  # type: ignore[attr-defined]
        if name == "bedrock":
            env["FUXI_MODEL"] = "us.anthropic.claude-sonnet-5-5-v1:0"
        if isinstance(server, FakeVertexServer):  # signed in with a service account's key
            keys = tmp_path / "keys"
            keys.mkdir()
            env.update(server.credentials_env(keys))
        harness = _kernel(server, tmp_path / "work", env)
        try:
            yield name, server, harness
        finally:
            harness.close()


TITLES = {"bedrock": "Amazon Bedrock, region us-east-1",
          "vertex": "Google Vertex AI, region us-east5, project fake-project",
          "foundry": "Microsoft Foundry"}


def test_a_cell_with_a_tool_call_runs_on_the_provider(provider):
    name, server, kernel = provider
    result = kernel.run("%%fuxi\nWhat does notes.txt say?")
    assert result.status == "ok", result.messages
    record = record_of(result)
    assert record["result"]["subtype"] == "success", record["result"]
    assert "ship on Friday" in record["result"]["result"]
    assert len(server.requests) == 2 and "tool_result" in str(server.requests[-1])
    if isinstance(server, FakeVertexServer):
        assert server.token_requests == 1
    summary = kernel.run("%fuxi").displays[0]["data"]["text/plain"].splitlines()[0]
    assert f" on {TITLES[name]}" in summary
    config = kernel.run("%fuxi config").stdout + str(kernel.run("%fuxi config").displays)
    assert f"on {TITLES[name]}" in config


def test_an_expired_credential_is_one_line_in_the_cell(tmp_path):
    with FakeBedrockServer(expired=True) as server:
        kernel = _kernel(server, tmp_path, {
            **server.client_env(), "FUXI_USE_BEDROCK": "1",
            "FUXI_MODEL": "global.anthropic.claude-sonnet-5-5-v1:0"})
        try:
            result = kernel.run("%%fuxi\nhello")
        finally:
            kernel.close()
    shown = " ".join(str(m.get("content", {}).get("data", {}).get("text/plain", ""))
                     + str(m.get("content", {}).get("text", "")) for m in result.messages)
    assert "Amazon Bedrock refused the credentials (HTTP 403" in shown
    assert "aws sso login" in shown
    assert "Traceback" not in shown
    assert len(server.raw_requests) == 1


def test_a_kernel_without_any_credential_says_what_would_configure_each(tmp_path):
    with FakeMessagesServer() as server:
        kernel = _kernel(server, tmp_path, {})
        try:
            result = kernel.run("%%fuxi\nhello")
        finally:
            kernel.close()
    line = result.stderr  # IPython shows a UsageError as its one line, no traceback
    assert line.startswith("UsageError: %%fuxi: ") and line.count("\n") <= 1, line
    for variable in ("ANTHROPIC_API_KEY", "FUXI_USE_BEDROCK", "FUXI_USE_VERTEX",
                     "FUXI_USE_FOUNDRY"):
        assert variable in line, line
    assert server.raw_requests == []


def _last_lines(notebook: Path) -> list[str]:
    """The last line each `%%fuxi` cell showed (turns, tokens, cost)."""
    import nbformat

    lines = []
    for cell in nbformat.read(notebook, as_version=4).cells:
        for output in cell.get("outputs", []):
            shown = output.get("data", {}).get("text/plain", "")
            if " turns · " in shown:
                lines.append(shown.strip().splitlines()[-1])
    return lines


@pytest.mark.slow
@pytest.mark.parametrize("name", ["bedrock", "vertex", "foundry"])
def test_the_quickstarts_live_cells_run_on_the_provider_with_its_variables_only(
        name, tmp_path):
    """Issue 38's "done when": the quickstart, run cell by cell in a real kernel as
    JupyterLab runs it (approvals clicked), each `%%fuxi` cell calling the model on the
    provider's fake, configured only as docs/getting-started.md shows; the script fails
    on any cell that errs, any request the fake refused, any turn left unused."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, str(root / "scripts" / "record_notebooks.py"), "quickstart",
         "--out", str(tmp_path), "--provider", name],
        capture_output=True, text=True, timeout=600,
        env={**os.environ, "ANTHROPIC_API_KEY": "", "ANTHROPIC_BASE_URL": ""})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert f"(on the {name} fake)" in done.stdout
    lines = _last_lines(tmp_path / "quickstart.ipynb")
    assert len(lines) == 2 and all(line.startswith("Done · 3 turns") for line in lines), lines
    # priced where the provider's price is known (regional: 10 % over the table), else
    # said to be unknown: never a wrong number
    assert all(("price unknown" in line) == (name == "foundry") for line in lines), lines
