"""HEALTHCHECK of the web container: exit 0 when the web server (granian) serves Django.

Requests /admin/login/ (it renders without touching the database) from the
server in this container. The Host header is taken from ALLOWED_HOSTS, so
Django neither rejects the request nor logs a DisallowedHost error for every
check. Redirects are not followed: any answer below 400 counts as healthy, so
a future HTTPS redirect does not turn the check red.

Standard library only; no curl in the slim image.
"""

import http.client
import os
import sys

PATH = "/admin/login/"


def check_host() -> str:
    hosts = [h.strip() for h in os.environ.get("ALLOWED_HOSTS", "").split(",") if h.strip()]
    for host in hosts:
        if host == "*":
            break
        # ".example.com" allows example.com and its subdomains.
        return host.lstrip(".")
    return "localhost"


def main() -> int:
    connection = http.client.HTTPConnection("127.0.0.1", 8000, timeout=4)
    try:
        connection.request("GET", PATH, headers={"Host": check_host()})
        status = connection.getresponse().status
    except OSError as error:
        print(f"unhealthy: {error}", file=sys.stderr)
        return 1
    finally:
        connection.close()
    if status >= 400:
        print(f"unhealthy: GET {PATH} answered {status}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
