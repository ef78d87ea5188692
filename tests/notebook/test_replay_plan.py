"""A record read into the exact calls its replay runs (replay_plan), and the consent card
drawn from that (replay_consent): issue 18's findings 1-6 at the level of the card."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from fuxi_notebook._internal.models.replay import ReplayModel
from fuxi_notebook._internal.models.scripted import ScriptedModel
from fuxi_notebook._internal.notebook.replay.consent import FOLD_LINES, replay_consent
from fuxi_notebook._internal.notebook.replay.plan import ReplayRefused, replay_plan
from fuxi_notebook._internal.permissions.engine import always_allow_rule
from fuxi_notebook._internal.sessions.record import build_record
from fuxi_notebook._internal.tools.base import Declaration
from fuxi_notebook.options import FuxiAgentOptions
from tests.sessions.helpers import build_kwargs, result_message

CWD = Path.cwd()


def _declared() -> dict[str, Declaration]:
    """This kernel's declarations: the built-in and session tools, and the Python tool."""
    from fuxi_notebook._internal.agent.assemble import build_session

    session = build_session(FuxiAgentOptions(model=ScriptedModel([]), cwd=CWD))
    return {**session.permissions.declared,
            "Python": Declaration("Python", "execute", None, None),
            "InsertCell": Declaration("InsertCell", "edit", None, None, "recorded")}


DECLARED = _declared()


def _rule(declaration: Declaration, tool_input: dict[str, Any]) -> str | None:
    return always_allow_rule(declaration, tool_input, cwd=CWD)


