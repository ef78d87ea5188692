"""WebFetch's address check: IPv4 addresses carried inside IPv6 ones (IPv4-mapped, 6to4,
Teredo, NAT64) are judged by what they carry, directly and through the tool, and an
allowance for one network does not let another through inside the same address."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from fuxi_notebook._internal.tools.base import ToolContext, ToolError
from fuxi_notebook._internal.tools.web import fetch as web_fetch
from fuxi_notebook._internal.tools.web.address import AddressPolicy, address_problem
from fuxi_notebook._internal.tools.web.fetch_tool import WebFetchTool

V4 = ipaddress.IPv4Address
V6 = ipaddress.IPv6Address
PUBLIC = V4("93.184.216.34")
LOOPBACK = "a loopback address"
LINK_LOCAL = "a link-local address (cloud metadata services live here)"
PRIVATE = "a private address"
CGNAT = "a shared (carrier-grade NAT) address"


def mapped(v4: V4) -> V6:
    return V6((0xFFFF << 32) | int(v4))


def sixtofour(v4: V4) -> V6:
    return V6((0x2002 << 112) | (int(v4) << 80))


def teredo(server: V4, client: V4) -> V6:
    """2001:0::/32, the server in bits 32-63, the client inverted in the last 32 bits."""
    return V6((0x20010000 << 96) | (int(server) << 64) | (int(client) ^ 0xFFFFFFFF))


def nat64(v4: V4) -> V6:
    return V6(int(V6("64:ff9b::")) | int(v4))


def nat64_local(v4: V4) -> V6:
    return V6(int(V6("64:ff9b:1::")) | int(v4))


def compatible(v4: V4) -> V6:
    return V6(int(v4))


def test_the_wrappings_are_built_as_the_rfcs_say():
    """The helpers themselves, against the standard library and literal addresses."""
    lo, meta = V4("127.0.0.1"), V4("169.254.169.254")
    assert sixtofour(lo) == V6("2002:7f00:1::") and sixtofour(lo).sixtofour == lo
    assert nat64(meta) == V6("64:ff9b::a9fe:a9fe")
    assert nat64_local(lo) == V6("64:ff9b:1::7f00:1")
    assert mapped(lo) == V6("::ffff:127.0.0.1") and compatible(meta) == V6("::a9fe:a9fe")
    assert teredo(PUBLIC, lo).teredo == (PUBLIC, lo)
    assert teredo(lo, PUBLIC) == V6("2001:0:7f00:1::a247:27dd")


def embedded(problem: str, v4: V4, address: V6) -> str:
    return f"{problem} ({v4} embedded in {address})"


LO, META, TEN, SHARED = (V4(a) for a in ("127.0.0.1", "169.254.169.254", "10.0.0.1",
                                         "100.64.0.1"))

#: (address, the IPv4 address it carries whose problem is reported, that problem)
CARRIED = [
    (V6("2002:7f00:0001::"), LO, LOOPBACK),
    (V6("2002:a9fe:a9fe::"), META, LINK_LOCAL),
    (sixtofour(TEN), TEN, PRIVATE),
    (sixtofour(SHARED), SHARED, CGNAT),
    (teredo(LO, PUBLIC), LO, LOOPBACK),
    (teredo(PUBLIC, LO), LO, LOOPBACK),
    (teredo(META, PUBLIC), META, LINK_LOCAL),
    (teredo(PUBLIC, META), META, LINK_LOCAL),
    (teredo(TEN, PUBLIC), TEN, PRIVATE),
    (teredo(PUBLIC, V4("192.168.1.1")), V4("192.168.1.1"), PRIVATE),
    (teredo(PUBLIC, SHARED), SHARED, CGNAT),
    (V6("64:ff9b::7f00:1"), LO, LOOPBACK),
    (V6("64:ff9b::a9fe:a9fe"), META, LINK_LOCAL),
    (nat64(TEN), TEN, PRIVATE),
    (nat64(SHARED), SHARED, CGNAT),
    (V6("::ffff:127.0.0.1"), LO, LOOPBACK),
    (V6("::ffff:a9fe:a9fe"), META, LINK_LOCAL),
    (mapped(SHARED), SHARED, CGNAT),
]

#: forms not unwrapped but refused all the same (::/8 is reserved)
OTHER_FORMS = [nat64_local(a) for a in (LO, META, TEN, SHARED)] + [
    V6("::127.0.0.1"), V6("::a9fe:a9fe"), compatible(TEN), compatible(SHARED)]


@pytest.mark.parametrize(("address", "v4", "problem"), CARRIED, ids=str)
def test_the_carried_address_is_what_is_refused(address, v4, problem):
    assert address_problem(address) == embedded(problem, v4, address)


@pytest.mark.parametrize("address", OTHER_FORMS, ids=str)
def test_local_use_nat64_and_ipv4_compatible_forms_are_refused(address):
    assert address_problem(address) is not None
    assert AddressPolicy().refusal(str(address), address) is not None


@pytest.mark.parametrize(("address", "v4", "problem"), CARRIED, ids=str)
async def test_webfetch_refuses_a_wrapped_literal_without_connecting(address, v4, problem,
                                                                    monkeypatch):
    dialled: list[tuple[str, int]] = []
    resolved: list[str] = []

    async def dial(address: str, port: int, **kw: object) -> None:
        dialled.append((address, port))
        raise AssertionError("no connection may be made")

    async def resolve(host: str, port: int) -> list[str]:
        resolved.append(host)
        return [str(PUBLIC)]

    monkeypatch.setattr(web_fetch, "open_connection", dial)
    monkeypatch.setattr(web_fetch, "resolve_host", resolve)
    with pytest.raises(ToolError) as raised:
        await WebFetchTool().run({"url": f"http://[{address}]/latest/meta-data/"},
                                 ToolContext(cwd=Path.cwd()))
    assert f"{address} is {embedded(problem, v4, address)}; WebFetch only" in str(raised.value)
    assert dialled == [] and resolved == []


@pytest.mark.parametrize(("address", "v4"), [
    (V6("::ffff:10.0.0.1"), TEN), (sixtofour(TEN), TEN), (nat64(TEN), TEN),
    (teredo(TEN, PUBLIC), TEN), (teredo(PUBLIC, TEN), TEN)], ids=str)
def test_an_allowed_network_covers_the_address_it_carries(address, v4):
    assert AddressPolicy.from_entries(["10.0.0.0/8"]).refusal("intranet.test", address) is None
    assert AddressPolicy.from_entries(["192.168.0.0/16"]).refusal(
        "intranet.test", address) == (f"intranet.test ({address}) is "
                                      f"{embedded(PRIVATE, v4, address)}; WebFetch only "
                                      "contacts public internet addresses unless the session "
                                      "allows the host (web_fetch_private_hosts)")


@pytest.mark.parametrize(("server", "client", "bad", "problem"), [
    (TEN, META, META, LINK_LOCAL), (TEN, LO, LO, LOOPBACK),
    (META, TEN, META, LINK_LOCAL), (SHARED, TEN, SHARED, CGNAT)], ids=str)
def test_an_allowed_teredo_server_does_not_let_its_client_through(server, client, bad,
                                                                  problem):
    """Packets to a Teredo address go to its client: allowing one of the two addresses it
    carries says nothing about the other (a bug: any allowed one let the address pass)."""
    address = teredo(server, client)
    refusal = AddressPolicy.from_entries(["10.0.0.0/8"]).refusal(str(address), address)
    assert refusal is not None and refusal.startswith(
        f"{address} is {embedded(problem, bad, address)};")


def test_a_host_allowed_by_name_passes_whatever_it_carries():
    address = teredo(LO, META)
    assert AddressPolicy.from_entries(["intranet.test"]).refusal("intranet.test", address) is None


# --- property: a refused IPv4 address is refused in every IPv6 wrapping ------------------

_SPECIAL = ["0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
            "172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24", "192.168.0.0/16",
            "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4",
            "240.0.0.0/4"]
refused_v4 = st.one_of(
    *(st.ip_addresses(network=n) for n in _SPECIAL),
    st.ip_addresses(v=4)).filter(lambda a: address_problem(a) is not None)

UNWRAPPED = {"mapped": mapped, "6to4": sixtofour, "NAT64": nat64,
             "Teredo server": lambda v4: teredo(v4, PUBLIC),
             "Teredo client": lambda v4: teredo(PUBLIC, v4)}


@settings(max_examples=300, deadline=None, derandomize=True)
@given(refused_v4)
@example(V4("127.0.0.1"))
@example(V4("169.254.169.254"))
@example(V4("10.0.0.1"))
@example(V4("172.16.5.4"))
@example(V4("192.168.1.1"))
@example(V4("100.64.0.1"))
@example(V4("0.0.0.0"))
@example(V4("255.255.255.255"))
def test_every_wrapping_of_a_refused_ipv4_address_is_refused(v4):
    problem = address_problem(v4)
    assert problem is not None
    for kind, wrap in UNWRAPPED.items():
        address = wrap(v4)
        assert address_problem(address) == embedded(problem, v4, address), kind
        assert AddressPolicy().refusal(str(address), address) is not None, kind
        # ...and allowing exactly that IPv4 address lets each of these wrappings through
        assert AddressPolicy.from_entries([str(v4)]).refusal(str(address), address) is None
    for address in (nat64_local(v4), compatible(v4)):
        assert address_problem(address) is not None, address
        assert AddressPolicy().refusal(str(address), address) is not None, address
