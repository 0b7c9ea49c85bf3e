"""``dialcheck serve``: the HTTP API (POST /check, POST /rank, GET /health) and a web page at /."""

from __future__ import annotations

import argparse
import errno
import logging
import os
import socket
import sys
from typing import Any

from ..errors import InputError, MissingDependencyError
from ..serve.app import CJK_CHARS, MAX_CHARS
from .common import (
    add_model_options,
    load_for,
    nonnegative_float,
    nonnegative_int,
    port_number,
    positive_int,
)

HELP = "serve the detector over HTTP (needs the serve extra)"
ONNX_WORKERS = 0  # with --onnx: score on the server's request threads (docs/benchmarks.md, "Latency")
# Seconds a stopping server waits for the requests in progress: without a bound it waited for every check queued
# on the compute thread, each up to ~19 s at the largest request (benchmarks/serve_largest_request.py)
SHUTDOWN_TIMEOUT = 30.0

log = logging.getLogger(__name__)


def add_parser(sub: Any) -> None:
    p = sub.add_parser("serve", help=HELP, description=HELP)
    p.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1: this machine only; 0.0.0.0 for every IPv4 interface, :: for "
        "every IPv6 one)",
    )
    p.add_argument("--port", type=port_number, default=8000, help="TCP port, 0-65535; 0: any free one (default 8000)")
    add_model_options(p)
    p.add_argument(
        "--workers",
        type=nonnegative_int,
        default=None,
        help="threads that run the model; 0: each request's own thread (default: 1, or 0 with --onnx). Torch is "
        "fastest driven by one thread (requests that wait together are scored as one batch); ONNX Runtime scores "
        "without torch, and busy request threads keep both cores working",
    )
    p.add_argument(
        "--max-dialogues",
        type=positive_int,
        default=256,
        help="dialogues (or /rank candidates) per request (default 256)",
    )
    p.add_argument(
        "--max-chars",
        type=positive_int,
        default=MAX_CHARS,
        help=f"characters of text per request, a CJK character counted as {CJK_CHARS} (one token, as about "
        f"{CJK_CHARS} characters of English), a /rank context once per candidate, a pair of turns too long for the "
        f"window once per piece of the other (default {MAX_CHARS})",
    )
    p.add_argument(
        "--shutdown-timeout",
        type=nonnegative_float,
        default=SHUTDOWN_TIMEOUT,
        metavar="SECONDS",
        help="on SIGTERM or Ctrl-C, wait at most this long for the requests in progress, then give up on them and "
        f"exit (0: at once; default {SHUTDOWN_TIMEOUT:g}); keep it under your supervisor's grace period before it "
        "kills the server (docker stop: 10 s, Kubernetes: 30 s)",
    )
    p.set_defaults(func=run)


def check_listen(host: str, port: int) -> None:
    """Refuse, before any model loads, a ``--host`` this machine cannot listen on or a ``--port`` another server
    holds: uvicorn found out only after the model had loaded (10-20 s for the default), in its own log line. The
    probe binds as uvicorn does (IPv6 for a host with a colon, ``SO_REUSEADDR``); port 0 (any free one) is left
    to uvicorn."""
    if port == 0:
        return
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a port left in TIME_WAIT is free
        try:
            probe.bind((host, port))
        except (OSError, UnicodeError) as e:
            if getattr(e, "errno", None) == errno.EADDRINUSE:
                raise InputError(
                    f"--port {port}: in use on {host}: another server listens there (stop it, or pick another --port)"
                ) from None
            why = getattr(e, "strerror", None) or str(e)
            raise InputError(f"--host {host}: cannot listen on {host}:{port} ({why})") from None


def run(args: argparse.Namespace) -> int:
    try:
        import uvicorn
    except ImportError:
        raise MissingDependencyError("uvicorn", "serve", "the HTTP service") from None
    from ..serve import ComputeThread, create_app
    from .common import configure, set_threads

    workers = args.workers if args.workers is not None else (ONNX_WORKERS if args.onnx else 1)
    if workers < 0:
        raise InputError(f"--workers must be 0 or more, got {workers}")
    for flag, value in (("--max-dialogues", args.max_dialogues), ("--max-chars", args.max_chars)):
        if value < 1:
            raise InputError(f"{flag} must be 1 or more, got {value}")
    check_listen(args.host, args.port)
    if workers != 1 and not args.onnx:
        log.warning("--workers %d on torch: two threads driving torch slow each other down (see --help)", workers)
    compute = ComputeThread(workers=workers, batch_size=args.batch_size, max_batch_dialogues=args.max_dialogues)
    limits = {"max_dialogues": args.max_dialogues, "max_chars": args.max_chars}
    if args.model is not None:
        app = create_app(compute.run(lambda: load_for(args)), compute=compute, **limits)
    else:  # like `dialcheck check`: each dialogue to the shipped default it routes to (knowledge -> task-oriented)
        from ..api import load

        def warm() -> dict[str, Any]:  # the shipped defaults loaded (and checked) before the first request
            set_threads(args.threads)
            defaults = {}
            for language in ("en", "tod"):
                defaults[language] = det = load(language=language)
                configure(det, args)
            return defaults

        # handed to the app, so that /health describes them at once: its first call loaded them again on the compute
        # thread, behind every check queued there
        defaults = compute.run(warm)
        app = create_app(None, configure=lambda det: configure(det, args), compute=compute, defaults=defaults, **limits)
    # timeout_graceful_shutdown bounds the wait for requests in progress; the app then gives up on their checks
    uvicorn.run(app, host=args.host, port=args.port, log_level="info", timeout_graceful_shutdown=args.shutdown_timeout)
    left = compute.running_given_up()
    if left:
        # With --workers 0 the checks given up on run on uvicorn's request threads, which are no daemons: the
        # interpreter would wait for them at exit, unbounded. SIGTERM never gets here (uvicorn raises it again once
        # it has stopped, and its default action ends the process); Ctrl-C does (uvicorn swallows the
        # KeyboardInterrupt), so it ends the process the same way: the server has stopped and its log is flushed.
        log.warning("stopped without waiting for %d check(s) still running on request threads", left)
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
    return 0
