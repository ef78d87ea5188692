"""Which image type some bytes are, from their first bytes (never from a file name).

Shared by `Read` (what media type to send) and the offline API checks (is the declared
type the real one): the API rejects an image whose bytes do not match its media type.
"""

from __future__ import annotations

__all__ = ["IMAGE_HEAD_BYTES", "image_type"]

#: Enough leading bytes to tell every supported type apart.
IMAGE_HEAD_BYTES = 16

_MAGIC = (("image/png", b"\x89PNG\r\n\x1a\n"), ("image/jpeg", b"\xff\xd8\xff"),
          ("image/gif", b"GIF87a"), ("image/gif", b"GIF89a"))


def image_type(head: bytes) -> str | None:
    """The media type of an image starting with `head` (PNG, JPEG, GIF, WebP), else None."""
    for media_type, magic in _MAGIC:
        if head.startswith(magic):
            return media_type
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None
