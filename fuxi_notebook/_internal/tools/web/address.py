"""Which hosts and addresses WebFetch may contact.

A fetch contacts public internet addresses only: loopback, private, link-local (the
cloud metadata service at 169.254.169.254), carrier-grade NAT, multicast, reserved and
unspecified addresses are refused, also when carried inside an IPv6 address (mapped,
6to4, Teredo, NAT64), unless the session names the host or network explicitly. That
allowance is a constructor argument, never an environment variable: the model can set
environment variables through Bash.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

__all__ = ["AddressPolicy", "address_problem", "url_host", "valid_host"]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

_CGNAT = ipaddress.ip_network("100.64.0.0/10")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_HOST_NAME = re.compile(r"[a-z0-9_-]+(?:\.[a-z0-9_-]+)*")


def url_host(url: str) -> str | None:
    """The host as the permission rules see it: lower-case IDNA, no trailing dot (the same
    normalisation as `permissions.facts.normalise_host`, so the host judged is the host
    contacted)."""
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return None
    if not host:
        return None
    host = host.rstrip(".").lower()
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return host


def valid_host(host: str) -> bool:
    """A host name of letters, digits, `-` and `_` in dot-separated labels, or an IP
    address: nothing that could smuggle a header or widen an `Always allow` rule (`*`)."""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return _HOST_NAME.fullmatch(host) is not None
    return True


def _unwrapped(address: IPAddress) -> list[IPAddress]:
    """The IPv4 addresses an IPv6 address carries (mapped, 6to4, Teredo, NAT64)."""
    if not isinstance(address, ipaddress.IPv6Address):
        return []
    inner: list[IPAddress] = []
    if address.ipv4_mapped is not None:
        inner.append(address.ipv4_mapped)
    if address.sixtofour is not None:
        inner.append(address.sixtofour)
    if address.teredo is not None:
        inner.extend(address.teredo)
    if address in _NAT64:
        inner.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    return inner


def address_problem(address: IPAddress) -> str | None:
    """Why `address` is not a public internet address (None if it is)."""
    for inner in _unwrapped(address):
        problem = address_problem(inner)
        if problem:
            return f"{problem} ({inner} embedded in {address})"
    checks: list[tuple[bool, str]] = [
        (address.is_loopback, "a loopback address"),
        (address.is_link_local, "a link-local address (cloud metadata services live here)"),
        (address.is_unspecified, "the unspecified address"),
        (address.is_multicast, "a multicast address"),
        (isinstance(address, ipaddress.IPv4Address) and address in _CGNAT,
         "a shared (carrier-grade NAT) address"),
        (address.is_private, "a private address"),
        (address.is_reserved, "a reserved address"),
        (isinstance(address, ipaddress.IPv6Address) and address.is_site_local,
         "a site-local address"),
        (not address.is_global, "not a public internet address"),
    ]
    return next((why for bad, why in checks if bad), None)


@dataclass(frozen=True)
class AddressPolicy:
    """Which non-public addresses may be contacted anyway: host names (every address they
    resolve to) and IP networks, given explicitly by whoever configured the session."""

    hosts: frozenset[str] = frozenset()
    networks: tuple[IPNetwork, ...] = ()

    @classmethod
    def from_entries(cls, entries: Iterable[str]) -> AddressPolicy:
        """Entries are host names, IP addresses or CIDR networks (`10.0.0.0/8`)."""
        hosts: set[str] = set()
        networks: list[IPNetwork] = []
        for entry in entries:
            if not isinstance(entry, str) or not entry.strip():
                raise ValueError(f"a private host entry must be a host name, an IP address "
                                 f"or a CIDR network, not {entry!r}")
            text = entry.strip().strip("[]")
            try:
                networks.append(ipaddress.ip_network(text, strict=False))
            except ValueError:
                hosts.add(text.rstrip(".").lower())
        return cls(frozenset(hosts), tuple(networks))

    def refusal(self, host: str, address: IPAddress) -> str | None:
        """Why `host` at `address` may not be contacted (None: it may)."""
        if host in self.hosts:
            return None
        problem = self._problem(address)
        if problem is None:
            return None
        shown = host if host == str(address) else f"{host} ({address})"
        return (f"{shown} is {problem}; WebFetch only contacts public internet addresses "
                "unless the session allows the host (web_fetch_private_hosts)")

    def _allowed(self, address: IPAddress) -> bool:
        return any(address.version == n.version and address in n for n in self.networks)

    def _problem(self, address: IPAddress) -> str | None:
        """`address_problem`, except what an allowed network covers. An IPv6 address that
        carries IPv4 addresses passes when one of them is allowed and every other one is
        allowed or public: a Teredo address whose server is allowed still carries its
        client, and the packets go to the client."""
        if self._allowed(address):
            return None
        inner = _unwrapped(address)
        for embedded in inner:
            problem = None if self._allowed(embedded) else address_problem(embedded)
            if problem:
                return f"{problem} ({embedded} embedded in {address})"
        if any(self._allowed(embedded) for embedded in inner):
            return None
        return address_problem(address)
