"""What a wheel carries and how an installed package starts: package data, build metadata, light imports."""

import ast
import fnmatch
import re
import subprocess
import sys
import tomllib
import warnings
from functools import partial
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


def _wheel_models() -> set[str]:
    """The model folders setuptools puts in the wheel, as the build computes its package data."""
    pytest.importorskip("setuptools", minversion="77")
    from setuptools.config.pyprojecttoml import apply_configuration
    from setuptools.dist import Distribution

    dist = apply_configuration(Distribution(), ROOT / "pyproject.toml")
    dist.include_package_data = False  # the same exclusions apply; no egg-info is written into the checkout
    build_py = dist.get_command_obj("build_py")
    build_py.ensure_finalized()
    files = [f for package, _, _, names in build_py.data_files if package == "dialcheck" for f in names]
    return {f.split("/")[1] for f in files if f.startswith("models/")}


@pytest.mark.usefixtures("repository_only_models")
def test_the_wheel_leaves_out_the_repository_only_models_and_no_other(monkeypatch):
    """With every model folder the wheel was 177 MB, over PyPI's 100 MB per file: it could not be uploaded. The
    superseded models (catalog.REPOSITORY_ONLY, which names them to an install that lacks one) stay in the
    repository; pyproject.toml's exclude-package-data must say exactly the same, or the two would drift."""
    from dialcheck.catalog import REPOSITORY_ONLY, models_dir

    excluded = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["exclude-package-data"]
    assert sorted(excluded["dialcheck"]) == sorted(f"models/{name}/*" for name in REPOSITORY_ONLY)
    folders = {p.parent.name for p in models_dir().glob("*/dialcheck.json")}
    assert set(REPOSITORY_ONLY) <= folders  # kept in the checkout
    assert set(REPOSITORY_ONLY.values()) <= folders - set(REPOSITORY_ONLY)  # each replaced by one the wheel has
    monkeypatch.chdir(ROOT)
    assert _wheel_models() == folders - set(REPOSITORY_ONLY)


def test_no_model_the_package_runs_or_the_readme_recommends_is_left_out_of_the_wheel():
    """The wheel must carry the defaults, their fallbacks, the answer classifiers, every model a shipped model's
    config loads (a cascade's stages, a router's cascades) and the models README's commands and English table
    recommend; a superseded model is only one nothing of these reaches."""
    import re

    from dialcheck.analysis.answers import DEFAULT_FOLDER, LIGHT_FOLDER
    from dialcheck.catalog import REPOSITORY_ONLY, shipped_models
    from dialcheck.detectors import DEFAULT_MODELS, FALLBACK_MODELS

    wheel = [m for m in shipped_models() if m.name not in REPOSITORY_ONLY]
    needed = {*DEFAULT_MODELS.values(), *FALLBACK_MODELS.values(), DEFAULT_FOLDER, LIGHT_FOLDER}
    needed |= {stage for m in wheel for stage in m.stages}  # the stages of a router's cascades are in its own
    readme = (ROOT / "README.md").read_text()
    needed |= set(re.findall(r"(?:--model|--classifier|--init|dialcheck models) ([a-z][a-z0-9-]+-v\d+)", readme))
    english = readme.split("**Other shipped English detectors**")[1].split("\n\n")[1]
    needed |= {m for row in english.splitlines() if row.startswith("| `") for m in re.findall(r"`([^`]+)`", row)[:1]}
    assert "decode-utterance-minilm-v4" in needed and "decode-router-v1" in needed  # the README was read
    assert not needed & set(REPOSITORY_ONLY)
    assert needed <= {m.name for m in wheel}


# Tests that name a superseded model as text only, reading none of it (the fallback's card lists its soup's ingredients)
# or compare REPOSITORY_ONLY's names with the wheel's and the sdist's files (the packaging tests below)
NAMES_ONLY = {
    "test_shipped_models.py::test_the_minilm_fallback_is_a_soup_whose_card_names_its_ingredients",
    "test_packaging.py::test_no_model_the_package_runs_or_the_readme_recommends_is_left_out_of_the_wheel",
    "test_packaging.py::test_the_sdist_carries_what_the_tests_read_and_no_more_models_than_the_wheel",
    "test_packaging.py::test_the_unguarded_scan_sees_helper_constants_and_repository_only",
}


