"""`daemon.listen`: what parses as HOST:PORT, what is refused and why (issue 27)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrsync.core.listen import ListenAddress, parse_listen


@pytest.mark.parametrize(
    ("text", "host", "port", "ipv6"),
    [
        ("0.0.0.0:9464", "0.0.0.0", 9464, False),
        ("127.0.0.1:0", "127.0.0.1", 0, False),
        ("localhost:65535", "localhost", 65535, False),
        (
            "hrsync-0.hrsync.svc.cluster.local:9464",
            "hrsync-0.hrsync.svc.cluster.local",
            9464,
            False,
        ),
        ("[::]:9464", "::", 9464, True),
        ("[::1]:0", "::1", 0, True),
        ("[fe80::1%eth0]:9464", "fe80::1%eth0", 9464, True),
        ("[2001:db8::10]:80", "2001:db8::10", 80, True),
    ],
)
def test_host_and_port_are_read(text: str, host: str, port: int, ipv6: bool) -> None:
    address = parse_listen(text)
    assert address == ListenAddress(host, port, ipv6)
    assert str(address) == text  # shown as written


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("evil host:80", "spaces"),
        (" 0.0.0.0:9464", "spaces"),
        ("0.0.0.0", "no port"),
        ("0.0.0.0:", "port"),
        (":9464", "no host"),
        ("0.0.0.0:65536", "0 to 65535"),
        ("0.0.0.0:-1", "port"),
        ("0.0.0.0:94x4", "port"),
        ("0.0.0.0:0009464", "port"),
        ("::1:9464", "brackets"),
        ("::", "brackets"),
        ("[::1]", "no port"),
        ("[::1]9464", "no port"),
        ("[not-ipv6]:9464", "IPv6"),
        ("[127.0.0.1]:9464", "IPv6"),
        ("999.1.1.1:80", "IPv4"),
        ("host_name:80", "host"),
        ("-bad.example:80", "host"),
        ("a..b:80", "host"),
        ("http://0.0.0.0:9464", "not a URL"),
        ("0.0.0.0:9464/metrics", "not a URL"),
    ],
)
def test_what_is_refused_says_why(text: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        parse_listen(text)


@given(st.text(max_size=40))
def test_any_text_parses_or_is_refused_with_a_reason(text: str) -> None:
    try:
        address = parse_listen(text)
    except ValueError as exc:
        assert str(exc)
    else:
        assert 0 <= address.port <= 65535 and address.host
        assert parse_listen(str(address)) == address
