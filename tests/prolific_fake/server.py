"""The fake's HTTP server: in-memory state, a route registry other modules add to, Prolific's
error shape, the rules every endpoint shares (rules.py: AUTH_HEADER, WRONG_METHOD, QUERY_PARAMETERS,
JSON_OBJECT), and faults a test can ask for (an answer of 429 or 5xx, a slow answer).

A module registers an endpoint with
`@route("POST", r"studies/(?P<id>[^/]+)/transition/", page=..., query=(...))`: the pattern is
matched against the path below /api/v1/, `page` is the documentation page the endpoint is built
from, and `query` the query parameters that page documents (any other is refused). The handler
gets (fake, request) and answers (status, body), or (status, body, headers), or raises
rules.RuleBroken. Every module of this package is imported when a fake starts, so a new one needs
no change here.
"""

import importlib
import itertools
import json
import pkgutil
import re
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from tests.prolific_fake import rules

PREFIX = "/api/v1/"
TOKEN = "fake-prolific-token"
_NOT_ROUTES = {"server", "rules", "fixtures"}


@dataclass(frozen=True)
class Endpoint:
    method: str
    pattern: re.Pattern
    handler: Callable
    page: str
    query: frozenset


_ENDPOINTS: list[Endpoint] = []


def route(method: str, pattern: str, *, page: str, query: tuple[str, ...] = ()):
    def register(handler):
        _ENDPOINTS.append(Endpoint(method, re.compile(f"^{pattern}$"), handler, page, frozenset(query)))
        return handler

    return register


@dataclass
class Request:
    method: str
    path: str  # below /api/v1/
    query: dict
    headers: dict
    raw: bytes
    params: dict = field(default_factory=dict)

    @property
    def body(self) -> dict:
        """The JSON object sent (JSON_OBJECT: every documented request body is an object)."""
        if not self.raw.strip():
            return {}
        try:
            parsed = json.loads(self.raw)
        except ValueError:
            raise rules.JSON_OBJECT.broken("JSON parse error.") from None
        if not isinstance(parsed, dict):
            raise rules.JSON_OBJECT.broken("This endpoint expects an object.")
        return parsed

    def query_value(self, name: str, default: str | None = None) -> str | None:
        return self.query.get(name, [default])[0]


@dataclass
class Fault:
    method: str
    pattern: re.Pattern
    status: int
    times: int
    headers: dict
    body: object
    after_handling: bool  # True: carry the call out, then answer with the fault (a lost answer)
    delay: float


class ProlificFake:
    def __init__(self):
        _load_route_modules()
        self.token = TOKEN
        self.lock = threading.RLock()
        self.calls: list[dict] = []
        self.faults: list[Fault] = []
        self.state: dict = {"studies": {}, "groups": {}, "group_members": {}, "filters": default_filters()}
        self._ids = itertools.count(1)
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self):
                fake.serve(self)

            do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _serve

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}{PREFIX}"

    # --- for tests ---------------------------------------------------------------------------

    def new_id(self) -> str:
        """An id shaped like Prolific's (24 hex digits)."""
        return f"{next(self._ids):08x}{secrets.token_hex(8)}"

    def fail(self, method, pattern, status, *, times=1, headers=None, body=None, after_handling=False, delay=0.0):
        """Answer the next `times` matching calls with `status` (429, 502, ...) instead."""
        self.faults.append(
            Fault(method, re.compile(f"^{pattern}$"), status, times, headers or {}, body, after_handling, delay)
        )

    def calls_to(self, method: str, pattern: str) -> list[dict]:
        matcher = re.compile(f"^{pattern}$")
        return [call for call in self.calls if call["method"] == method and matcher.match(call["path"])]

    def bodies(self, method: str, pattern: str) -> list:
        return [json.loads(call["raw"]) if call["raw"] else None for call in self.calls_to(method, pattern)]

    # --- serving -----------------------------------------------------------------------------

    def serve(self, handler: BaseHTTPRequestHandler) -> None:
        url = urlsplit(handler.path)
        raw = handler.rfile.read(int(handler.headers.get("Content-Length") or 0))
        path = url.path[len(PREFIX) :] if url.path.startswith(PREFIX) else url.path
        query = parse_qs(url.query, keep_blank_values=True)
        request = Request(handler.command, path, query, dict(handler.headers.items()), raw)
        with self.lock:
            self.calls.append(
                {
                    "method": request.method,
                    "path": path,
                    "query": query,
                    "auth": request.headers.get("Authorization"),
                    "raw": raw,
                }
            )
            fault = self._fault_for(request)
        if fault and fault.delay:
            time.sleep(fault.delay)
        if fault and not fault.after_handling:
            return _send(handler, fault.status, fault.body or _error(fault.status, "Fault", "injected"), fault.headers)
        status, body, *headers = self.answer(request)  # a handler may add headers: (status, body, headers)
        if fault:  # carried out, but the answer is lost on the way
            return _send(handler, fault.status, fault.body or _error(fault.status, "Fault", "injected"), fault.headers)
        _send(handler, status, body, headers[0] if headers else None)

    def answer(self, request: Request):
        if request.headers.get("Authorization") != f"Token {self.token}":
            return _refused(rules.AUTH_HEADER.broken("Invalid token."))
        matching = [endpoint for endpoint in _ENDPOINTS if endpoint.pattern.match(request.path)]
        if not matching:
            return 404, _error(404, "Not found", f"No route {request.path}")
        endpoint = next((e for e in matching if e.method == request.method), None)
        if endpoint is None:
            allowed = ", ".join(sorted({e.method for e in matching}))
            status, body = _refused(rules.WRONG_METHOD.broken(f'Method "{request.method}" not allowed.'))
            return status, body, {"Allow": allowed}
        unknown = sorted(set(request.query) - endpoint.query)
        if unknown:
            documented = ", ".join(sorted(endpoint.query)) or "none"
            return _refused(
                rules.QUERY_PARAMETERS.broken(
                    {
                        name: [f"Unknown query parameter (documented: {documented}; {endpoint.page})."]
                        for name in unknown
                    }
                )
            )
        request.params = endpoint.pattern.match(request.path).groupdict()
        try:
            with self.lock:
                return endpoint.handler(self, request)
        except rules.RuleBroken as broken:
            return _refused(broken)

    def _fault_for(self, request: Request) -> Fault | None:
        for fault in self.faults:
            if fault.times and fault.method == request.method and fault.pattern.match(request.path):
                fault.times -= 1
                return fault
        return None


