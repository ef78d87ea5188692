"""Minimal HTTP/1.1 plumbing for the fake Messages API server.

Hand-written on asyncio streams so the fake server needs no web framework and so faults
(a connection dropped mid-body, a stalled stream) can be produced byte-exactly. Only what
the Anthropic client uses is supported: a request line, headers, a Content-Length body,
keep-alive, and chunked responses.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

__all__ = [
    "LAST_CHUNK",
    "BadRequest",
    "HttpRequest",
    "chunk_bytes",
    "json_response_bytes",
    "read_request",
    "response_head",
    "sse_bytes",
]

LAST_CHUNK = b"0\r\n\r\n"
_MAX_HEADERS = 200


class BadRequest(Exception):
    """The peer sent something that is not an HTTP/1.1 request we understand."""


@dataclass
class HttpRequest:
    """One parsed request; header names are lower-cased."""

    method: str
    path: str
    version: str
    headers: dict[str, str]
    body: bytes

    @property
    def keep_alive(self) -> bool:
        """Whether the connection may carry another request after this one."""
        connection = self.headers.get("connection", "").lower()
        if self.version == "HTTP/1.0":
            return connection == "keep-alive"
        return connection != "close"


async def read_request(reader: asyncio.StreamReader) -> HttpRequest | None:
    """Read the next request; None on a clean EOF between requests."""
    line = await reader.readline()
    if not line.strip():
        return None
    parts = line.decode("latin-1").split()
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise BadRequest(f"bad request line: {line[:80]!r}")
    headers = await _read_headers(reader)
    if "chunked" in headers.get("transfer-encoding", "").lower():
        raise BadRequest("chunked request bodies are not supported")
    try:
        length = int(headers.get("content-length", "0") or "0")
    except ValueError as exc:
        raise BadRequest("bad content-length") from exc
    body = await reader.readexactly(length) if length > 0 else b""
    return HttpRequest(parts[0].upper(), parts[1], parts[2], headers, body)


async def _read_headers(reader: asyncio.StreamReader) -> dict[str, str]:
    headers: dict[str, str] = {}
    for _ in range(_MAX_HEADERS):
        line = await reader.readline()
        if not line:
            raise BadRequest("connection closed inside the headers")
        if line in (b"\r\n", b"\n"):
            return headers
        name, sep, value = line.decode("latin-1").partition(":")
        if not sep:
            raise BadRequest(f"bad header line: {line[:80]!r}")
        headers[name.strip().lower()] = value.strip()
    raise BadRequest("too many headers")


def response_head(status: int, headers: Mapping[str, str]) -> bytes:
    """Status line plus headers plus the blank line."""
    try:
        reason = HTTPStatus(status).phrase
    except ValueError:
        reason = "Overloaded" if status == 529 else "Error"
    lines = [f"HTTP/1.1 {status} {reason}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def json_response_bytes(status: int, body: Any, headers: Mapping[str, str]) -> bytes:
    """A complete Content-Length framed JSON response."""
    payload = json.dumps(body).encode("utf-8")
    head = {
        "content-type": "application/json",
        "content-length": str(len(payload)),
        **headers,
    }
    return response_head(status, head) + payload


def chunk_bytes(data: bytes) -> bytes:
    """One chunk of a chunked body."""
    return f"{len(data):x}\r\n".encode("ascii") + data + b"\r\n"


def sse_bytes(event: Mapping[str, Any]) -> bytes:
    """One SSE event: the client drops events without an `event:` line."""
    data = json.dumps(event, separators=(",", ":"))
    return f"event: {event['type']}\ndata: {data}\n\n".encode()
