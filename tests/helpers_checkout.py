"""Where the tests run: a git checkout of dialcheck, or an unpacked sdist or an installed wheel (which leave out the
superseded models, catalog.REPOSITORY_ONLY)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def in_checkout(root: Path = ROOT, package: Path | None = None) -> bool:
    """Are the tests run from a git checkout (``.git`` at ``root``) on its own ``src/dialcheck`` (``package``: the
    folder dialcheck is imported from)? Not from an unpacked sdist (no ``.git``), nor against an installed wheel."""
    if package is None:
        import dialcheck

        package = Path(dialcheck.__file__).resolve().parent
    return (root / ".git").exists() and package.resolve().is_relative_to((root / "src").resolve())


def skip_without_repository_only_models(root: Path = ROOT, package: Path | None = None) -> None:
    """Skip where the superseded models are left out: an sdist or a wheel. In a checkout nothing is skipped, so a
    checkout that lost one of their folders fails the tests that read it instead of skipping them."""
    from dialcheck import catalog

    if in_checkout(root, package):
        return
    if missing := catalog.missing_repository_only():
        pytest.skip(f"{len(missing)} superseded models are in the repository only, not in this install or sdist")
