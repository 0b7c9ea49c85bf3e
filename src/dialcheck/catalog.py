"""The models shipped inside the package: what each one is for, what it needs and how well it scored.

Superseded models (:data:`REPOSITORY_ONLY`) stay in the repository, where their results can be reproduced, and
are left out of the wheel (``[tool.setuptools.exclude-package-data]`` in pyproject.toml lists the same folders);
an install that lacks one says so when it is named (:func:`repository_only_note`).

>>> names = [m.name for m in shipped_models()]
>>> "decode-utterance-minilm-v10" in names and "circa-yesno-mpnet-v1" in names
True
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import ModelError

__all__ = [
    "REPOSITORY_ONLY",
    "USE_FOLDER",
    "ShippedModel",
    "missing_repository_only",
    "models_dir",
    "read_model",
    "repository_only_note",
    "shipped_model",
    "shipped_models",
]

log = logging.getLogger(__name__)

# The numbers shown per model type in the listing (all of them are in ShippedModel.metrics).
HEADLINE = {
    "decode.utterance.v1": ("dev/accuracy", "human_bot/accuracy", "rct/accuracy", "dev/evidence_f1"),
    "cascade.v1": ("dev/accuracy", "human_bot/accuracy", "rct/accuracy", "dev/evidence_f1"),
    "router.v1": ("dev/accuracy", "human_bot/accuracy", "rct/accuracy", "dev/evidence_f1"),
    "citod.grounded.v1": ("val_QI_f1", "val_HI_f1", "val_KBI_f1"),
    "cdconv.flat.v1": ("test/2class/accuracy", "test/4class/macro_f1"),
    "cdconv.paircheck.v1": ("test/2class/accuracy", "test/4class/macro_f1"),
    "circa.yesno.v1": ("val_relaxed_accuracy", "loso_relaxed_accuracy"),
}


# Superseded models, with the model that replaced each: kept in the repository (their cards' numbers can be
# reproduced; tests run them from the checkout) but not in the wheel, which PyPI caps at 100 MB (with them it was
# 177 MB). No default, fallback, answer classifier, cascade or router stage and no model the README recommends is
# among them (tests/test_packaging.py checks that, and that pyproject.toml's exclude-package-data is this list).
REPOSITORY_ONLY: dict[str, str] = {
    "cdconv-flat-gemma-v1": "cdconv-flat-gemma-v9",
    "cdconv-flat-gemma-v2": "cdconv-flat-gemma-v9",
    "cdconv-flat-gemma-v3": "cdconv-flat-gemma-v9",
    "cdconv-flat-gemma-v4": "cdconv-flat-gemma-v9",
    "cdconv-flat-gemma-v5": "cdconv-flat-gemma-v9",
    "cdconv-flat-gemma-v6": "cdconv-flat-gemma-v9",
    "decode-utterance-minilm-v3": "decode-utterance-minilm-v10",
    "decode-utterance-minilm-v6": "decode-utterance-minilm-v10",
    "decode-utterance-minilm-v8": "decode-utterance-minilm-v10",
    "decode-utterance-minilm-v9": "decode-utterance-minilm-v10",
}


#: How each caller names a model by its folder, for :func:`repository_only_note`'s advice (the caller's own words, as
#: ``api.route(choose=...)`` gives them): an option of the command line, Python's ``model=``, a cascade's stage.
USE_FOLDER = {
    "--model": "--model {path}",
    "--init": "--init {path}",
    "model=": 'dialcheck.load("{path}"), or model="{path}"',
    "stage": 'name it in the cascade\'s dialcheck.json ({key}: "{path}")',
}


def repository_only_note(name: str | Path, option: str | None = None, key: str | None = None) -> str | None:
    """What to say of ``name`` when it names a superseded model this install does not carry (one of
    :data:`REPOSITORY_ONLY`, its folder absent from :func:`models_dir`): where it is and how to use it, in the words
    of the caller that named it (``option``, a key of :data:`USE_FOLDER`: ``"--model"``, ``"--init"``, ``"model="``,
    ``"stage"``, with the cascade's ``key`` that names it when known); a caller that cannot tell (a model loaded by
    name for the command line and Python alike) gets both.
    None for any other name, and for a repository-only model present here (a checkout).

    >>> repository_only_note("decode-utterance-minilm-v10") is None
    True
    """
    name = str(name)
    if name not in REPOSITORY_ONLY or (models_dir() / name / "dialcheck.json").exists():
        return None
    path = f"CHECKOUT/src/dialcheck/models/{name}"
    if option is None:  # check --model NAME and dialcheck.load(NAME) both reach it through detectors.model_folder
        ways = f"--model {path} on the command line, " + USE_FOLDER["model="].format(path=path) + " in Python"
    else:
        ways = USE_FOLDER[option].format(path=path, key=f'"{key}"' if key else '"first" or "second"')
    return (
        f"{name} is a superseded model (replaced by {REPOSITORY_ONLY[name]}) kept in the dialcheck source "
        f"repository only, not in the installed package; to use it, clone the repository and pass its folder: {ways}"
    )


def models_dir() -> Path:
    """The folder of the shipped models inside the installed package."""
    return Path(__file__).resolve().parent / "models"


@dataclass(frozen=True)
class ShippedModel:
    """One shipped model folder, read from its ``dialcheck.json``."""

    name: str
    path: Path
    detector: str
    base: str
    labels: tuple[str, ...]
    size_bytes: int
    roles: tuple[str, ...] = ()
    metrics: dict[str, float] = field(default_factory=dict)
    trained: str = ""
    stages: tuple[str, ...] = ()  # a cascade or a router: the shipped models it runs (their sizes are in size_bytes)
    repository_only: bool = False  # superseded (REPOSITORY_ONLY): here in a checkout, not in the wheel

    @property
    def base_installed(self) -> bool:
        """Whether the base encoder's weight package is installed (nothing is joined or converted here)."""
        from .backbones import base_available

        return base_available(self.base)

    @property
    def install(self) -> str:
        """The command that installs the base encoder ("" for an unknown base)."""
        from .backbones import KNOWN_BASES, canonical_name
        from .vocab import split_base

        return KNOWN_BASES.get(canonical_name(split_base(self.base)[0]), "")

    def headline(self) -> dict[str, float]:
        """The few metrics the listing shows for this kind of model."""
        return {k: self.metrics[k] for k in HEADLINE.get(self.detector, ()) if k in self.metrics}

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "path": str(self.path),
            "detector": self.detector,
            "base": self.base,
            "base_installed": self.base_installed,
            "install": self.install,
            "labels": list(self.labels),
            "size_bytes": self.size_bytes,
            "roles": list(self.roles),
            "stages": list(self.stages),
            "trained": self.trained,
            "repository_only": self.repository_only,
            "metrics": self.metrics,
        }


