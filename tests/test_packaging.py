"""Every file of every shipped model folder is declared as package data (else a wheel ships it broken)."""

import fnmatch
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_shipped_model_file_is_package_data():
    globs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["dialcheck"]
    pkg = ROOT / "src" / "dialcheck"
    files = [f.relative_to(pkg).as_posix() for f in (pkg / "models").rglob("*") if f.is_file()]
    assert files, "no shipped models found"
    missing = [f for f in files if not any(fnmatch.fnmatchcase(f, g) and f.count("/") == g.count("/") for g in globs)]
    assert not missing, f"not declared in [tool.setuptools.package-data]: {missing}"
