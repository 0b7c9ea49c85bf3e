"""The HTTP API and a one-page web form.

- ``POST /check``: ``{"dialogues": [dialogue, ...]}`` or one dialogue (a body with both ``dialogues`` and a
  dialogue's ``turns`` or ``messages`` is a 422 naming both); returns ``{"verdicts": [...]}``
  with the same fields as ``dialcheck check --json``. ``"speaker": "assistant"`` (beside ``dialogues``, or in the
  one dialogue's object, or in a dialogue object of ``dialogues``, for that dialogue) checks each dialogue's last
  turn with text by that speaker, as ``--speaker`` does, and adds ``"turn"``. A bad dialogue gives status 422 and a
  message naming it and its field (``dialogues[1]: turns[0].text: expected a string, got int``).
- Without a model, each dialogue goes to the shipped default that :func:`dialcheck.route` names, as in
  ``dialcheck check``: one with a ``knowledge`` table to the task-oriented detector, any other to the
  English one (a Chinese dialogue without a shipped Chinese model is a 422 saying so). A dialogue in a script the
  model that answers was not trained on (a Korean one routed to the English default, Chinese turns given to an
  English ``--model``) is answered all the same, with a warning naming it and the script in the server's log and
  in the response's ``"warnings"`` (a list of strings, on /check and /rank; absent when there is nothing to say).
- ``POST /rank``: ``{"context": dialogue, "candidates": ["...", ...]}`` (optional ``"speaker"``: who says the
  reply; the context read as :meth:`Detector.rank <dialcheck.detectors.Detector.rank>` reads it, so it may be empty
  or end with a turn without text, such as an assistant's tool call); candidates
  least contradictory first, scored as one check job, so they merge with the /check requests waiting beside them.
  An empty (or blank) candidate is a 422 naming it (``candidates[2]: the candidate is empty: ...``), as an empty
  last turn is on /check: an empty reply says nothing to check, and scored it would rank above a contradiction.
- ``GET /health``: the model that answers, its thresholds (those in use), its runtime (``torch``, ``onnx``,
  ``-int8``; on int8 also ``int8_range``) and how many check requests were answered in how many model batches;
  answered at once, not behind the checks waiting for the model (a liveness probe's timeout is short).
- Every model call (loading a routed model included) goes through a :class:`ComputeThread`: by default one
  thread, so torch's OpenMP workers stay fast and /check requests that wait together are scored as one
  batch; ``dialcheck serve --onnx`` scores on the request threads instead (``workers=0``).
- ``GET /``: a small page to paste a dialogue and see the verdict, with the response's ``"warnings"`` above it
  (as plain text).
- A request body is read as UTF-8 JSON whatever its Content-Type; a body that is not (or is empty) is a 400, one
  over ``max_bytes`` (by default 8 bytes per ``max_chars`` character plus 1 MiB) a 413 before it is read, one whose
  client stops sending it short of its Content-Length a 408 after :data:`BODY_IDLE` seconds, one whose
  client hangs up before sending it all a 400 (no one reads it; the server logs one access line, no traceback), as is
  a check whose client hangs up while it waits for the compute thread: it is dropped from the queue unscored. Every
  error answers ``{"detail": "message"}``; a wrong method or path names the request and the routes
  (``GET /check: method not allowed, use POST (the API: ...)``).
- At shutdown, once the server has stopped waiting for its requests (``dialcheck serve --shutdown-timeout``), the
  app closes its :class:`ComputeThread` at once: a check still queued or being scored is given up on, so that
  shutting down does not wait for it, and its request is answered 503 with a JSON message (:data:`STOPPED`).
"""

# No `from __future__ import annotations` here: FastAPI reads the annotations of the functions defined in
# create_app (the body's `request: Request`) as objects, and Request is imported there, not at module level.

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable, Mapping
from concurrent.futures import Future
from typing import Any, TypeVar

