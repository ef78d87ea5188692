"""Approval cards: the full command, code or diff, and Allow / Always allow / Deny buttons.

The card is an ipywidgets display that the running (awaiting) cell waits on; with
ipykernel ≥ 7.4 the click reaches the kernel while the cell awaits. Once decided, the
display is replaced by one line of plain text, so nothing lives only in widget state, and
only then are the card's widgets closed (all of them, children too): no output ever shows
a widget whose model is gone (the frontend logs `widget model not found` for one). A
question (a tool that declares the `ask` kind, AskUserQuestion) gets one button per option
instead, and its card and lines speak of an answer, not of an approval.
"""

from __future__ import annotations

import asyncio
import html
import json
from pathlib import Path
from typing import Any

import ipywidgets as widgets
from IPython.display import clear_output, display

from ....options import ToolPermissionContext
from ...common.visible import reveal
from ...sessions.text.transcript import builtin_kind
from .answers import Answer, always_adds
from .call_detail import describe_call
from .view import tool_summary

__all__ = ["ask_replay", "ask_with_buttons"]


def _resolve(future: asyncio.Future[Answer], answer: Answer) -> None:
    """Set the answer from whatever thread the click arrives on (subshells on 7.0-7.3)."""
    loop = future.get_loop()

    def settle() -> None:
        if not future.done():
            future.set_result(answer)

    loop.call_soon_threadsafe(settle)


def _permission_card(tool_name: str, tool_input: dict[str, Any], context: ToolPermissionContext,
                     future: asyncio.Future[Answer], cwd: Path | None) -> widgets.Widget:
    why = f" — {html.escape(context.decision_reason)}" if context.decision_reason else ""
    adds = always_adds(context)
    scope = (f"<div><i>Always allow</i> adds <code>{html.escape(adds)}</code> for the rest "
             "of this session.</div>" if adds else "")
    header = widgets.HTML(f"<b>Allow {html.escape(reveal(tool_name).text)}?</b>{why}"
                          f"{describe_call(tool_name, tool_input, cwd, context.shown)}{scope}")
    reason = widgets.Text(placeholder="Reason for denying (optional)",
                          layout=widgets.Layout(width="60%"))
    allow = widgets.Button(description="Allow", button_style="success")
    always = widgets.Button(description="Always allow", button_style="info")
    deny = widgets.Button(description="Deny", button_style="danger")
    allow.on_click(lambda _: _resolve(future, ("allow", None, None)))
    always.on_click(lambda _: _resolve(future, ("always", None, None)))
    deny.on_click(lambda _: _resolve(future, ("deny", reason.value.strip() or None, None)))
    buttons = [allow, always, deny, reason] if adds else [allow, deny, reason]
    return widgets.VBox([header, widgets.HBox(buttons)])


def _question_card(tool_input: dict[str, Any], future: asyncio.Future[Answer]) -> widgets.Widget:
    questions = tool_input.get("questions") or []
    answers: dict[str, Any] = {}
    rows: list[widgets.Widget] = []

    def chose(question: dict[str, Any], label: str) -> None:
        if question.get("multiSelect"):
            chosen = answers.setdefault(question["question"], [])
            if label in chosen:
                chosen.remove(label)
            else:
                chosen.append(label)
            return
        answers[question["question"]] = label
        if all(q["question"] in answers for q in questions):
            _resolve(future, ("allow", None, {**tool_input, "answers": dict(answers)}))

    def typed(question: dict[str, Any], box: widgets.Text) -> None:
        """The user's own answer instead of an option (the tool tells the model so)."""
        if not box.value.strip():
            return
        answers[question["question"]] = box.value.strip()
        if all(q["question"] in answers for q in questions):
            _resolve(future, ("allow", None, {**tool_input, "answers": dict(answers)}))

    for question in questions:
        rows.append(widgets.HTML(f"<b>{html.escape(question['question'])}</b>"))
        buttons = []
        for option in question.get("options", []):
            button = widgets.Button(description=option["label"], tooltip=option["description"])
            button.on_click(lambda _, q=question, label=option["label"]: chose(q, label))
            buttons.append(button)
        own = widgets.Text(placeholder="…or type your own answer",
                           layout=widgets.Layout(width="40%"))
        send = widgets.Button(description="Send answer")
        send.on_click(lambda _, q=question, box=own: typed(q, box))
        rows.append(widgets.HBox([*buttons, own, send]))
    skip = widgets.Button(description="Skip", button_style="danger")
    skip.on_click(lambda _: _resolve(future, ("deny", "The user skipped the question.", None)))
    last = [skip]
    # "Done" only where it is shown: a widget made but not in the card is never closed
    if any(q.get("multiSelect") for q in questions):
        done = widgets.Button(description="Done", button_style="success")
        done.on_click(lambda _: _resolve(future, ("allow", None,
                                                  {**tool_input, "answers": dict(answers)})))
        last.insert(0, done)
    rows.append(widgets.HBox(last))
    return widgets.VBox(rows)


def _asks(tool_input: dict[str, Any], kind: str | None) -> bool:
    """Whether the call is a question: its tool declares `ask` and it has questions."""
    return kind == "ask" and isinstance(tool_input.get("questions"), list)


def _decided_text(tool_name: str, tool_input: dict[str, Any], answer: Answer,
                  kind: str | None = None) -> str:
    summary = f"{tool_name} `{tool_summary(tool_name, tool_input, kind)}`"
    if kind == "ask" and answer[0] != "deny":
        chosen = "; ".join(f"{q} → {', '.join(a) if isinstance(a, list) else a}"
                           for q, a in ((answer[2] or {}).get("answers") or {}).items())
        return f"? Answered: {chosen or summary}"
    if kind == "ask":
        return f"✗ Skipped: {summary}"
    verdict = {"allow": "✓ Allowed", "always": "✓ Always allowed", "deny": "✗ Denied"}[answer[0]]
    reason = f" — {answer[1]}" if answer[1] else ""
    return f"{verdict}: {summary}{reason}"


