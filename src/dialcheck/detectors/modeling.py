"""Building, saving and loading the sequence classifier behind a detector (full weights or LoRA adapters).

A detector folder holds ``dialcheck.json`` (the :class:`DetectorConfig`) and ``weights.safetensors``.
With an adapter, the weights file holds only the LoRA matrices and the classification head; the base
encoder is resolved by name from an installed package (see :mod:`dialcheck.backbones`). Without one,
the folder is a complete Hugging Face model. Nothing is ever unpickled.

A base with a vocabulary extension (``all-MiniLM-L6-v2+zh``, see :mod:`dialcheck.vocab`) also writes
``added_tokens.txt``; with an adapter only the added embedding rows are trained and saved.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import numbers
import warnings
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..backbones import base_window, canonical_name, resolve_base
from ..errors import InputError, ModelError
from ..io import json_type
from ..vocab import extend_vocabulary, extension_tokens, read_added_tokens, split_base, write_added_tokens

__all__ = [
    "CONFIG_NAME",
    "WEIGHTS_NAME",
    "DetectorConfig",
    "build_model",
    "check_threshold",
    "check_thresholds",
    "load_model",
    "load_pretrained",
    "load_trainable",
    "save_model",
    "shipped_or_path",
]

log = logging.getLogger(__name__)

CONFIG_NAME = "dialcheck.json"
WEIGHTS_NAME = "weights.safetensors"
FORMAT_VERSION = 1
DEFAULT_LABELS = ("non_contradiction", "contradiction")
RUNTIME_OPTIONS = ("int8", "onnx")  # set by Detector.quantize / use_onnx for this process only, never saved

_LORA_TARGETS = (
    r".*(encoder|layers|layer)\..*\.(query|key|value|q|k|v|o|q_proj|k_proj|v_proj|o_proj|dense|"
    r"gate_proj|up_proj|down_proj)$"
)
_HEAD_NAMES = ("classifier", "pooler", "score")


UNIT_THRESHOLDS = ("tau", "eta_e", "recheck_low", "recheck_high", "recheck_floor", "veto_below")
#: The threshold of a stage that never fires (a four-category detector's stage, ``tau_pairs``): above every score.
NEVER = 1.01
OWN_CHECK = ("tau_int8",)  # an object of thresholds by int8 range: the cascade checks its keys and values


def check_threshold(value: Any, name: str) -> float:
    """``value`` as a threshold: a number in [0, 1], else an :class:`~dialcheck.errors.InputError` naming it.

    >>> check_threshold(2, "tau")
    Traceback (most recent call last):
    ...
    dialcheck.errors.InputError: tau: expected a number in [0, 1], got 2
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0.0 <= float(value) <= 1.0:
        raise InputError(f"{name}: expected a number in [0, 1], got {_shown(value)}")
    return float(value)


def _shown(value: Any) -> str:
    return json_type(value) if value is None or isinstance(value, (str, bool, list, dict)) else repr(value)


def check_thresholds(thresholds: Any, name: str = "thresholds") -> None:
    """A config's ``thresholds``, each named in the error (``thresholds.tau: ...``): ``tau``, ``eta_e``,
    ``recheck_low``, ``recheck_high``, ``recheck_floor`` and ``veto_below`` numbers in [0, 1] (``tau`` also
    :data:`NEVER`, which a stage that never fires saves); any other (a category's or a stage's threshold,
    ``tau_pairs``) a number of at least 0, where above 1 means never.

    >>> check_thresholds({"tau": 0.4, "history": 1.01})
    >>> check_thresholds({"tau": NEVER})  # a four-category detector's stage that never fires
    >>> check_thresholds({"tau": 7})
    Traceback (most recent call last):
    ...
    dialcheck.errors.InputError: thresholds.tau: expected a number in [0, 1], got 7
    """
    if not isinstance(thresholds, dict):
        raise InputError(f"{name}: expected an object of thresholds, got {json_type(thresholds)}")
    for key, value in thresholds.items():
        if key in OWN_CHECK or (key == "tau" and value == NEVER):
            continue
        if key in UNIT_THRESHOLDS:
            check_threshold(value, f"{name}.{key}")
        elif (
            isinstance(value, bool)
            or not isinstance(value, numbers.Real)
            or not math.isfinite(float(value))
            or float(value) < 0.0
        ):
            raise InputError(f"{name}.{key}: expected a number of at least 0, got {_shown(value)}")


