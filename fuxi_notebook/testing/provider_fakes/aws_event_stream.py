"""AWS event-stream framing, as Amazon Bedrock streams a response.

Bedrock's `invoke-with-response-stream` answers in binary frames rather than SSE, and the
`anthropic` Bedrock client decodes them with botocore's parser (which checks both CRCs).
The fake Bedrock server encodes its events here, byte for byte as the service does: a
prelude (total length, headers length, CRC32 of both), string-typed headers, the payload
and a CRC32 of the whole message. `decode_frames` reads them back for tests.
"""

from __future__ import annotations

import base64
import json
import struct
import zlib
from collections.abc import Mapping
from typing import Any

__all__ = [
    "FrameError",
    "chunk_frame",
    "decode_frames",
    "encode_frame",
    "exception_frame",
]

_STRING = 7  # the header value type for a UTF-8 string
_PRELUDE = struct.Struct(">II")
_CRC = struct.Struct(">I")


class FrameError(ValueError):
    """Bytes that are not a well-formed event-stream frame."""


def encode_frame(headers: Mapping[str, str], payload: bytes) -> bytes:
    """One frame: prelude, prelude CRC, headers (all strings), payload, message CRC."""
    encoded = b"".join(_header(name, value) for name, value in headers.items())
    total = _PRELUDE.size + _CRC.size + len(encoded) + len(payload) + _CRC.size
    prelude = _PRELUDE.pack(total, len(encoded))
    message = prelude + _CRC.pack(zlib.crc32(prelude)) + encoded + payload
    return message + _CRC.pack(zlib.crc32(message))


def _header(name: str, value: str) -> bytes:
    raw_name, raw_value = name.encode("utf-8"), value.encode("utf-8")
    return (struct.pack(">B", len(raw_name)) + raw_name + struct.pack(">BH", _STRING, len(
        raw_value)) + raw_value)


def chunk_frame(event: Mapping[str, Any]) -> bytes:
    """A `chunk` event carrying one Messages API stream event, base64 in `bytes`."""
    data = json.dumps(event, separators=(",", ":")).encode("utf-8")
    payload = json.dumps({"bytes": base64.b64encode(data).decode("ascii")}).encode("utf-8")
    return encode_frame({":event-type": "chunk", ":content-type": "application/json",
                         ":message-type": "event"}, payload)


def exception_frame(exception_type: str, message: str) -> bytes:
    """A mid-stream exception (e.g. `throttlingException`), as Bedrock ends a stream."""
    payload = json.dumps({"message": message}).encode("utf-8")
    return encode_frame({":exception-type": exception_type,
                         ":content-type": "application/json",
                         ":message-type": "exception"}, payload)


def decode_frames(data: bytes) -> list[tuple[dict[str, str], bytes]]:
    """Every frame of `data` as (headers, payload); FrameError on a bad length or CRC."""
    frames: list[tuple[dict[str, str], bytes]] = []
    offset = 0
    while offset < len(data):
        if len(data) - offset < _PRELUDE.size + _CRC.size:
            raise FrameError("truncated prelude")
        total, headers_length = _PRELUDE.unpack_from(data, offset)
        prelude_crc = _CRC.unpack_from(data, offset + _PRELUDE.size)[0]
        if zlib.crc32(data[offset:offset + _PRELUDE.size]) != prelude_crc:
            raise FrameError("prelude CRC mismatch")
        frame = data[offset:offset + total]
        if len(frame) != total:
            raise FrameError("truncated frame")
        if zlib.crc32(frame[:-_CRC.size]) != _CRC.unpack_from(frame, total - _CRC.size)[0]:
            raise FrameError("message CRC mismatch")
        start = _PRELUDE.size + _CRC.size
        headers = _read_headers(frame[start:start + headers_length])
        frames.append((headers, frame[start + headers_length:total - _CRC.size]))
        offset += total
    return frames


def _read_headers(raw: bytes) -> dict[str, str]:
    headers: dict[str, str] = {}
    position = 0
    while position < len(raw):
        name_length = raw[position]
        name = raw[position + 1:position + 1 + name_length].decode("utf-8")
        position += 1 + name_length
        kind, value_length = struct.unpack_from(">BH", raw, position)
        if kind != _STRING:
            raise FrameError(f"header {name!r} is not a string (type {kind})")
        position += 3
        headers[name] = raw[position:position + value_length].decode("utf-8")
        position += value_length
    return headers
