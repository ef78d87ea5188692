"""WebFetch against local HTTP servers: SSRF checks, pinning, redirects, bounds, content.

Every server runs on 127.0.0.1 in the test's own event loop; nothing touches the internet.
Host names are resolved by patching `web_fetch.resolve_host` (never the socket module).
"""

from __future__ import annotations

import asyncio
import gzip
import ssl
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from fuxi_notebook import FuxiAgentOptions
from fuxi_notebook._internal.permissions.engine import PermissionEngine
from fuxi_notebook._internal.tools.base import ToolContext, ToolError, ToolOutput
from fuxi_notebook._internal.tools.web import fetch as web_fetch
from fuxi_notebook._internal.tools.web.fetch_tool import WebFetchTool, web_tools

Handler = Callable[["Request", asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]


@dataclass
class Site:
    """A tiny HTTP server: path -> handler; records requests and closed connections."""

    routes: dict[str, Handler] = field(default_factory=dict)
    requests: list[Request] = field(default_factory=list)
    connections: int = 0
    closed: asyncio.Event = field(default_factory=asyncio.Event)
    bodies: dict[str, bytes] = field(default_factory=dict)
    port: int = 0
    server: asyncio.Server | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def page(self, path: str, body: bytes | str, content_type: str | None = "text/html",
             status: int = 200, headers: dict[str, str] | None = None) -> None:
        data = body.encode() if isinstance(body, str) else body
        self.bodies[path] = data
        extra = {**({"Content-Type": content_type} if content_type else {}),
                 "Content-Length": str(len(data)), **(headers or {})}
        self.routes[path] = lambda req, r, w: send(w, status, extra, data)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method, path, _ = lines[0].split(" ", 2)
            headers = {k.strip().lower(): v.strip() for k, _, v in
                       (line.partition(":") for line in lines[1:] if line)}
            request = Request(method, path, headers)
            self.requests.append(request)
            handler = self.routes.get(path.split("?")[0])
            if handler is None:
                await send(writer, 404, {"Content-Type": "text/plain"}, b"no such page")
            else:
                await handler(request, reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()
            self.closed.set()


async def send(writer: asyncio.StreamWriter, status: int, headers: dict[str, str],
               body: bytes) -> None:
    lines = [f"HTTP/1.1 {status} {'OK' if status == 200 else 'Status'}",
             *(f"{k}: {v}" for k, v in headers.items()), "Connection: close", "", ""]
    writer.write("\r\n".join(lines).encode("latin-1") + body)
    await writer.drain()


@pytest.fixture
async def site():
    served = Site()
    served.server = await asyncio.start_server(served._serve, "127.0.0.1", 0)
    served.port = served.server.sockets[0].getsockname()[1]
    yield served
    served.server.close()


def local(**kw: Any) -> WebFetchTool:
    """A WebFetch allowed to reach the tests' own 127.0.0.1 servers."""
    return WebFetchTool(private_hosts=["127.0.0.1"], **kw)


async def fetch(tool: WebFetchTool, url: str, **extra: Any) -> ToolOutput:
    return await tool.run({"url": url, **extra}, ToolContext(cwd=Path.cwd()))


def resolver(monkeypatch: pytest.MonkeyPatch, *answers: list[str]) -> list[str]:
    """Patch the resolver to give `answers` in turn (the last one again); returns the
    list of hosts it was asked for."""
    asked: list[str] = []

    async def resolve(host: str, port: int) -> list[str]:
        asked.append(host)
        return answers[min(len(asked) - 1, len(answers) - 1)]

    monkeypatch.setattr(web_fetch, "resolve_host", resolve)
    return asked


# --- content ------------------------------------------------------------------------------


async def test_html_page_becomes_markdown_with_a_header(site):
    site.page("/doc", "<html><head><title>The Doc</title><script>evil()</script></head>"
                      "<body><nav>menu</nav><h1>Hello</h1><p>See <a href='/next'>next</a>.</p>"
                      "</body></html>", "text/html; charset=utf-8")
    out = await fetch(local(), f"{site.url}/doc", prompt="the greeting")
    head, _, body = out.content.partition("\n\n")
    size = f"{len(site.bodies['/doc']):,}"
    assert head.splitlines() == [
        f"URL: {site.url}/doc", "Status: 200 OK", "Content-Type: text/html; charset=utf-8",
        f"Size: {size} bytes read", "Title: The Doc", "Looking for: the greeting"]
    assert body == f"# Hello\n\nSee [next]({site.url}/next)."
    assert "evil" not in out.content and "menu" not in out.content and not out.is_error
    request = site.requests[0]
    assert request.headers["host"] == f"127.0.0.1:{site.port}"
    assert "proxy" not in " ".join(request.headers)


@pytest.mark.parametrize("content_type, body, expected", [
    ("application/json", '{"a": [1, 2]}', '{"a": [1, 2]}'),
    ("text/plain", "plain <b>text</b>\n  kept", "plain <b>text</b>\n  kept"),
    ("text/markdown", "# Title\n\n- item", "# Title\n\n- item"),
    ("application/vnd.api+json", '{"x": 1}', '{"x": 1}'),
])
async def test_text_content_passes_through(site, content_type, body, expected):
    site.page("/t", body, content_type)
    out = await fetch(local(), f"{site.url}/t")
    assert out.content.endswith("\n\n" + expected)
    assert f"Content-Type: {content_type}" in out.content


@pytest.mark.parametrize("content_type", ["image/png", "application/pdf",
                                          "application/octet-stream"])
async def test_binary_content_is_described_not_shown(site, content_type):
    data = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40
    site.page("/bin", data, content_type)
    out = await fetch(local(), f"{site.url}/bin")
    assert f"binary content ({content_type}, {len(data):,} bytes)" in out.content
    assert "PNG" not in out.content and len(out.content) < 400 and not out.is_error


async def test_content_without_a_type_is_sniffed(site):
    site.page("/nul", b"\x00\x01\x02binary" * 10, None)
    site.page("/page", b"<!DOCTYPE html><p>hi <i>there</i></p>", None)
    assert "binary content (of unknown type" in (await fetch(local(), f"{site.url}/nul")).content
    assert (await fetch(local(), f"{site.url}/page")).content.endswith("\n\nhi *there*")


async def test_charset_from_header_meta_and_default(site):
    site.page("/latin", "café".encode("latin-1"), "text/plain; charset=ISO-8859-1")
    site.page("/meta", '<meta charset="windows-1252"><p>naïve €</p>'.encode("cp1252"),
              "text/html")
    site.page("/equiv", '<meta http-equiv="Content-Type" content="text/html; charset=koi8-r">'
                        "<p>Привет</p>".encode("koi8-r"), "text/html")
    site.page("/bad", b"ok \xff\xfe end", "text/plain")
    site.page("/bom", "\ufeffhello".encode("utf-16-le"), "text/plain")  # BOM beats no charset
    tool = local()
    assert (await fetch(tool, f"{site.url}/latin")).content.endswith("café")
    assert (await fetch(tool, f"{site.url}/meta")).content.endswith("naïve €")
    assert (await fetch(tool, f"{site.url}/equiv")).content.endswith("Привет")
    assert (await fetch(tool, f"{site.url}/bad")).content.endswith("ok \ufffd\ufffd end")
    assert (await fetch(tool, f"{site.url}/bom")).content.endswith("hello")


async def test_http_error_status_is_an_error_result_with_the_page(site):
    site.page("/gone", "<h1>Not here</h1>", status=404)
    out = await fetch(local(), f"{site.url}/gone")
    assert out.is_error and "Status: 404" in out.content and "# Not here" in out.content


async def test_chunked_and_gzip_bodies_are_decoded(site):
    async def chunked(req: Request, reader: Any, writer: asyncio.StreamWriter) -> None:
        body = gzip.compress(b"<p>" + b"word " * 2000 + b"</p>")
        head = {"Content-Type": "text/html", "Transfer-Encoding": "chunked",
                "Content-Encoding": "gzip"}
        pieces = [body[i:i + 700] for i in range(0, len(body), 700)]
        await send(writer, 200, head, b"".join(b"%x;ext=1\r\n%s\r\n" % (len(p), p)
                                                for p in pieces) + b"0\r\n\r\n")

    site.routes["/c"] = chunked
    out = await fetch(local(), f"{site.url}/c")
    assert out.content.endswith("word " * 1999 + "word")
    assert site.requests[0].headers["accept-encoding"] == "gzip, deflate"


# --- bounds -------------------------------------------------------------------------------


@pytest.mark.parametrize("framing", ["length", "close", "chunked"])
async def test_oversized_response_is_cut_with_a_notice(site, framing):
    body = b"x" * 300_000

    async def big(req: Request, reader: Any, writer: asyncio.StreamWriter) -> None:
        headers = {"Content-Type": "text/plain"}
        if framing == "length":
            headers["Content-Length"] = str(len(body))
        if framing == "chunked":
            headers["Transfer-Encoding"] = "chunked"
            await send(writer, 200, headers, b"".join(
                b"%x\r\n%s\r\n" % (10_000, body[i:i + 10_000])
                for i in range(0, len(body), 10_000)) + b"0\r\n\r\n")
        else:
            await send(writer, 200, headers, body)

    site.routes["/big"] = big
    out = await fetch(local(max_bytes=50_000, max_chars=20_000), f"{site.url}/big")
    assert "Size: 50,000 bytes read (cut at the 50,000 bytes limit" in out.content
    assert "only its start was read" in out.content
    assert "[30000 characters truncated]" in out.content  # 50,000 read, 20,000 shown
    assert len(out.content) < 21_000


async def test_gzip_bomb_stops_at_the_byte_cap(site):
    bomb = gzip.compress(b"\0" * 20_000_000)  # ~20 KB that inflate to 20 MB
    site.page("/bomb", bomb, "text/plain", headers={"Content-Encoding": "gzip"})
    out = await fetch(local(max_bytes=100_000), f"{site.url}/bomb")
    assert "cut at the 100,000 bytes limit" in out.content


async def test_trickling_server_is_cut_off_at_the_timeout(site):
    async def trickle(req: Request, reader: Any, writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n")
        while True:  # one byte every 20 ms, forever
            writer.write(b".")
            await writer.drain()
            await asyncio.sleep(0.02)

    site.routes["/slow"] = trickle
    started = time.monotonic()
    with pytest.raises(ToolError, match=r"took longer than 0.5 s"):
        await fetch(local(timeout=0.5), f"{site.url}/slow")
    assert time.monotonic() - started < 3
    await asyncio.wait_for(site.closed.wait(), 5)  # the server saw the connection go


async def test_interrupt_closes_the_connection(site):
    sent = asyncio.Event()

    async def hang(req: Request, reader: asyncio.StreamReader,
                   writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\npartial")
        await writer.drain()
        sent.set()
        await reader.read()  # returns once the client closes its end

    site.routes["/hang"] = hang
    task = asyncio.create_task(fetch(local(), f"{site.url}/hang"))
    await asyncio.wait_for(sent.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.wait_for(site.closed.wait(), 5)


# --- schemes and URLs ---------------------------------------------------------------------


@pytest.mark.parametrize("url, message", [
    ("file:///etc/passwd", "not file://"),
    ("ftp://example.com/x", "not ftp://"),
    ("gopher://example.com/", "not gopher://"),
    ("example.com/page", "https://example.com/page"),
    ("localhost:8080/x", "https://localhost:8080/x"),
    ("http:///nohost", "not an absolute URL"),
    ("javascript:alert(1)", "not javascript://"),
    ("http://user:pw@example.com/", "credentials"),
    ("http://exa*mple.com/", "no valid host"),
    ("http://example.com:99999/", "not a valid URL"),
    ("", "non-empty"),
])
async def test_bad_urls_are_refused_before_any_connection(url, message, monkeypatch):
    asked = resolver(monkeypatch, ["93.184.216.34"])
    with pytest.raises(ToolError, match=message.replace("*", r"\*").replace(".", r"\.")):
        await fetch(WebFetchTool(), url)
    assert asked == []


# --- SSRF ---------------------------------------------------------------------------------


async def test_loopback_is_refused_without_the_allowance(site):
    with pytest.raises(ToolError, match=r"127\.0\.0\.1 is a loopback address"):
        await fetch(WebFetchTool(), f"{site.url}/")
    assert site.connections == 0


@pytest.mark.parametrize("addresses, reason", [
    (["127.0.0.1"], "loopback"),
    (["169.254.169.254"], "link-local"),
    (["10.0.0.5"], "private"),
    (["100.64.0.1"], "carrier-grade NAT"),
    (["93.184.216.34", "192.168.1.1"], "private"),  # any bad address refuses the host
    (["::ffff:127.0.0.1"], "loopback"),
    (["fd00::1"], "private"),
    (["0.0.0.0"], "unspecified"),
])
async def test_names_resolving_to_internal_addresses_are_refused(monkeypatch, addresses,
                                                                 reason):
    resolver(monkeypatch, addresses)
    with pytest.raises(ToolError, match=reason):
        await fetch(WebFetchTool(), "http://innocent.example/latest/meta-data/")


async def test_localhost_through_the_real_resolver_is_refused(site):
    with pytest.raises(ToolError, match="loopback"):
        await fetch(WebFetchTool(), f"http://localhost:{site.port}/")
    assert site.connections == 0


async def test_metadata_ip_literal_is_refused():
    with pytest.raises(ToolError, match=r"169\.254\.169\.254 is a link-local address"):
        await fetch(WebFetchTool(), "http://169.254.169.254/latest/meta-data/")


async def test_private_allowance_by_host_name_and_network(site, monkeypatch):
    resolver(monkeypatch, ["127.0.0.1"])
    site.page("/", "<p>internal</p>")
    by_name = WebFetchTool(private_hosts=["intranet.test"])
    by_network = WebFetchTool(private_hosts=["127.0.0.0/8"])
    assert (await fetch(by_name, f"http://intranet.test:{site.port}/")).content.endswith(
        "internal")
    assert (await fetch(by_network, f"http://other.test:{site.port}/")).content.endswith(
        "internal")
    with pytest.raises(ToolError, match="loopback"):
        await fetch(by_name, f"http://other.test:{site.port}/")
    assert site.requests[0].headers["host"] == f"intranet.test:{site.port}"


async def test_dns_rebinding_resolves_once_and_connects_to_the_checked_address(
        site, monkeypatch):
    # first answer allowed (127.0.0.1), any later one internal: only the first is used
    asked = resolver(monkeypatch, ["127.0.0.1"], ["10.0.0.1"])
    site.page("/a", "", status=302, headers={"Location": "/b"})
    site.page("/b", "<p>final</p>")
    out = await fetch(local(), f"http://rebind.test:{site.port}/a")
    assert out.content.endswith("final") and asked == ["rebind.test"]
    assert [r.headers["host"] for r in site.requests] == [f"rebind.test:{site.port}"] * 2


async def test_public_first_answer_is_pinned_for_the_connection(site, monkeypatch):
    asked = resolver(monkeypatch, ["93.184.216.34"], ["127.0.0.1"])
    dialled: list[tuple[str, int, str | None]] = []
    real = web_fetch.open_connection

    async def dial(address: str, port: int, *, tls: Any, server_hostname: str | None):
        dialled.append((address, port, server_hostname))
        return await real("127.0.0.1", site.port, tls=tls, server_hostname=server_hostname)

    monkeypatch.setattr(web_fetch, "open_connection", dial)
    site.page("/", "<p>public</p>")
    out = await fetch(WebFetchTool(), "http://rebind.example/")
    assert out.content.endswith("public")
    assert asked == ["rebind.example"] and dialled == [("93.184.216.34", 80, "rebind.example")]
    assert site.requests[0].headers["host"] == "rebind.example"


async def test_https_connects_to_the_pinned_address_but_verifies_the_host_name(
        tmp_path, monkeypatch):
    cert, key = self_signed(tmp_path, "pinned.test")
    server_tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_tls.load_cert_chain(cert, key)
    served = Site()
    served.page("/", "<p>secret page</p>")
    server = await asyncio.start_server(served._serve, "127.0.0.1", 0, ssl=server_tls)
    port = server.sockets[0].getsockname()[1]
    try:
        resolver(monkeypatch, ["127.0.0.1"])
        client_tls = ssl.create_default_context(cafile=str(cert))
        tool = WebFetchTool(private_hosts=["127.0.0.1"], tls=client_tls)
        out = await fetch(tool, f"https://pinned.test:{port}/")
        assert out.content.endswith("secret page")
        with pytest.raises(ToolError, match=r"TLS with other\.test failed"):
            await fetch(tool, f"https://other.test:{port}/")  # the cert is not for it
    finally:
        server.close()


def self_signed(folder: Path, name: str) -> tuple[Path, Path]:
    """A certificate for `name` and its key, as PEM files."""
    pytest.importorskip("cryptography")
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


# --- redirects ----------------------------------------------------------------------------


async def test_same_host_redirects_are_followed(site):
    site.page("/old", "", status=301, headers={"Location": f"{site.url}/mid"})
    site.page("/mid", "", status=307, headers={"Location": "/new?x=1"})
    site.page("/new", "<p>arrived</p>")
    out = await fetch(local(), f"{site.url}/old")
    assert out.content.startswith(f"URL: {site.url}/new?x=1\nRedirected from: {site.url}/old")
    assert out.content.endswith("arrived")
    assert [r.path for r in site.requests] == ["/old", "/mid", "/new?x=1"]


@pytest.mark.parametrize("target", ["http://localhost:{port}/x", "http://127.0.0.2:{port}/x",
                                    "http://127.0.0.1:1/x", "https://127.0.0.1:{port}/x",
                                    "ftp://127.0.0.1/x"])
async def test_redirect_to_another_host_is_reported_not_followed(site, target):
    location = target.format(port=site.port)
    site.page("/go", "", status=302, headers={"Location": location})
    out = await fetch(local(), f"{site.url}/go")
    assert out.content.startswith(f"REDIRECT: {site.url}/go answered HTTP 302")
    assert f"url={location!r}" in out.content and not out.is_error
    assert len(site.requests) == 1


async def test_redirect_loop_stops(site):
    site.page("/loop", "", status=302, headers={"Location": "/loop"})
    with pytest.raises(ToolError, match="too many redirects"):
        await fetch(local(max_redirects=3), f"{site.url}/loop")
    assert len(site.requests) == 4


def test_http_to_https_on_the_same_host_counts_as_the_same_host():
    same = web_fetch._same_host
    assert same("http://example.com/a", "https://example.com/b")
    assert same("http://example.com:80/a", "https://EXAMPLE.com./b")
    assert not same("https://example.com/a", "http://example.com/b")
    assert not same("http://example.com:8080/a", "https://example.com/b")
    assert not same("http://example.com/a", "http://www.example.com/b")


# --- declaration and permissions ----------------------------------------------------------


def test_declaration_reach_and_always_allow():
    tool = WebFetchTool()
    assert tool.kind == "network"
    assert tool.reach({"url": "https://Docs.Example.com/x"}).url == "https://Docs.Example.com/x"
    assert tool.always_allow({"url": "https://Docs.Example.com./x"}) == (
        "WebFetch(domain:docs.example.com)")
    assert tool.always_allow({"url": "https://exa*mple.com/"}) == "WebFetch(no valid host)"


async def decide(tmp_path: Path, url: str, **options: Any) -> str:
    asked: list[str] = []

    async def can_use_tool(name: str, tool_input: dict[str, Any], context: Any) -> Any:
        from fuxi_notebook import PermissionResultDeny

        asked.append(name)
        return PermissionResultDeny(message="no")

    tools = web_tools(lambda: (None, "m"), lambda model, usage: None)  # type: ignore[arg-type]
    engine = PermissionEngine(FuxiAgentOptions(**options), cwd=tmp_path, tools=tools)
    engine.can_use_tool = can_use_tool
    decision = await engine.decide("WebFetch", {"url": url}, "toolu_1")
    return "ask" if asked else decision.behavior


async def test_domain_rule_allows_its_host_and_asks_for_others(tmp_path):
    rule = {"allowed_tools": ["WebFetch(domain:example.com)"]}
    assert await decide(tmp_path, "https://example.com/page", **rule) == "allow"
    assert await decide(tmp_path, "https://EXAMPLE.com./page", **rule) == "allow"
    assert await decide(tmp_path, "https://other.com/page", **rule) == "ask"
    assert await decide(tmp_path, "https://www.example.com/", **rule) == "ask"
    assert await decide(tmp_path, "https://example.com/", permission_mode="acceptEdits") == "ask"
    assert await decide(tmp_path, "https://example.com/",
                        disallowed_tools=["WebFetch(domain:example.com)"],
                        allowed_tools=["WebFetch"]) == "deny"


async def test_always_allow_suggestion_names_the_host(tmp_path):
    engine = PermissionEngine(FuxiAgentOptions(), cwd=tmp_path, tools=[WebFetchTool()])
    (update,) = engine.suggestions("WebFetch", {"url": "https://docs.python.org/3/"})
    assert [str(rule) for rule in update.rules or []] == ["WebFetch(domain:docs.python.org)"]
    assert engine.suggestions("WebFetch", {"url": "https://exa*mple.com/"}) == []


async def test_body_shorter_than_announced_says_so(site):
    async def short(req: Request, reader: Any, writer: asyncio.StreamWriter) -> None:
        await send(writer, 200, {"Content-Type": "text/plain", "Content-Length": "100"},
                   b"only this")

    site.routes["/short"] = short
    out = await fetch(local(), f"{site.url}/short")
    assert "Size: 9 bytes read of 100 bytes announced (the server sent less)" in out.content
    assert out.content.endswith("only this")