def check_max_length(value: Any, name: str = "max_length") -> int:
    """A model's window in tokens: a whole number of at least 1.

    >>> check_max_length(0)
    Traceback (most recent call last):
    ...
    dialcheck.errors.InputError: max_length: expected a whole number of tokens, at least 1, got 0
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise InputError(f"{name}: expected a whole number of tokens, at least 1, got {_shown(value)}")
    return int(value)


@dataclass
class DetectorConfig:
    """Everything needed to rebuild a detector: its type, base, labels, thresholds and provenance."""

    detector: str
    base: str = "all-MiniLM-L6-v2"
    labels: list[str] = field(default_factory=lambda: list(DEFAULT_LABELS))
    thresholds: dict[str, float] = field(default_factory=lambda: {"tau": 0.5, "eta_e": 0.5})
    max_length: int = 128
    problem_type: str = "single_label_classification"  # or "multi_label_classification"
    adapter: dict[str, Any] | None = None
    options: dict[str, Any] = field(default_factory=dict)
    training: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, Any] = field(default_factory=dict)
    format_version: int = FORMAT_VERSION

    def __post_init__(self) -> None:
        """The thresholds and window checked wherever a config is made (in code or read from a file), so a
        detector never holds a threshold its setters would refuse."""
        check_thresholds(self.thresholds)
        check_max_length(self.max_length)

    def to_json(self) -> str:
        """The saved form; the runtime switches of this process (``int8``, ``onnx``) are left out, as the
        weights written are the float32 ones and a later load must not believe it was switched."""
        data = asdict(self)
        data["options"] = self.saved_options()
        return json.dumps(data, indent=2, sort_keys=False) + "\n"

    def saved_options(self) -> dict[str, Any]:
        """``options`` as saved: without this process's runtime switches (``RUNTIME_OPTIONS``)."""
        return {k: v for k, v in self.options.items() if k not in RUNTIME_OPTIONS}

    @classmethod
    def from_file(cls, path: Path) -> DetectorConfig:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as e:
            raise ModelError(f"{path}: cannot read the detector config ({e})") from None
        if not isinstance(data, dict):
            raise ModelError(f"{path}: expected a JSON object (the detector config), got {json_type(data)}")
        if data.get("format_version", 0) > FORMAT_VERSION:
            raise ModelError(f"{path}: format_version {data['format_version']} is newer than this dialcheck")
        known = set(cls.__dataclass_fields__)
        unknown = set(data) - known
        if unknown:
            log.warning("%s: ignoring unknown config keys %s", path, sorted(unknown))
        if "detector" not in data:
            raise ModelError(f"{path}: 'detector' (the registered detector type) is missing")
        try:
            return cls(**{k: v for k, v in data.items() if k in known})
        except InputError as e:  # a threshold or the window: named by file and field
            raise ModelError(f"{path}: {e.message}") from None


@contextlib.contextmanager
def _quiet_transformers() -> Iterator[None]:
    """Loading a model prints nothing: no info logs, no per-tensor progress bar, no deprecation noise."""
    import transformers

    level = transformers.logging.get_verbosity()
    bar = transformers.utils.logging.is_progress_bar_enabled()
    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            yield
    finally:
        transformers.logging.set_verbosity(level)
        if bar:
            transformers.utils.logging.enable_progress_bar()


def lora_config(model: Any, adapter: dict[str, Any], trainable_tokens: list[int] | None = None) -> Any:
    from peft import LoraConfig, TaskType

    heads = [n for n in _HEAD_NAMES if any(m.split(".")[-1] == n or f".{n}" in m for m, _ in model.named_modules())]
    return LoraConfig(
        task_type=TaskType.SEQ_CLS,
        r=int(adapter.get("r", 16)),
        lora_alpha=int(adapter.get("alpha", 32)),
        lora_dropout=float(adapter.get("dropout", 0.1)),
        target_modules=adapter.get("target_modules", _LORA_TARGETS),
        modules_to_save=adapter.get("modules_to_save", heads),
        trainable_token_indices=trainable_tokens or None,
    )


def check_window(folder: Path, config: DetectorConfig) -> None:
    """Refuse a saved ``max_length`` longer than the base reads at once (:func:`~dialcheck.backbones.base_window`),
    naming the file: such a detector would load, then fail deep inside the model at the first pair that long.
    A base that cannot be found here is left to the load, which names it.

    >>> check_window(Path("m"), DetectorConfig(detector="decode.utterance.v1", max_length=1024))
    Traceback (most recent call last):
    ...
    dialcheck.errors.ModelError: m/dialcheck.json: max_length 1024 is more than the 512 tokens its base ...
    """
    try:
        base = Path(folder) if config.base == "." else resolve_base(config.base)
    except ModelError:
        return
    limit = base_window(base)
    if limit is not None and config.max_length > limit:
        raise ModelError(
            f"{Path(folder) / CONFIG_NAME}: max_length {config.max_length} is more than the {limit} tokens its base "
            f"{config.base} reads at once"
        )