def _roles() -> dict[str, list[str]]:
    from .analysis.answers import DEFAULT_FOLDER, LIGHT_FOLDER
    from .detectors import DEFAULT_MODELS, FALLBACK_MODELS

    what = {
        "en": "default detector (English)",
        "tod": "default detector (task-oriented)",
        "zh": "default detector (Chinese)",
    }
    roles: dict[str, list[str]] = {}
    for language, name in DEFAULT_MODELS.items():
        roles.setdefault(name, []).append(what.get(language, f"default detector ({language})"))
    for language, name in FALLBACK_MODELS.items():
        roles.setdefault(name, []).append(
            f"{what.get(language, language)} where {DEFAULT_MODELS[language]}'s base or runtime is not installed"
        )
    roles.setdefault(DEFAULT_FOLDER, []).append("default answer classifier (n-best)")
    roles.setdefault(LIGHT_FOLDER, []).append("light answer classifier (n-best)")
    return roles


def _read(folder: Path, roles: dict[str, list[str]]) -> ShippedModel:
    from .detectors.cascade import stage_folders
    from .detectors.modeling import CONFIG_NAME, DetectorConfig
    from .detectors.router import router_folders

    # a config without "base" or "labels" loads with DetectorConfig's defaults: named here as they will be used (a
    # hand-written config was shown "base: all-MiniLM-L6-v2", then "base  is not installed", with no name)
    default = DetectorConfig(detector="")
    config_file = folder / CONFIG_NAME
    try:
        cfg = json.loads(config_file.read_text(encoding="utf-8"))
        options = cfg.get("options") or {}
        router = cfg.get("detector") == "router.v1"
        stages = (router_folders if router else stage_folders)(folder, options)
        outside = [s for s in stages if not s.is_relative_to(folder)]  # a stage saved inside is counted with it
        if router:  # a router names cascades: the weights are in their stages
            inner = [t for s in outside for t in _stages_of(s) if not t.is_relative_to(s)]
            outside = list(dict.fromkeys([*outside, *inner]))
        return ShippedModel(
            name=folder.name,
            path=folder,
            detector=str(cfg["detector"]),
            base=str(cfg.get("base", default.base)),
            labels=tuple(cfg.get("labels", default.labels)),
            size_bytes=sum(_size(f) for f in (folder, *outside)),
            roles=tuple(roles.get(folder.name, ())),
            metrics={k: float(v) for k, v in (cfg.get("metrics") or {}).items() if isinstance(v, int | float)},
            trained=str((cfg.get("training") or {}).get("date", "")),
            stages=tuple(s.name for s in stages),
            repository_only=folder.name in REPOSITORY_ONLY and folder.resolve().parent == models_dir(),
        )
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ModelError(f"{config_file}: unreadable model configuration ({e})") from e


