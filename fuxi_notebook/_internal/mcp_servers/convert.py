"""An MCP `CallToolResult` as a tool result the Messages API accepts, bounded in size.

text → text; image → an image block when its bytes are the declared type (the API rejects
a mismatch, which would fail the whole request; here it becomes a note); an embedded text
resource → its text; a resource link → one line; audio and binary resources → a note
that they were left out. `structured_content` is sent as JSON: alone when there is no
other content, otherwise appended after "structured content:" unless a text block
already says the same (servers are asked to send both, so it is often a copy).
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from ..common.media import image_type
from ..tools.base import ToolOutput
from ..tools.truncate import cap_head_tail

__all__ = ["MAX_IMAGES", "MAX_RESULT_CHARS", "to_output"]

#: characters of text one result may bring (head and tail kept beyond it)
MAX_RESULT_CHARS = 100_000
#: images one result may bring (the rest become notes)
MAX_IMAGES = 20
#: the API's limit for one image
MAX_IMAGE_BYTES = 5 * 1024 * 1024
_MEDIA_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")


def to_output(result: Any) -> ToolOutput:
    """The wire content of an MCP result (`mcp.types.CallToolResult`)."""
    blocks: list[dict[str, Any]] = []
    images = 0
    for item in result.content or []:
        block = _block(item, images)
        images += block.get("type") == "image"
        blocks.append(block)
    structured = getattr(result, "structured_content", None)
    if structured is not None and not _already_there(structured, blocks):
        dumped = json.dumps(structured, ensure_ascii=False, default=str)
        blocks.append(_text(f"structured content:\n{dumped}" if blocks else dumped))
    return ToolOutput(_bounded(blocks), is_error=bool(result.is_error))


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _block(item: Any, images: int) -> dict[str, Any]:
    kind = getattr(item, "type", None)
    if kind == "text":
        return _text(item.text)
    if kind == "image":
        return _image(item.data, item.mime_type, images)
    if kind == "audio":
        return _text(f"[audio ({item.mime_type}, {_size(item.data)}) left out: the model "
                     "cannot take audio]")
    if kind == "resource_link":
        extra = "".join(f", {part}" for part in (item.mime_type, item.description) if part)
        return _text(f"[resource link: {item.name} <{item.uri}>{extra}]")
    if kind == "resource":
        resource = item.resource
        text = getattr(resource, "text", None)
        if isinstance(text, str):
            return _text(text)
        mime = getattr(resource, "mime_type", None) or "binary"
        return _text(f"[resource {resource.uri} ({mime}, "
                     f"{_size(getattr(resource, 'blob', ''))}) left out: binary content]")
    return _text(f"[a {kind or 'content'} block was left out: not a type the model reads]")


def _image(data: str, mime: str, images: int) -> dict[str, Any]:
    if images >= MAX_IMAGES:
        return _text(f"[image left out: a result may hold at most {MAX_IMAGES} images]")
    try:
        head = base64.b64decode(data[:64], validate=True)
    except (binascii.Error, ValueError):
        return _text(f"[image left out: its data is not valid base64 ({mime})]")
    actual = image_type(head)
    if mime not in _MEDIA_TYPES or actual != mime:
        found = f"its bytes are {actual}" if actual else "its bytes are not a known image type"
        return _text(f"[image left out: declared {mime}, but {found}]")
    if len(data) * 3 // 4 > MAX_IMAGE_BYTES:
        return _text(f"[image left out: {_size(data)} is over the API's 5 MB limit]")
    return {"type": "image", "source": {"type": "base64", "media_type": mime, "data": data}}


def _size(data: str) -> str:
    return f"{len(data or '') * 3 // 4} bytes"


def _already_there(structured: Any, blocks: list[dict[str, Any]]) -> bool:
    """Whether a text block already says it: the same JSON, or (`mcp`'s MCPServer wraps
    a plain return value as `{"result": value}`) the wrapped value itself."""
    copies = [structured]
    if isinstance(structured, dict) and list(structured) == ["result"]:
        copies.append(structured["result"])
    for block in blocks:
        if block.get("type") != "text":
            continue
        if block["text"] in copies:
            return True
        try:
            if json.loads(block["text"]) in copies:
                return True
        except ValueError:
            continue
    return False


def _bounded(blocks: list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    """Plain text when there is no image; each text capped so the total stays bounded."""
    texts = [b for b in blocks if b.get("type") == "text"]
    if len(texts) == len(blocks):
        joined = "\n".join(b["text"] for b in blocks)
        return cap_head_tail(joined, MAX_RESULT_CHARS) if joined else "(no content)"
    share = MAX_RESULT_CHARS // max(len(texts), 1)
    return [_text(cap_head_tail(b["text"], share)) if b.get("type") == "text" else b
            for b in blocks if b.get("type") != "text" or b["text"]]  # the API refuses ""
