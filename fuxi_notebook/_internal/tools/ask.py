"""AskUserQuestion: the model asks the user to choose between options.

The question itself goes through the approval path (`can_use_tool`), which answers by
allowing the call with `updated_input` carrying `"answers"`; this tool only reports those
answers back to the model. No one to ask (headless runs, `dontAsk`) means a denial.
"""

from __future__ import annotations

from typing import Any

from .base import DeclaredTool, ToolContext, ToolError, ToolOutput

__all__ = ["AskUserQuestionTool"]


class AskUserQuestionTool(DeclaredTool):
    """Ask the user one to four multiple-choice questions."""

    name = "AskUserQuestion"
    description = (
        "Ask the user one to four multiple-choice questions when you need a decision you "
        "cannot make from the context (a preference, an ambiguous requirement, which of "
        "several approaches to take). Each question has a short header (at most 12 "
        "characters), 2 to 4 options with a label and a description, and `multiSelect` if "
        "several options may be chosen. The user can always answer with their own text "
        "instead. Do not use it to ask for permission to run a tool: that is handled for you."
    )
    kind = "ask"

    def __init__(self) -> None:
        option = {"type": "object", "properties": {
            "label": {"type": "string"}, "description": {"type": "string"}},
            "required": ["label", "description"], "additionalProperties": False}
        question = {"type": "object", "properties": {
            "question": {"type": "string"},
            "header": {"type": "string", "maxLength": 12},
            "options": {"type": "array", "items": option, "minItems": 2, "maxItems": 4},
            "multiSelect": {"type": "boolean"}},
            "required": ["question", "header", "options", "multiSelect"],
            "additionalProperties": False}
        self.input_schema: dict[str, Any] = {
            "type": "object",
            "properties": {
                "questions": {"type": "array", "items": question, "minItems": 1, "maxItems": 4},
                "answers": {"type": "object", "additionalProperties": {
                    "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]},
                    "description": "Filled in by the user interface, not by you."},
            },
            "required": ["questions"],
            "additionalProperties": False,
        }

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """Report the user's answers (put into the input by the approval step)."""
        answers = input.get("answers") or {}
        if not answers:
            raise ToolError("The user did not answer the question(s).")
        lines = []
        for item in input["questions"]:
            answer = answers.get(item["question"])
            if isinstance(answer, list):
                answer = ", ".join(answer)
            lines.append(f'"{item["question"]}" = "{answer if answer else "(no answer)"}"')
        return ToolOutput(content="The user answered: " + "; ".join(lines) + ".")
