"""Simulated kills for the resume tests: make the n-th call of a function raise KeyboardInterrupt."""

from __future__ import annotations

from typing import Any


def kill_on_call(monkeypatch: Any, owner: Any, name: str, n: int) -> None:
    """Patch ``owner.name`` so that its ``n``-th call raises KeyboardInterrupt (as if the run were killed
    there); the calls before it run the real function."""
    real, calls = getattr(owner, name), []

    def patched(*a: Any, **k: Any) -> Any:
        calls.append(1)
        if len(calls) == n:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(owner, name, patched)