def read_model(folder: str | Path) -> ShippedModel:
    """The :class:`ShippedModel` of any detector folder (one written by ``dialcheck models NAME --save DIR``,
    say), read from its ``dialcheck.json`` as the shipped ones are, with the roles of the shipped model of the
    same name; an unreadable configuration is a :class:`~dialcheck.errors.ModelError`.

    >>> m = read_model(models_dir() / "circa-yesno-minilm-v2")
    >>> m.name, m.detector, m.base
    ('circa-yesno-minilm-v2', 'circa.yesno.v1', 'all-MiniLM-L6-v2')
    >>> read_model("no-such-folder")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dialcheck.errors.ModelError: no-such-folder/dialcheck.json: unreadable model configuration (...No such file...)
    """
    return _read(Path(folder), _roles())


def _stages_of(folder: Path) -> list[Path]:
    """The stage folders a saved cascade names (none for another detector or an unreadable folder)."""
    from .detectors.cascade import stage_folders
    from .detectors.modeling import CONFIG_NAME

    try:
        cfg = json.loads((folder / CONFIG_NAME).read_text(encoding="utf-8"))
        return stage_folders(folder, cfg.get("options") or {}) if cfg.get("detector") == "cascade.v1" else []
    except (OSError, ValueError, TypeError):
        return []


def _size(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())


def shipped_models() -> list[ShippedModel]:
    """Every model folder shipped with the package, defaults first, then by name."""
    roles = _roles()
    order = [r for rs in roles.values() for r in rs]
    folders = sorted(p.parent for p in models_dir().glob("*/dialcheck.json"))
    models = [_read(f, roles) for f in folders]
    return sorted(models, key=lambda m: (min((order.index(r) for r in m.roles), default=len(order)), m.name))


def shipped_model(name: str) -> ShippedModel:
    """The shipped model called ``name``; a ModelError lists the names there are.

    >>> shipped_model("decode-utterance-minilm-v10").detector
    'decode.utterance.v1'
    """
    if (note := repository_only_note(name)) is not None:
        raise ModelError(note)
    for m in shipped_models():
        if m.name == name:
            return m
    names = ", ".join(m.name for m in shipped_models())
    raise ModelError(f"no shipped model named {name!r}; shipped: {names}")


def missing_repository_only() -> list[str]:
    """The superseded models (:data:`REPOSITORY_ONLY`) this install leaves out: all of them from the wheel, none
    in a checkout."""
    return [n for n in REPOSITORY_ONLY if repository_only_note(n) is not None]