def build_model(
    config: DetectorConfig, base_dir: Path | None = None, added_tokens: list[str] | None = None, peft: bool = True
) -> tuple[Any, Any]:
    """A fresh trainable (model, tokenizer) for ``config``: the base with a new head (+ LoRA if asked).

    ``added_tokens`` (default: the extension named in ``config.base``, if any) become new vocabulary
    entries with new embedding rows; with LoRA those rows are trained too. ``peft=False``: the plain base
    and head, no adapter wrapped around it (for :func:`merge_lora_plain`).
    """
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    base_name, ext = split_base(config.base)
    if added_tokens is None and ext is not None:
        added_tokens = extension_tokens(ext)
    base_dir = base_dir or resolve_base(base_name)
    labels = config.labels
    with _quiet_transformers():
        tok = AutoTokenizer.from_pretrained(base_dir)
        model = AutoModelForSequenceClassification.from_pretrained(
            base_dir,
            num_labels=len(labels),
            id2label=dict(enumerate(labels)),
            label2id={lab: i for i, lab in enumerate(labels)},
            problem_type=config.problem_type,
        )
        if model.config.pad_token_id is None and tok.pad_token_id is not None:
            model.config.pad_token_id = tok.pad_token_id
        new_ids = extend_vocabulary(model, tok, added_tokens) if added_tokens else []
        if peft and config.adapter and config.adapter.get("type") == "lora":
            from peft import get_peft_model

            model = get_peft_model(model, lora_config(model, config.adapter, new_ids))
    return model, tok


def shipped_or_path(model: str | Path, models_dir: Path) -> Path:
    """``models_dir / model`` when ``model`` names a folder shipped there and no such path exists here,
    else ``model`` itself: shipped models load by name wherever the user runs.

    >>> str(shipped_or_path("runs/mine", Path("/nowhere")))
    'runs/mine'
    """
    shipped = models_dir / str(model)
    if not Path(model).exists() and "/" not in str(model) and (shipped / CONFIG_NAME).exists():
        return shipped
    return Path(model)


def stored_in_half(folder: Path) -> bool:
    """Whether ``folder``'s weights file holds float16 tensors (a model saved with ``half``).

    >>> stored_in_half(Path("no-such-folder"))
    False
    """
    weights = Path(folder) / WEIGHTS_NAME
    if not weights.is_file():
        return False
    from safetensors import safe_open

    try:
        with safe_open(str(weights), framework="pt") as f:
            names = f.keys()  # a safetensors handle, not a dict: it is not iterable itself
            return any(f.get_slice(k).get_dtype() == "F16" for k in names)
    except Exception as e:  # a damaged file, named here and not deep in the safetensors library
        raise ModelError(f"{weights}: {damaged_weights(e)}") from None


def read_weights(path: Path) -> dict[str, Any]:
    """The tensors of the safetensors file ``path``; a damaged one (cut short by an interrupted copy, or not
    safetensors at all) is a :class:`ModelError` naming it, not the safetensors library's traceback.

    >>> import tempfile
    >>> bad = Path(tempfile.mkdtemp()) / "weights.safetensors"
    >>> _ = bad.write_bytes(b"not weights")
    >>> read_weights(bad)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dialcheck.errors.ModelError: .../weights.safetensors: not a readable safetensors file (...): the model folder ...
    """
    from safetensors.torch import load_file

    try:
        return load_file(str(path))
    except Exception as e:  # SafetensorError (header, length), or an OSError reading it
        raise ModelError(f"{path}: {damaged_weights(e)}") from None


def damaged_weights(e: Exception, what: str = "the model folder") -> str:
    """The one wording for a safetensors file that cannot be read (``e``) in ``what``."""
    return f"not a readable safetensors file ({e}): {what} is damaged or incomplete; copy it again"


