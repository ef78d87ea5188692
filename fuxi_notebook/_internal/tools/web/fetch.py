"""Fetching one URL safely for WebFetch: checked addresses, pinned connections, bounds.

Why a small HTTP/1.1 client of our own (asyncio streams) rather than an HTTP library:
the address we connect to must be the one we checked. The host is resolved once
(`resolve_host`, getaddrinfo in a worker thread), every address is checked
(`AddressPolicy`), and the connection goes to a checked address, never to the name again,
so a DNS answer that changes between check and connect (rebinding) cannot reach an
internal service. The Host header and TLS (SNI and certificate verification) still use
the host name. Proxies from the environment are never used: a proxy would resolve and
connect on its own, past every check here, and `HTTP_PROXY` is something the model can set
through Bash.

Bounds: at most `max_bytes` are read (raw and decompressed), the whole fetch (resolution,
connection, redirects, body) has one deadline, and a cancelled fetch closes its
connection. A redirect is followed only to the same host (http -> https upgrades
included); any other target is returned, not fetched, so the caller can ask for it anew
and the permission rules judge that host.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import ssl
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote, urljoin, urlsplit

from .address import AddressPolicy, url_host, valid_host

__all__ = ["FetchError", "Fetched", "Fetcher", "Redirect", "open_connection", "resolve_host"]

MAX_HEAD_BYTES = 64 * 1024
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_DEFAULT_PORTS = {"http": 80, "https": 443}
_USER_AGENT = "Mozilla/5.0 (compatible; fuxi-notebook-WebFetch/0.1)"


class FetchError(Exception):
    """Why a fetch failed, in words for the model."""


@dataclass
class Fetched:
    """A response (not a redirect). `truncated`: `max_bytes` were read and the rest was
    not; `declared_length`: the Content-Length the server announced, if any."""

    url: str
    status: int
    reason: str
    headers: dict[str, str]
    body: bytes
    truncated: bool
    declared_length: int | None
    address: str


@dataclass
class Redirect:
    """A redirect that was not followed (another host, or too many hops)."""

    url: str
    status: int
    location: str


async def resolve_host(host: str, port: int) -> list[str]:
    """Every address `host` resolves to, in order (getaddrinfo runs in a worker thread, so
    a slow resolver never blocks the event loop)."""
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                   proto=socket.IPPROTO_TCP)
    found: list[str] = []
    for _family, _type, _proto, _name, sockaddr in infos:
        text = str(sockaddr[0])
        if text not in found:
            found.append(text)
    return found


async def open_connection(address: str, port: int, *, tls: ssl.SSLContext | None,
                          server_hostname: str | None
                          ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A connection to `address` itself (TLS names `server_hostname`)."""
    return await asyncio.open_connection(address, port, ssl=tls, limit=MAX_HEAD_BYTES,
                                         server_hostname=server_hostname if tls else None)


def _same_host(old: str, new: str) -> bool:
    """Same scheme, host and port; or http -> https on the same host's default ports."""
    a, b = urlsplit(old), urlsplit(new)
    if url_host(old) != url_host(new):
        return False
    port_a = a.port or _DEFAULT_PORTS.get(a.scheme)
    port_b = b.port or _DEFAULT_PORTS.get(b.scheme)
    if a.scheme == b.scheme:
        return port_a == port_b
    return a.scheme == "http" and b.scheme == "https" and (port_a, port_b) == (80, 443)


