"""How the upstream clients reach the network: the proxy, the hosts that bypass it, the CA certificates.

:func:`client_options` turns ``[network]`` (:class:`NetworkSettings`) into the keyword
arguments of :class:`httpx.Client` for one upstream base URL:

* proxy: ``network.proxy``, else (``network.trust_env``) the environment's ``HTTPS_PROXY`` /
  ``HTTP_PROXY`` / ``ALL_PROXY`` for the URL's scheme (read by :func:`urllib.request.getproxies`,
  upper or lower case); none when the host is listed in ``NO_PROXY`` (environment) or
  ``network.no_proxy`` (:func:`bypasses_proxy`, curl's rules);
* certificates: ``network.ca_bundle`` (a PEM file, or a directory of hashed certificates), else
  (``trust_env``) ``SSL_CERT_FILE``, ``REQUESTS_CA_BUNDLE`` (what ``requests`` users and conda
  environments already export) or ``SSL_CERT_DIR``, else certifi's bundle (httpx's default).
* a SOCKS proxy (``socks5://``, ``socks5h://``) needs the ``syncd[socks]`` extra (httpx's SOCKS
  support, ``socksio``); without it every request is refused as ``invalid_config`` naming the
  variable or setting that set the proxy and the extra (:func:`socks_check`), never sent direct.

httpx's own environment handling is switched off (``trust_env=False``) so that these rules are the
only ones: a host in ``network.no_proxy`` is reached directly even when ``HTTPS_PROXY`` is set.

:func:`certificate_failure` tells a failed TLS certificate verification (an intercepting proxy, a
missing CA, a wrong clock) from other connection failures, so that the error names it.
"""

from __future__ import annotations

import ipaddress
import os
import ssl
import traceback
import urllib.request
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

import certifi
from pydantic import BaseModel, Field

from syncd.errors import InvalidInput

__all__ = [
    "CERTIFICATE_HINT",
    "CONFIG_HINT",
    "PROXY_HINT",
    "SOCKS_EXTRA",
    "NetworkSettings",
    "bypasses_proxy",
    "certificate_failure",
    "client_options",
    "masked",
    "proxy_for",
    "proxy_origin",
    "socks_check",
    "ssl_verify",
]


class NetworkSettings(BaseModel):
    """How syncd reaches the upstreams: proxies and the certificate authorities TLS is checked against."""

    proxy: str | None = Field(
        None,
        description="Proxy URL for every upstream request (http://proxy.lab.example:3128, with "
        "user:password@ if needed); hosts in NO_PROXY and no_proxy are reached directly. Unset: "
        "HTTPS_PROXY / HTTP_PROXY / ALL_PROXY from the environment when trust_env is true.",
    )
    no_proxy: list[str] = Field(
        default_factory=list,
        description='Hosts reached without the proxy, as NO_PROXY spells them: "example.org" (and its '
        'subdomains), ".example.org" (subdomains only), "192.0.2.0/24", "*" (every host). Added to NO_PROXY.',
    )
    ca_bundle: str | None = Field(
        None,
        description="PEM file (or directory of hashed certificates) of the certificate authorities upstream "
        "TLS certificates are checked against, e.g. an institution's intercepting-proxy CA; overrides "
        "SSL_CERT_FILE / REQUESTS_CA_BUNDLE / SSL_CERT_DIR.",
    )
    trust_env: bool = Field(
        True,
        description="Honour HTTPS_PROXY, HTTP_PROXY, ALL_PROXY, NO_PROXY, SSL_CERT_FILE, REQUESTS_CA_BUNDLE "
        "and SSL_CERT_DIR from the environment.",
    )


CERTIFICATE_HINT = (
    "The TLS certificate could not be verified. If a proxy or firewall of your network intercepts TLS, "
    "point SSL_CERT_FILE (or REQUESTS_CA_BUNDLE) or the network.ca_bundle setting "
    "(SYNCD_NETWORK__CA_BUNDLE) at its CA "
    "certificate (PEM); otherwise check the system clock and the installed CA certificates."
)
PROXY_HINT = (
    "The proxy refused or failed the request: check network.proxy (SYNCD_NETWORK__PROXY) or "
    "HTTPS_PROXY/HTTP_PROXY, its credentials, and NO_PROXY / network.no_proxy."
)


def masked(url: str | None) -> str:
    """``url`` with any ``user:password@`` replaced by ``***@`` (for logs and messages); ``-`` for None."""
    if not url:
        return "-"
    parts = urlsplit(url if "://" in url else f"http://{url}")
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://***@{host}{port}{parts.path}"


