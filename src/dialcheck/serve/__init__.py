"""HTTP service: ``dialcheck serve`` (FastAPI; install with ``pip install "dialcheck[serve]"``)."""

from .app import create_app

__all__ = ["create_app"]