def _messages(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One assistant turn per call (a tool_use block as given), each with its result."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for call in calls:
        messages.append({"role": "assistant", "content": [{"type": "tool_use", **call}]})
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": str(call.get("id")), "content": "ok"}]})
    messages.append({"role": "assistant", "content": "done"})
    return messages


def _record(calls: list[dict[str, Any]], *, approvals: list[dict[str, Any]] | None = None,
            kinds: dict[str, str] | None = None, messages: list[dict[str, Any]] | None = None):
    return build_record(**build_kwargs(messages=messages or _messages(calls),
                                       approvals=approvals or [], result=result_message(),
                                       kinds=kinds or {}))


def _call(name: str, tool_input: Any, tool_id: str | None = "t0") -> dict[str, Any]:
    call = {"name": name, "input": tool_input}
    return {**call, "id": tool_id} if tool_id is not None else call


def _plan(record):
    return replay_plan(record, DECLARED, rule_of=_rule)


# -- finding 1: two calls, one id (and calls without ids) ---------------------------------

def test_two_calls_sharing_an_id_are_refused_not_merged():
    record = _record([_call("Bash", {"command": "touch PWNED"}, "toolu_same"),
                      _call("Bash", {"command": "ls"}, "toolu_same")],
                     approvals=[{"tool_use_id": "toolu_same", "tool_name": "Bash",
                                 "decision": "allow", "source": "user"}])
    with pytest.raises(ReplayRefused, match="two tool calls with the id 'toolu_same'"):
        _plan(record)


@pytest.mark.parametrize("tool_id", [None, "", "toolu 1", "toolu_\u202e1", 7, "t" * 300])
def test_a_call_without_a_usable_id_is_refused(tool_id):
    block = {"name": "Bash", "input": {"command": "touch PWNED"}}
    if tool_id is not None:
        block["id"] = tool_id
    with pytest.raises(ReplayRefused, match="without a usable id"):
        _plan(_record([block]))


def test_two_decisions_for_one_call_are_refused():
    approvals = [{"tool_use_id": "t0", "tool_name": "Bash", "decision": d, "source": "user"}
                 for d in ("deny", "allow")]
    with pytest.raises(ReplayRefused, match="two decisions"):
        _plan(_record([_call("Bash", {"command": "make"})], approvals=approvals))


def test_an_approval_naming_another_tool_is_refused():
    approvals = [{"tool_use_id": "t0", "tool_name": "Read", "decision": "allow",
                  "source": "user"}]
    with pytest.raises(ReplayRefused, match="names 'Read', but the call is 'Bash'"):
        _plan(_record([_call("Bash", {"command": "make"})], approvals=approvals))


@pytest.mark.parametrize("rule", ["Bash", "Bash(*)", "Bash(ls *)", "Edit"])
def test_an_always_allow_wider_than_the_tool_offers_is_refused(rule):
    approvals = [{"tool_use_id": "t0", "tool_name": "Bash", "decision": "always_allow",
                  "source": "user", "rule": rule}]
    with pytest.raises(ReplayRefused, match="offers 'Bash\\(ls\\)'"):
        _plan(_record([_call("Bash", {"command": "ls"})], approvals=approvals))


def test_the_always_allow_the_tool_offers_is_kept_and_shown():
    approvals = [{"tool_use_id": "t0", "tool_name": "Bash", "decision": "always_allow",
                  "source": "user", "rule": "Bash(make test)"}]
    plan = _plan(_record([_call("Bash", {"command": "make test"})], approvals=approvals))
    assert plan.rules == ["Bash(make test)"] and plan.approvals[0].decision == "always_allow"
    assert "re-adds `Bash(make test)`" in replay_consent([plan]).markdown


# -- finding 2: the record's own kinds ---------------------------------------------------

@pytest.mark.parametrize(("name", "claim"), [("Bash", "read"), ("Write", "read"),
                                             ("Python", "edit"), ("Read", "execute")])
def test_a_record_claiming_another_kind_than_this_kernel_declares_is_refused(name, claim):
    record = _record([_call("Bash", {"command": "touch PWNED"})], kinds={name: claim})
    with pytest.raises(ReplayRefused, match=f"says the tool '{name}' is '{claim}'"):
        _plan(record)


def test_what_is_listed_follows_this_kernels_declarations():
    plan = _plan(_record([_call("TaskCreate", {"subject": "Plot"}, "t1"),
                          _call("Read", {"file_path": "a.py"}, "t2"),
                          _call("Bash", {"command": "make"}, "t3")]))
    card = replay_consent([plan])
    assert "**`Bash`** (execute)" in card.markdown and "**`TaskCreate`**" not in card.markdown
    assert "Read-only calls (2)" in card.markdown and "`a.py`" in card.markdown


# -- finding 3: no cap on what is listed ----------------------------------------------------

def test_every_call_that_changes_something_is_listed_however_many_come_first():
    calls = [_call("Read", {"file_path": f"f{n}.txt"}, f"r{n}") for n in range(25)]
    calls += [_call("Bash", {"command": f"echo {n} > out{n}.txt"}, f"b{n}") for n in range(30)]
    calls.append(_call("Bash", {"command": "touch PWNED"}, "last"))
    card = replay_consent([_plan(_record(calls))])
    assert "touch PWNED" in card.markdown and "touch PWNED" in card.text
    assert all(f"echo {n} > out{n}.txt" in card.markdown for n in range(30))
    assert "more" not in card.markdown and "not listed" not in card.markdown
    assert card.calls == 56


# -- finding 4: whole inputs, never cut -------------------------------------------------

def test_a_long_command_is_shown_whole():
    command = "echo " + "A" * 2100 + " && touch PWNED"
    card = replay_consent([_plan(_record([_call("Bash", {"command": command})]))])
    assert command in card.markdown and command in card.text
    assert "…" not in card.markdown


def test_long_code_is_folded_with_its_size_never_cut():
    code = "\n".join(f"x{n} = {n}" for n in range(FOLD_LINES + 60)) + "\nimport os; os.remove('k')"
    tool_input = {"code": code, "note": "x" * 300, "timeout": 5, "tags": ["a", "b"]}
    card = replay_consent([_plan(_record([_call("Python", tool_input)]))])
    assert code in card.markdown and "x" * 300 in card.markdown
    assert "<details><summary>code: 101 line(s)" in card.markdown
    assert "- timeout: `5`" in card.markdown and '"a"' in card.markdown
    assert code.replace("\n", "\n       | ") in card.text


def _code_texts(markdown: str) -> list[str]:
    """The text of every code span and code block, as a CommonMark parser reads them."""
    import mistune

    found: list[str] = []

    def walk(nodes: list[dict[str, Any]]) -> None:
        for node in nodes:
            if node["type"] in ("codespan", "block_code"):
                found.append(node.get("raw") or node.get("text") or "")
            walk(node.get("children") or [])

    walk(mistune.create_markdown(renderer="ast")(markdown))
    return found


@pytest.mark.parametrize("value", ["```\nrm -rf ~\n```", "`touch x`", "a\r\nb",
                                   "  padded  ", "$HOME/$(whoami)", "<b>x</b>", "~~~\nx"])
def test_fences_and_code_spans_inside_an_input_do_not_end_the_block(value):
    card = replay_consent([_plan(_record([_call("Bash", {"command": value}),
                                          ])), ])
    shown = value.replace("\r", "\\u000d")
    assert any(text.rstrip("\n") == shown for text in _code_texts(card.markdown)), \
        _code_texts(card.markdown)


# -- finding 5: invisible and bidirectional characters ---------------------------------

@pytest.mark.parametrize("char", ["\u202e", "\u200b", "\u2066", "\ufeff", "\u3164", "\x1b",
                                  "\U000e0041", "\u00a0", "\u2028"])
def test_invisible_characters_are_escaped_and_flagged(char):
    command = f"ls {char}-la; touch PWNED"
    card = replay_consent([_plan(_record([_call("Bash", {"command": command},
                                                f"t{ord(char)}")]))])
    escaped = f"\\u{ord(char):04x}" if ord(char) <= 0xFFFF else f"\\U{ord(char):08x}"
    for shown in (card.markdown, card.text):
        assert char not in shown and escaped in shown
        assert f"U+{ord(char):04X}" in shown and "do not show or that reorder text" in shown


def test_hidden_characters_in_keys_cell_ids_and_tool_names_are_escaped_too():
    messages = _messages([_call("Bash", {"command\u200b": "x", "command": "make"})])
    record = build_record(**build_kwargs(messages=messages, approvals=[],
                                         result=result_message(), cell_id="c\u202e1"))
    card = replay_consent([_plan(record)])
    assert "\u202e" not in card.markdown and "\u200b" not in card.markdown
    assert "c\\u202e1" in card.markdown and "command\\u200b" in card.markdown


@pytest.mark.parametrize("char", ["\u202e", "\u200b"])
def test_a_hidden_character_only_in_a_key_is_flagged(char):
    """Issue 35, finding 17 (a mutation that survived): a key is part of what the card
    shows; a hidden character in it alone carries the warning, in the notebook's card
    and the terminal's text alike."""
    card = replay_consent([_plan(_record([_call("Bash", {"command": "make",
                                                        f"timeout{char}": 5})]))])
    for shown in (card.markdown, card.text):
        assert f"U+{ord(char):04X}" in shown and "do not show or that reorder text" in shown


# -- finding 6: inputs that are not objects, and other records that cannot be read -------

@pytest.mark.parametrize("tool_input", ['{"command": "touch PWNED"}', ["touch"], 3, None])
def test_an_input_that_is_not_an_object_is_one_clear_refusal(tool_input):
    with pytest.raises(ReplayRefused, match="not a JSON object"):
        _plan(_record([_call("Bash", tool_input)]))


@pytest.mark.parametrize(("messages", "message"), [
    ([{"role": "assistant", "content": [{"type": "server_tool_use", "id": "s", "name": "x",
                                         "input": {}}]}], "type 'server_tool_use'"),
    ([{"role": "assistant", "content": ["text"]}], "type 'str'"),
    ([{"role": "assistant", "content": [{"type": "text"}]}], "without its 'text'"),
    ([{"role": "assistant", "content": [{"type": "thinking", "thinking": 3}]}],
     "without its 'thinking'"),
    ([{"role": "user", "content": [{"type": "tool_use", "id": "t", "name": "Bash",
                                    "input": {"command": "touch PWNED"}}]}],
     "user message holding a tool call"),
    ([{"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "Nope",
                                         "input": {}}]}], "a tool this kernel does not have"),
])
def test_blocks_a_replay_cannot_play_are_refused(messages, message):
    record = _record([], messages=[{"role": "user", "content": "go"}, *messages])
    with pytest.raises(ReplayRefused, match=message):
        _plan(record)


