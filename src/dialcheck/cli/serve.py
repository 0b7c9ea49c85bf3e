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

    app = create_app(load_for(args))
    uvicorn.run(app, host=args.host, port=args.port, log_level="info")
    return 0