def bypasses_proxy(host: str, patterns: list[str]) -> bool:
    """Whether ``host`` is reached without the proxy under NO_PROXY-style ``patterns`` (curl's rules).

    ``*`` matches every host; ``example.org`` matches it and its subdomains; ``.example.org`` its
    subdomains (and, as curl does, itself); an IP address or CIDR block (``192.0.2.0/24``, ``::1``)
    matches addresses in it; a ``:port`` suffix on a pattern is ignored. Case-insensitive.
    """
    host = host.strip("[]").lower().rstrip(".")
    try:
        address: ipaddress.IPv4Address | ipaddress.IPv6Address | None = ipaddress.ip_address(host)
    except ValueError:
        address = None
    for raw in patterns:
        pattern = raw.strip().lower()
        if not pattern:
            continue
        if pattern == "*":
            return True
        if address is not None:
            try:
                if address in ipaddress.ip_network(pattern.strip("[]"), strict=False):
                    return True
            except ValueError:
                pass
            continue
        if pattern.count(":") == 1:  # name:port
            pattern = pattern.split(":", 1)[0]
        name = pattern.lstrip(".").rstrip(".")
        if name and (host == name or host.endswith("." + name)):
            return True
    return False


CONFIG_HINT = (
    "Fix the [network] setting named (syncd's config file or its SYNCD_NETWORK__* variable, or the "
    "environment variable named), then start syncd again; no request was sent."
)
"""The recovery hint of an ``invalid_config`` refusal of the network settings (a tool error's recovery)."""


def _ssl_context(network: NetworkSettings) -> ssl.SSLContext:
    """The certificates TLS is checked against (see the module docstring), as a verifying context.

    The context is loaded once per process for each CA source (:func:`_loaded_context`) and shared by
    every client built with it.

    Raises:
        InvalidInput: the CA file or directory cannot be read or holds no certificate (reason
            ``invalid_config``).
    """
    source, origin = None, ""
    if network.ca_bundle:
        source, origin = network.ca_bundle, "network.ca_bundle"
    elif network.trust_env and os.environ.get("SSL_CERT_FILE"):
        source, origin = os.environ["SSL_CERT_FILE"], "SSL_CERT_FILE"
    elif network.trust_env and os.environ.get("REQUESTS_CA_BUNDLE"):
        source, origin = os.environ["REQUESTS_CA_BUNDLE"], "REQUESTS_CA_BUNDLE"
    elif network.trust_env and os.environ.get("SSL_CERT_DIR"):
        source, origin = os.environ["SSL_CERT_DIR"], "SSL_CERT_DIR"
    if source is None:
        source, origin = certifi.where(), "certifi"
    path = os.path.expanduser(source)
    try:
        return _loaded_context(path, os.path.isdir(path), os.stat(path).st_mtime_ns)
    except (OSError, ssl.SSLError) as exc:
        raise InvalidInput(
            f"{origin} {source} cannot be used as CA certificates: {exc}",
            reason="invalid_config",
            hint=CONFIG_HINT,
        ) from exc


@lru_cache(maxsize=8)
def _loaded_context(path: str, is_dir: bool, mtime_ns: int) -> ssl.SSLContext:
    """A verifying TLS context of the CA certificates at ``path`` (a PEM file, or a hashed directory).

    Loaded once per process for each path and modification time (``mtime_ns``; a file replaced on
    disk is loaded again). Loading a CA bundle costs about 45 ms of CPU, and httpx given
    ``verify=True`` loads one for every client; a context may be shared by clients and threads.

    Raises:
        OSError, ssl.SSLError: the certificates cannot be read (not cached: the next call tries again).
    """
    return ssl.create_default_context(capath=path) if is_dir else ssl.create_default_context(cafile=path)


def proxy_for(network: NetworkSettings | None, base_url: str) -> str | None:
    """The proxy requests to ``base_url`` go through under ``network`` (see the module docstring), or None.

    Raises:
        InvalidInput: the proxy URL is not one httpx can use (reason ``invalid_config``; its password
            is not shown).
    """
    network = network or NetworkSettings()
    parts = urlsplit(base_url)
    proxy = network.proxy
    patterns = list(network.no_proxy)
    if network.trust_env:
        env = urllib.request.getproxies()
        if proxy is None:
            proxy = env.get(parts.scheme) or env.get("all")
        patterns += env.get("no", "").split(",")
    if not proxy or bypasses_proxy(parts.hostname or "", patterns):
        return None
    proxy = proxy if "://" in proxy else f"http://{proxy}"
    import httpx  # only where a proxy is set (syncd.lazy.LAZY)

    try:
        httpx.Proxy(proxy)
    except (ValueError, TypeError) as exc:
        raise InvalidInput(
            f"proxy {masked(proxy)} cannot be used: {exc}", reason="invalid_config", hint=CONFIG_HINT
        ) from exc
    return proxy


