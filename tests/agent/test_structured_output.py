"""Structured output (L12): the final answer validated against a JSON schema."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from fuxi_notebook import FuxiAgentOptions, ResultMessage, ScriptedModel
from fuxi_notebook._internal.models.script import Turn, text, tool_use
from fuxi_notebook.errors import ConfigurationError

from .helpers import collect, tool_results

SCHEMA = {"type": "object", "properties": {"region": {"type": "string"},
                                           "total": {"type": "number"}},
          "required": ["region", "total"], "additionalProperties": False}
FORMAT = {"type": "json_schema", "schema": SCHEMA}


def _options(model, tmp_path, **extra):
    return FuxiAgentOptions(model=model, cwd=tmp_path, output_format=FORMAT, **extra)


async def test_a_valid_answer_ends_the_run_with_structured_output(tmp_path):
    model = ScriptedModel([
        [tool_use("Glob", {"pattern": "*.csv"})],  # tools may be used before the answer
        [text("North sold most."),
         tool_use("StructuredOutput", {"region": "North", "total": 94000})],
    ])
    messages, error = await collect("which region?", _options(model, tmp_path,
                                                              allowed_tools=["Glob"]))
    result = messages[-1]
    assert isinstance(result, ResultMessage) and error is None
    assert result.subtype == "success"
    assert result.structured_output == {"region": "North", "total": 94000}
    assert result.result == "North sold most."
    assert len(model.requests) == 2  # it ended at the accepted answer: no extra turn
    offered = {tool["name"]: tool for tool in model.requests[0].tools}
    assert offered["StructuredOutput"]["input_schema"] == SCHEMA


async def test_an_invalid_answer_gets_the_errors_and_is_tried_again(tmp_path):
    model = ScriptedModel([
        [tool_use("StructuredOutput", {"region": "North", "total": "lots"})],
        [tool_use("StructuredOutput", {"region": "North", "total": 94000})],
    ])
    messages, _ = await collect("which region?", _options(model, tmp_path))
    (answer,) = tool_results(model.requests[1].messages)
    assert answer["is_error"] and "total" in answer["content"]
    assert "is not of type 'number'" in answer["content"]
    assert messages[-1].subtype == "success"
    assert messages[-1].structured_output["total"] == 94000


async def test_ending_without_the_tool_is_reminded_then_the_retries_run_out(tmp_path,
                                                                            monkeypatch):
    monkeypatch.setenv("MAX_STRUCTURED_OUTPUT_RETRIES", "2")
    model = ScriptedModel([[text("North, I think.")],
                           [tool_use("StructuredOutput", {"region": 3})],
                           [text("Still prose.")]])
    messages, error = await collect("which region?", _options(model, tmp_path))
    result = messages[-1]
    assert result.subtype == "error_max_structured_output_retries" and result.is_error
    assert result.terminal_reason == "structured_output_retry_exhausted"
    assert result.structured_output is None and error is not None
    reminder = model.requests[1].messages[-1]["content"]
    assert "StructuredOutput" in str(reminder)
    assert len(model.requests) == 3


async def test_a_pydantic_model_class_is_a_schema_too(tmp_path):
    class Answer(BaseModel):
        region: str
        months: list[int]

    model = ScriptedModel([
        [tool_use("StructuredOutput", {"region": "North", "months": ["x"]})],
        [tool_use("StructuredOutput", {"region": "North", "months": [1, 2]})],
    ])
    options = FuxiAgentOptions(model=model, cwd=tmp_path, output_format=Answer)
    messages, _ = await collect("which?", options)
    assert messages[-1].structured_output == {"region": "North", "months": [1, 2]}
    assert Answer.model_validate(messages[-1].structured_output).months == [1, 2]


async def test_a_schema_that_is_not_an_object_is_wrapped_for_the_tool(tmp_path):
    schema = {"type": "array", "items": {"type": "string"}}
    model = ScriptedModel([[tool_use("StructuredOutput", {"output": ["North", "South"]})]])
    options = FuxiAgentOptions(model=model, cwd=tmp_path,
                               output_format={"type": "json_schema", "schema": schema})
    messages, _ = await collect("regions?", options)
    assert messages[-1].structured_output == ["North", "South"]
    tool = next(t for t in model.requests[0].tools if t["name"] == "StructuredOutput")
    assert tool["input_schema"]["properties"]["output"] == schema


@pytest.mark.parametrize("output_format, needle", [
    ({"type": "json_schema", "schema": {"type": "nonsense"}}, "not valid JSON Schema"),
    ({"type": "json", "schema": SCHEMA}, "output_format must be"),
    ({"type": "json_schema", "schema": "x"}, "must be a JSON object"),
])
async def test_a_bad_output_format_is_refused_at_startup(tmp_path, output_format, needle):
    model = ScriptedModel([[text("never")]])
    options = FuxiAgentOptions(model=model, cwd=tmp_path, output_format=output_format)
    with pytest.raises(ConfigurationError, match=needle):
        await collect("x", options)
    assert model.requests == []


NESTED = {"type": "object", "properties": {
    "analysis": {"type": "object", "properties": {"word_count": {"type": "number"},
                                                  "character_count": {"type": "number"}},
                 "required": ["word_count", "character_count"]},
    "words": {"type": "array", "items": {"type": "string"}}},
    "required": ["analysis", "words"]}


async def test_a_nested_schema_over_the_wire(fake_api, wire_model, tmp_path):
    """The comparable SDK's e2e test_nested_structured_output, with the fake API: nested
    objects and arrays are offered as they are, checked, and come back as given."""
    wrong = {"analysis": {"word_count": "two"}, "words": "Hello world"}
    right = {"analysis": {"word_count": 2, "character_count": 11}, "words": ["Hello", "world"]}
    fake_api.add(Turn([tool_use("StructuredOutput", wrong)]),
                 Turn([tool_use("StructuredOutput", right)]))
    options = FuxiAgentOptions(model=wire_model, cwd=tmp_path, permission_mode="acceptEdits",
                               output_format={"type": "json_schema", "schema": NESTED})
    messages, error = await collect("Analyze this text: 'Hello world'.", options)
    result = messages[-1]
    assert error is None and isinstance(result, ResultMessage) and not result.is_error
    assert result.structured_output == right
    offered = {tool["name"]: tool for tool in fake_api.requests[0]["tools"]}
    assert offered["StructuredOutput"]["input_schema"] == NESTED
    refused = str(tool_results(fake_api.requests[1]["messages"])[0]["content"])
    assert "character_count" in refused and "words" in refused  # each error named