def save_model(model: Any, tokenizer: Any, folder: Path, config: DetectorConfig, half: bool = False) -> None:
    """Write ``config`` and the weights (adapter + head, or a full HF folder) into ``folder``.

    ``half`` stores adapter and head in float16 (half the file; they are read back into float32).
    """
    from safetensors.torch import save_file

    folder.mkdir(parents=True, exist_ok=True)
    added = getattr(tokenizer, "dialcheck_added_tokens", None)
    if added:
        write_added_tokens(folder, added)
    if config.adapter and config.adapter.get("type") == "lora":
        from peft import get_peft_model_state_dict

        if not hasattr(model, "peft_config"):
            raise ModelError(
                f"cannot save to {folder}: this model was loaded for inference, its adapter merged into the base; "
                "save the model that was trained, or copy the folder it was loaded from"
            )

        # save_embedding_layers=False: added vocabulary rows are saved as trainable tokens, never the matrix
        peft_state = get_peft_model_state_dict(model, save_embedding_layers=False)
        state = {k: v.detach().cpu().contiguous() for k, v in peft_state.items()}
        if half:
            state = {k: v.half() if v.is_floating_point() else v for k, v in state.items()}
        save_file(state, str(folder / WEIGHTS_NAME), metadata={"format": "pt", "dialcheck": "lora"})
    else:
        plain = model.merge_and_unload() if hasattr(model, "merge_and_unload") else model
        plain.save_pretrained(folder, safe_serialization=True)
        tokenizer.save_pretrained(folder)
        config.base = "."
    (folder / CONFIG_NAME).write_text(config.to_json(), encoding="utf-8")


def load_trainable(folder: Path, config: DetectorConfig) -> tuple[Any, Any]:
    """The (model, tokenizer) of a saved LoRA detector, adapters kept separate and trainable.

    Used to continue training a saved detector (``dialcheck train --init``).
    """
    weights = folder / WEIGHTS_NAME
    if not weights.exists():
        raise ModelError(f"{folder}: {WEIGHTS_NAME} is missing")
    from peft import set_peft_model_state_dict

    added = read_added_tokens(folder)
    if added is None and split_base(config.base)[1] is not None:
        raise ModelError(f"{folder}: the base {config.base!r} adds tokens but added_tokens.txt is missing")
    model, tok = build_model(config, added_tokens=added)
    state = {k: v.float() if v.is_floating_point() else v for k, v in read_weights(weights).items()}  # half-stored
    try:
        result = set_peft_model_state_dict(model, state)
    except RuntimeError as e:  # "size mismatch for ...": weights trained on another base than config.base
        first = str(e).strip().splitlines()[-1].strip()
        raise ModelError(f"{weights}: weights do not fit the base {config.base!r} ({first})") from None
    unexpected = getattr(result, "unexpected_keys", None)
    if unexpected:
        raise ModelError(f"{weights}: weights do not fit the base {config.base!r} (unexpected {unexpected[:3]})")
    return model, tok


_HEAD_KEYS = (".classifier.", ".score.")


def load_pretrained(folder: Path, config: DetectorConfig) -> tuple[Any, Any]:
    """A trainable (model, tokenizer) for ``config`` that starts from the saved LoRA detector ``folder``
    (e.g. a pair classifier pre-trained on OCNLI): same base, adapter and added tokens; the encoder's
    adapter (and added rows, pooler) are copied, the head too when the label lists are equal, else it is new.
    """
    from peft import get_peft_model_state_dict, set_peft_model_state_dict

    folder = Path(folder)
    init = DetectorConfig.from_file(folder / CONFIG_NAME)
    if not (init.adapter and init.adapter.get("type") == "lora"):
        raise ModelError(f"{folder}: only a LoRA detector can initialise another detector")
    if split_base(init.base)[0] != split_base(config.base)[0]:
        raise ModelError(f"{folder}: its base {init.base!r} differs from {config.base!r}")
    if not config.adapter or any(init.adapter.get(k) != config.adapter.get(k) for k in ("r", "target_modules")):
        raise ModelError(f"{folder}: its adapter {init.adapter} differs from {config.adapter}")
    if not (folder / WEIGHTS_NAME).exists():
        raise ModelError(f"{folder}: {WEIGHTS_NAME} is missing")
    model, tok = build_model(config, added_tokens=read_added_tokens(folder))
    state = read_weights(folder / WEIGHTS_NAME)
    keep_head = list(init.labels) == list(config.labels)
    if not keep_head:
        state = {k: v for k, v in state.items() if not any(h in f".{k}" for h in _HEAD_KEYS)}
    own = get_peft_model_state_dict(model, save_embedding_layers=False)
    bad = [k for k, v in state.items() if k not in own or tuple(own[k].shape) != tuple(v.shape)]
    if bad:
        raise ModelError(f"{folder}: weights do not fit {config.base!r} ({bad[:3]})")
    set_peft_model_state_dict(model, {**own, **state})  # a new head keeps its fresh weights
    log.info("initialised from %s (%d tensors, head %s)", folder, len(state), "kept" if keep_head else "new")
    return model, tok


_PEFT_PREFIX = "base_model.model."
_PLAIN_ADAPTER_KEYS = {"type", "r", "alpha", "dropout", "target_modules", "modules_to_save"}