def _strings(node: ast.AST) -> list[str]:
    """The string constants in ``node``, docstrings left out (they tell a test's history)."""
    docs = {
        id(n.body[0].value)
        for n in ast.walk(node)
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Module)
        and n.body
        and isinstance(n.body[0], ast.Expr)
        and isinstance(n.body[0].value, ast.Constant)
    }
    return [
        n.value
        for n in ast.walk(node)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs
    ]


def _uses_repository_only(node: ast.AST) -> bool:
    """Whether ``node`` uses ``REPOSITORY_ONLY`` (the name, or ``catalog.REPOSITORY_ONLY``)."""
    return any(
        (isinstance(n, ast.Name) and n.id == "REPOSITORY_ONLY")
        or (isinstance(n, ast.Attribute) and n.attr == "REPOSITORY_ONLY")
        for n in ast.walk(node)
    )


def _constants(named: re.Pattern, tree: ast.Module) -> set[str]:
    """The module constants of ``tree`` holding a superseded model's name (or taken from ``REPOSITORY_ONLY``)."""
    return {
        t.id
        for n in tree.body
        if isinstance(n, ast.Assign | ast.AnnAssign)
        and n.value is not None
        and (any(named.search(s) for s in _strings(n.value)) or _uses_repository_only(n.value))
        for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
        if isinstance(t, ast.Name)
    }


def _imported_constants(tree: ast.Module, helpers: dict[str, set[str]]) -> tuple[set[str], set[tuple[str, str]]]:
    """The names a test module binds to a helpers_*.py constant that names a superseded model (``from helpers_x
    import NAME [as OTHER]``), and the ``(module, NAME)`` attributes it may read (``import helpers_x``)."""
    names, attributes = set(), set()
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom) and n.module in helpers:
            names |= {a.asname or a.name for a in n.names if a.name in helpers[n.module]}
        elif isinstance(n, ast.Import):
            for a in n.names:
                if a.name in helpers:
                    attributes |= {(a.asname or a.name, c) for c in helpers[a.name]}
    return names, attributes


def _names_a_superseded_model(
    named: re.Pattern, constants: set[str], attributes: set[tuple[str, str]], node: ast.AST
) -> bool:
    used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    read = {
        (n.value.id, n.attr) for n in ast.walk(node) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
    }
    return (
        bool(used & constants or read & attributes)
        or _uses_repository_only(node)
        or any(named.search(s) for s in _strings(node))
    )


def _tests_reading_superseded_models_unguarded(tests: Path = ROOT / "tests") -> list[str]:
    """Tests (``file::name``) that name a superseded model (catalog.REPOSITORY_ONLY: a string, a module constant
    holding one, a helpers_*.py constant imported, a fixture naming one, or REPOSITORY_ONLY itself) with no fixture
    standing for where they are not: ``repository_only_models`` (a skip there), or one that builds an install without
    them (its code names REPOSITORY_ONLY, as test_models_install's ``installed``). A test of the sdist or a wheel
    failed on 'dialcheck.json is missing'."""
    from dialcheck.catalog import REPOSITORY_ONLY

    named = re.compile(r"(?<![\w.-])(?:{})(?![\w.])".format("|".join(map(re.escape, REPOSITORY_ONLY))))
    conftest = ast.parse((tests / "conftest.py").read_text()) if (tests / "conftest.py").exists() else ast.Module([])
    helpers = {p.stem: _constants(named, ast.parse(p.read_text())) for p in sorted(tests.glob("helpers_*.py"))}
    found = []
    for path in sorted(tests.glob("test_*.py")):
        tree = ast.parse(path.read_text())
        functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
        fixtures = {
            n.name: n
            for n in [*conftest.body, *functions]
            if isinstance(n, ast.FunctionDef) and any("fixture" in ast.unparse(d) for d in n.decorator_list)
        }
        imported, attributes = _imported_constants(tree, helpers)
        constants = _constants(named, tree) | imported

        names = partial(_names_a_superseded_model, named, constants, attributes)
        guards, reading = {"repository_only_models"}, {name for name, f in fixtures.items() if names(f)}
        for _ in fixtures:  # a fixture using one of them is one too
            for name, f in fixtures.items():
                args = {a.arg for a in f.args.args}
                if _uses_repository_only(f) or args & guards:
                    guards.add(name)
                if args & reading:
                    reading.add(name)
        marked = {  # pytestmark = pytest.mark.usefixtures(...): the module's own tests
            s
            for n in tree.body
            if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in n.targets)
            for s in _strings(n)
        }
        for f in functions:
            if not f.name.startswith("test_") or f"{path.name}::{f.name}" in NAMES_ONLY:
                continue
            args = {a.arg for a in f.args.args}
            if (names(f) or args & reading) and not (args | set(_strings(f)) | marked) & guards:
                found.append(f"{path.name}::{f.name}")
    return found


