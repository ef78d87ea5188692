"""The fake server and ScriptedModel reject what the real Messages API rejects."""

from __future__ import annotations

import asyncio
import base64

import httpx
import pytest

from fuxi_notebook import ScriptedModel
from fuxi_notebook._internal.models.base import ModelRequest
from fuxi_notebook._internal.models.wire_check import MAX_REQUEST_BYTES, request_problem
from fuxi_notebook.errors import ModelError
from fuxi_notebook.testing import Turn, text

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 40).decode()
JPEG = base64.b64encode(b"\xff\xd8\xff\xe0" + b"\0" * 40).decode()


def _image(data: str, media: str = "image/png") -> dict:
    return {"type": "image", "source": {"type": "base64", "media_type": media, "data": data}}


CALL = {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Bash",
                                          "input": {}}]}
INVALID = {
    "unpaired tool_use": [{"role": "user", "content": "x"}, CALL,
                          {"role": "user", "content": "no results"}],
    "result without a call": [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t9", "content": "?"}]}],
    "wrong role": [{"role": "system", "content": "x"}],
    "assistant first": [{"role": "assistant", "content": "x"}],
    "image bytes": [{"role": "user", "content": [_image(JPEG, "image/png")]}],
    "image in a result": [{"role": "user", "content": "x"}, CALL, {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": [_image("!!notbase64!!")]}]}],
    "no messages": [],
    "two user messages in a row": [{"role": "user", "content": "a"},
                                   {"role": "user", "content": "b"}],
    "results after text": [{"role": "user", "content": "x"}, CALL, {"role": "user", "content": [
        {"type": "text", "text": "first"},
        {"type": "tool_result", "tool_use_id": "t1", "content": "late"}]}],
}


@pytest.mark.parametrize("case", sorted(INVALID))
def test_invalid_conversations_are_named(case):
    problem = request_problem({"messages": INVALID[case]})
    assert problem is not None and problem[0] == 400


def test_valid_conversations_pass():
    ok = [{"role": "user", "content": [_image(PNG), {"type": "text", "text": "see"}]}, CALL,
          {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                        "content": [_image(JPEG, "image/jpeg")]}]},
          {"role": "assistant", "content": [{"type": "tool_use", "id": "t2", "name": "X",
                                             "input": {}}]}]  # the last call may be open
    assert request_problem({"messages": ok}) is None


def test_oversized_requests_are_413():
    assert request_problem({"messages": [{"role": "user", "content": "x"}]},
                           size=MAX_REQUEST_BYTES + 1)[0] == 413


def test_the_fake_server_answers_like_the_api(fake_api):
    fake_api.add(Turn([text("never served")]))
    response = httpx.post(f"{fake_api.url}/v1/messages", headers={"x-api-key": "k"},
                          json={"model": "m", "max_tokens": 5,
                                "messages": INVALID["unpaired tool_use"]})
    assert response.status_code == 400
    assert response.json()["error"]["type"] == "invalid_request_error"
    assert "tool_result" in response.json()["error"]["message"]
    assert fake_api.remaining == 1 and fake_api.errors  # no step used; the test can see it


def test_scripted_model_rejects_too():
    model = ScriptedModel([[text("never")]])

    async def ask() -> None:
        request = ModelRequest(model="m", max_tokens=5, messages=INVALID["wrong role"])
        async for _ in model.stream(request):
            pass

    with pytest.raises(ModelError, match="API error 400"):
        asyncio.run(ask())
    with pytest.raises(Exception, match="1 scripted step"):
        model.assert_complete()
