"""The address policy of the web tools: which URLs and addresses a fetch may reach.

Two layers, both applied to every hop of a fetch:

* ``check_url`` — static checks on the URL itself (scheme, credentials, metadata host
  names, IP literals in any spelling the resolver would accept), no I/O;
* ``vet_host`` — resolves the host name and refuses if *any* resolved address is
  forbidden; the caller then connects to one of the returned, vetted addresses (pinning).

By default only globally routable unicast addresses pass. With ``allow_private`` set,
loopback, private and link-local ranges pass too, but cloud metadata endpoints,
unspecified and multicast addresses stay refused.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable
from urllib.parse import unquote

import httpx2

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# A resolver: host, port -> every address (as text) the name resolves to.
Resolver = Callable[[str, int], Awaitable[list[str]]]

ALLOWED_SCHEMES = frozenset({"http", "https"})

METADATA_HOSTNAMES = frozenset(
    {
        "metadata.google.internal",
        "metadata.goog",
        "metadata",
        "instance-data",
        "instance-data.ec2.internal",
    }
)
METADATA_ADDRESSES = frozenset(
    {
        ipaddress.ip_address("169.254.169.254"),  # AWS, GCP, Azure, OpenStack, ...
        ipaddress.ip_address("169.254.170.2"),  # AWS ECS task metadata
        ipaddress.ip_address("169.254.169.253"),  # AWS DNS resolver
        ipaddress.ip_address("100.100.100.200"),  # Alibaba Cloud
        ipaddress.ip_address("fd00:ec2::254"),  # AWS IMDS over IPv6
        ipaddress.ip_address("fd00:ec2::253"),
    }
)

_CGNAT = ipaddress.ip_network("100.64.0.0/10")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")


class BlockedURL(Exception):
    """The URL or one of its addresses is refused by the policy (no connection was made)."""


def parse_ip(text: str) -> IPAddress | None:
    """An IP literal in any form the system resolver accepts, or ``None`` for a name.

    Besides the canonical forms this catches the legacy ``inet_aton`` spellings that
    ``getaddrinfo`` honours: ``2130706433``, ``0x7f.1``, ``017700000001``, ``127.1``.
    """
    text = unquote(text).strip("[]")
    if "%" in text:  # IPv6 zone id: the scope does not change the policy
        text = text.split("%", 1)[0]
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        pass
    if text and all(c in "0123456789abcdefxABCDEFX." for c in text):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(text))
        except OSError:
            return None
    return None


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    if ip in _NAT64 or ip in _NAT64_LOCAL:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def address_problem(ip: IPAddress, *, allow_private: bool = False) -> str | None:
    """Why ``ip`` may not be contacted, or ``None`` when it may."""
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.scope_id:
            ip = ipaddress.IPv6Address(str(ip).split("%", 1)[0])
        inner = _embedded_ipv4(ip)
        if inner is not None:
            why = address_problem(inner, allow_private=allow_private)
            return f"{why} (embedded in {ip})" if why else None
    if ip in METADATA_ADDRESSES:
        return f"{ip} is a cloud metadata endpoint"
    if ip.is_unspecified:
        return f"{ip} is the unspecified address"
    if ip.is_multicast:
        return f"{ip} is a multicast address"
    if allow_private:
        return None
    if ip.is_loopback:
        return f"{ip} is a loopback address"
    if ip.is_link_local:
        return f"{ip} is a link-local address"
    if isinstance(ip, ipaddress.IPv4Address) and ip in _CGNAT:
        return f"{ip} is a carrier-grade NAT (shared) address"
    if ip.is_private:
        return f"{ip} is a private-network address"
    if ip.is_reserved:
        return f"{ip} is a reserved address"
    if not ip.is_global:
        return f"{ip} is not a globally routable address"
    return None


def _normal_host(host: str) -> str:
    return unquote(host).strip("[]").rstrip(".").lower()


def check_url(url: httpx2.URL, *, allow_private: bool = False) -> None:
    """Static checks of one URL (no I/O); raises :class:`BlockedURL`."""
    if url.scheme not in ALLOWED_SCHEMES:
        raise BlockedURL(f"scheme {url.scheme or '(none)'!r} is not allowed (only http and https)")
    if url.userinfo:
        raise BlockedURL("URLs with credentials (user:password@) are not allowed")
    host = _normal_host(url.host)
    if not host:
        raise BlockedURL("the URL has no host")
    if host in METADATA_HOSTNAMES:
        raise BlockedURL(f"{host} is a cloud metadata endpoint")
    if not allow_private and (host == "localhost" or host.endswith(".localhost")):
        raise BlockedURL(f"{host} is a loopback name")
    ip = parse_ip(host)
    if ip is not None:
        why = address_problem(ip, allow_private=allow_private)
        if why:
            raise BlockedURL(why)


async def system_resolve(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to, via the event loop's ``getaddrinfo``."""
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


async def vet_host(
    host: str,
    port: int,
    *,
    allow_private: bool = False,
    resolve: Resolver = system_resolve,
) -> str:
    """Resolve ``host`` and return the address to connect to; raises :class:`BlockedURL`.

    Every resolved address must pass (a name with one private record among public ones
    is refused), and each one is normalised through ``ipaddress`` first.
    """
    literal = parse_ip(host)
    if literal is not None:
        candidates = [str(literal)]
    else:
        try:
            candidates = await resolve(_normal_host(host), port)
        except (OSError, UnicodeError) as exc:
            raise BlockedURL(f"cannot resolve {host}: {exc}") from exc
    if not candidates:
        raise BlockedURL(f"{host} resolves to no address")
    vetted: list[str] = []
    for text in candidates:
        ip = parse_ip(text)
        if ip is None:
            raise BlockedURL(f"{host} resolved to an unparseable address {text!r}")
        why = address_problem(ip, allow_private=allow_private)
        if why:
            raise BlockedURL(f"{host} resolves to a forbidden address: {why}")
        vetted.append(str(ip.ipv4_mapped or ip) if isinstance(ip, ipaddress.IPv6Address) else str(ip))
    return vetted[0]
