"""What an endpoint's base URL may be: one every request can be built on, and not a link-local or cloud metadata
address unless the user says so; which base URLs a catalog may suggest; and which are servers the user runs.

Loopback and private ranges stay allowed (a local model server is the point). Link-local addresses are where
cloud metadata services answer with the machine's own credentials (169.254.169.254 on AWS, GCP, Azure and Oracle,
fd00:ec2::254, fd20:ce::254, Alibaba's 100.100.100.200, and their names), so a base URL there is refused unless
allowed explicitly, as other gateways came to do after their SSRF reports.
"""
from __future__ import annotations

import ipaddress
import socket
import time
from urllib.parse import urlsplit

from .providers.connecting import proxy_for

METADATA_ADDRESSES = {ipaddress.ip_address(a) for a in ("169.254.169.254", "100.100.100.200", "fd00:ec2::254",
                                                         "fd20:ce::254", "169.254.170.2", "169.254.169.253")}
METADATA_NAMES = {"metadata", "metadata.google.internal", "metadata.goog", "instance-data",
                  "instance-data.ec2.internal", "metadata.tencentyun.com", "metadata.platformequinix.com"}


def base_problem(value: str) -> str | None:
    """What keeps `value` from being a base URL every request can be built on, or None. Whitespace or a control
    character would end up in the request line (and the key sent anyway), and a host or port the URL parser takes
    but no connection can use would only fail at the first call."""
    if any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in value):
        return "it holds a space or a control character"
    try:
        split = urlsplit(value)
        port, host = split.port, split.hostname    # port raises unless 0-65535
    except ValueError as e:
        return str(e)
    if split.scheme not in ("http", "https") or split.username or split.password:
        return "it must start with http:// or https:// and hold no user name or password"
    if not host or len(host) > 253 or any(len(label) > 63 for label in host.split(".")):
        return "it names no usable host"
    if not host.isascii():   # the Host header and TLS name are ASCII: the name's xn-- form is what reaches it
        try:
            return f"its host name is not ASCII: give it as {host.encode('idna').decode()}"
        except UnicodeError:
            return "its host name cannot be encoded"
    if port == 0:
        return "port 0 is no server's port"
    return None


def literal_address(host: str):
    """The IP address a host names by itself, in any spelling a resolver takes (2852039166, 0xa9fea9fe,
    0251.0376.0251.0376, 169.254.43518 and ::ffff:169.254.169.254 are all 169.254.169.254), or None for a name."""
    host = host.strip("[]").split("%", 1)[0]
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        if not host or not all(c in "0123456789abcdefxABCDEFX." for c in host):
            return None
        try:
            ip = ipaddress.ip_address(socket.inet_aton(host))   # the legacy forms inet_aton (and connect) accept
        except (OSError, ValueError):
            return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    return ip


def reserved_address(ip) -> str | None:
    """What an address an endpoint may not have unasked is ("a cloud metadata address"), or None."""
    if ip in METADATA_ADDRESSES:
        return "a cloud metadata address"
    if ip.is_link_local:
        return "a link-local address, where cloud metadata services answer"
    return None


def link_local(value: str) -> str | None:
    """Why the base URL points at a link-local or cloud metadata address, by its host as written, or None."""
    try:
        host = (urlsplit(value).hostname or "").lower().rstrip(".")
    except ValueError:
        return None
    if host in METADATA_NAMES:
        return f"{host} is a cloud metadata service's name"
    ip = literal_address(host)
    why = reserved_address(ip) if ip is not None else None
    return f"{ip} is {why}" if why else None


def resolves_link_local(value: str) -> str | None:
    """Why the base URL's host name resolves to a link-local or cloud metadata address now, or None (a name that
    does not resolve is left for the first request to report)."""
    try:
        split = urlsplit(value)
        host, port = split.hostname, split.port
    except ValueError:
        return None
    if not host or literal_address(host) is not None:
        return None
    try:
        found = socket.getaddrinfo(host, port or 443, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return None
    for *_, address in found:
        ip = literal_address(str(address[0]))
        why = reserved_address(ip) if ip is not None else None
        if why:
            return f"{host} resolves to {ip}, {why}"
    return None


def suggestable(value: str | None) -> bool:
    """Whether a catalog's base URL may be offered to the user as it is: https, buildable, at a host name (not an
    address, not this machine), and not link-local. Anything else a catalog says is not offered at all."""
    if not isinstance(value, str) or not value.startswith("https://") or base_problem(value):
        return False
    host = (urlsplit(value).hostname or "").lower().rstrip(".")
    if literal_address(host) is not None or host == "localhost" or host.endswith(".localhost") or "." not in host:
        return False
    return link_local(value) is None


# ---- local servers --------------------------------------------------------------------------------------------

# Where a model server the user runs answers: loopback, the private ranges (RFC 1918, IPv6 unique-local) and the
# shared range (RFC 6598) that Tailscale and other overlay networks hand out; no provider's API answers there.
LOCAL_NETWORKS = tuple(ipaddress.ip_network(n) for n in ("127.0.0.0/8", "10.0.0.0/8", "172.16.0.0/12",
                                                          "192.168.0.0/16", "100.64.0.0/10", "::1/128", "fc00::/7"))
LOCAL_SUFFIXES = (".localhost", ".local")      # RFC 6761's loopback names and mDNS names on the local link
KNOWN_SECONDS = 600.0                          # a base URL's answer is worked out again after this long
_known: dict[str, tuple[bool, float]] = {}     # base URL -> (local, when): one dict read a seat, not a DNS lookup


def local_server(base_url: str, look_up: bool = True) -> bool | None:
    """Whether the base URL's server is one the user runs on this machine or network (Ollama, llama.cpp, LM Studio,
    vLLM): its host is, or resolves only to, loopback or private addresses. One reached through a proxy from the
    environment counts as remote: the proxy, not this machine, resolves its name; a name that does not resolve is
    remote too. The answer is remembered for KNOWN_SECONDS; `look_up` False: None rather than a wait for DNS when
    it is not known."""
    now = time.monotonic()
    known = _known.get(base_url)
    if known is not None and now - known[1] < KNOWN_SECONDS:
        return known[0]
    local = _local(base_url, look_up)
    if local is not None:
        _known[base_url] = (local, now)
    return local


def local_address(ip) -> bool:
    return any(ip in net for net in LOCAL_NETWORKS if net.version == ip.version)


def _local(base_url: str, look_up: bool) -> bool | None:
    try:
        split = urlsplit(base_url)
        host, port = (split.hostname or "").lower().rstrip("."), split.port
    except ValueError:
        return False
    if not host or proxy_for(split.scheme, host) is not None:
        return False
    ip = literal_address(host)
    if ip is not None:
        return local_address(ip)
    if host == "localhost" or host.endswith(LOCAL_SUFFIXES):
        return True
    if not look_up:
        return None
    try:
        found = socket.getaddrinfo(host, port or 443, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return False
    addresses = [literal_address(str(address[0])) for *_, address in found]
    return bool(addresses) and all(ip is not None and local_address(ip) for ip in addresses)
