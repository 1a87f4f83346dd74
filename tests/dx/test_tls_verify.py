"""Which TLS verification the DX connection pool gets for a base URL."""

from __future__ import annotations

import ssl

import pytest

from hrsync.dx.transport import tls_verify_for


@pytest.mark.parametrize(
    "base_url", ["https://api.getdx.com", "HTTPS://example.test:8443/dx", "https://[::1]:9/"]
)
def test_https_keeps_httpx_default_verification(base_url: str) -> None:
    assert tls_verify_for(base_url) is True


@pytest.mark.parametrize("base_url", ["http://127.0.0.1:18765", "HTTP://localhost/dx/"])
def test_plain_http_gets_a_context_that_trusts_no_certificate(base_url: str) -> None:
    context = tls_verify_for(base_url)
    assert isinstance(context, ssl.SSLContext)
    # Still verifying: a TLS connection through it could never pass unchecked.
    assert context.verify_mode == ssl.CERT_REQUIRED
    assert context.check_hostname
    assert context.cert_store_stats()["x509_ca"] == 0
