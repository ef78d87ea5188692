"""MCP results as wire content: images checked, sizes bounded, nothing the API refuses."""

from __future__ import annotations

import base64

from mcp import types

from fuxi_notebook._internal.mcp_servers.convert import MAX_IMAGES, MAX_RESULT_CHARS, to_output
from fuxi_notebook._internal.models.wire_check import request_problem

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 16).decode()
GIF = base64.b64encode(b"GIF89a" + b"\x00" * 16).decode()


def result(*content: object, **fields: object) -> types.CallToolResult:
    return types.CallToolResult(content=list(content), **fields)


def image(data: str, mime: str) -> types.ImageContent:
    return types.ImageContent(type="image", data=data, mime_type=mime)


def test_images_that_the_api_would_refuse_become_notes() -> None:
    out = to_output(result(image(PNG, "image/png"), image(GIF, "image/png"),
                           image("not base64!", "image/png"), image(PNG, "image/bmp")))
    good, wrong, garbled, unsupported = out.content
    assert good["type"] == "image"
    assert wrong["text"] == "[image left out: declared image/png, but its bytes are image/gif]"
    assert "not valid base64" in garbled["text"]
    assert "declared image/bmp" in unsupported["text"]
    tool_result = {"type": "tool_result", "tool_use_id": "t1", "content": out.content}
    body = {"messages": [{"role": "user", "content": "go"},
                         {"role": "assistant", "content": [{"type": "tool_use", "id": "t1",
                                                            "name": "x", "input": {}}]},
                         {"role": "user", "content": [tool_result]}]}
    assert request_problem(body) is None


def test_results_are_bounded() -> None:
    big = "x" * (MAX_RESULT_CHARS * 3)
    out = to_output(result(types.TextContent(type="text", text=big)))
    assert isinstance(out.content, str) and len(out.content) < MAX_RESULT_CHARS + 200
    assert "truncated" in out.content
    many = to_output(result(*[image(PNG, "image/png")] * (MAX_IMAGES + 2)))
    kinds = [b["type"] for b in many.content]
    assert kinds.count("image") == MAX_IMAGES and kinds[-1] == "text"


def test_errors_empty_results_and_empty_text() -> None:
    out = to_output(result(types.TextContent(type="text", text="bad"), is_error=True))
    assert (out.content, out.is_error) == ("bad", True)
    assert to_output(result()).content == "(no content)"
    mixed = to_output(result(types.TextContent(type="text", text=""), image(PNG, "image/png")))
    assert [b["type"] for b in mixed.content] == ["image"]  # the API refuses empty text


def test_structured_copies_are_not_repeated() -> None:
    same = to_output(result(types.TextContent(type="text", text='{"a": 1}'),
                            structured_content={"a": 1}))
    assert same.content == '{"a": 1}'
    wrapped = to_output(result(types.TextContent(type="text", text="7"),
                               structured_content={"result": 7}))
    assert wrapped.content == "7"
    other = to_output(result(types.TextContent(type="text", text="see below"),
                             structured_content={"a": 1}))
    assert other.content == 'see below\nstructured content:\n{"a": 1}'
