"""The control API fuzzed with raw requests: any bytes, broken and truncated JSON, JSON of every type,
texts and bodies at and over the limits (2000 characters, 64 KiB), deep nesting, huge numbers, texts
that are not valid Unicode, any content type, and odd ``Authorization`` headers.

Every answer is 200, 400, 401, 413 or 503; every error is a JSON ``{"error": "..."}``; the daemon is
asked (``submit``) only for a well-formed ``{"text": ...}`` with the right token, and gets exactly that
text; ``/health`` still answers after each request.

The server is real, on a free port, with the daemon's side replaced by fake hooks that answer as the
daemon does (a Reply to the text submitted). Each test function starts one server in one event loop
(``asyncio.Runner``), made by a function-scoped fixture: hypothesis calls the test once per example,
and the server and the client must live in the loop that made them.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
from hypothesis import HealthCheck, assume, currently_in_test_context, event, example, given, settings
from hypothesis import strategies as st

from homeassist.api.server import MAX_BODY, MAX_TEXT, ControlAPI
from homeassist.errors import QueueFullError
from homeassist.messages import Intent, Reply
from tests.api.test_server import TOKEN, FakeDaemon
from tests.conftest import free_port

#: The bound on every client call.
BOUND_S = 5.0
GOOD = {"Authorization": f"Bearer {TOKEN}"}
ERRORS = {400, 401, 413, 503}
SHARED_SERVER = [
    # The fixture's server is shared by every example of a test on purpose (one per test function);
    # each example forgets what the fake daemon was asked before it sends its request.
    HealthCheck.function_scoped_fixture,
]


def answered(text: str) -> Reply:
    """What the daemon answers: a Reply to exactly the text it was given."""
    return Reply(text="Done.", request=text, intent=Intent(kind="general", confidence=0.5), path="model")


# --- the server in its own event loop ---------------------------------------------------------------


class Served:
    """The server's client and fake daemon, and the loop they live in. (Not a dataclass: hypothesis
    prints a failing example's arguments, and this repr stays one line.)"""

    def __init__(self, runner: asyncio.Runner, daemon: FakeDaemon, client: httpx.AsyncClient) -> None:
        self.runner = runner
        self.daemon = daemon
        self.client = client

    def __repr__(self) -> str:
        return f"Served({self.client.base_url})"

    def post(
        self, path: str, body: bytes, headers: dict[str, str | bytes], *, chunked: bool = False
    ) -> httpx.Response:
        """``POST path`` with ``body`` as it is (in 4 KiB pieces, without a length, when ``chunked``)."""
        self.daemon.submitted.clear()
        self.daemon.mutes.clear()

        async def pieces() -> AsyncIterator[bytes]:
            for start in range(0, len(body), 4096):
                yield body[start : start + 4096]

        # As bytes: httpx sends them as they are (a str value must be ASCII).
        raw = {
            name.encode(): value if isinstance(value, bytes) else value.encode()
            for name, value in headers.items()
        }
        request = self.client.post(path, content=pieces() if chunked else body, headers=raw)
        return self.runner.run(asyncio.wait_for(request, BOUND_S))

    def assert_healthy(self) -> None:
        health = self.runner.run(asyncio.wait_for(self.client.get("/health"), BOUND_S))
        assert health.status_code == 200, health.text
        assert health.json()["status"] == "ok"


async def _start(daemon: FakeDaemon) -> tuple[ControlAPI, httpx.AsyncClient]:
    port = free_port()
    api = ControlAPI(daemon.hooks(), host="127.0.0.1", port=port, request_timeout_s=BOUND_S)
    await asyncio.wait_for(api.start(), BOUND_S)
    client = httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=BOUND_S, trust_env=False)
    return api, client


async def _stop(api: ControlAPI, client: httpx.AsyncClient) -> None:
    await client.aclose()
    await asyncio.wait_for(api.stop(), BOUND_S)


@pytest.fixture
def served() -> Iterator[Served]:
    daemon = FakeDaemon()
    daemon.answer = lambda future: future.set_result(answered(daemon.submitted[-1]))
    with asyncio.Runner() as runner:
        api, client = runner.run(_start(daemon))
        try:
            yield Served(runner, daemon, client)
        finally:
            runner.run(_stop(api, client))


# --- what every answer must be ----------------------------------------------------------------------