def test_mcp_and_recorded_tools_are_answered_from_the_record_and_counted():
    plan = _plan(_record([_call("mcp__db__query", {"sql": "drop table x"}, "m1"),
                          _call("InsertCell", {"code": "print(1)"}, "i1"),
                          _call("Bash", {"command": "make"}, "b1")]))
    assert [c.runs for c in plan.calls] == [False, False, True]
    card = replay_consent([plan])
    assert "Answered from the record, not run again: mcp__db__query 1, InsertCell 1" in (
        card.markdown)


def test_the_digest_covers_inputs_and_approvals():
    one = _plan(_record([_call("Bash", {"command": "make"})]))
    other = _plan(_record([_call("Bash", {"command": "make install"})]))
    allowed = _plan(_record([_call("Bash", {"command": "make"})], approvals=[
        {"tool_use_id": "t0", "tool_name": "Bash", "decision": "allow", "source": "user"}]))
    assert len({one.digest, other.digest, allowed.digest}) == 3
    assert one.digest == _plan(_record([_call("Bash", {"command": "make"})])).digest


# -- the normaliser, as a property: what the replay model plays is what the plan lists --

_TEXT = st.text(st.sampled_from("ab\n\r`$\u202e\u200b{}\"' "), max_size=12)
_OBJECT = st.dictionaries(st.sampled_from(["command", "code", "file_path", "x"]),
                          st.one_of(_TEXT, st.integers(), st.lists(_TEXT, max_size=2)),
                          max_size=3)
