"""The fast input checker agrees with `jsonschema` on every tool schema we ship.

The registry uses `schema_check` instead of `jsonschema` (1.5 s to import) for schemas in
the supported subset, so the two must give the same verdict on any input.
"""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from fuxi_notebook._internal.notebook.kernel.tools import kernel_tools
from fuxi_notebook._internal.tools import schema_check
from fuxi_notebook._internal.tools.builtin import builtin_tools
from fuxi_notebook._internal.tools.registry import ToolRegistry

TOOLS = {tool.name: tool for tool in [*builtin_tools(), *kernel_tools(shell=None)]}

_scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(-2, 2),
                     st.sampled_from(["", "x", "content", "files_with_matches", "a.py"]))
_values = st.recursive(_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3),
    st.dictionaries(st.sampled_from(["question", "header", "options", "label",
                                     "description", "multiSelect", "x"]), inner, max_size=4)),
    max_leaves=8)


def _inputs(name: str) -> Any:
    """Dictionaries using the tool's own property names (and a stray one), any values."""
    keys = [*TOOLS[name].input_schema.get("properties", {}), "unexpected"]
    return st.dictionaries(st.sampled_from(keys), _values, max_size=len(keys))


def test_every_shipped_schema_is_in_the_fast_subset():
    assert all(schema_check.supported(tool.input_schema) for tool in TOOLS.values())
    assert not schema_check.supported({"type": "object", "patternProperties": {}})
    assert not schema_check.supported({"type": "object", "properties": {"a": {"format": "x"}}})


@pytest.mark.parametrize("name", sorted(TOOLS))
@settings(max_examples=150, deadline=None, derandomize=True)
@given(data=st.data())
@example(data=None)  # the fixed cases below run first, on every tool
def test_same_verdict_as_jsonschema(name: str, data: Any) -> None:
    schema = TOOLS[name].input_schema
    reference = jsonschema.Draft202012Validator(schema)
    cases = [{}, {"unexpected": 1}, {"limit": True}, {"limit": 2.0}, {"timeout": 0},
             {"questions": [{"question": "q", "header": "h" * 13, "options": [],
                             "multiSelect": False}]}]
    if data is not None:
        cases = [data.draw(_inputs(name))]
    for value in cases:
        ours = schema_check.problems(schema, value)
        assert (not ours) == reference.is_valid(value), (name, value, ours)


def test_messages_name_the_field_and_the_rule():
    registry = ToolRegistry([TOOLS["Read"]])
    message = registry.validate("Read", {"offset": "ten", "extra": 1})
    assert message is not None and message.startswith("Invalid input for tool 'Read':")
    assert "- input: 'file_path' is a required property" in message
    assert "'extra' unexpected" in message and "- offset: " in message


def test_a_schema_outside_the_subset_falls_back_to_jsonschema():
    class Tool:
        name, description = "Pattern", "x"
        input_schema: dict[str, Any] = {  # noqa: RUF012
            "type": "object", "properties": {"id": {"type": "string", "pattern": "^a+$"}}}

    registry = ToolRegistry([Tool()])
    assert registry.validate("Pattern", {"id": "aaa"}) is None
    assert "does not match" in (registry.validate("Pattern", {"id": "b"}) or "")
