"""Where the platform's outgoing webhooks may go: public addresses only (issue 30).

Whoever may register a webhook endpoint chooses where the platform's workers send requests, and
reads each attempt's answer in the delivery log: pointed at 127.0.0.1, a private network or a cloud
metadata address, that is a port scanner inside the platform's network. So a URL is refused when its
host is, or resolves to, an address that is not public: loopback, private, link-local, shared,
multicast, reserved or unspecified, and IPv6 addresses that carry such an IPv4 address (mapped,
6to4, NAT64, Teredo). It is checked twice:

- when the endpoint is registered (the admin's form, the API: `url_problem`), with a message that
  names the problem;
- when each attempt connects (`public_connection`, used by the opener below): the name is resolved
  again, every address checked, and the socket connects to a checked address itself, so a name that
  resolved to a public address at registration and to 127.0.0.1 now (DNS rebinding) is refused,
  without a second lookup between the check and the connection. Nothing is sent to a refused
  address; the attempt records only that it was refused, never an answer.

WEBHOOK_ALLOW_PRIVATE_ADDRESSES=true lifts the address check, for development and tests against a
receiver on this machine. Proxies from the environment are not used: a proxy would connect in our
place to an address we could not check.
"""

import http.client
import ipaddress
import socket
import urllib.request
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError

from annotation.refusals import Refused

SETTING = "WEBHOOK_ALLOW_PRIVATE_ADDRESSES"
SCHEMES = ("http", "https")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


class AddressRefused(Refused, OSError):
    """The host is, or resolves to, an address the platform does not send to."""


def address_kind(address: str) -> str | None:
    """Why an IP address is not public ("a loopback address", ...), or None for a public one."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])  # an IPv6 address may carry a zone: fe80::1%eth0
    for candidate in (*_embedded_ipv4(ip), ip):  # ::ffff:127.0.0.1 is loopback more than it is reserved
        kind = _kind(candidate)
        if kind:
            return kind
    return None


def _embedded_ipv4(ip) -> list[ipaddress.IPv4Address]:
    # An IPv6 address that a gateway turns into an IPv4 one reaches whatever that IPv4 address does.
    if ip.version == 4:
        return []
    found = [ip.ipv4_mapped, ip.sixtofour, ip.teredo[1] if ip.teredo else None]
    if ip in _NAT64:
        found.append(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
    return [address for address in found if address is not None]


def _kind(ip) -> str | None:
    named = [
        ("a loopback address", ip.is_loopback),
        ("a link-local address", ip.is_link_local),
        ("an unspecified address", ip.is_unspecified),
        ("a multicast address", ip.is_multicast),  # Python counts 224.0.0.0/4 as global
        ("a reserved address", ip.is_reserved),
        ("a private address", ip.is_private),
    ]
    for name, applies in named:
        if applies:
            return name
    return None if ip.is_global else "not a public address"  # e.g. 100.64.0.0/10, shared by carriers


def checked_addresses(host: str, port: int) -> list[tuple]:
    """getaddrinfo's answers for host:port, refused (AddressRefused) if any is not public: a name
    with one public and one private address would let the connection pick the private one."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    if getattr(settings, SETTING):
        return infos
    for info in infos:
        kind = address_kind(info[4][0])
        if kind:
            # A name's address is not repeated: the internal network's names are none of the sender's business.
            where = f"{host} is {kind}" if _is_ip(host) else f"{host} resolves to {kind}"
            raise AddressRefused(
                f"{where}; webhooks go to public addresses only ({SETTING}=true allows others, for development)"
            )
    return infos


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False
    return True


def url_problem(url: str) -> str | None:
    """Why an endpoint URL may not be registered, or None: its scheme, its host, the addresses the
    host resolves to now."""
    parts = urlsplit(url)
    if parts.scheme not in SCHEMES:
        return "must be an http:// or https:// URL"
    if not parts.hostname:
        return "names no host"
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return "has a port that is not a number from 0 to 65535"
    try:
        checked_addresses(parts.hostname, port)
    except AddressRefused as refusal:
        return str(refusal)
    except (socket.gaierror, UnicodeError) as error:
        return f"{parts.hostname} does not resolve ({getattr(error, 'strerror', None) or error})"
    return None


def validate_public_url(url: str) -> None:
    """The endpoint URL check as a Django validator (the admin's form and the API's serializer)."""
    problem = url_problem(url)
    if problem:
        raise ValidationError(f"{url} {problem}" if problem.startswith(("must", "names", "has")) else problem)


def public_connection(address, timeout=socket._GLOBAL_DEFAULT_TIMEOUT, source_address=None) -> socket.socket:
    """socket.create_connection that connects only to addresses checked_addresses passed, by
    address: the check and the connection see the same resolution."""
    host, port = address[0], address[1]
    error = None
    for family, kind, proto, _name, sockaddr in checked_addresses(host, port):
        sock = socket.socket(family, kind, proto)
        try:
            if timeout is not socket._GLOBAL_DEFAULT_TIMEOUT:
                sock.settimeout(timeout)
            if source_address:
                sock.bind(source_address)
            sock.connect(sockaddr)
            return sock
        except OSError as failed:
            sock.close()
            error = failed
    raise error or OSError(f"{host}: no address to connect to")


class _PublicHTTPConnection(http.client.HTTPConnection):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._create_connection = public_connection


class _PublicHTTPSConnection(http.client.HTTPSConnection):
    # TLS still verifies the certificate for the URL's host name (server_hostname is self.host).
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._create_connection = public_connection


class _PublicHTTPHandler(urllib.request.HTTPHandler):
    def http_open(self, req):
        return self.do_open(_PublicHTTPConnection, req)


class _PublicHTTPSHandler(urllib.request.HTTPSHandler):
    def https_open(self, req):
        return self.do_open(_PublicHTTPSConnection, req, context=self._context)


def public_opener(*handlers) -> urllib.request.OpenerDirector:
    """A urllib opener whose http and https connections go to checked addresses only, with no
    proxy; `handlers` are added (e.g. one that follows no redirect)."""
    return urllib.request.build_opener(
        urllib.request.ProxyHandler({}), _PublicHTTPHandler, _PublicHTTPSHandler, *handlers
    )