def valid_unicode(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate, from a "\ud800" escape
        return False
    return True


def expected(body: bytes) -> tuple[set[int], str | None]:
    """The statuses allowed for an authorized ``POST /ask`` of ``body``, and the text the daemon must be
    asked (None: nothing), from the API's contract."""
    if len(body) > MAX_BODY:
        return {413}, None
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):  # not JSON, not UTF-8/16/32, or more than Python can read
        return {400}, None
    text = data.get("text") if isinstance(data, dict) else None
    if not isinstance(text, str) or not text.strip():
        return {400}, None
    if len(text) > MAX_TEXT:
        return {413}, None
    if not valid_unicode(text):
        # Not text at all: refusing it is right, and so is answering it (if the answer can be sent).
        return {200, 400}, text
    return {200}, text


def assert_answer(served: Served, response: httpx.Response, statuses: set[int], text: str | None) -> None:
    """The status is one of ``statuses``, an error is JSON, and the daemon was asked exactly when the
    answer is 200 (or 503, when its queue was full)."""
    assert response.status_code in statuses, f"{response.status_code} {response.text[:200]!r}"
    if response.status_code in ERRORS:
        assert response.headers["Content-Type"].startswith("application/json"), response.headers
        error = response.json()
        assert set(error) == {"error"} and isinstance(error["error"], str) and error["error"], error
    if response.status_code == 401:
        assert response.headers["WWW-Authenticate"] == "Bearer"
    if response.status_code in (200, 503):
        assert text is not None
        assert served.daemon.submitted == [text]
    else:
        assert served.daemon.submitted == []
    if response.status_code == 200:
        assert text is not None
        assert response.json() == answered(text).to_public()
    served.assert_healthy()
    if currently_in_test_context():
        event(f"status {response.status_code}")  # shown with --hypothesis-show-statistics


# --- bodies -----------------------------------------------------------------------------------------

CONTENT_TYPES = (
    None,
    "application/json",
    "application/json; charset=utf-8",
    "application/json; charset=latin-1",
    "text/plain",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=xyz",
    "application/octet-stream",
    "*/*",
    "garbage",
)
content_types = st.sampled_from(CONTENT_TYPES)

json_leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),  # NaN and infinities too: Python writes and reads them
    st.text(),
)
json_values = st.recursive(
    json_leaves,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=10), inner, max_size=5),
    max_leaves=20,
)
texts = st.one_of(
    st.text(),
    st.text(alphabet=st.sampled_from(" \t\n\r\x0b\x0c\x1c\x85\xa0\u2028\u3000\u200b\ufeff")),
    st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=30),
)
ask_objects = st.one_of(
    st.fixed_dictionaries({"text": st.text(min_size=1)}),
    st.fixed_dictionaries({"text": json_values}),
    st.fixed_dictionaries({"text": texts}),
    st.fixed_dictionaries({"text": texts}, optional={"extra": json_values, "TEXT": texts, "": json_values}),
    st.dictionaries(st.text(max_size=6), json_values, max_size=4),
)


def encoded(value: object, ascii_only: bool, encoding: str) -> bytes:
    """``value`` as JSON in ``encoding`` (latin-1 with "?" for what it cannot hold: not UTF-8)."""
    return json.dumps(value, ensure_ascii=ascii_only).encode(encoding, "replace")


json_bodies = st.builds(
    encoded,
    st.one_of(json_values, ask_objects, ask_objects),
    st.booleans(),
    st.sampled_from(["utf-8", "utf-8", "utf-8", "utf-16", "utf-32-le", "latin-1"]),
)


def _truncate(body: bytes, at: int) -> bytes:
    return body[: at % (len(body) + 1)]


broken_bodies = st.one_of(
    st.binary(max_size=300),
    st.builds(_truncate, json_bodies, st.integers(min_value=0)),
    st.sampled_from([b"", b"{", b'{"text"', b'{"text":', b'{"text": "', b'{"text": "on"', b"\xef\xbb\xbf"]),
    st.builds(lambda raw: b'{"text": "' + raw + b'"}', st.binary(max_size=40)),
)


