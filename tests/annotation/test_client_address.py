"""The client a sign-in is counted under: the TCP peer, an X-Forwarded-For address only from a proxy the admin
named, and one shared client for every address that may have come from the request's own header.

The two-process tests (a real server, forged headers) are in tests/cli/test_app_trusted_proxy.py.
"""

from __future__ import annotations

import pytest

from sentret_core.annotation.client_address import (
    LOCAL,
    SERVER_TRUST_ENV,
    TRUSTED_PROXY_ENV,
    UNVERIFIED,
    AddressPolicy,
    parse_trusted,
    server_environment,
    throttle_client,
)
from sentret_core.errors import SentretError

SENTRET_APP = AddressPolicy.from_environment(server_environment(()))  # `sentret app` with no --trusted-proxy
BARE_STREAMLIT = AddressPolicy.from_environment({})  # `streamlit run app.py`: uvicorn trusts loopback


def named(*proxies: str) -> AddressPolicy:
    return AddressPolicy.from_environment(server_environment(parse_trusted(proxies)))


def test_the_trusted_list_takes_addresses_and_networks_repeated_or_comma_separated() -> None:
    assert [str(n) for n in parse_trusted(["127.0.0.1", "10.0.0.0/8, ::1", "10.0.0.0/8"])] == [
        "127.0.0.1/32", "10.0.0.0/8", "::1/128"]
    assert server_environment(parse_trusted(["127.0.0.1,10.1.2.3/8"])) == {
        TRUSTED_PROXY_ENV: "127.0.0.1,10.0.0.0/8", SERVER_TRUST_ENV: "127.0.0.1,10.0.0.0/8"}
    assert server_environment(()) == {TRUSTED_PROXY_ENV: "", SERVER_TRUST_ENV: ""}  # uvicorn then trusts nobody
    for bad in ("*", "proxy.example", "10.0.0.300", "1.2.3.4/40"):
        with pytest.raises(SentretError, match=r"--trusted-proxy .*not an IP address or network"):
            parse_trusted([bad])


def test_without_named_proxies_a_forged_header_gives_no_fresh_client() -> None:
    # sentret app (uvicorn told to trust nobody): what the server reports is the peer itself
    clients = {throttle_client(None, [f"203.0.113.{n}"], SENTRET_APP) for n in range(20)}
    assert clients == {LOCAL}  # 20 guesses through a local tunnel, each with a new forged address: one client
    assert throttle_client("192.0.2.7", ["203.0.113.9"], SENTRET_APP) == "192.0.2.7"
    # a server that trusts loopback without sentret knowing (bare streamlit run): uvicorn may have put the
    # header's address in place of the peer, so every such address counts as one client
    forged = {throttle_client(f"203.0.113.{n}", [f"203.0.113.{n}"], BARE_STREAMLIT) for n in range(20)}
    assert forged == {UNVERIFIED}
    assert throttle_client(None, ["127.0.0.1"], BARE_STREAMLIT) == UNVERIFIED  # a forged loopback too
    assert throttle_client("192.0.2.7", ["203.0.113.9"], BARE_STREAMLIT) == "192.0.2.7"  # the header was not used
    assert throttle_client("192.0.2.7", [], BARE_STREAMLIT) == "192.0.2.7"  # no header: the peer


def test_a_named_proxy_is_believed() -> None:
    policy = named("127.0.0.1")
    assert {throttle_client(f"203.0.113.{n}", [f"203.0.113.{n}"], policy) for n in range(3)} == {
        "203.0.113.0", "203.0.113.1", "203.0.113.2"}
    assert throttle_client("::ffff:203.0.113.5", ["203.0.113.5:4000"], policy) == "203.0.113.5"
    assert throttle_client("::1", [], policy) == LOCAL
    # the server told to trust more than sentret was (10.0.0.0/8 against 10.0.0.5): not believed
    wider = AddressPolicy.from_environment({TRUSTED_PROXY_ENV: "10.0.0.5", SERVER_TRUST_ENV: "10.0.0.0/8"})
    assert not wider.server_within_trusted
    assert throttle_client("203.0.113.1", ["203.0.113.1"], wider) == UNVERIFIED
    assert not AddressPolicy.from_environment({TRUSTED_PROXY_ENV: "", SERVER_TRUST_ENV: "*"}).server_within_trusted
    garbled = AddressPolicy.from_environment({TRUSTED_PROXY_ENV: "nonsense", SERVER_TRUST_ENV: "nonsense"})
    assert throttle_client("203.0.113.1", ["203.0.113.1"], garbled) == UNVERIFIED


def test_the_installed_streamlit_leaves_uvicorns_trust_to_its_environment_variable() -> None:
    """What the design rests on: Streamlit passes uvicorn no forwarded_allow_ips (nor proxy_headers), so
    uvicorn reads $FORWARDED_ALLOW_IPS. An upgrade that changes this fails here, not in a deployment."""
    from streamlit.web.server.starlette.starlette_server import _get_uvicorn_config_kwargs
    from uvicorn.config import Config

    kwargs = _get_uvicorn_config_kwargs()
    assert "forwarded_allow_ips" not in kwargs and "proxy_headers" not in kwargs
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(SERVER_TRUST_ENV, "")
        assert Config(app=None).forwarded_allow_ips == ""  # type: ignore[arg-type]
