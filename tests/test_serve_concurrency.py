"""The HTTP API under a threaded client: requests at once, clients that hang up, requests the API has no route for."""

import contextlib
import json
import logging
import random
import socket
import threading
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
import uvicorn
from fastapi.testclient import TestClient

from dialcheck.detectors import load_detector
from dialcheck.serve import ComputeThread, create_app
from helpers_threads import QueuedCompute, blocked, random_turn


@contextlib.contextmanager
def _serving(app):
    """``app`` served by uvicorn on a free port of 127.0.0.1, on a thread of this process; yields the port."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_config=None, lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        for _ in range(600):
            if server.started:
                break
            thread.join(0.05)
        assert server.started, "uvicorn did not start"
        yield server.servers[0].sockets[0].getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(30)


def _post(port, path, body):
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}", data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)


def _requests(n):
    """/check requests of one dialogue and of several, /rank requests, bad requests: turns short and too long for
    the tiny model's window."""
    rng = random.Random(0)

    def turn():
        return random_turn(rng)

    out = []
    for i in range(n):
        kind = i % 4
        if kind == 0:
            out.append(("/check", {"turns": [turn() for _ in range(rng.randint(2, 6))]}))
        elif kind == 1:
            out.append(("/check", {"dialogues": [[turn() for _ in range(rng.randint(2, 5))] for _ in range(3)]}))
        elif kind == 2:
            out.append(("/rank", {"context": [turn() for _ in range(3)], "candidates": [turn() for _ in range(3)]}))
        else:
            out.append(("/check", {"dialogues": [["a", "b"], {"turns": ["a", 3]}]}))
    return out


def _hang_up_mid_body(port):
    """A client that declares a body longer than it sends, then hangs up."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(b"POST /check HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n[")


@pytest.mark.parametrize("workers", [1, 0])
def test_16_requests_at_once_get_the_answers_they_get_one_at_a_time(tiny_detector_dir, workers, caplog):
    """Also with clients hanging up mid-body among them: the others are answered, and the server logs no error (it
    logged the traceback of starlette's ClientDisconnect as 'Exception in ASGI application')."""
    compute = ComputeThread(workers=workers)
    app = create_app(load_detector(tiny_detector_dir), compute=compute)
    reqs = _requests(32)
    with caplog.at_level(logging.WARNING), _serving(app) as port:
        alone = [_post(port, path, body) for path, body in reqs]

        def send(i):
            if i % 8 == 7:
                _hang_up_mid_body(port)
            return _post(port, *reqs[i])

        with ThreadPoolExecutor(16) as ex:
            together = list(ex.map(send, range(len(reqs))))
        assert _post(port, *reqs[0]) == alone[0]  # still serving
    assert [s for s, _ in alone] == [200, 200, 200, 422] * 8
    assert together == alone
    assert compute.requests == 2 * 24 + 1
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert not errors, [r.getMessage() for r in errors]


def test_a_client_that_hangs_up_mid_body_is_answered_400_in_the_log_not_an_asgi_error(tiny_detector_dir):
    """Starlette raises ClientDisconnect out of the body's stream: the app let it out, and uvicorn logged it as an
    'Exception in ASGI application' with its traceback. Driven as an ASGI server drives it."""
    import asyncio

    app = create_app(load_detector(tiny_detector_dir))
    messages = [
        {"type": "http.request", "body": b'{"turns": ["I have', "more_body": True},
        {"type": "http.disconnect"},
    ]
    sent = []

    async def receive():
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/check",
        "raw_path": b"/check",
        "query_string": b"",
        "root_path": "",
        "headers": [(b"content-type", b"application/json"), (b"content-length", b"1000")],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 8000),
    }
    asyncio.run(app(scope, receive, send))
    assert sent[0]["status"] == 400
    body = json.loads(b"".join(m.get("body", b"") for m in sent[1:]))
    assert body == {"detail": "request body: the client disconnected after sending 18 bytes of the 1000 it declared"}


@pytest.mark.parametrize(
    ("method", "path", "status", "said"),
    [
        ("GET", "/check", 405, "GET /check: method not allowed, use POST"),
        ("PUT", "/rank", 405, "PUT /rank: method not allowed, use POST"),
        ("POST", "/health", 405, "POST /health: method not allowed, use GET"),
        ("POST", "/checks", 404, "POST /checks: no such route"),
    ],
)
def test_a_request_with_no_route_names_its_method_path_and_the_routes(tiny_detector_dir, method, path, status, said):
    """They were answered "Method Not Allowed" and "Not Found", naming neither the request nor the routes there are."""
    client = TestClient(create_app(load_detector(tiny_detector_dir)))
    r = client.request(method, path, content=b'["a", "b"]')
    assert r.status_code == status
    assert r.json() == {
        "detail": f"{said} (the API: POST /check, POST /rank, GET /health; GET / is a web form, GET /docs the API's "
        "documentation)"
    }
    assert client.post("/check", json=["I have a cat.", "No."]).status_code == 200


