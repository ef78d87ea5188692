"""An ACP prompt (its content blocks) as the content of a user message to the model.

Text stays text; an image stays an image (its bytes checked against its media type, as
the API checks them); an embedded text resource (a file the client attached) becomes text
headed by its URI; a resource link is named, not fetched (the agent reads it with its own
tools, under its permissions). Anything else is refused: a JSON-RPC invalid-params
error (guard.py).
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from ...errors import ConfigurationError
from ..common.media import IMAGE_HEAD_BYTES, image_type

__all__ = ["prompt_blocks"]

_IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")


def prompt_blocks(prompt: list[Any]) -> list[dict[str, Any]]:
    """The wire content of `prompt` (raises ConfigurationError, invalid params through
    guard.py, for what cannot be sent)."""
    blocks = [_block(item) for item in prompt]
    if not any(b.get("type") == "image" or str(b.get("text", "")).strip() for b in blocks):
        raise ConfigurationError("the prompt is empty")
    return blocks


def _block(item: Any) -> dict[str, Any]:
    kind = getattr(item, "type", None)
    if kind == "text":
        return {"type": "text", "text": str(item.text)}
    if kind == "image":
        return _image(str(item.data), str(item.mime_type))
    if kind == "resource_link":
        return {"type": "text", "text": f"[Attached: {item.name} <{item.uri}>]"}
    if kind == "resource":
        resource = item.resource
        text = getattr(resource, "text", None)
        if isinstance(text, str):
            return {"type": "text", "text": f"<file uri=\"{resource.uri}\">\n{text}\n</file>"}
        if str(getattr(resource, "mime_type", "")) in _IMAGE_TYPES:
            return _image(str(resource.blob), str(resource.mime_type))
        return {"type": "text", "text": f"[Attached, not text: {resource.uri}]"}
    raise ConfigurationError(f"prompt content of type {kind!r} is not supported (text, "
                             "image, resource and resource_link are)")


def _image(data: str, mime_type: str) -> dict[str, Any]:
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise ConfigurationError("an image's data is not base64") from None
    found = image_type(raw[:IMAGE_HEAD_BYTES])
    if found is None or found != mime_type:
        raise ConfigurationError(f"an image said to be {mime_type} holds "
                                 f"{found or 'no image the API accepts'}")
    return {"type": "image", "source": {"type": "base64", "media_type": found, "data": data}}