_INPUT = st.one_of(_OBJECT, _OBJECT, _OBJECT, _TEXT, st.integers(), st.none())  # mostly objects
_BLOCK = st.builds(lambda name, tool_id, tool_input: {"type": "tool_use", "name": name,
                                                      "id": tool_id, "input": tool_input},
                   st.sampled_from(["Bash", "Bash", "Read", "Python", "Write", "Nope",
                                    "mcp__s__t"]),
                   st.one_of(st.uuids().map(lambda u: f"toolu_{u.hex[:8]}"),
                             st.sampled_from(["t1", "t1", "", "t 4"])), _INPUT)
_TURN = st.lists(st.one_of(_BLOCK, st.builds(lambda t: {"type": "text", "text": t}, _TEXT)),
                 min_size=1, max_size=4)


async def _played(turns: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The tool calls the replay model streams for these turns, as the loop receives them."""
    from fuxi_notebook._internal.models.base import ModelRequest, ModelResponse

    model = ReplayModel(turns, name="claude-sonnet-5-5")
    calls = []
    for _ in turns:
        request = ModelRequest(model="claude-sonnet-5-5", system=[], messages=[], tools=[],
                               max_tokens=100)
        async for item in model.stream(request):
            if isinstance(item, ModelResponse):
                calls += [b for b in item.content if b["type"] == "tool_use"]
    return calls


@settings(derandomize=True, max_examples=400, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_TURN, min_size=1, max_size=4))
@example([[{"type": "tool_use", "name": "Bash", "id": "t1", "input": "{\"command\": \"x\"}"}]])
@example([[{"type": "tool_use", "name": "Bash", "id": "t1", "input": {"command": "a"}},
           {"type": "tool_use", "name": "Bash", "id": "t1", "input": {"command": "b"}}]])
def test_the_replay_plays_exactly_the_calls_the_card_lists(turns):
    messages = [{"role": "user", "content": "go"}]
    for turn in turns:
        messages += [{"role": "assistant", "content": turn}, {"role": "user", "content": "k"}]
    record = _record([], messages=messages)
    try:
        plan = _plan(record)
    except ReplayRefused as refused:
        assert "\n" not in str(refused)
        return
    played = asyncio.run(_played(plan.turns))
    assert [(c["id"], c["name"], c["input"]) for c in played] == [
        (c.tool_use_id, c.name, c.input) for c in plan.calls]
    assert len({c.tool_use_id for c in plan.calls}) == len(plan.calls)
    card = replay_consent([plan])
    for call in plan.calls:
        if call.runs and not call.read_only:
            for key, value in call.input.items():
                shown = value if isinstance(value, str) else json.dumps(value,
                                                                        ensure_ascii=False)
                from fuxi_notebook._internal.common.visible import reveal

                assert reveal(shown).text.split("\n")[0] in card.markdown, (key, value)
                for char in "\u202e\u200b\r":
                    assert char not in card.markdown and char not in card.text


def test_a_session_that_would_run_what_the_plan_answers_from_the_record_is_refused():
    """The card is drawn for the plan; a replay whose tools would run a call the plan
    answers from the record (or with another kind) runs nothing (issue 35, finding 1)."""
    from fuxi_notebook._internal.notebook.replay.plan import check_runs

    recorded = {**DECLARED, "RunCell": Declaration("RunCell", "execute", None, None,
                                                   "recorded")}
    plan = replay_plan(_record([{"id": "toolu_r1", "name": "RunCell",
                                 "input": {"cell_id": "util"}}]), recorded, rule_of=_rule)
    assert not plan.calls[0].runs
    check_runs(plan, recorded)  # the same declarations: it replays
    live = {**DECLARED, "RunCell": Declaration("RunCell", "execute", None, None, "run")}
    with pytest.raises(ReplayRefused, match="would run as 'execute'"):
        check_runs(plan, live)
    read = {**DECLARED, "RunCell": Declaration("RunCell", "read", None, None, "run")}
    planned = replay_plan(_record([{"id": "toolu_r1", "name": "RunCell",
                                    "input": {"cell_id": "util"}}]), live, rule_of=_rule)
    with pytest.raises(ReplayRefused, match="card was drawn for execute"):
        check_runs(planned, read)


def test_what_a_call_would_do_is_on_the_card_and_in_the_digest():
    """`with_shown`: a call whose tool shows more than its input (RunCell: the cell's
    source now) is on the card with it, and consent covers exactly that."""
    from fuxi_notebook._internal.notebook.replay.plan import CANNOT_RUN, with_shown
    from fuxi_notebook._internal.tools.base import ToolError

    sources = {"util": "print('shown')\n"}

    async def shown(tool_input: dict[str, Any]) -> dict[str, str]:
        if tool_input["cell_id"] not in sources:
            raise ToolError("No cell with id 'gone'.")
        return {"source": sources[tool_input["cell_id"]]}

    declared = {**DECLARED, "RunCell": Declaration("RunCell", "execute", None, None, "run",
                                                   shown)}
    record = _record([{"id": "toolu_r1", "name": "RunCell", "input": {"cell_id": "util"}},
                      {"id": "toolu_r2", "name": "RunCell", "input": {"cell_id": "gone"}}])
    plan = asyncio.run(with_shown(replay_plan(record, declared, rule_of=_rule)))
    assert plan.calls[0].shown == {"source": "print('shown')\n"}
    assert plan.calls[1].shown == {CANNOT_RUN: "No cell with id 'gone'."}
    card = replay_consent([plan])
    assert "print('shown')" in card.markdown and "print('shown')" in card.text
    assert "source, as it is now" in card.text
    sources["util"] = "print('other')\n"
    again = asyncio.run(with_shown(replay_plan(record, declared, rule_of=_rule)))
    assert again.digest != plan.digest  # consent to the first covers not the second
