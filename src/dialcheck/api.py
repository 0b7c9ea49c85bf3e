"""One-call entry points for engineers: :func:`check` a dialogue, :func:`load` a detector.

Without an explicit model, a dialogue that carries a knowledge base (``"knowledge"``) goes to the shipped
task-oriented detector (QI/HI/KBI labels, CI-ToD), a Chinese dialogue to the Chinese default (none is
shipped yet: pass a model) and any other dialogue to the shipped English contradiction detector;
:func:`route` is the one place that decides.

>>> import dialcheck
>>> v = dialcheck.check(["Do you have pets?", "Yes, two dogs.", "Their names?", "I never had a pet."])  # doctest: +SKIP
>>> v.contradiction, v.evidence  # doctest: +SKIP
(True, (1,))
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from .detectors import Detector, check_language, default_model_path, load_detector, model_folder
from .errors import InputError, ModelError
from .io import (
    as_dialogues,
    check_batch_size,
    check_dialogue,
    check_speakers,
    json_type,
    parse_dialogue,
    upto_speaker,
)
from .language import check_chinese_conversation, check_not_japanese, dialogue_language
from .schema import Dialogue, Verdict

__all__ = ["accelerate", "check", "load", "predict", "preferred_runtime", "route"]

M = TypeVar("M")

log = logging.getLogger(__name__)


def _offline() -> None:
    # Never reach for a model hub: every model here is local.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@functools.lru_cache(maxsize=4)
def _cached(path: str) -> Detector:
    from .detectors.base import int8_exports_only
    from .detectors.modeling import CONFIG_NAME, DetectorConfig
    from .detectors.onnx import installed

    cfg = Path(path) / CONFIG_NAME
    if cfg.is_file() and DetectorConfig.from_file(cfg).options.get("runtime") == "onnx-int8" and installed():
        with int8_exports_only():  # it will run on its cached int8 exports: no torch weights to load for them
            return load_detector(path)
    return load_detector(path)


def load(model: str | Path | None = None, language: str = "en") -> Detector:
    """A detector from a folder, or the shipped default for ``language`` (cached per process).

    ``language="tod"`` is the task-oriented (knowledge-grounded) default. The name of a model shipped
    with the package (e.g. ``"decode-utterance-minilm-v4"``) works where no such folder exists here.
    """
    _offline()
    if model is not None and (not isinstance(model, (str, Path)) or not str(model).strip()):
        shown = "an empty string" if isinstance(model, str) else json_type(model)
        raise InputError(f"model: expected a model folder or a shipped model's name, got {shown}")
    if model is None or str(model) == "default":
        path = default_model_path(language)
        if not path.exists():
            raise ModelError(f"the shipped default model is missing at {path}; reinstall dialcheck")
        return preferred_runtime(_cached(str(path)))
    folder = model_folder(model, language).resolve()
    if not folder.exists():
        raise ModelError(_no_model(model, folder))
    return preferred_runtime(_cached(str(folder)))


def _no_model(model: str | Path, folder: Path) -> str:
    """Why ``model`` cannot be loaded when ``folder``, its resolved path, does not exist: it is neither a
    folder nor a shipped model's name.

    >>> print(_no_model("x", Path("/w/x")))
    model folder /w/x does not exist, and no shipped model is named 'x' (list the shipped models: dialcheck models)
    """
    if len(Path(model).parts) > 1:  # a path: a shipped model loads by its name alone
        return (
            f"model folder {folder} does not exist (a shipped model loads by its name alone; list the shipped "
            "models: dialcheck models)"
        )
    return (
        f"model folder {folder} does not exist, and no shipped model is named {str(model)!r} (list the shipped "
        "models: dialcheck models)"
    )


def preferred_runtime(det: Detector) -> Detector:
    """Run ``det`` on the runtime its config asks for (``options.runtime``), where that runtime is installed.

    ``"onnx"``: ONNX Runtime in float32, whose scores equal torch's (measured: 400 of 400 verdicts, score change
    0), about 2x faster on CPU; a model that needs that speed says so. ``"onnx-int8"``: ONNX Runtime's
    per-channel int8, whose scores differ a little from torch's, for a model whose thresholds were chosen on
    int8 scores (``train --task cascade --runtime onnx-int8``); as it never goes back to torch, its torch weights
    are released (:meth:`~dialcheck.detectors.Detector.release_torch`; about 500 MB for the default English
    cascade). Without ``onnxruntime`` it stays on torch, with one warning per process. A model already switched
    (``--onnx``, ``--int8``) is left as it is."""
    from .detectors.onnx import RUNTIMES, installed

    options = det.config.options
    runtime = options.get("runtime")
    if runtime not in RUNTIMES[1:] or options.get("onnx") or options.get("int8"):
        return det
    if not installed():
        _warn_no_onnx(Path(str(det.path)).name, runtime)
        return det
    det.use_onnx(int8=runtime == "onnx-int8")
    if runtime == "onnx-int8":  # final: no float32 export or torch forward will be asked of it
        det.release_torch()
    return det


@functools.lru_cache(maxsize=8)
def _warn_no_onnx(name: str, runtime: str = "onnx") -> None:
    if runtime == "onnx-int8":
        log.warning(
            '%s was calibrated on ONNX Runtime int8 and runs about 4x faster there: pip install "dialcheck[onnx]"; '
            "using torch float32 (scores differ slightly from the calibrated ones)",
            name,
        )
        return
    log.warning(
        '%s runs about 2x faster on ONNX Runtime (same scores): pip install "dialcheck[onnx]"; using torch', name
    )


def accelerate(det: M, onnx: bool = False, int8: bool = False) -> M:
    """Switch ``det`` (a detector or an answer classifier) to ONNX Runtime (``onnx``; per-channel int8 with
    ``int8``) or to torch's int8 (``int8`` alone), once: a model already switched is left as it is (detectors
    from :func:`load` are shared per process). Returns ``det``."""
    options = det.config.options  # type: ignore[attr-defined]
    if onnx or options.get("onnx"):  # a model on ONNX Runtime already (its preferred runtime): int8 is ONNX's too
        if not options.get("onnx") or (int8 and not options.get("int8")):
            det.use_onnx(int8=int8)  # type: ignore[attr-defined]
    elif int8 and not options.get("int8"):
        det.quantize()  # type: ignore[attr-defined]
    return det


def route(dialogue: Dialogue, language: str = "en") -> str:
    """Which shipped default checks ``dialogue``: ``"tod"`` when it carries a knowledge base (even an
    empty one), ``"zh"`` when it is Chinese (by script, see :mod:`dialcheck.language`), else ``language``.

    Chinese input must be a conversation u1, b1, u2, b2 (or longer) without empty turns, and is routed only
    when a shipped Chinese model exists; otherwise a :class:`ModelError` asks for ``--model``. Mixed
    Chinese and non-Chinese turns, or a ``language`` that names no shipped default, raise an :class:`InputError`.

    >>> route(Dialogue.from_texts(["hi"])), route(parse_dialogue({"turns": ["hi"], "knowledge": []}))
    ('en', 'tod')
    """
    if not isinstance(dialogue, Dialogue):
        raise InputError(
            f"dialogue: expected a Dialogue, got {json_type(dialogue)} (dialcheck.io.parse_dialogue reads a list or "
            "a dialogue object)"
        )
    check_language(language)
    if dialogue.knowledge is not None:
        return "tod"
    kind = dialogue_language(dialogue)
    if kind == "other":
        check_not_japanese(dialogue)
        return language
    check_chinese_conversation(dialogue)  # mixed languages, empty turns, missing u1
    if not default_model_path("zh").exists():
        raise ModelError(
            "no Chinese model is shipped yet: pass --model FOLDER with a detector trained on CDConv "
            "(dialcheck train --task cdconv, see docs/chinese.md)"
        )
    return "zh"


def predict(
    dialogues: Sequence[Dialogue],
    model: str | Path | None = None,
    batch_size: int = 64,
    configure: Callable[[Detector], None] | None = None,
) -> list[Verdict]:
    """Verdicts in input order. With ``model`` every dialogue goes to it; without, each goes to the shipped
    default that :func:`route` names, dialogues of one default being scored in shared batches.
    ``configure`` is applied to each detector used (e.g. threshold overrides). A dialogue may be anything
    :func:`check` takes."""
    batch_size = check_batch_size(batch_size)
    dialogues = as_dialogues(dialogues)
    dets = [load(model) if model is not None else load(language=route(d)) for d in dialogues]
    return predict_grouped(dialogues, dets, batch_size, configure)


def predict_grouped(
    dialogues: Sequence[Dialogue],
    detectors: Sequence[Detector],
    batch_size: int = 64,
    configure: Callable[[Detector], None] | None = None,
) -> list[Verdict]:
    """Verdicts in input order, ``dialogues[i]`` judged by ``detectors[i]``; the dialogues of one detector
    are scored in shared batches. ``configure`` is applied to each detector used."""
    batch_size = check_batch_size(batch_size)
    groups: dict[int, tuple[Detector, list[int]]] = {}
    for i, det in enumerate(detectors):
        groups.setdefault(id(det), (det, []))[1].append(i)
    out: list[Verdict | None] = [None] * len(dialogues)
    for det, idx in groups.values():
        if configure is not None:
            configure(det)
        for i, v in zip(idx, det.predict([dialogues[i] for i in idx], batch_size=batch_size), strict=True):
            out[i] = v
    return [v for v in out if v is not None]


def check(
    dialogue: Dialogue | Sequence[Any] | dict[str, Any],
    model: str | Path | None = None,
    speaker: str | Sequence[str] | None = None,
) -> Verdict:
    """Does the last turn contradict the conversation (or, with a knowledge base, the request, history or
    knowledge)? Accepts a :class:`Dialogue`, a list (or tuple) of strings (alternating speakers) or of
    :class:`Turn` objects, or a ``{"turns": [...], "knowledge": [...]}`` / ``{"messages": [...]}`` object.

    With ``speaker`` (e.g. ``"assistant"``) the turn checked is that speaker's last turn with text, as
    ``dialcheck check --speaker``: a chat log may end with the user's message or a tool call. Evidence
    indices are those of the whole dialogue; :func:`dialcheck.io.upto_speaker` gives the turn checked."""
    speakers = check_speakers(speaker)
    if isinstance(dialogue, Dialogue):
        d = check_dialogue(dialogue, allow_empty_last=speakers is not None)
    else:
        d = parse_dialogue(dialogue, allow_empty_last=speakers is not None)
    return predict([d if speakers is None else upto_speaker(d, speakers)], model)[0]
