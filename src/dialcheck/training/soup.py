"""Model soups: the weight average of detectors fine-tuned from the same start (Wortsman et al. 2022).

Detectors continued from one folder with different data or seeds stay close enough in weight space that
their average is a working detector, often better than each of them, at no training cost. A LoRA adapter
is averaged through its update ``scale * B @ A`` (averaging ``A`` and ``B`` separately would not average
the updates): the exact average is an adapter with the ingredients' ranks summed. ``rank`` cuts it to a
smaller rank by a truncated SVD (the closest update of that rank; an approximation: on the shipped DECODE
detectors, a rank-32 cut of a two-detector soup moved the updates by about 2%); storing the exact soup in
float16 (``half``) moves them by about 0.02% and halves the file. Heads, pooler and fully fine-tuned
weights are averaged as they are.

Thresholds do not average: recalibrate the soup (``dialcheck train --init A B --epochs 0`` does both;
``--half`` stores the result in float16).
"""

from __future__ import annotations

import copy
import logging
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..detectors.modeling import CONFIG_NAME, WEIGHTS_NAME, DetectorConfig
from ..errors import InputError
from ..vocab import read_added_tokens
from .card import model_reference

__all__ = ["average_detectors"]

log = logging.getLogger(__name__)

_FULL_WEIGHTS = "model.safetensors"
_SAME = ("detector", "base", "labels", "max_length", "problem_type")
_SAME_ADAPTER = ("type", "target_modules", "modules_to_save")


def _read(folder: Path) -> DetectorConfig:
    path = folder / CONFIG_NAME
    if not path.exists():
        raise InputError(f"not a saved dialcheck detector ({CONFIG_NAME} is missing)", str(folder))
    return DetectorConfig.from_file(path)


def _check_compatible(folders: Sequence[Path], configs: Sequence[DetectorConfig]) -> None:
    first, c0 = folders[0], configs[0]
    for folder, c in zip(folders[1:], configs[1:], strict=True):
        for key in _SAME:
            if getattr(c, key) != getattr(c0, key):
                raise InputError(
                    f"{key} is {getattr(c, key)!r}, but {getattr(c0, key)!r} in {first}: only detectors of one "
                    "type, base and label list can be averaged",
                    str(folder / CONFIG_NAME),
                )
        if bool(c.adapter) != bool(c0.adapter) or any(
            (c.adapter or {}).get(k) != (c0.adapter or {}).get(k) for k in _SAME_ADAPTER
        ):
            raise InputError(f"adapter {c.adapter} does not match {c0.adapter} in {first}", str(folder / CONFIG_NAME))
        if read_added_tokens(folder) != read_added_tokens(first):
            raise InputError(f"its added vocabulary differs from {first}'s", str(folder))