def merge_lora_plain(model: Any, state: dict[str, Any], adapter: dict[str, Any]) -> bool:
    """Merge a saved LoRA state (as :func:`save_model` writes it) into the plain ``model`` in place:
    ``W + alpha / r * B @ A`` for every adapted linear layer, saved heads and pooler copied. Returns False,
    and changes nothing, when the state holds anything else (added vocabulary rows, a layer that is not
    linear, a shape that does not fit); the caller then merges through peft.

    The result equals peft's ``merge_and_unload`` without importing peft, which takes about 3 s: most of
    what a one-off ``dialcheck check`` spends loading the model.
    """
    import torch

    scale = float(adapter.get("alpha", 32)) / float(adapter.get("r", 16))
    params = dict(model.named_parameters())
    modules = dict(model.named_modules())
    factors: dict[str, dict[str, Any]] = {}
    updates: dict[str, Any] = {}
    for key, value in state.items():
        if not key.startswith(_PEFT_PREFIX):
            return False
        name = key[len(_PEFT_PREFIX) :]
        module, _, rest = name.rpartition(".lora_")
        if module and rest in ("A.weight", "B.weight"):
            factors.setdefault(module, {})[rest[0]] = value.float()
        elif name in params and tuple(params[name].shape) == tuple(value.shape):
            updates[name] = value.float()
        else:
            return False
    for module, ab in factors.items():
        layer = modules.get(module)
        if not isinstance(layer, torch.nn.Linear) or set(ab) != {"A", "B"}:
            return False
        delta = ab["B"] @ ab["A"] * scale
        if tuple(delta.shape) != tuple(layer.weight.shape):
            return False
        updates[f"{module}.weight"] = layer.weight.detach().float() + delta
    with torch.no_grad():
        for name, value in updates.items():
            params[name].copy_(value.to(params[name].dtype))
    return True


def load_model(folder: Path, config: DetectorConfig) -> tuple[Any, Any]:
    """An inference-ready (model, tokenizer): adapters merged into the base, eval mode."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    if config.base == ".":
        with _quiet_transformers():
            tok = AutoTokenizer.from_pretrained(folder)
            model = AutoModelForSequenceClassification.from_pretrained(folder)
        return model.eval(), tok
    adapter = config.adapter or {}
    if _lora_on_plain_base(folder, config) and set(adapter) <= _PLAIN_ADAPTER_KEYS:
        weights = folder / WEIGHTS_NAME
        if not weights.exists():
            raise ModelError(f"{folder}: {WEIGHTS_NAME} is missing")
        model, tok = build_model(config, peft=False)
        if merge_lora_plain(model, read_weights(weights), adapter):
            return model.eval(), tok
    model, tok = load_trainable(folder, config)
    with _quiet_transformers():
        model = model.merge_and_unload()
    return model.eval(), tok


def _lora_on_plain_base(folder: Path, config: DetectorConfig) -> bool:
    """A LoRA adapter on a base whose vocabulary is used as it is (no extension, no added tokens): the
    tokenizer is the base's."""
    return (
        (config.adapter or {}).get("type") == "lora"
        and split_base(config.base)[1] is None
        and read_added_tokens(folder) is None
    )


def tokenizer_only(folder: Path, config: DetectorConfig) -> Any | None:
    """The tokenizer :func:`load_model` would give for ``folder``, without building the model, or None when
    that needs the model (added tokens, a vocabulary extension, an adapter other than plain LoRA). For the
    bases in :data:`~dialcheck.detectors.tokenizer.BACKEND_BASES` it is a
    :class:`~dialcheck.detectors.tokenizer.BackendTokenizer`, which encodes alike without importing torch."""
    if config.base != "." and not _lora_on_plain_base(folder, config):
        return None
    from .tokenizer import BACKEND_BASES, BackendTokenizer

    if config.base != "." and canonical_name(config.base) in BACKEND_BASES:
        return BackendTokenizer(resolve_base(config.base))
    from transformers import AutoTokenizer

    with _quiet_transformers():
        return AutoTokenizer.from_pretrained(folder if config.base == "." else resolve_base(config.base))


def labels_from_hf_config(folder: Path) -> list[str]:
    """The label names of a plain HF classifier folder (its ``id2label``), lower-cased."""
    try:
        data = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise ModelError(f"{folder}: cannot read config.json ({e})") from None
    id2label = data.get("id2label") or {}
    labels = [str(id2label.get(str(i), id2label.get(i, f"LABEL_{i}"))).lower() for i in range(len(id2label))]
    return labels