def test_the_sdist_carries_what_the_tests_read_and_no_more_models_than_the_wheel(monkeypatch, tmp_path):
    """The sdist shipped tests/test_*.py alone: without conftest.py and the helpers_*.py every test module failed to
    import from an unpacked sdist, and tests read benchmarks/ (scripts and data), examples/ and docs/. MANIFEST.in
    adds them; the models stay exactly the wheel's (the superseded ones kept it over PyPI's 100 MB), so a test that
    reads a superseded model must skip without it (the fixture repository_only_models): test_soup's `train --init`
    of v5 and v6 still failed from the unpacked sdist."""
    pytest.importorskip("setuptools", minversion="77")
    from setuptools.config.pyprojecttoml import apply_configuration
    from setuptools.dist import Distribution

    from dialcheck.catalog import REPOSITORY_ONLY

    monkeypatch.chdir(ROOT)
    dist = apply_configuration(Distribution(), ROOT / "pyproject.toml")
    dist.script_name = "setup.py"  # as under `python -m build`, which has none either
    egg_info = dist.get_command_obj("egg_info")
    egg_info.egg_base = str(tmp_path)  # the file list (SOURCES.txt) is written there, not into the checkout
    egg_info.ensure_finalized()
    egg_info.run()
    sdist = set((Path(egg_info.egg_info) / "SOURCES.txt").read_text().splitlines())
    read = [f for d in ("tests", "benchmarks", "examples", "docs") for f in (ROOT / d).rglob("*") if f.is_file()]
    read = {f.relative_to(ROOT).as_posix() for f in read if "__pycache__" not in f.parts}
    assert {"tests/conftest.py", "tests/helpers_cli.py", "benchmarks/data/cdconv_hand_d.jsonl"} <= read
    assert not read - sdist
    models = {f.split("/")[3] for f in sdist if f.startswith("src/dialcheck/models/")}
    assert not models & set(REPOSITORY_ONLY)
    assert models == _wheel_models()
    unguarded = _tests_reading_superseded_models_unguarded()
    assert not unguarded, f"name a shipped model, or use the fixture repository_only_models: {unguarded}"


def test_the_unguarded_scan_sees_helper_constants_and_repository_only(tmp_path):
    """The scan missed a superseded model's name held in a helpers_*.py constant a test imports, and a test that
    reads catalog.REPOSITORY_ONLY (by attribute or name); it also took any module-level code mentioning pytestmark
    (its own source) for a pytestmark, so test_packaging's tests all passed for guarded. Planted cases are found."""
    from dialcheck.catalog import REPOSITORY_ONLY

    old = next(iter(REPOSITORY_ONLY))
    (tmp_path / "conftest.py").write_text("")
    (tmp_path / "helpers_old.py").write_text(f"OLD = {old!r}\nNEW = 'decode-cascade-v9'\n")
    (tmp_path / "test_planted.py").write_text(
        "import helpers_old\n"
        "from dialcheck import catalog\n"
        "from dialcheck.catalog import REPOSITORY_ONLY\n"
        "from helpers_old import NEW, OLD as SUPERSEDED\n\n"
        "def test_imported():\n    load(SUPERSEDED)\n\n"
        "def test_by_module():\n    load(helpers_old.OLD)\n\n"
        "def test_attribute():\n    load(next(iter(catalog.REPOSITORY_ONLY)))\n\n"
        "def test_name():\n    load(list(REPOSITORY_ONLY)[0])\n\n"
        "def test_shipped():\n    load(NEW, helpers_old.NEW)\n\n"
        "def test_guarded(repository_only_models):\n    load(SUPERSEDED)\n"
    )
    found = _tests_reading_superseded_models_unguarded(tmp_path)
    assert found == [f"test_planted.py::test_{n}" for n in ("imported", "by_module", "attribute", "name")]