def _load(path: Path) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The tensors of a safetensors file in float64 (averaged without rounding), and their stored dtypes."""
    from safetensors.numpy import load_file

    if not path.exists():
        raise InputError("weights file is missing", str(path))
    raw = load_file(str(path))
    return {k: v.astype(np.float64) if v.dtype.kind == "f" else v for k, v in raw.items()}, {
        k: v.dtype for k, v in raw.items()
    }


def _weights(n: int, weights: Sequence[float] | None) -> list[float]:
    w = [1.0] * n if weights is None else [float(x) for x in weights]
    if len(w) != n or any(not np.isfinite(x) or x < 0 for x in w) or sum(w) <= 0:
        raise InputError(f"weights must be {n} non-negative numbers, not all zero; got {list(weights or [])}")
    return [x / sum(w) for x in w]


def _average_lora(
    states: Sequence[dict[str, np.ndarray]], configs: Sequence[DetectorConfig], w: Sequence[float], rank: int | None
) -> tuple[dict[str, np.ndarray], int, int]:
    """The averaged adapter state and its (r, alpha); ``rank`` None keeps the exact, rank-summed update."""
    scales = [float(c.adapter["alpha"]) / float(c.adapter["r"]) for c in configs]  # type: ignore[index]
    total = sum(int(c.adapter["r"]) for c in configs)  # type: ignore[index]
    r = total if rank is None else min(rank, total)
    # one scale for the soup: the common one if the ingredients share it (alpha stays an integer), else 1
    scale = scales[0] if len(set(scales)) == 1 and float(scales[0] * r).is_integer() else 1.0
    f = [np.sqrt(wi * si / scale) for wi, si in zip(w, scales, strict=True)]  # per ingredient, on A and on B
    out: dict[str, np.ndarray] = {}
    for key in states[0]:
        if ".lora_B." in key:
            continue
        if ".lora_A." not in key:
            out[key] = sum(wi * s[key] for wi, s in zip(w, states, strict=True))  # type: ignore[assignment]
            continue
        bkey = key.replace(".lora_A.", ".lora_B.")
        # the update of the average, written as B @ A with the ingredients side by side
        a = np.concatenate([fi * s[key] for fi, s in zip(f, states, strict=True)], axis=0)
        b = np.concatenate([fi * s[bkey] for fi, s in zip(f, states, strict=True)], axis=1)
        if r < total:
            u, sv, vt = np.linalg.svd(b @ a, full_matrices=False)
            root = np.sqrt(sv[:r])
            a, b = root[:, None] * vt[:r], u[:, :r] * root
        out[key], out[bkey] = a, b
    return out, r, round(scale * r)


def average_detectors(
    folders: Sequence[str | Path],
    out: str | Path,
    weights: Sequence[float] | None = None,
    rank: int | None = None,
    half: bool = False,
) -> Path:
    """Write the weight average of saved detectors of one type, base and adapter layout to ``out``.

    ``weights`` (default equal) are normalised to sum to 1. A LoRA soup is exact (its rank the sum of the
    ingredients') unless ``rank`` asks for fewer (truncated SVD); with ``rank``, one folder is allowed: its
    adapter cut to that rank (a smaller file). ``half`` stores it in float16.
    The soup keeps the first folder's thresholds and options; recalibrate it before use.

    >>> average_detectors(["a"], "soup")
    Traceback (most recent call last):
    ...
    dialcheck.errors.InputError: a soup needs at least two detectors (or one and a rank to cut it to), got 1
    """
    from safetensors.numpy import save_file

    paths = [Path(f) for f in folders]
    if len(paths) < (1 if rank is not None else 2):
        raise InputError(f"a soup needs at least two detectors (or one and a rank to cut it to), got {len(paths)}")
    configs = [_read(p) for p in paths]
    _check_compatible(paths, configs)
    w = _weights(len(paths), weights)
    lora = bool(configs[0].adapter and configs[0].adapter.get("type") == "lora")
    own = int((configs[0].adapter or {}).get("r", 0))
    if len(paths) == 1 and lora and rank is not None and rank >= own:  # else the "cut" copied it, said cut to R
        raise InputError(
            f"rank {rank} cuts nothing: its LoRA adapter is of rank {own}; give a rank below {own}", str(paths[0])
        )
    name = WEIGHTS_NAME if lora else _FULL_WEIGHTS
    loaded = [_load(p / name) for p in paths]
    states, dtypes = [s for s, _ in loaded], loaded[0][1]
    for p, s in zip(paths[1:], states[1:], strict=True):
        diff = set(s) ^ set(states[0])
        if diff or any(s[k].shape != states[0][k].shape for k in s if ".lora_" not in k):
            raise InputError(f"its tensors do not match {paths[0]}'s ({sorted(diff)[:3] or 'shapes differ'})", str(p))
    target = Path(out)
    target.mkdir(parents=True, exist_ok=True)
    config = copy.deepcopy(configs[0])
    if lora:
        if rank is not None and rank < 1:
            raise InputError(f"rank must be at least 1, got {rank}")
        state, r, alpha = _average_lora(states, configs, w, rank)
        config.adapter = {**(config.adapter or {}), "r": r, "alpha": alpha}
        if (paths[0] / "added_tokens.txt").exists():  # the same in every ingredient (checked above)
            shutil.copy2(paths[0] / "added_tokens.txt", target / "added_tokens.txt")
    else:
        if half or rank is not None:
            raise InputError("rank and half apply to LoRA detectors; these are fully fine-tuned")
        state = {k: sum(wi * s[k] for wi, s in zip(w, states, strict=True)) for k in states[0]}
        for f in paths[0].iterdir():  # the HF config and the tokenizer of the first ingredient
            if f.is_file() and f.name not in (name, CONFIG_NAME, "MODEL_CARD.md") and not f.name.endswith(".onnx"):
                shutil.copy2(f, target / f.name)
    stored = {k: np.float16 if half and v.dtype.kind == "f" else dtypes[k] for k, v in state.items()}
    save_file(
        {k: np.ascontiguousarray(v.astype(stored[k])) for k, v in state.items()},
        str(target / name),
        metadata={"format": "pt", **({"dialcheck": "lora"} if lora else {})},
    )
    soup = [
        {
            "folder": model_reference(p),
            "weight": round(wi, 6),
            "command": c.training.get("command"),
            "date": c.training.get("date"),
        }
        for p, wi, c in zip(paths, w, configs, strict=True)
    ]
    config.training = {"init": {"soup": soup}}  # what a run from the soup records as its start
    # rank is refused above for a fully fine-tuned detector, so this is a LoRA cut, unless the ranks summed are at
    # most rank: then the soup is exact, and its card must not say it was cut (truncated SVD)
    if rank is not None and config.adapter["r"] < sum(int(c.adapter["r"]) for c in configs):  # type: ignore[index]
        config.training["init"]["rank"] = config.adapter["r"]  # type: ignore[index]
    config.metrics = {}
    (target / CONFIG_NAME).write_text(config.to_json(), encoding="utf-8")
    if len(paths) == 1:
        log.info("cut %s to rank %s into %s", paths[0], rank, target)
    else:
        log.info("averaged %d detectors into %s", len(paths), target)
    return target