from ..detectors import Detector
from ..detectors.base import candidate_dialogues, candidate_texts, ranked_candidates
from ..errors import DialcheckError, InputError, MissingDependencyError
from ..io import (
    THRESHOLD_KEYS,
    as_context,
    check_reply_speaker,
    check_speakers,
    json_type,
    parse_checked,
    upto_speaker,
)
from ..language import CHOOSE_SERVER, _is_cjk, check_chinese_last_turn
from ..schema import Dialogue, Turn
from .compute import ComputeClosed, ComputeThread, wait

__all__ = ["create_app"]

# Text the model reads per request: 256 ten-turn dialogues of about 195 characters a turn, which hold the compute
# thread for about 19 s on 2 cores (benchmarks/serve_largest_request.py); a far larger request would hold it,
# and every request waiting behind it, for minutes.
MAX_CHARS = 500_000
# The bytes a request body may hold: 8 per character of text allowed (UTF-8 takes 1-4 bytes a character, a JSON
# "\u4f60" escape 6, and Python's json.dumps escapes every non-ASCII character) plus BODY_SLACK for the JSON
# syntax, speakers, ids and knowledge tables. A body over it is refused before it is read.
BYTES_PER_CHAR = 8
BODY_SLACK = 1 << 20
# A pair of turns too long for the model's window together is read piece against piece (``long_turns="chunk"``:
# every 32-token piece of the one with every piece of the other), so its cost grows with the product of the two
# lengths: two 3,000-word turns (28,000 characters) held the compute thread for 3 minutes. The text budget counts
# such a pair's text once per piece of the other turn, estimated in characters of English: a 32-token piece is about
# PIECE_CHARS, a 128-token window about WINDOW_CHARS.
PIECE_CHARS = 128
WINDOW_CHARS = 512
# Those characters of English are about 4 a token, but a CJK ideograph is a token of its own (MiniLM's tokenizer
# splits them one by one; Gemma's reads about 1.4 a token): counted once, a Chinese request was read as about 4 times
# the tokens the budget allowed, and two 3,000-character Chinese turns (144,000 of the 500,000 characters) were read
# as some 9,000 pairs of pieces. The budget counts each CJK ideograph (:mod:`dialcheck.language`) as CJK_CHARS.
CJK_CHARS = 4
T = TypeVar("T")