@settings(max_examples=200, deadline=None, suppress_health_check=SHARED_SERVER)
@given(
    body=st.one_of(json_bodies, json_bodies, broken_bodies),
    content_type=content_types,
    # Now and then the daemon's queue is full (503).
    full=st.integers(min_value=0, max_value=9).map(lambda n: n == 0),
)
def test_any_body_gets_a_known_status_and_only_a_valid_text_is_asked(
    served: Served, body: bytes, content_type: str | None, full: bool
) -> None:
    headers: dict[str, str | bytes] = dict(GOOD)
    if content_type is not None:
        headers["Content-Type"] = content_type
    served.daemon.refuse = (
        QueueFullError("32 requests are already waiting ([api] queue_size)", 7) if full else None
    )
    statuses, text = expected(body)
    if full and 200 in statuses:
        statuses = (statuses - {200}) | {503}
    response = served.post("/ask", body, headers)
    assert_answer(served, response, statuses, text)
    if response.status_code == 503:
        assert response.headers["Retry-After"] == "7"


# --- at and over the limits -------------------------------------------------------------------------

#: One character of each UTF-8 length, and one that JSON escapes as a surrogate pair.
WIDE = ("a", " ", "é", "€", "\U0001d11e", "\x00", '"')


def text_body(char: str, length: int, ascii_only: bool) -> bytes:
    return json.dumps({"text": char * length}, ensure_ascii=ascii_only).encode()


@settings(max_examples=80, deadline=None, suppress_health_check=SHARED_SERVER)
@given(
    char=st.sampled_from(WIDE),
    length=st.one_of(
        st.integers(min_value=MAX_TEXT - 3, max_value=MAX_TEXT + 3),
        st.integers(min_value=1, max_value=MAX_BODY),
    ),
    # Spaces after the object, to make the body this many bytes: just under, at and just over 64 KiB.
    size=st.one_of(st.none(), st.integers(min_value=MAX_BODY - 4, max_value=MAX_BODY + 4)),
    ascii_only=st.booleans(),
    chunked=st.booleans(),
)
def test_texts_and_bodies_at_the_limits(
    served: Served, char: str, length: int, size: int | None, ascii_only: bool, chunked: bool
) -> None:
    body = text_body(char, length, ascii_only)
    if size is not None:
        body += b" " * max(0, size - len(body))
    statuses, text = expected(body)
    response = served.post("/ask", body, {**GOOD, "Content-Type": "application/json"}, chunked=chunked)
    assert_answer(served, response, statuses, text)


# --- what Python's JSON reader cannot take ----------------------------------------------------------


def nested(depth: int, shape: str) -> bytes:
    """``{"text": "hi", "x": <depth levels of shape>}``: valid JSON, nested ``depth`` deep."""
    opening, closing = {"list": (b"[", b"]"), "object": (b'{"a":', b"}"), "both": (b'[{"a":', b"}]")}[shape]
    return b'{"text": "hi", "x": ' + opening * depth + b"1" + closing * depth + b"}"


#: How deep to nest. Between about 1,000 and 3,000 levels whether Python's reader gives up depends on
#: how deep the stack already is (hypothesis raises the recursion limit while it runs some examples),
#: so those depths would make flaky examples; these are always well inside or well beyond it.
depths = st.one_of(st.integers(min_value=1, max_value=500), st.integers(min_value=5000, max_value=12_000))


@settings(max_examples=40, deadline=None, suppress_health_check=SHARED_SERVER)
@example(depth=5000, shape="list")
@given(depth=depths, shape=st.sampled_from(["list", "object", "both"]))
def test_deeply_nested_json_gets_a_known_status(served: Served, depth: int, shape: str) -> None:
    body = nested(depth, shape)
    statuses, text = expected(body)
    if depth > 100 and len(body) <= MAX_BODY:
        # Valid JSON, but a server may set a limit on nesting (Python's reader stops near 1,000 levels).
        statuses, text = {200, 400}, "hi"
    response = served.post("/ask", body, {**GOOD, "Content-Type": "application/json"})
    assert_answer(served, response, statuses, text)


NUMBER_FORMS = ("{}", "-{}", "{}.5", "0.{}", "1e{}", '{{"text": "hi", "n": {}}}', '{{"text": {}}}')


