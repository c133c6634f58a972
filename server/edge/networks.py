"""Which client addresses may read ``/metrics`` (``--metrics-allow``, contract section 14): a
list of networks, loopback by default. The address is the peer's, as for every limit: behind
a proxy it is the proxy's."""

from __future__ import annotations

import functools
import ipaddress
from collections.abc import Iterable

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
LOOPBACK = ("127.0.0.0/8", "::1/128")


def parse_networks(texts: Iterable[str]) -> tuple[Network, ...]:
    """Each text an address (``10.0.0.7``, ``::1``) or a network (``10.0.0.0/8``; host bits
    may be set); a :class:`ValueError` naming the first that is neither."""
    networks = []
    for text in texts:
        try:
            networks.append(ipaddress.ip_network(text.strip(), strict=False))
        except ValueError:
            raise ValueError(f"{text!r} is not an address or a network such as "
                             "10.0.0.0/8") from None
    return tuple(networks)


class AddressAllow:
    """Whether a client address is in one of the networks (each address's answer kept:
    Prometheus scrapes from the same few addresses)."""

    def __init__(self, networks: Iterable[Network]) -> None:
        self.networks = tuple(networks)
        self.allows = functools.lru_cache(maxsize=1024)(self._allows)

    def _allows(self, address: str) -> bool:
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:  # no address (a Unix socket), or one we cannot read
            return False
        # An IPv4 client of a dual-stack socket shows as ::ffff:a.b.c.d.
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        return any(ip in net for net in self.networks)


class AddressKeys:
    """The unit of every per-address rule (contract sections 15 and 16): a client's address
    as those rules count it. An IPv4 address stands for itself (an IPv4-mapped IPv6 one too);
    an IPv6 address for its /64, which one subscriber usually holds whole; and an address in
    a network the operator vouches for (``--shared-address-ok``, a school's NAT) for one
    connection only, so that the rules count each connection there as its own address."""

    def __init__(self, shared_ok: Iterable[Network] = ()) -> None:
        self.shared_ok = AddressAllow(shared_ok)
        self.key_of = functools.lru_cache(maxsize=4096)(self._key_of)

    def key(self, peer: str, connection: int) -> str:
        """``peer``'s key; ``connection`` (any number unique among open connections, such as
        ``id()`` of the connection) tells one vouched-for connection from another."""
        key, shared = self.key_of(peer)
        return f"{key}#{connection}" if shared else key

    def _key_of(self, peer: str) -> tuple[str, bool]:
        try:
            ip = ipaddress.ip_address(peer)
        except ValueError:  # no address (a Unix socket): all such clients are one
            return peer, False
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        if isinstance(ip, ipaddress.IPv6Address):
            text = str(ipaddress.IPv6Network((ip, 64), strict=False))
        else:
            text = str(ip)
        return text, bool(self.shared_ok.networks) and self.shared_ok.allows(str(ip))