# Seconds a request body may go without a byte before the request is answered 408.
BODY_IDLE = 30.0
# Seconds between looks at whether the client of a check still waiting for the model has hung up.
HANG_UP_POLL = 0.25
# What a request the server stopped waiting for as it shut down is answered (503).
STOPPED = (
    "the server is shutting down and stopped waiting for this request (dialcheck serve --shutdown-timeout): send it "
    "again once the server is back"
)
# The routes a 404 or 405 lists.
ROUTES = "the API: POST /check, POST /rank, GET /health; GET / is a web form, GET /docs the API's documentation"
# Where a request's thresholds are set, for the 422 about a "tau" in a request or in one of its dialogue objects.
SERVER_THRESHOLDS = "the thresholds are the server's (`dialcheck serve --tau --eta-e`)"

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>dialcheck</title>
<style>body{font-family:sans-serif;max-width:50em;margin:2em auto}textarea{width:100%;height:12em}
.c{color:#b00}.ok{color:#070}.w{color:#a50;font-weight:bold}
pre{background:#f4f4f4;padding:1em;white-space:pre-wrap}</style></head>
<body><h1>dialcheck</h1><p>One turn per line; speakers alternate. The last line is checked.</p>
<textarea id="t">I have two dogs.
Cute! What breeds?
What do you do for a living?
I have never had a pet.</textarea><p><button onclick="go()">Check</button></p><div id="out"></div>
<script>
function add(o,tag,cls,text){const e=document.createElement(tag);e.className=cls;e.textContent=text;o.appendChild(e);}
async function go(){
  const turns=document.getElementById('t').value.split('\\n').filter(s=>s.trim());
  const r=await fetch('check',{method:'POST',headers:{'Content-Type':'application/json'},
    body:JSON.stringify({turns:turns})});
  const j=await r.json(); const o=document.getElementById('out'); o.textContent='';
  if(!r.ok){add(o,'pre','c',j.detail);return;}
  for(const w of j.warnings||[])add(o,'p','w','Warning: '+w);
  const v=j.verdicts[0];
  const ev=v.evidence.map(i=>'['+i+'] '+turns[i]).join('\\n');
  const said=(v.contradiction?'Contradiction':'No contradiction')+' (score '+v.score.toFixed(2)+')';
  add(o,'p',v.contradiction?'c':'ok',said);
  add(o,'pre','',ev?('contradicts:\\n'+ev):'no evidence turns');
}
</script></body></html>"""


def parse_body(data: bytes, content_type: str | None = None) -> Any:
    """A request body parsed as UTF-8 JSON (a leading byte-order mark dropped), whatever its Content-Type; an
    :class:`InputError` saying why a body is not JSON (400 in the API).

    >>> parse_body(b'{"turns": ["a", "b"]}', "text/plain")
    {'turns': ['a', 'b']}
    >>> parse_body(b'{"turns": [')
    Traceback (most recent call last):
    ...
    dialcheck.errors.InputError: invalid JSON in the request body: Expecting value at line 1, column 12
    """
    sent_as = ""
    if content_type and "json" not in content_type.lower():
        sent_as = f" (it was sent as {content_type.split(';')[0].strip()}; the API reads JSON)"
    if not data.strip():
        raise InputError('the request body is empty: expected JSON, a dialogue or {"dialogues": [...]}')
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        column = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise InputError(
            f"the request body is not UTF-8 JSON: byte 0x{data[e.start]:02x} at line {line}, column {column} "
            "(send JSON encoded as UTF-8)"
        ) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        joint = " " if e.msg.endswith(" at") else " at "
        raise InputError(
            f"invalid JSON in the request body: {e.msg}{joint}line {e.lineno}, column {e.colno}{sent_as}"
        ) from None
    except RecursionError:  # [[[[...]]]] nested deeper than the parser's recursion limit
        raise InputError("invalid JSON in the request body: nested too deeply") from None


def text_chars(text: str) -> int:
    """The length of ``text`` in the characters of English the request budget counts: a CJK ideograph, read as
    a token of its own, is :data:`CJK_CHARS` of them (about one token's worth of English).

    >>> text_chars("I have a dog."), text_chars("我有一只狗。")  # 5 ideographs and a full stop
    (13, 21)
    """
    if text.isascii():
        return len(text)
    return len(text) + (CJK_CHARS - 1) * sum(map(_is_cjk, text))


def read_chars(d: Dialogue) -> int:
    """The characters of ``d``'s text the model reads, as the request budget counts them (:func:`text_chars`:
    a CJK ideograph as :data:`CJK_CHARS`): every turn once, and the text of a pair of the last turn with an earlier
    turn of its speaker that is too long for the window once more per further piece of the other turn (an
    estimate: :data:`PIECE_CHARS`, :data:`WINDOW_CHARS`).

    >>> read_chars(Dialogue.from_texts(["I have a dog.", "Nice.", "I never had a dog."]))
    36
    >>> read_chars(Dialogue.from_texts(["a" * 300, "Nice.", "b" * 300]))  # 605 + 300 * 2 + 300 * 2
    1805
    >>> read_chars(Dialogue.from_texts(["我有一只狗。", "真好。", "我从来没养过狗。"]))  # 21 + 9 + 29
    59
    """
    sizes = [text_chars(t.text) for t in d.turns]
    last = sizes[-1]
    n = sum(sizes)
    for i in d.same_speaker_indices():
        first = sizes[i]
        if first + last > WINDOW_CHARS:
            n += first * (-(-last // PIECE_CHARS) - 1) + last * (-(-first // PIECE_CHARS) - 1)
    return n


def _shown(value: Any) -> str:
    """A bad value's JSON type, or "an empty list"."""
    return "an empty list" if value == [] else json_type(value)


class _AnswerWhenStopped:
    """ASGI middleware: a request the server stops waiting for as it shuts down (uvicorn cancels it once
    ``--shutdown-timeout`` has passed) is answered 503 with a JSON message, as a check given up on is. Uvicorn
    answered it "Internal Server Error" and logged an "Exception in ASGI application" traceback per request."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def sending(message: dict[str, Any]) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, sending)
        except asyncio.CancelledError:
            if started:  # half answered: nothing clear left to say
                raise
            body = json.dumps({"detail": STOPPED}).encode()
            headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
            await send({"type": "http.response.start", "status": 503, "headers": headers})
            await send({"type": "http.response.body", "body": body})


def _describe(det: Detector) -> dict[str, Any]:
    c = det.config
    thresholds = dict(c.thresholds)
    if "tau" in thresholds:  # the one it answers at (a cascade on int8: its CPU's range's, not the saved one)
        thresholds["tau"] = det.tau
    out = {
        "detector": c.detector,
        "base": c.base,
        "thresholds": thresholds,
        "model": str(det.path) if det.path else None,
        # what scores the pairs: torch or ONNX Runtime, float32 or int8 (--onnx / --int8)
        "runtime": ("onnx" if c.options.get("onnx") else "torch") + ("-int8" if c.options.get("int8") else ""),
    }
    if c.options.get("onnx") and c.options.get("int8"):
        from ..detectors.onnx import int8_range

        out["int8_range"] = int8_range()  # 8-bit weights ("full", CPUs with VNNI) or 7-bit ("reduced")
    return out


def create_app(
    detector: Detector | None = None,
    max_dialogues: int = 256,
    max_chars: int = MAX_CHARS,
    configure: Callable[[Detector], None] | None = None,
    compute: ComputeThread | None = None,
    max_bytes: int | None = None,
    defaults: Mapping[str, Detector] | None = None,
) -> Any:
    """A FastAPI app answering with ``detector``; with None, with the shipped default each dialogue routes to
    (:func:`dialcheck.route`). ``configure`` is applied to each routed detector (threshold overrides).
    ``compute`` runs the model calls (default: a new :class:`ComputeThread`, closed at shutdown); pass the
    one that loaded ``detector`` so that loading and scoring share a thread. A request may hold at most
    ``max_dialogues`` dialogues (or /rank candidates) and ``max_chars`` characters of text for the model to
    read (a /rank context counts once per candidate, as it is scored once per candidate, and a pair of long turns
    once per piece, :func:`read_chars`); more is a 413, as is
    a body over ``max_bytes`` (default: ``BYTES_PER_CHAR`` per ``max_chars`` character plus ``BODY_SLACK``),
    answered from its Content-Length before the body is read. ``defaults``: with no ``detector``, the routed
    defaults already loaded and configured, by route (``{"en": ..., "tod": ...}``, as ``dialcheck serve`` loads them
    before it listens), which /health then describes at once; without them its first call loads them on the compute
    thread, behind the checks queued there."""
    from .. import api

    try:
        import anyio
        import anyio.from_thread
        from fastapi import Depends, FastAPI, HTTPException, Request
        from fastapi.exception_handlers import http_exception_handler
        from fastapi.responses import HTMLResponse, JSONResponse
        from starlette.concurrency import run_in_threadpool
        from starlette.exceptions import HTTPException as StarletteHTTPException
        from starlette.requests import ClientDisconnect
    except ImportError:
        raise MissingDependencyError("fastapi", "serve", "the HTTP service") from None

    compute = compute if compute is not None else ComputeThread(max_batch_dialogues=max_dialogues)
    limit = max_bytes if max_bytes is not None else BYTES_PER_CHAR * max_chars + BODY_SLACK

    @contextlib.asynccontextmanager
    async def lifespan(_app: Any) -> AsyncIterator[None]:
        yield
        # The server stops the app once its requests are answered or it has stopped waiting for them (uvicorn's
        # timeout_graceful_shutdown, `dialcheck serve --shutdown-timeout`): give up on the jobs left at once, so
        # that the request threads waiting on them (which the process waits for) end, rather than wait for a
        # check that may hold the compute thread for minutes.
        compute.close(timeout=0)

    app = FastAPI(title="dialcheck", description="Dialogue contradiction detection", version="1", lifespan=lifespan)
    app.add_middleware(_AnswerWhenStopped)

    @app.exception_handler(ComputeClosed)
    async def shutting_down(_request: Request, e: ComputeClosed) -> Any:
        return JSONResponse({"detail": f"the server is shutting down: {e}"}, status_code=503)

    @app.exception_handler(StarletteHTTPException)
    async def not_here(request: Request, e: StarletteHTTPException) -> Any:
        """A 404 or 405 that names the request and the routes there are ("Not Found" and "Method Not Allowed" said
        neither: GET /check, say, from a browser's address bar); any other error as FastAPI answers it."""
        where = f"{request.method} {request.url.path}"
        if e.status_code == 404 and e.detail == "Not Found":
            detail = f"{where}: no such route ({ROUTES})"
        elif e.status_code == 405:
            allowed = next((v for k, v in (e.headers or {}).items() if k.lower() == "allow"), "")
            detail = f"{where}: method not allowed" + (f", use {allowed}" if allowed else "") + f" ({ROUTES})"
        else:
            return await http_exception_handler(request, e)
        return JSONResponse({"detail": detail}, status_code=e.status_code, headers=e.headers)

    def too_large(n: int | str) -> HTTPException:
        return HTTPException(
            413,
            f"request body: at most {limit} bytes, got {n} (split the request, or serve with a larger --max-chars)",
        )

    async def json_body(request: Request) -> Any:
        """The request's JSON body (see :func:`parse_body`); a 413 once it is over ``limit`` bytes."""
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            raise too_large(int(declared))  # refused unread
        chunks: list[bytes] = []
        n = 0
        of = f" of the {declared} it declared" if declared.isdigit() else ""
        stream = request.stream().__aiter__()  # a body sent in chunks, without a Content-Length, is counted
        try:
            while True:
                # A client that declared more than it sent and waits for an answer was never answered; it is, once
                # no byte has come for BODY_IDLE seconds
                with anyio.fail_after(BODY_IDLE):
                    try:
                        chunk = await stream.__anext__()
                    except StopAsyncIteration:
                        break
                n += len(chunk)
                if n > limit:
                    raise too_large(f"more than {limit}")
                chunks.append(chunk)
        except ClientDisconnect:
            # The client hung up before sending the whole body (it declared more than it sent, or gave up): a line in
            # the access log, not the "Exception in ASGI application" traceback it was; the answer reaches no one
            raise HTTPException(400, f"request body: the client disconnected after sending {n} bytes{of}") from None
        except TimeoutError:
            raise HTTPException(
                408,
                f"request body: nothing more came for {BODY_IDLE:g} s after {n} bytes{of} (send a Content-Length "
                "that is the body's length in bytes)",
            ) from None
        try:
            return parse_body(b"".join(chunks), request.headers.get("content-type"))
        except InputError as e:
            raise HTTPException(400, e.message) from None

    # /check and /rank read their body themselves (as JSON whatever its Content-Type, every error a 400 with one
    # message); this tells /docs that they take a JSON body
    json_request = {"requestBody": {"required": True, "content": {"application/json": {"schema": {}}}}}

    def no_threshold_options(body: Any) -> None:
        """A request cannot set thresholds; say so rather than answer at the server's own (a silent trap)."""
        if not isinstance(body, dict):
            return
        for key in THRESHOLD_KEYS:
            if key in body:
                raise HTTPException(
                    422,
                    f"{key}: not a request option; {SERVER_THRESHOLDS}, or compare each verdict's `score` and "
                    "`pair_scores` with your own",
                )

    def speakers_of(body: Any) -> list[str] | None:
        """The request's ``"speaker"``, checked as ``dialcheck.check(speaker=...)`` checks it (a blank name was
        answered "speaker[0]: empty" and 3 "expected a string or a non-empty list of strings", naming no value)."""
        try:
            return check_speakers(body.get("speaker") if isinstance(body, dict) else None)
        except InputError as e:
            raise HTTPException(422, e.message) from None

    def parse_many(body: Any, speakers: list[str] | None = None) -> list[tuple[Dialogue, bool]]:
        """The request's dialogues, each with whether a ``"speaker"`` cut it after its last turn with text by that
        speaker: the dialogue object's own over the request's, read as ``dialcheck check`` reads a file
        (:func:`~dialcheck.io.parse_checked`; an item's own speaker, or tau, was silently ignored)."""
        named = isinstance(body, dict) and "dialogues" in body  # {"dialogues": [...]}: errors name the index
        both = [k for k in ("turns", "messages") if named and k in body]
        if both:  # the one dialogue beside the list was silently left out
            raise HTTPException(
                422,
                f'dialogues, {both[0]}: a request is one dialogue ({{"{both[0]}": [...]}}) or {{"dialogues": [...]}}, '
                "not both (put the one dialogue in the list)",
            )
        items = body["dialogues"] if named else [body]
        if not isinstance(items, list) or not items:
            raise HTTPException(422, f"dialogues: expected a non-empty list, got {_shown(items)}")
        if not named and isinstance(body, list) and any(isinstance(t, list) for t in body):
            raise HTTPException(
                422,
                'expected one dialogue or {"dialogues": [...]}, got a list of lists: a bare list is one dialogue\'s '
                'turns; send several dialogues as {"dialogues": [...]}',
            )
        if len(items) > max_dialogues:
            raise HTTPException(413, f"dialogues: at most {max_dialogues} per request, got {len(items)}")
        out = []
        for i, obj in enumerate(items):
            prefix = f"dialogues[{i}]: " if len(items) > 1 or named else ""
            try:
                d, own = parse_checked(obj, speakers, SERVER_THRESHOLDS)
                out.append((d if own is None else upto_speaker(d, own), own is not None))
            except InputError as e:
                raise HTTPException(422, prefix + e.message) from None
        return out

    def within_budget(dialogues: list[Dialogue]) -> None:
        n = sum(read_chars(d) for d in dialogues)
        if n > max_chars:
            texts = [t.text for d in dialogues for t in d.turns]
            counted = sum(text_chars(t) for t in texts)
            notes = []
            if counted > sum(len(t) for t in texts):
                notes.append(
                    f"a CJK character counted as {CJK_CHARS} (the model reads it as one token, as it reads about "
                    f"{CJK_CHARS} characters of English)"
                )
            if n > counted:
                notes.append("a pair of long turns counted once per piece of the other turn, as it is read")
            raise HTTPException(
                413,
                f"text: at most {max_chars} characters per request, got {n}"
                + "".join(", " + note for note in notes)
                + " (split the request, or serve with a larger --max-chars)",
            )

    def routes_of(dialogues: list[Dialogue], prefix: str = "") -> list[str]:
        """The shipped default each dialogue goes to (:func:`dialcheck.route`), worked out once a request, on its
        own thread: it reads the text and loads nothing. A dialogue none reads (a Chinese one without a Chinese
        model, mixed languages) is a 422 naming it, before the request waits for the compute thread. Empty when the
        server answers with a model of its own (a Chinese, four-category one: a chat log ending with a tool's result
        or a system message, which it does not read, is a 422 as routed)."""
        if detector is not None:
            if api.reads_as_chinese(detector):  # it refuses a log ending with a tool's result, as routing does
                for i, d in enumerate(dialogues):
                    try:
                        check_chinese_last_turn(d, CHOOSE_SERVER)
                    except InputError as e:
                        where = f"dialogues[{i}]: " if len(dialogues) > 1 else prefix
                        raise HTTPException(422, where + e.message) from None
            return []
        out = []
        for i, d in enumerate(dialogues):
            try:
                out.append(api.route(d, choose=CHOOSE_SERVER))
            except DialcheckError as e:
                where = f"dialogues[{i}]: " if len(dialogues) > 1 else prefix
                raise HTTPException(422, where + (e.message if isinstance(e, InputError) else str(e))) from None
        return out

    def detectors_for(routes: list[str]) -> Callable[[list[Dialogue]], list[Detector]]:
        """The check job's ``route``: the detector of each dialogue (``routes[i]``, or the server's own), each
        shipped default loaded and configured once a job, on the compute thread (loading is model work)."""

        def detectors(dialogues: list[Dialogue]) -> list[Detector]:
            if detector is not None:
                return [detector] * len(dialogues)
            loaded: dict[str, Detector] = {}
            for key in dict.fromkeys(routes):
                try:
                    loaded[key] = det = api.load(language=key)
                except DialcheckError as e:  # a shipped default that cannot be loaded: a 422, as it was
                    raise HTTPException(422, e.message if isinstance(e, InputError) else str(e)) from None
                if configure is not None:
                    configure(det)
            return [loaded[key] for key in routes]

        return detectors

    def warn_unread(dialogues: list[Dialogue], routes: list[str], names: list[str] | None = None) -> list[str]:
        """Log, in the library's words, the dialogues of a request answered by a model not trained on their script
        (an English model on Chinese turns, a Korean dialogue routed to the English default: ``routes[i]``, as
        :func:`routes_of` found it), and return the warnings for the response's ``"warnings"``: the verdicts are the
        same."""
        if detector is not None:
            serve = api.SERVE_MODEL  # "start the server with --model set to ...": no request chooses the model
            _, text = api.language_gap(detector, dialogues, names, leave_out="Serve without --model", pass_model=serve)
            texts = [] if text is None else [text]
        else:
            texts = [text for _, text in api.routed_warnings(dialogues, routes, names, pass_model=api.SERVE_MODEL)]
        for text in texts:
            api.log.warning(text)  # the library's logger, as before
        return texts

    @app.get("/", response_class=HTMLResponse)
    def page() -> str:
        return PAGE

    # routed: the English default answers plain dialogues, the task-oriented one those with knowledge; held here once
    # loaded, so that /health describes them without waiting for the compute thread. dialcheck serve passes them
    # (`defaults`): without them the first /health, a liveness probe's, queued behind every check waiting there.
    described: dict[str, Detector] = dict(defaults or {}) if detector is None else {"en": detector}

    def routes_known() -> bool:
        return detector is not None or {"en", "tod"} <= described.keys()

    def describe() -> dict[str, Any]:
        if not routes_known():  # loads them, on the compute thread (see health)
            for language in ("en", "tod"):
                det = api.load(language=language)
                if configure is not None:
                    configure(det)
                described[language] = det
        counts = {"requests": compute.requests, "batches": compute.batches}
        if detector is not None:
            return {"status": "ok", **_describe(detector), "checks": counts}
        routes = {language: _describe(det) for language, det in described.items()}
        return {"status": "ok", **routes["en"], "routes": routes, "checks": counts}

    # /health answers on the server's event loop, at once: it asked the compute thread, and waited behind every check
    # queued there (about 19 s each at the largest request), and a liveness probe with a 1 s timeout (Kubernetes'
    # default) failed while the server was busy; as a plain function it also waited for a thread of the server's
    # pool, which requests waiting for the compute thread hold. Only loading the routed models, once, goes there.
    @app.head("/health", include_in_schema=False)  # uptime monitors and probes that ask with HEAD got a 405
    @app.get("/health")
    async def health() -> dict[str, Any]:
        if routes_known():
            return describe()
        return await run_in_threadpool(compute.run, describe)

    # /check and /rank are plain functions: the server runs each request on a thread of its pool, which hands the
    # model work to `compute` and waits (or, with workers=0, does it itself).

    def answered(future: "Future[T]", request: Request) -> T:
        """The result of a check job (:func:`~dialcheck.serve.compute.wait`), given up on when its client hangs up
        while it is still queued: the compute thread scored the checks of clients that had gone (a client that timed
        out and tried again queued the same check behind the one it had left), and every request behind them waited
        for them. A check being scored is finished (its batch is shared); a server with ``workers=0`` scores it on
        this thread before it gets here."""
        while True:
            try:
                return wait(future, HANG_UP_POLL)
            except TimeoutError:
                try:
                    gone = anyio.from_thread.run(request.is_disconnected)
                except RuntimeError:  # the server's event loop has stopped: closing the compute thread settles it
                    return wait(future)
                if not gone:
                    continue
                if future.cancel():
                    raise HTTPException(400, "the client disconnected before its check was scored") from None
                return wait(future)  # running already

    @app.post("/check", openapi_extra=json_request)
    def check(request: Request, body: Any = Depends(json_body)) -> dict[str, Any]:  # noqa: B008
        no_threshold_options(body)
        parsed = parse_many(body, speakers_of(body))
        dialogues = [d for d, _ in parsed]
        within_budget(dialogues)
        # routed once: the detectors and the warnings both follow these (each dialogue's text was read twice)
        routes = routes_of(dialogues)
        verdicts = answered(compute.check(dialogues, detectors_for(routes)), request)
        warnings = warn_unread(dialogues, routes)
        out = []
        for (d, cut), v in zip(parsed, verdicts, strict=True):
            rec: dict[str, Any] = {"id": d.meta.get("id")}
            if cut:  # which turn was checked, as `dialcheck check --speaker --json` says
                rec["turn"] = len(d.turns) - 1
            rec.update(v.to_dict())
            out.append(rec)
        # "warnings" only when there is one, so a client of the plain form sees no change
        return {"verdicts": out, **({"warnings": warnings} if warnings else {})}

    @app.post("/rank", openapi_extra=json_request)
    def rank(request: Request, body: Any = Depends(json_body)) -> dict[str, Any]:  # noqa: B008
        shape = '{"context": dialogue, "candidates": [strings]}'
        if not isinstance(body, dict):
            raise HTTPException(422, f"expected {shape}, got {json_type(body)}")
        for key in ("context", "candidates"):
            if key not in body:
                raise HTTPException(422, f"{key}: missing (expected {shape})")
        no_threshold_options(body)
        cands = body["candidates"]
        if not isinstance(cands, list) or not cands:
            raise HTTPException(422, f"candidates: expected a non-empty list of strings, got {_shown(cands)}")
        if len(cands) > max_dialogues:
            raise HTTPException(413, f"candidates: at most {max_dialogues} per request, got {len(cands)}")
        try:  # a candidate that is no string, a lone surrogate ("\ud800" in JSON), which no model reads, or an empty
            # candidate, as Detector.rank
            candidate_texts(cands)
        except InputError as e:
            raise HTTPException(422, e.message) from None
        try:  # as Detector.rank reads it: its last turn may be empty (a tool call), as the context may be
            ctx = as_context(body["context"])
        except InputError as e:
            raise HTTPException(422, e.message) from None

        try:  # the speaker as Detector.rank and rerank read it (its type, or a blank name), in their words
            dialogues = candidate_dialogues(ctx, cands, check_reply_speaker(body.get("speaker")))
        except InputError as e:
            raise HTTPException(422, e.message) from None
        within_budget(dialogues)
        # a check like any other: the detector the context with its first candidate routes to (a Chinese u1, b1,
        # u2 is a CDConv conversation only with its reply) scores every candidate, merged with waiting requests
        routes = routes_of(dialogues[:1], prefix="context: ")
        verdicts = answered(compute.check(dialogues, detectors_for(routes * len(dialogues))), request)
        # the warning reads the context and every candidate against the default that route chose: routing them all
        # again, an English candidate after a Chinese context was "mixed languages", a 500 after the verdicts
        whole = Dialogue((*ctx.turns, *(Turn("candidate", c) for c in cands)), ctx.knowledge)
        warnings = warn_unread([whole], routes, ["the /rank request"])
        ranked = ranked_candidates(cands, verdicts)
        out = [{"index": r.index, "text": r.text, **r.verdict.to_dict()} for r in ranked]
        return {"ranked": out, **({"warnings": warnings} if warnings else {})}

    return app