def _interrupted_text(tool_name: str, kind: str | None) -> str:
    if kind == "ask":
        return f"✗ Interrupted while waiting for your answer to {tool_name}"
    return f"✗ Interrupted while waiting to approve {tool_name}"


def _close(widget: Any) -> None:
    """Close a widget and every widget it holds (children, layout, style): closing only
    the outer box leaves the rest open in the kernel and the frontend for good."""
    seen: set[int] = set()
    found: list[widgets.Widget] = []

    def walk(value: Any) -> None:
        if isinstance(value, (list, tuple)):
            for item in value:
                walk(item)
        elif isinstance(value, widgets.Widget) and id(value) not in seen:
            seen.add(id(value))
            found.append(value)
            for name in value.keys:
                if not name.startswith("_"):
                    walk(getattr(value, name, None))

    walk(widget)
    for each in found:  # the outer widget first: its view goes before its children's
        each.close()


def _line(text: str) -> dict[str, str]:
    """A plain bundle (a Markdown object would save its repr as text/plain)."""
    return {"text/markdown": text, "text/plain": text.replace("`", "")}


async def ask_with_buttons(tool_name: str, tool_input: dict[str, Any],
                           context: ToolPermissionContext,
                           cwd: Path | None = None, *,
                           kind: str | None = None) -> tuple[Answer, Any]:
    """Show the card, wait for a click, then replace the card by a plain line.

    `cwd` is the session's working directory (`--cwd`), against which the tool resolves a
    relative path: the card shows the file that will really change. `kind` is the tool's
    declared kind (None: the built-in tool's of that name): `ask` shows a question.
    Returns the answer and the card's display handle (the renderer clears the line once
    the final transcript, which records the decision, is shown).
    """
    kind = kind or builtin_kind(tool_name)
    future: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
    card = (_question_card(tool_input, future) if _asks(tool_input, kind)
            else _permission_card(tool_name, tool_input, context, future, cwd))
    handle = display(card, display_id=True)
    attention = display(_attention(True, tool_name, kind), raw=True, display_id=True)
    try:
        answer = await future
    except asyncio.CancelledError:
        handle.update(_line(_interrupted_text(tool_name, kind)), raw=True)
        _close(card)  # after the update: no output shows it any more
        raise
    finally:
        attention.update(_attention(False, tool_name, kind), raw=True)
    handle.update(_line(_decided_text(tool_name, tool_input, answer, kind)), raw=True)
    _close(card)
    return answer, handle


#: The browser tab's title says a card waits (a card off-screen is easy to miss), and a
#: desktop notification appears where the user already allowed this page to show them.
_TITLE_MARK = "⏳ Approval needed · "
_ANSWER_MARK = "⏳ Answer needed · "  # a question (an `ask` tool) waits for an answer


def _attention(waiting: bool, tool_name: str, kind: str | None = None) -> dict[str, str]:
    """A script output (run by JupyterLab / Notebook for trusted outputs; nothing is
    saved, the cell's outputs are replaced at the end) that marks or unmarks the title."""
    asks = kind == "ask"
    mark = json.dumps(_ANSWER_MARK if asks else _TITLE_MARK)
    if waiting:
        title = json.dumps("Answer needed" if asks else "Approval needed")
        body = json.dumps(f"fuxi asks you a question ({tool_name})" if asks
                          else f"fuxi needs your approval to use {tool_name}")
        script = (f"if (!document.title.startsWith({mark})) {{ document.title = {mark} + "
                  "document.title; }\n"
                  "if (window.Notification && Notification.permission === 'granted') {"
                  f" new Notification({title}, {{body: {body}}}); }}")
    else:
        script = (f"if (document.title.startsWith({mark})) {{ document.title = "
                  f"document.title.slice({mark}.length); }}")
    return {"application/javascript": script, "text/plain": ""}


async def ask_replay(summary_markdown: str) -> bool:
    """Replay / Cancel for the first replay in a notebook; the card leaves no output
    (the cell's earlier outputs go with it: the replay shows the recorded run whole)."""
    return await _yes_or_no(summary_markdown, "Replay", "Cancel")


async def ask_trust(summary_markdown: str) -> bool:
    """Trust this folder / Not now, for a project whose settings would run code; the card
    leaves no output either (what was decided is in the cell's notes)."""
    return await _yes_or_no(summary_markdown, "Trust this folder", "Not now")


async def _yes_or_no(summary_markdown: str, yes: str, no: str) -> bool:
    """A card with the summary and two buttons; True for `yes`."""
    from IPython.display import Markdown

    future: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
    replay = widgets.Button(description=yes, button_style="success",
                            layout=widgets.Layout(width="auto"))
    cancel = widgets.Button(description=no, button_style="danger")
    replay.on_click(lambda _: _resolve(future, ("allow", None, None)))
    cancel.on_click(lambda _: _resolve(future, ("deny", None, None)))
    text = widgets.Output()
    card = widgets.VBox([text, widgets.HBox([replay, cancel])])
    with text:
        display(Markdown(summary_markdown))
    handle = display(card, display_id=True)
    try:
        answer = await future
    finally:
        # the card leaves nothing behind (an empty output would be saved, and a replay
        # under nbval, which asks nothing, would not have it): the next output clears it.
        # Until then the output shows no widget, so its widgets can be closed now.
        handle.update({"text/plain": ""}, raw=True)
        clear_output(wait=True)
        _close(card)
    return answer[0] == "allow"
