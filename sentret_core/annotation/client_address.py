"""Which client a sign-in attempt comes from, for the throttle: the TCP peer, unless the admin named proxies.

Streamlit serves the app through uvicorn, whose proxy-headers middleware replaces the connection's peer with
the address an ``X-Forwarded-For`` header names when the peer is in uvicorn's ``forwarded_allow_ips``.
Streamlit (1.67) passes uvicorn no such list, so uvicorn takes it from ``$FORWARDED_ALLOW_IPS`` and
otherwise trusts 127.0.0.1 and ::1: through any local forwarder (an SSH tunnel, socat, ``kubectl
port-forward``) the header is whatever the request says, and every guess could claim a fresh address.
What Streamlit hands the app (``st.context.ip_address``) is the address after that replacement; the peer
itself is gone by then.

So the trust is set where uvicorn reads it: ``sentret app`` (and ``make run``) start the server with
``$FORWARDED_ALLOW_IPS`` set to the proxies the admin named (``--trusted-proxy``, ``[app] trusted-proxy``
in sentret.toml, ``$SENTRET_TRUSTED_PROXY``) and to nothing otherwise, and tell the app the same list in
``$SENTRET_TRUSTED_PROXY``. The app does not take that on faith: :func:`throttle_client` compares the
server's trust (read from the same variable uvicorn read, in the same process) with sentret's. When the
server trusts no proxy sentret was not told of, the address is the peer, or what a named proxy said.
When it trusts more (a server started some other way, e.g. a bare ``streamlit run``), an address that
also appears in the request's own ``X-Forwarded-For`` may have come from it, so every such attempt is
counted under one shared client, :data:`UNVERIFIED`: a forged header buys no fresh allowance.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from sentret_core.errors import SentretError

TRUSTED_PROXY_ENV = "SENTRET_TRUSTED_PROXY"  # sentret's list, comma-separated
SERVER_TRUST_ENV = "FORWARDED_ALLOW_IPS"  # uvicorn's, read when Streamlit passes it none
SERVER_DEFAULT_TRUST = "127.0.0.1,::1"  # uvicorn's default when that variable is unset
LOCAL = "local"  # a loopback peer (Streamlit reports none), or no connection at all
UNVERIFIED = "forwarded (unverified)"  # the one client every unverifiable forwarded address counts as

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_trusted(values: Iterable[str], what: str = "--trusted-proxy") -> tuple[Network, ...]:
    """The proxies named in ``values`` (each an address or a CIDR network, or several comma-separated);
    SentretError naming ``what`` and the entry for anything else (``*`` included: name the proxies)."""
    found: list[Network] = []
    for value in values:
        for entry in str(value).split(","):
            entry = entry.strip()
            if not entry:
                continue
            try:
                found.append(ipaddress.ip_network(entry, strict=False))
            except ValueError:
                raise SentretError(
                    f"{what} {entry!r}: not an IP address or network (e.g. 127.0.0.1, 10.0.0.0/8, ::1); "
                    "name each proxy that sets X-Forwarded-For"
                ) from None
    return tuple(dict.fromkeys(found))


def as_text(networks: Sequence[Network]) -> str:
    """The list as both variables hold it: comma-separated, a single address without its /32 or /128."""
    return ",".join(str(n.network_address) if n.num_addresses == 1 else str(n) for n in networks)


def server_environment(networks: Sequence[Network]) -> dict[str, str]:
    """The variables that start the server trusting exactly ``networks`` (none: the header is ignored)."""
    text = as_text(networks)
    return {TRUSTED_PROXY_ENV: text, SERVER_TRUST_ENV: text}


@dataclass(frozen=True)
class AddressPolicy:
    """sentret's trusted proxies, and whether the server trusts none beyond them."""

    trusted: tuple[Network, ...]
    server_within_trusted: bool

    @classmethod
    def from_environment(cls, environ: Mapping[str, str]) -> AddressPolicy:
        """The policy of the server process whose environment is ``environ``; a list that does not parse
        counts as none named."""
        try:
            trusted = parse_trusted([environ.get(TRUSTED_PROXY_ENV, "")], TRUSTED_PROXY_ENV)
        except SentretError:
            trusted = ()
        server = environ.get(SERVER_TRUST_ENV, SERVER_DEFAULT_TRUST)
        return cls(trusted, _within(server, trusted))


def _within(server: str, trusted: Sequence[Network]) -> bool:
    """Whether every entry of uvicorn's list ``server`` lies inside one of ``trusted``."""
    for entry in (part.strip() for part in server.split(",")):
        if not entry:
            continue  # uvicorn trusts no empty host
        try:
            network = ipaddress.ip_network(entry, strict=False)
        except ValueError:  # "*", or a literal uvicorn would compare as text
            return False
        if not any(network.version == t.version and network.subnet_of(t) for t in trusted):  # type: ignore[arg-type]
            return False
    return True


def normalised(address: object) -> str:
    """An address as the throttle counts it: the canonical IP text, loopback (and none) as :data:`LOCAL`."""
    if not isinstance(address, str) or not address.strip():
        return LOCAL
    text = address.strip()
    if text.startswith("[") and "]" in text:  # [v6]:port, as a header may hold it
        text = text[1:text.index("]")]
    elif text.count(":") == 1:  # v4:port
        text = text.split(":", 1)[0]
    try:
        ip = ipaddress.ip_address(text)
    except ValueError:
        return text[:100]
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return LOCAL if ip.is_loopback else str(ip)


def throttle_client(reported: object, forwarded_for: Sequence[str], policy: AddressPolicy) -> str:
    """The client a sign-in attempt is counted under: ``reported`` is the address the server gives the app
    (Streamlit's ``st.context.ip_address``, None for loopback), ``forwarded_for`` the request's
    ``X-Forwarded-For`` header values (see the module docstring)."""
    address = normalised(reported)
    named = {normalised(entry) for value in forwarded_for for entry in str(value).split(",") if entry.strip()}
    if not named or policy.server_within_trusted:
        return address  # the peer, or what a proxy sentret trusts said
    return UNVERIFIED if address in named else address