@settings(max_examples=40, deadline=None, suppress_health_check=SHARED_SERVER)
@example(digits=4301, form='{{"text": "hi", "n": {}}}')
@given(digits=st.integers(min_value=1, max_value=20_000), form=st.sampled_from(NUMBER_FORMS))
def test_numbers_of_any_length_get_a_known_status(served: Served, digits: int, form: str) -> None:
    body = form.format("9" * digits).encode()
    statuses, text = expected(body)
    if text is None and body.startswith(b'{"text": "hi"'):
        # Valid JSON with more digits than Python reads by default (4300): refusing it is right, and
        # so is answering.
        statuses, text = {200, 400}, "hi"
    response = served.post("/ask", body, {**GOOD, "Content-Type": "application/json"})
    assert_answer(served, response, statuses, text)


@settings(max_examples=30, deadline=None, suppress_health_check=SHARED_SERVER)
@given(
    before=st.text(max_size=5),
    surrogate=st.integers(min_value=0xD800, max_value=0xDFFF),
    after=st.text(max_size=5),
)
def test_a_text_that_is_not_unicode_is_refused_or_answered(
    served: Served, before: str, surrogate: int, after: str
) -> None:
    body = (
        '{"text": ' + json.dumps(before)[:-1] + f"\\u{surrogate:04x}" + json.dumps(after)[1:] + "}"
    ).encode()
    statuses, text = expected(body)
    assume(text is not None)
    response = served.post("/ask", body, {**GOOD, "Content-Type": "application/json"})
    assert_answer(served, response, statuses, text)


# --- the token --------------------------------------------------------------------------------------


def might_be_right(header: bytes) -> bool:
    """Whether a header is ``Bearer <token>`` after all (as the contract reads: any case, spaces)."""
    scheme, _, credentials = header.strip(b" \t").partition(b" ")
    return scheme.lower() == b"bearer" and credentials.strip(b" \t") == TOKEN.encode()


#: The bytes of a header value (RFC 9110: visible ASCII, obs-text, space and tab inside). Other control
#: characters are refused by aiohttp's HTTP parser itself (a plain-text 400, before any handler).
FIELD_BYTES = bytes([9, *range(0x20, 0x7F), *range(0x80, 0x100)])


def field_value(raw: bytes) -> bytes:
    """``raw`` as a header value can be sent: only field bytes, no space or tab at either end."""
    return bytes(b for b in raw if b in FIELD_BYTES).strip(b" \t")


header_bytes = st.binary(max_size=60)
WRONG = (
    "",
    "Bearer",
    f"Basic {TOKEN}",
    TOKEN,
    f"Token {TOKEN}",
    f"Bearer {TOKEN}x",
    f"Bearer {TOKEN[:-1]}",
    f"Bearer {TOKEN.lower()}",
    f"Bearer {TOKEN} {TOKEN}",
    f"Bearer\t{TOKEN}",
    f"Bearer {TOKEN}\u00e9",
    f"Bearer \u00e9{TOKEN}",
)
RIGHT = (f"Bearer {TOKEN}", f"bearer {TOKEN}", f"BEARER {TOKEN}", f"Bearer  {TOKEN}")
odd_headers = st.one_of(
    st.sampled_from(WRONG).map(str.encode),
    header_bytes,
    header_bytes.map(lambda raw: b"Bearer " + raw),
    header_bytes.map(lambda raw: f"Bearer {TOKEN}".encode() + raw),
    header_bytes.map(lambda raw: raw + f" {TOKEN}".encode()),
).map(field_value)


@settings(max_examples=150, deadline=None, suppress_health_check=SHARED_SERVER)
@example(header=b"Bearer \xff", path="/ask")
@given(header=st.one_of(st.none(), odd_headers), path=st.sampled_from(["/ask", "/mute", "/unmute"]))
def test_a_wrong_or_odd_authorization_is_401(served: Served, header: bytes | None, path: str) -> None:
    assume(header is None or not might_be_right(header))
    headers: dict[str, str | bytes] = {} if header is None else {"Authorization": header}
    response = served.post(path, b'{"text": "unlock the front door"}', headers)
    assert_answer(served, response, {401}, None)
    assert served.daemon.mutes == []


@pytest.mark.parametrize("header", RIGHT)
def test_the_right_token_in_any_spelling_is_accepted(served: Served, header: str) -> None:
    response = served.post("/ask", b'{"text": "unlock the front door"}', {"Authorization": header})
    assert_answer(served, response, {200}, "unlock the front door")
