"""HTTP service: ``dialcheck serve`` (FastAPI; install with ``pip install "dialcheck[serve]"``)."""

from .app import create_app
from .compute import ComputeThread

__all__ = ["ComputeThread", "create_app"]