@pytest.mark.parametrize("routed", [False, True])
def test_health_answers_at_once_while_checks_hold_the_compute_thread(tiny_detector_dir, monkeypatch, routed):
    """/health asked the compute thread and waited behind every check queued there (up to about 19 s each): a
    liveness probe with Kubernetes' 1 s timeout failed while the server was busy, and the server was restarted."""
    from dialcheck import api

    compute = ComputeThread()
    det = load_detector(tiny_detector_dir)
    if routed:  # the defaults loaded before the app, as dialcheck serve loads them: the first /health is this one
        monkeypatch.setattr(api, "load", lambda model=None, language="en": det)
        client = TestClient(create_app(None, compute=compute, defaults={"en": det, "tod": det}))
    else:
        client = TestClient(create_app(det, compute=compute))
    gate = blocked(compute)
    try:
        with ThreadPoolExecutor(2) as ex:
            waiting = ex.submit(client.post, "/check", json=["I have a cat.", "No."])
            health = ex.submit(client.get, "/health").result(timeout=5)  # not behind the check
            assert health.status_code == 200 and not waiting.done()
            assert set(health.json()) >= {"status", "detector", "thresholds", "checks"}
            assert ("routes" in health.json()) == routed
            assert health.json()["checks"] == {"requests": 0, "batches": 0}
            gate.set()
            assert waiting.result(timeout=30).status_code == 200
    finally:
        gate.set()
        compute.close()


def test_the_first_health_of_dialcheck_serve_without_a_model_answers_while_a_check_holds_the_compute_thread(
    tiny_detector_dir, monkeypatch
):
    """dialcheck serve loaded the routed defaults before it listened but did not hand them to the app, so its first
    /health (a liveness probe's) loaded them again on the compute thread and waited behind every check queued there."""
    import dialcheck.serve
    from dialcheck import api
    from dialcheck.cli import main

    det, apps, computes = load_detector(tiny_detector_dir), [], []

    class Kept(ComputeThread):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            computes.append(self)

    monkeypatch.setattr(api, "load", lambda model=None, language="en": det)
    monkeypatch.setattr(dialcheck.serve, "ComputeThread", Kept)
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: apps.append(app))
    assert main(["serve", "--port", "0"]) == 0
    compute, client = computes[0], TestClient(apps[0])
    gate = blocked(compute)
    ex = ThreadPoolExecutor(1)
    try:
        health = ex.submit(client.get, "/health").result(timeout=10)  # the gate holds the compute thread
        assert health.status_code == 200 and set(health.json()["routes"]) == {"en", "tod"}
    finally:
        gate.set()
        ex.shutdown()
        compute.close()


class _Recording:
    """A detector that records the last turns it is asked to check."""

    def __init__(self, det):
        self.det, self.seen = det, []

    def __getattr__(self, name):
        return getattr(self.det, name)

    def predict(self, dialogues, batch_size=64):
        self.seen += [d.turns[-1].text for d in dialogues]
        return self.det.predict(dialogues, batch_size=batch_size)


@pytest.mark.parametrize("route", ["/check", "/rank"])
def test_a_check_whose_client_hung_up_before_it_was_scored_is_not_scored(tiny_detector_dir, route):
    """The compute thread scored the checks of clients that had gone (one that timed out and tried again queued the
    same check behind the one it had left), and the requests behind them waited for them."""
    compute = QueuedCompute()
    det = _Recording(load_detector(tiny_detector_dir))
    body = (
        {"turns": ["I have a cat.", "gone"]}
        if route == "/check"
        else {"context": ["I have a cat."], "candidates": ["gone"]}
    )
    data = json.dumps(body).encode()
    with _serving(create_app(det, compute=compute)) as port:
        gate = blocked(compute)
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
                head = f"POST {route} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(data)}\r\n\r\n"
                s.sendall(head.encode() + data)
                gone = compute.queued.get(timeout=10)  # queued behind the gate; then its client hangs up
            settled = threading.Event()
            gone.add_done_callback(lambda _: settled.set())
            assert settled.wait(10) and gone.cancelled()  # while the gate still holds the compute thread
        finally:
            gate.set()
        assert _post(port, "/check", ["I have a cat.", "here"])[0] == 200
    assert det.seen == ["here"]


def test_a_body_shorter_than_its_content_length_is_answered_408_once_nothing_more_comes(tiny_detector_dir, monkeypatch):
    """A client that declared more bytes than it sent and waited for an answer waited for ever: so did the server."""
    from dialcheck.serve import app as app_module

    monkeypatch.setattr(app_module, "BODY_IDLE", 0.2)
    with _serving(create_app(load_detector(tiny_detector_dir))) as port:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(b'POST /check HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n["I have a cat.", "No."]')
            answer = b""
            while b"}" not in answer:
                got = s.recv(4096)
                assert got, answer
                answer += got
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 408 ")
        assert json.loads(body) == {
            "detail": "request body: nothing more came for 0.2 s after 24 bytes of the 1000 it declared (send a "
            "Content-Length that is the body's length in bytes)"
        }
        assert _post(port, "/check", ["I have a cat.", "No."])[0] == 200


def test_health_answers_head_as_uptime_monitors_ask(tiny_detector_dir):
    client = TestClient(create_app(load_detector(tiny_detector_dir)))
    r = client.head("/health")
    assert (r.status_code, r.content) == (200, b"")
    assert "head" not in client.get("/openapi.json").json()["paths"]["/health"]  # one operation in /docs