def proxy_origin(network: NetworkSettings | None, base_url: str) -> str:
    """The setting or environment variable the proxy of ``base_url`` comes from, for a message.

    ``network.proxy (SYNCD_NETWORK__PROXY)`` when set, else the first variable set of
    ``<SCHEME>_PROXY``, ``<scheme>_proxy``, ``ALL_PROXY``, ``all_proxy`` (as :func:`proxy_for` reads
    them); ``the environment`` when none is.
    """
    if network is not None and network.proxy:
        return "network.proxy (SYNCD_NETWORK__PROXY)"
    scheme = urlsplit(base_url).scheme or "https"
    for name in (f"{scheme.upper()}_PROXY", f"{scheme}_proxy", "ALL_PROXY", "all_proxy"):
        if os.environ.get(name):
            return name
    return "the environment"


SOCKS_EXTRA = "syncd[socks]"
"""The extra that installs SOCKS proxy support (httpx's ``socks`` extra: ``socksio``)."""


def socks_check(proxy: str | None, origin: str) -> None:
    """Refuse a SOCKS ``proxy`` when SOCKS support (``socksio``, the ``syncd[socks]`` extra) is missing.

    Args:
        proxy: the proxy URL requests go through (:func:`proxy_for`), or None.
        origin: where it was set (:func:`proxy_origin`), named in the message.

    Raises:
        InvalidInput: ``invalid_config``: a ``socks5://``/``socks5h://`` proxy without ``socksio``
            installed; the message names ``origin`` and the extra; nothing is sent (never direct).
    """
    if proxy is None or not urlsplit(proxy).scheme.lower().startswith("socks"):
        return
    try:
        import socksio  # noqa: F401  # only where a SOCKS proxy is set (syncd.lazy.LAZY)
    except ImportError:
        raise InvalidInput(
            f"{origin} names a SOCKS proxy ({masked(proxy)}), but SOCKS support is not installed: "
            f"pip install '{SOCKS_EXTRA}', or unset {origin.split(' ', 1)[0]}",
            reason="invalid_config",
            hint=f"Install SOCKS support with pip install '{SOCKS_EXTRA}' (or point {origin} at an HTTP "
            "proxy, or add the upstream hosts to NO_PROXY); no request was sent.",
            setting=origin.split(" ", 1)[0],
            extra=SOCKS_EXTRA,
        ) from None


def ssl_verify(network: NetworkSettings | None) -> ssl.SSLContext:
    """What TLS certificates are checked against under ``network``: a verifying context.

    The context is shared by the process's clients; certifi's bundle when nothing else is named (as
    httpx's default).

    Raises:
        InvalidInput: the CA file or directory cannot be read or holds no certificate (reason
            ``invalid_config``).
    """
    return _ssl_context(network or NetworkSettings())


def client_options(network: NetworkSettings | None, base_url: str) -> dict[str, Any]:
    """Keyword arguments of :class:`httpx.Client` for ``base_url`` under ``network``: proxy, verify.

    httpx's own reading of the environment is off (``trust_env=False``): :func:`proxy_for` and
    :func:`ssl_verify` apply the same variables, with the settings over them.

    Raises:
        InvalidInput: the proxy URL is not one httpx can use, or the CA certificates cannot be read
            (reason ``invalid_config``).
    """
    return {"proxy": proxy_for(network, base_url), "verify": ssl_verify(network), "trust_env": False}


def certificate_failure(exc: BaseException) -> str | None:
    """What failed when ``exc`` (or an exception it was raised from) is a TLS certificate verification.

    Returns OpenSSL's words (``unable to get local issuer certificate``, ``certificate has expired``,
    ``Hostname mismatch``...), or None when the failure is not a certificate's.
    """
    chain = "".join(traceback.format_exception(exc))  # the exception and those it was raised from
    for line in chain.splitlines():
        lowered = line.lower()
        if "certificate_verify_failed" not in lowered and "certificate verify failed" not in lowered:
            continue
        if "certificate verify failed:" in lowered:
            detail = line[lowered.index("certificate verify failed:") + len("certificate verify failed:") :]
            detail = detail.split("(_ssl.c", 1)[0].strip(" ()_")
            return detail or "certificate verify failed"
        return "certificate verify failed"
    return None
