"""AskUserQuestion through an ACP client: each question is one `session/request_permission`
whose options are the question's choices (ACP has no free text there, and one choice per
question: a multi-select question takes one), plus "Skip".

What the client shows is built as a permission ask's is (shown.py): the title and each
choice's name one line each, redacted, with what hides or reorders text escaped
(`label`); the whole question, the choices and their descriptions in the content as a
fenced block, revealed, with a warning naming what was escaped (`verbatim`). The answer
is the choice's own label, as the model wrote it."""

from __future__ import annotations

from typing import Any

from acp import schema

from ...options import PermissionResultAllow, PermissionResultDeny
from ..sessions.redact import redact_text
from .shown import label, verbatim

__all__ = ["ask_questions"]


async def ask_questions(conn: Any, session_id: str, call_id: str,
                        tool_input: dict[str, Any]) -> PermissionResultAllow | PermissionResultDeny:
    """The user's answers, put into the call's input (as the notebook's card does)."""
    answers: dict[str, str] = {}
    for item in tool_input.get("questions") or []:
        question, choices = str(item.get("question", "")), list(item.get("options") or [])
        options = [schema.PermissionOption(option_id=f"choice-{index}",
                                           name=label(redact_text(str(choice.get("label", "")))),
                                           kind="allow_once")
                   for index, choice in enumerate(choices)]
        options.append(schema.PermissionOption(option_id="skip", name="Skip",
                                               kind="reject_once"))
        described = "\n".join([question, "", *(
            f"- {choice.get('label')}: {choice.get('description', '')}" for choice in choices)])
        answer = await conn.request_permission(
            session_id=session_id, options=options, tool_call=schema.ToolCallUpdate(
                tool_call_id=call_id, title=label(redact_text(question)), kind="other",
                status="pending", content=[schema.ContentToolCallContent(
                    type="content", content=schema.TextContentBlock(
                        type="text", text=verbatim(described)))]))
        chosen = getattr(answer.outcome, "option_id", None)
        if chosen is None:
            return PermissionResultDeny(message="The user cancelled the prompt.",
                                        interrupt=True)
        if chosen.startswith("choice-"):
            answers[question] = str(choices[int(chosen.removeprefix("choice-"))]["label"])
    if not answers:
        return PermissionResultDeny(message="The user skipped the question(s).")
    return PermissionResultAllow(updated_input={**tool_input, "answers": answers})
