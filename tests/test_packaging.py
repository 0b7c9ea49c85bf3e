"""What a wheel carries and how an installed package starts: package data, build metadata, light imports."""

import fnmatch
import subprocess
import sys
import tomllib
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Modules that take seconds to import (or are optional extras): `import dialcheck` and the CLI's parser load none.
HEAVY = ("torch", "transformers", "tokenizers", "safetensors", "peft", "onnxruntime", "onnx", "spacy", "jieba", "nltk")


def test_every_shipped_model_file_is_package_data():
    globs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["dialcheck"]
    pkg = ROOT / "src" / "dialcheck"
    files = [f.relative_to(pkg).as_posix() for f in (pkg / "models").rglob("*") if f.is_file()]
    assert files, "no shipped models found"
    missing = [f for f in files if not any(fnmatch.fnmatchcase(f, g) and f.count("/") == g.count("/") for g in globs)]
    assert not missing, f"not declared in [tool.setuptools.package-data]: {missing}"


def test_pyproject_builds_without_setuptools_deprecations(monkeypatch):
    """`license = { text = "MIT" }` printed a SetuptoolsDeprecationWarning on every build, and setuptools refuses
    it after 2027-02-18 (the build requirement was unpinned above 68, so `pip install` from source would have
    broken by itself); the version is read from dialcheck.__version__, so the two cannot disagree."""
    pytest.importorskip("setuptools", minversion="77")
    from setuptools.config.pyprojecttoml import apply_configuration
    from setuptools.dist import Distribution

    import dialcheck

    monkeypatch.chdir(ROOT)  # the readme and package paths in pyproject.toml are relative to it
    # the build reads __version__ from the source text: importing dialcheck there would need torch in the build
    # environment, which pip's isolated build does not have (keep `__version__ = "x.y.z"` a plain literal)
    monkeypatch.setitem(sys.modules, "dialcheck", None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dist = apply_configuration(Distribution(), ROOT / "pyproject.toml")
    assert dist.get_version() == dialcheck.__version__
    assert dist.metadata.license_expression == "MIT"


def test_import_dialcheck_and_the_cli_parser_load_no_heavy_dependency():
    """DESIGN: optional and heavy dependencies are imported where they are used, so `import dialcheck` and
    `dialcheck --help` take under a second (torch and transformers alone take several)."""
    code = (
        "import sys, dialcheck; from dialcheck.cli import build_parser; build_parser(); "
        f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == []


def test_a_command_that_loads_no_model_imports_no_transformers_and_keeps_them_quiet_when_they_load():
    """The CLI silenced transformers by importing it, a second on every command (`dialcheck models` took twice as
    long as it needs); it now sets transformers' own environment switches, which keep a later load as quiet."""
    code = (
        "import sys, logging; from dialcheck.cli import main; main(['models']); "
        "print('transformers' in sys.modules); "
        "from transformers.utils import logging as hf; "
        "print(hf.get_verbosity() == logging.ERROR, hf.is_progress_bar_enabled())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[-3:] == ["False", "True", "False"]


def test_version_flag_prints_the_installed_version(capsys):
    """`dialcheck --version` was refused ("the following arguments are required: COMMAND", exit 2)."""
    from importlib.metadata import version

    from dialcheck.cli import main

    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out == f"dialcheck {version('dialcheck')}\n"