class Fetcher:
    """Fetches URLs under one policy and set of bounds (see the module docstring).

    Args:
        policy: the non-public hosts and networks that may be contacted.
        max_bytes: raw (and decompressed) bytes read at most per response.
        timeout: seconds for the whole fetch, redirects included.
        connect_timeout: seconds for one connection (TCP and TLS handshake).
        max_redirects: same-host redirects followed at most.
        tls: the TLS context (default: the system's trust store, verification on).
    """

    def __init__(self, *, policy: AddressPolicy | None = None, max_bytes: int = 2_000_000,
                 timeout: float = 30.0, connect_timeout: float = 10.0, max_redirects: int = 5,
                 tls: ssl.SSLContext | None = None) -> None:
        self.policy = policy or AddressPolicy()
        self.max_bytes = max_bytes
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.max_redirects = max_redirects
        self._tls = tls

    def tls(self) -> ssl.SSLContext:
        """The TLS context: verification on, the system's CAs (plus certifi's, where the
        system store looks empty, as on some macOS Pythons)."""
        if self._tls is None:
            context = ssl.create_default_context()
            if not context.get_ca_certs():
                try:
                    import certifi
                except ImportError:
                    pass
                else:
                    context.load_verify_locations(certifi.where())
            self._tls = context
        return self._tls

    async def fetch(self, url: str, *, wants_body: Callable[[dict[str, str]], bool]
                    ) -> Fetched | Redirect:
        """Fetch `url` (http or https, already checked by the caller); `wants_body` sees
        the response headers and says whether the body is worth reading."""
        try:
            async with asyncio.timeout(self.timeout):
                return await self._follow(url, wants_body)
        except TimeoutError:
            raise FetchError(f"the fetch of {url} took longer than {self.timeout:g} s and "
                             "was stopped (the server is slow or still sending)") from None

    async def _follow(self, url: str, wants_body: Callable[[dict[str, str]], bool]
                      ) -> Fetched | Redirect:
        pinned: dict[str, list[str]] = {}  # host -> its checked addresses, resolved once
        current = url
        for hop in range(self.max_redirects + 1):
            fetched = await self._one(current, pinned, wants_body)
            location = fetched.headers.get("location")
            if fetched.status not in _REDIRECTS or not location:
                return fetched
            target = urljoin(current, location.strip())
            if urlsplit(target).scheme not in ("http", "https") or not _same_host(current,
                                                                                  target):
                return Redirect(url=current, status=fetched.status, location=target)
            if hop == self.max_redirects:
                raise FetchError(f"too many redirects (more than {self.max_redirects}); the "
                                 f"last one pointed to {target}")
            current = target
        raise AssertionError("unreachable")

    async def _addresses(self, host: str, port: int, pinned: dict[str, list[str]]) -> list[str]:
        """The host's addresses, resolved once per fetch and checked at every hop."""
        if host not in pinned:
            try:
                literal = ipaddress.ip_address(host)
            except ValueError:
                literal = None
            if literal is not None:
                pinned[host] = [str(literal)]
            else:
                try:
                    pinned[host] = await resolve_host(host, port)
                except OSError as error:
                    raise FetchError(f"could not resolve {host}: {error}") from None
        addresses = pinned[host]
        if not addresses:
            raise FetchError(f"{host} resolves to no address")
        for text in addresses:
            refusal = self.policy.refusal(host, ipaddress.ip_address(text))
            if refusal:
                raise FetchError(refusal)
        return addresses

    async def _connect(self, host: str, port: int, scheme: str, addresses: list[str]
                       ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, str]:
        tls = self.tls() if scheme == "https" else None
        errors: list[str] = []
        for address in addresses:
            try:
                async with asyncio.timeout(self.connect_timeout):
                    reader, writer = await open_connection(address, port, tls=tls,
                                                           server_hostname=host)
                return reader, writer, address
            except TimeoutError:
                errors.append(f"{address}: no connection within {self.connect_timeout:g} s")
            except ssl.SSLError as error:
                raise FetchError(f"TLS with {host} failed: {error}") from None
            except OSError as error:
                errors.append(f"{address}: {error.strerror or error}")
        raise FetchError(f"could not connect to {host}:{port} ({'; '.join(errors)})")

    async def _one(self, url: str, pinned: dict[str, list[str]],
                   wants_body: Callable[[dict[str, str]], bool]) -> Fetched:
        parts = urlsplit(url)
        host = url_host(url) or ""
        if not valid_host(host):
            raise FetchError(f"{url} has no valid host name")
        port = parts.port or _DEFAULT_PORTS[parts.scheme]
        addresses = await self._addresses(host, port, pinned)
        reader, writer, address = await self._connect(host, port, parts.scheme, addresses)
        clean = False
        try:
            writer.write(_request(parts.scheme, host, port, parts.path, parts.query))
            await writer.drain()
            status, reason, headers = await _read_head(reader)
            declared = _length(headers)
            body, truncated = b"", False
            if status not in _REDIRECTS and status not in (204, 304) and wants_body(headers):
                body, truncated = await self._read_body(reader, headers, declared)
            clean = True
            return Fetched(url=url, status=status, reason=reason, headers=headers, body=body,
                           truncated=truncated, declared_length=declared, address=address)
        except asyncio.LimitOverrunError:
            raise FetchError(f"{host} sent a malformed response (a line too long)") from None
        except (OSError, asyncio.IncompleteReadError) as error:
            raise FetchError(f"the connection to {host} broke: {error}") from None
        finally:
            if clean:
                writer.close()
            else:  # cancelled, timed out or failed: drop the connection at once
                writer.transport.abort()

    async def _read_body(self, reader: asyncio.StreamReader, headers: dict[str, str],
                         declared: int | None) -> tuple[bytes, bool]:
        sink = _BodySink(self.max_bytes, headers.get("content-encoding", ""))
        if "chunked" in headers.get("transfer-encoding", "").lower():
            while not sink.full:
                size_line = await reader.readuntil(b"\n")
                try:
                    size = int(size_line.split(b";")[0].strip() or b"0", 16)
                except ValueError:
                    raise FetchError("the server sent a malformed chunked body") from None
                if size == 0:
                    break
                while size and not sink.full:
                    piece = await reader.read(min(size, 65536))
                    if not piece:
                        raise FetchError("the server closed the connection mid-body")
                    size -= len(piece)
                    sink.feed(piece)
                if not sink.full:
                    await reader.readuntil(b"\n")
            return sink.result()
        remaining = declared
        while not sink.full and (remaining is None or remaining > 0):
            piece = await reader.read(65536 if remaining is None else min(remaining, 65536))
            if not piece:
                break
            sink.feed(piece)
            if remaining is not None:
                remaining -= len(piece)
        return sink.result()