def _refused(broken: rules.RuleBroken) -> tuple[int, dict]:
    return broken.status, _error(broken.status, broken.rule.name, broken.detail)


def _error(status: int, title: str, detail) -> dict:
    return {"error": {"status": status, "title": title, "detail": detail}}


def not_found(what: str) -> rules.RuleBroken:
    return rules.NOT_FOUND.broken(f"No {what} matches the given query.")


def known_fields(body: dict, allowed: set) -> None:
    """UNKNOWN_FIELDS: a field the endpoint's page does not document is refused."""
    unknown = sorted(set(body) - set(allowed))
    if unknown:
        raise rules.UNKNOWN_FIELDS.broken({name: ["Unknown field."] for name in unknown})


def _send(handler, status: int, body, headers: dict | None = None) -> None:
    payload = b"" if body is None else body.encode() if isinstance(body, str) else json.dumps(body).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "text/plain" if isinstance(body, str) else "application/json")
    handler.send_header("Content-Length", str(len(payload)))
    for name, value in (headers or {}).items():
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(payload)


def _load_route_modules() -> None:
    import tests.prolific_fake as package

    for module in pkgutil.iter_modules(package.__path__):
        if module.name not in _NOT_ROUTES:
            importlib.import_module(f"{package.__name__}.{module.name}")


def default_filters() -> list[dict]:
    """The screeners the fake knows, shaped as GET /filters/ lists them (a select filter's choices
    map an id to its label; a range filter has its bounds)."""
    languages = ["English", "German", "French", "Spanish", "Italian", "Dutch", "Mandarin", "Hindi", "Arabic"]
    language_choices = {str(n): name for n, name in enumerate(languages, start=1)}
    education = [
        "No formal qualifications",
        "Secondary education (e.g. GED/GCSE)",
        "High school diploma/A-levels",
        "Technical/community college",
        "Undergraduate degree (BA/BSc/other)",
        "Graduate degree (MA/MSc/MPhil/other)",
        "Doctorate degree (PhD/other)",
    ]
    yes_no = {"0": "Yes", "1": "No", "2": "Rather not say"}
    return [
        {"filter_id": "first-language", "title": "First language", "type": "select", "choices": language_choices},
        {"filter_id": "fluent-languages", "title": "Fluent languages", "type": "select", "choices": language_choices},
        {"filter_id": "approval_rate", "title": "Approval Rate", "type": "range", "min": 0, "max": 100},
        {
            "filter_id": "approval_numbers",
            "title": "Number of previous submissions",
            "type": "range",
            "min": 0,
            "max": 10000,
        },
        {
            "filter_id": "highest-education-level-completed",
            "title": "Highest education level completed",
            "type": "select",
            "choices": {str(n): label for n, label in enumerate(education)},
        },
        {"filter_id": "hearing-difficulties", "title": "Hearing difficulties", "type": "select", "choices": yes_no},
        {"filter_id": "literacy-difficulties", "title": "Literacy difficulties", "type": "select", "choices": yes_no},
        {
            "filter_id": "participant_group_blocklist",
            "title": "Participant group blocklist",
            "type": "select",
            "choices": "participant_groups",
        },
    ]
