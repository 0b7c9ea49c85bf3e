"""Data directory resolution, a versioned dataset registry and JSONL reading with located errors."""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..io import json_type, json_type_name

__all__ = [
    "DatasetInfo",
    "data_dir",
    "dataset_names",
    "get_dataset_info",
    "load_dataset",
    "read_jsonl",
    "read_lines",
    "require_corpus_file",
]

ENV_VAR = "DIALCHECK_DATA_DIR"

log = logging.getLogger(__name__)


def data_dir(path: str | Path | None = None) -> Path:
    """The corpus folder: the argument, else ``$DIALCHECK_DATA_DIR``, else ``../shared/data``.

    ``../shared/data`` is looked up beside the current directory and, when the package runs from a checkout (an
    editable install), beside the repository, so commands work from the repository root. An installed package has
    no repository: there the error says to pass ``--data-dir`` or set the variable (it named no venv path, and
    ``<venv>/lib/shared/data`` was looked up for nothing).
    """
    if path is not None:
        if not str(path).strip():  # Path("") is the current directory: --data-dir "$UNSET" read it silently
            raise InputError("data directory: the path is empty")
        p = Path(path).expanduser()
        if not p.is_dir():
            raise InputError(f"data directory {p} {'is not a directory' if p.exists() else 'does not exist'}")
        return p
    if os.environ.get(ENV_VAR):
        p = Path(os.environ[ENV_VAR]).expanduser()
        if not p.is_dir():
            raise InputError(f"${ENV_VAR}={p} is not a directory")
        return p
    candidates = [Path.cwd() / ".." / "shared" / "data", Path.cwd() / "shared" / "data"]
    repository = checkout_root()
    if repository is not None:
        candidates.append(repository.parent / "shared" / "data")
    for c in candidates:
        if c.is_dir():
            return c.resolve()
    if repository is not None:
        raise InputError(
            f"no data directory found: pass --data-dir, set ${ENV_VAR}, or place the corpora in ../shared/data"
        )
    raise InputError(
        f"no data directory found: pass --data-dir DIR or set ${ENV_VAR}=DIR, DIR the folder that holds the "
        "corpora (decode/, cdconv/, ...: `dialcheck data list` names them, `dialcheck data verify --data-dir DIR` "
        "checks a copy)"
    )


def checkout_root(module: str | Path | None = None) -> Path | None:
    """The repository that holds this package when it runs from a checkout (``REPO/src/dialcheck/...`` beside
    ``REPO/pyproject.toml``), None for an installed package.

    >>> checkout_root("/venv/lib/python3.11/site-packages/dialcheck/datasets/base.py") is None
    True
    """
    parents = Path(__file__ if module is None else module).resolve().parents
    if len(parents) > 3 and parents[2].name == "src" and (parents[3] / "pyproject.toml").is_file():
        return parents[3]
    return None


def require_corpus_file(path: Path) -> Path:
    """``path`` if it exists, else an :class:`InputError` saying the corpus file is missing, and that a gzipped
    copy beside it is not read (corpus files are read as released, so that their checksums hold)."""
    if path.exists():
        return path
    raise InputError(f"corpus file is missing{gz_note(path)} (see `dialcheck data verify`)", str(path))


def gz_note(path: Path) -> str:
    """``"; NAME.gz is there: ..."`` when a gzipped copy of the missing ``path`` lies beside it, else ``""``."""
    gz = path.with_name(path.name + ".gz")
    return f"; {gz.name} is there: decompress it (gunzip -k), corpus files are read as released" if gz.exists() else ""


def read_lines(path: Path) -> Iterator[tuple[int, str]]:
    """Yield (1-based line number, line without its line break) of a UTF-8 text file; bytes that are not
    UTF-8 raise an error naming the file, line and column (a leading byte-order mark is dropped)."""
    from ..io import decode_utf8, input_lines, open_input

    require_corpus_file(path)
    for n, raw in enumerate(input_lines(open_input(path), str(path)), start=1):
        yield n, decode_utf8(raw, str(path), n).rstrip("\r\n")


def read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (1-based line number, object); a bad line raises an error naming file and line."""
    from ..io import json_error

    for n, line in read_lines(path):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise InputError(json_error(e), str(path), n) from None
        if not isinstance(obj, dict):
            raise InputError("expected a JSON object", str(path), n)
        yield n, obj


def require(obj: dict[str, Any], key: str, typ: type | tuple[type, ...], path: Path, line: int) -> Any:
    """``obj[key]`` checked for type, with a located error naming JSON types (``true`` is not an int).

    >>> require({"label": 3}, "label", str, Path("nli.jsonl"), 2)
    Traceback (most recent call last):
    ...
    dialcheck.errors.InputError: nli.jsonl, line 2: label: expected string, got int
    """
    if key not in obj:
        raise InputError(f"{key}: missing", str(path), line)
    v = obj[key]
    kinds = typ if isinstance(typ, tuple) else (typ,)
    if not isinstance(v, kinds) or (isinstance(v, bool) and bool not in kinds):
        raise InputError(f"{key}: expected {json_type_name(typ)}, got {json_type(v)}", str(path), line)
    return v


@dataclass(frozen=True)
class DatasetInfo:
    """A registered dataset: what it is, which files it reads and how to load it."""

    name: str
    description: str
    files: tuple[str, ...]
    loader: Callable[[Path], list[Any]]
    count: int | None = None
    sha256: tuple[str | None, ...] = ()


_REGISTRY: dict[str, DatasetInfo] = {}


def register_dataset(
    name: str,
    description: str,
    files: tuple[str, ...],
    count: int | None = None,
    sha256: tuple[str | None, ...] = (),
) -> Callable[[Callable[[Path], list[Any]]], Callable[[Path], list[Any]]]:
    """Decorator registering a loader ``f(data_dir) -> list`` under a versioned name."""

    def deco(fn: Callable[[Path], list[Any]]) -> Callable[[Path], list[Any]]:
        if name in _REGISTRY:
            raise ValueError(f"dataset {name!r} registered twice")
        _REGISTRY[name] = DatasetInfo(name, description, files, fn, count, sha256)
        return fn

    return deco


def dataset_names() -> list[str]:
    return sorted(_REGISTRY)


def get_dataset_info(name: str) -> DatasetInfo:
    if name not in _REGISTRY:
        raise InputError(f"unknown dataset {name!r}; known: {', '.join(dataset_names())}")
    return _REGISTRY[name]


def load_dataset(name: str, data_dir_: str | Path | None = None) -> list[Any]:
    """Load a registered dataset from the data directory.

    >>> len(load_dataset("decode.human_bot.v1"))  # doctest: +SKIP
    764
    """
    info = get_dataset_info(name)
    root = data_dir(data_dir_)
    records = info.loader(root)
    if info.count is not None and len(records) != info.count:  # a copy cut at a line end reads without an error
        files = ", ".join(info.files)
        log.warning(
            "%s: %s records read, the release has %s: %s under %s may be truncated or edited "
            "(`dialcheck data verify` checks the copies)",
            name,
            f"{len(records):,}",
            f"{info.count:,}",
            files,
            root,
        )
    return records


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
