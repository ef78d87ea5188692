"""Structured output: the final answer as data that matches a JSON schema (L12).

`output_format={"type": "json_schema", "schema": {...}}` (or a pydantic model class) offers
the model one more tool, `StructuredOutput`, whose input is the answer. The tool validates
it (JSON Schema draft 7, and the pydantic model if one was given): a valid answer ends the
run with `ResultMessage.structured_output`; an invalid one comes back as an `is_error`
result saying what is wrong, and the model tries again. A response that ends without the
tool is reminded to use it. After `max_retries` failed attempts the run ends with
`error_max_structured_output_retries` (`terminal_reason` `structured_output_retry_exhausted`).

The tool runs nothing and reads nothing (`kind` read, no reach), so it never asks for
permission. A schema that is not an object (an array, a string) is wrapped as the tool's
`output` field, since the API takes only object schemas for tool input.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

from ...errors import ConfigurationError
from ..tools.base import DeclaredTool, ToolContext, ToolError, ToolOutput

__all__ = ["DEFAULT_RETRIES", "STRUCTURED_TOOL", "OutputSchema", "StructuredOutputTool",
           "accepted_answer", "as_json", "output_schema", "reminder_text"]

STRUCTURED_TOOL = "StructuredOutput"
#: attempts after the first failed one before the run gives up
#: (`MAX_STRUCTURED_OUTPUT_RETRIES` overrides)
DEFAULT_RETRIES = 5
_ERRORS_SHOWN = 5


@dataclass(frozen=True)
class OutputSchema:
    """The schema the final answer must match, and how it is checked."""

    schema: dict[str, Any]
    wrapped: bool  # the schema is not an object: the answer is the tool input's `output`
    model: Any = None  # a pydantic model class, also checked when given
    max_retries: int = DEFAULT_RETRIES

    @property
    def tool_schema(self) -> dict[str, Any]:
        if not self.wrapped:
            return self.schema
        return {"type": "object", "properties": {"output": self.schema},
                "required": ["output"], "additionalProperties": False}

    def problems(self, answer: Any) -> list[str]:
        """What is wrong with `answer` (empty: it matches)."""
        from jsonschema import Draft7Validator

        found = [_describe(error) for error in sorted(
            Draft7Validator(self.schema).iter_errors(answer), key=lambda e: list(e.path))]
        if not found and self.model is not None:
            from pydantic import ValidationError

            try:
                self.model.model_validate(answer)
            except ValidationError as error:
                found = [f"{'.'.join(str(p) for p in e['loc']) or '(root)'}: {e['msg']}"
                         for e in error.errors()]
        return found


def output_schema(output_format: Any) -> OutputSchema | None:
    """The `OutputSchema` of an `output_format` option (None: no structured output).

    Accepts `{"type": "json_schema", "schema": {...}}` or a pydantic model class. Anything
    else, or a schema that is not valid JSON Schema, is a ConfigurationError at startup
    (the comparable SDK ignores other types silently; a typo should not go unnoticed).
    """
    if output_format is None:
        return None
    model = None
    if isinstance(output_format, type) and hasattr(output_format, "model_json_schema"):
        model, schema = output_format, output_format.model_json_schema()
    elif isinstance(output_format, dict) and output_format.get("type") == "json_schema":
        schema = output_format.get("schema")
    else:
        raise ConfigurationError(
            "output_format must be {'type': 'json_schema', 'schema': {...}} or a pydantic "
            f"model class, not {output_format!r}")
    if not isinstance(schema, dict):
        raise ConfigurationError(f"output_format's schema must be a JSON object, not {schema!r}")
    from jsonschema import Draft7Validator, SchemaError

    try:
        Draft7Validator.check_schema(schema)
    except SchemaError as error:
        raise ConfigurationError(f"output_format's schema is not valid JSON Schema: "
                                 f"{error.message}") from None
    wrapped = schema.get("type") != "object"
    return OutputSchema(schema=schema, wrapped=wrapped, model=model, max_retries=_retries())


def _retries() -> int:
    raw = os.environ.get("MAX_STRUCTURED_OUTPUT_RETRIES", "")
    try:
        value = int(raw) if raw.strip() else DEFAULT_RETRIES
    except ValueError:
        raise ConfigurationError(f"MAX_STRUCTURED_OUTPUT_RETRIES must be a whole number, not "
                                 f"{raw!r}") from None
    return max(1, value)


def _describe(error: Any) -> str:
    where = "/".join(str(p) for p in error.absolute_path) or "(root)"
    return f"{where}: {error.message}"


class StructuredOutputTool(DeclaredTool):
    """Submit the final answer; its input is checked against the required schema."""

    name = STRUCTURED_TOOL
    kind = "read"  # it touches nothing: never a permission question

    def __init__(self, wanted: OutputSchema) -> None:
        self.wanted = wanted
        self.input_schema = wanted.tool_schema
        shape = ("an object with one field, `output`, holding the answer" if wanted.wrapped
                 else "the answer itself")
        self.description = (
            "Submit your final answer as structured data. Call this exactly once, when you "
            "are done (you may use other tools before). Its input is " + shape + ", and it "
            "must match the required JSON schema; if it does not, you get the errors and "
            "must call it again with a corrected answer.")

    def answer(self, input: dict[str, Any]) -> Any:
        """The answer a call submits (unwrapped)."""
        return input.get("output") if self.wanted.wrapped else input

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        problems = self.wanted.problems(self.answer(input))
        if problems:
            shown = "\n".join(f"- {p}" for p in problems[:_ERRORS_SHOWN])
            more = (f"\n- … and {len(problems) - _ERRORS_SHOWN} more"
                    if len(problems) > _ERRORS_SHOWN else "")
            raise ToolError(f"The answer does not match the required schema:\n{shown}{more}\n"
                            f"Call {STRUCTURED_TOOL} again with a corrected answer.")
        return ToolOutput(content="Structured output accepted.")


def accepted_answer(tool: StructuredOutputTool, calls: list[dict[str, Any]],
                    results: list[dict[str, Any]]) -> tuple[bool, Any]:
    """(whether a StructuredOutput call of this response was accepted, its answer)."""
    ok = {r["tool_use_id"] for r in results if not r.get("is_error")}
    for call in calls:
        if call["name"] == STRUCTURED_TOOL and call["id"] in ok:
            return True, tool.answer(call["input"])
    return False, None


def reminder_text() -> str:
    """What a response that ended without the tool is told."""
    return (f"You ended without calling {STRUCTURED_TOOL}. Your final answer must be "
            f"submitted by calling the {STRUCTURED_TOOL} tool with input that matches the "
            "required schema. Call it now.")


def as_json(answer: Any) -> str:
    """The answer as the result's text, when the model wrote none."""
    return json.dumps(answer, ensure_ascii=False)
