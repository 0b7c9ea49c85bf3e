"""Recording the calls a test wants to count or look at, the real function still doing the work."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest


def record_calls(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str, seen: Callable[..., Any]) -> list[Any]:
    """Wrap ``owner.name`` so that each call appends ``seen(*args, **kwargs)`` to the returned list, then calls the
    real one (undone with the test's ``monkeypatch``)."""
    real, calls = getattr(owner, name), []

    def recorded(*args: Any, **kwargs: Any) -> Any:
        calls.append(seen(*args, **kwargs))
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, recorded)
    return calls
