"""``dialcheck serve``: the HTTP API (POST /check, POST /rank, GET /health) and a web page at /."""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import MissingDependencyError
from .common import add_model_options, load_for

HELP = "serve the detector over HTTP (needs the serve extra)"


def add_parser(sub: Any) -> None:
    p = sub.add_parser("serve", help=HELP, description=HELP)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    add_model_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        import uvicorn
    except ImportError:
        raise MissingDependencyError("uvicorn", "serve", "the HTTP service") from None
    from ..serve import create_app
    from .common import configure, set_threads

    if args.model is not None:
        app = create_app(load_for(args))
    else:  # like `dialcheck check`: each dialogue to the shipped default it routes to (knowledge -> task-oriented)
        from ..api import load

        set_threads(args.threads)
        for language in ("en", "tod"):  # loaded (and checked) before the first request
            configure(load(language=language), args)
        app = create_app(None, configure=lambda det: configure(det, args))
    uvicorn.run(app, host=args.host, port=args.port, log_level="info")
    return 0