class _BodySink:
    """Collects a body up to `limit` bytes, decompressing gzip/deflate within the limit
    (a small compressed body cannot expand past it)."""

    def __init__(self, limit: int, encoding: str) -> None:
        self.limit = limit
        self.raw = 0
        self.parts: list[bytes] = []
        self.size = 0
        self.full = False
        coding = encoding.strip().lower()
        if coding in ("", "identity"):
            self._inflate = None
        elif coding in ("gzip", "x-gzip", "deflate"):
            self._inflate = zlib.decompressobj(47 if coding != "deflate" else 15)
        else:
            raise FetchError(f"the server sent the content encoded as {coding!r}, which "
                             "WebFetch cannot decode")
        self._coding = coding

    def feed(self, data: bytes) -> None:
        self.raw += len(data)
        if self._inflate is not None:
            try:
                data = self._inflate.decompress(data, max(self.limit - self.size, 0) + 1)
            except zlib.error as error:
                raise FetchError(f"the {self._coding} content is corrupt: {error}") from None
        self.parts.append(data)
        self.size += len(data)
        if self.size > self.limit or self.raw > self.limit:
            self.full = True

    def result(self) -> tuple[bytes, bool]:
        body = b"".join(self.parts)
        return body[: self.limit], self.full


def _request(scheme: str, host: str, port: int, path: str, query: str) -> bytes:
    safe = "/%:@!$&'()*+,;=-._~"
    target = quote(path or "/", safe=safe) + (f"?{quote(query, safe=safe + '?')}"
                                              if query else "")
    shown = f"[{host}]" if ":" in host else host
    if port != _DEFAULT_PORTS[scheme]:
        shown = f"{shown}:{port}"
    lines = [f"GET {target} HTTP/1.1", f"Host: {shown}", f"User-Agent: {_USER_AGENT}",
             "Accept: text/html, text/markdown;q=0.9, text/plain;q=0.9, "
             "application/json;q=0.8, */*;q=0.5",
             "Accept-Encoding: gzip, deflate", "Connection: close"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("ascii")


async def _read_head(reader: asyncio.StreamReader) -> tuple[int, str, dict[str, str]]:
    """Status line and headers (names lower-cased, repeats joined); 1xx responses skipped."""
    while True:
        try:
            raw = await reader.readuntil(b"\r\n\r\n")
        except asyncio.LimitOverrunError:
            raise FetchError(f"the response headers exceed {MAX_HEAD_BYTES} bytes") from None
        lines = raw.decode("iso-8859-1").split("\r\n")
        parts = lines[0].split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
            raise FetchError(f"the server did not answer with HTTP (got {lines[0][:80]!r})")
        status = int(parts[1])
        if 100 <= status < 200:
            continue
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if sep and name.strip():
                key = name.strip().lower()
                headers[key] = f"{headers[key]}, {value.strip()}" if key in headers else (
                    value.strip())
        return status, parts[2] if len(parts) > 2 else "", headers


def _length(headers: dict[str, str]) -> int | None:
    if "chunked" in headers.get("transfer-encoding", "").lower():
        return None
    try:
        value = int(headers.get("content-length", "").split(",")[0].strip())
    except ValueError:
        return None
    return value if value >= 0 else None
