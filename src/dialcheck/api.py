"""One-call entry points for engineers: :func:`check` a dialogue, :func:`load` a detector.

Without an explicit model (``model=None`` or ``"default"``), a dialogue that carries a knowledge base
(``"knowledge"``) goes to the shipped task-oriented detector (QI/HI/KBI labels, CI-ToD), a Chinese dialogue to
the shipped Chinese default and any other dialogue to the shipped English contradiction detector; :func:`route`
is the one place that decides. A model named explicitly checks every dialogue it is given, whatever its
language; a dialogue in a language that model was not trained on (:func:`model_language`: for an English model,
turns mostly in another script than Latin, Chinese, Japanese, Korean, Cyrillic, ...; other turns for a Chinese
one) is checked all the same, with a warning logged that names it. So is a dialogue routed to a default that was
not trained on its script (:func:`routed_warnings`): no shipped default reads Korean, Russian or Arabic, so such a
dialogue goes to the English one, whose verdict on it means little. (Japanese is refused by :func:`route`.)

>>> import dialcheck
>>> v = dialcheck.check(["Do you have pets?", "Yes, two dogs.", "Their names?", "I never had a pet."])  # doctest: +SKIP
>>> v.contradiction, v.evidence  # doctest: +SKIP
(True, (1,))
"""

from __future__ import annotations

import functools
import logging
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from .detectors import Detector, check_language, default_model_path, load_detector, model_folder
from .errors import DialcheckError, InputError, ModelError
from .io import (
    as_dialogues,
    check_batch_size,
    check_dialogue,
    check_speakers,
    json_type,
    parse_checked,
    parse_dialogue,  # noqa: F401 (route's doctest)
    upto_speaker,
    where_named,
)
from .language import (
    CHOOSE_MODEL,
    check_chinese_conversation,
    check_not_japanese,
    dialogue_language,
    foreign_scripts,
    foreign_turns,
)
from .schema import Dialogue, Verdict

__all__ = ["accelerate", "check", "load", "model_language", "predict", "preferred_runtime", "route"]

M = TypeVar("M")

log = logging.getLogger(__name__)

# load() from several threads at once: without a lock, each thread missed the cache, loaded its own copy of the model
# (4 threads: 4 copies, 960 MB instead of 260 for the English default) and got a detector the cache did not hold.
# One lock per model folder: a thread loading one model (or exporting it to ONNX, minutes) holds up only the threads
# that want that model, not those whose model is loaded already (a server's other requests).
_LOCKS: dict[str, threading.RLock] = {}
_LOCKS_GUARD = threading.Lock()


def _lock_for(path: str) -> threading.RLock:
    with _LOCKS_GUARD:
        return _LOCKS.setdefault(path, threading.RLock())


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
    """A detector from a folder, or the shipped default for ``language`` (cached per process: every call for
    one of the last 4 models loaded returns the same object, also when several threads call at once; the first
    loads it, the others wait for it. A fifth model pushes the least recently used out of the cache, and a later
    call loads that one again as a new object).

    ``language="tod"`` is the task-oriented (knowledge-grounded) default. The name of a model shipped
    with the package (e.g. ``"decode-utterance-minilm-v4"``) works where no such folder exists here.
    """
    _offline()
    check_language(language)  # with a model too: load("runs/mine", language="fr") was accepted without a word
    path = _model_path(model, language)
    with _lock_for(path):
        return preferred_runtime(_cached(path))


def _model_path(model: str | Path | None, language: str) -> str:
    """The folder :func:`load` loads ``model`` from, checked to exist."""
    if model is not None and (not isinstance(model, (str, Path)) or not str(model).strip()):
        shown = "an empty string" if isinstance(model, str) else json_type(model)
        raise InputError(f"model: expected a model folder or a shipped model's name, got {shown}")
    if model is None or str(model) == "default":
        path = default_model_path(language)
        if not path.exists():
            raise ModelError(f"the shipped default model is missing at {path}; reinstall dialcheck")
        return str(path)
    folder = model_folder(model, language).resolve()
    if not folder.exists():
        raise ModelError(_no_model(model, folder))
    return str(folder)


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
    from :func:`load` are shared per process), also when several threads ask at once (the first switches it, the
    others wait for it). Returns ``det``."""
    if _switch(det, onnx, int8) is None:
        return det
    # Two threads switching one shared detector (a BatchScorer's first batches, request threads) both exported it,
    # and one quantized the float32 export the other had just deleted ("cannot quantize ..."): one at a time, under
    # the lock load() holds for its folder, and looked at again once the lock is held.
    path = getattr(det, "path", None)
    with _lock_for(str(path)) if path else _ACCELERATE_LOCK:
        switch = _switch(det, onnx, int8)
        if switch is not None:
            switch()
    return det


_ACCELERATE_LOCK = threading.RLock()  # accelerate() of a detector not loaded from a folder


def _switch(det: Any, onnx: bool, int8: bool) -> Callable[[], Any] | None:
    """What :func:`accelerate` calls to switch ``det``, or None when it runs as asked already."""
    options = det.config.options
    if onnx or options.get("onnx"):  # a model on ONNX Runtime already (its preferred runtime): int8 is ONNX's too
        if not options.get("onnx") or (int8 and not options.get("int8")):
            return functools.partial(det.use_onnx, int8=int8)
    elif int8 and not options.get("int8"):
        return det.quantize  # type: ignore[no-any-return]
    return None


def route(dialogue: Dialogue, language: str = "en", choose: str = CHOOSE_MODEL) -> str:
    """Which shipped default checks ``dialogue``: ``"tod"`` when it carries a knowledge base (even an
    empty one), ``"zh"`` when it is Chinese (by script, see :mod:`dialcheck.language`), else ``language``.

    Chinese input must be a conversation u1, b1, u2, b2 (or longer) without empty turns once a chat log's tool
    calls and results and its system messages are left out (:func:`~dialcheck.language.chinese_reading`; neither
    votes on the language), not ending with a tool's result or a system message,
    and is routed only when a shipped Chinese model exists; otherwise a :class:`ModelError` asks for a model of
    the caller's own. Japanese, mixed Chinese and non-Chinese turns, or a ``language`` that names no shipped
    default, raise an :class:`InputError`. ``choose`` is how the caller picks a model of its own, for the advice
    of these errors: the library's ``model=`` (:data:`~dialcheck.language.CHOOSE_MODEL`), ``"pass --model"`` on
    the command line, ``"start the server with --model"`` for the HTTP API.

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
        check_not_japanese(dialogue, choose)
        return language
    check_chinese_conversation(dialogue, choose)  # mixed languages, empty turns, missing u1
    if not default_model_path("zh").exists():
        raise ModelError(
            f"no Chinese model is shipped yet: {choose} to choose a detector trained on CDConv "
            "(dialcheck train --task cdconv, see docs/chinese.md)"
        )
    return "zh"


def names_default(model: Any) -> bool:
    """Whether ``model`` names no model of its own: None or ``"default"`` (the shipped default each dialogue
    routes to, see :func:`route`)."""
    return model is None or (isinstance(model, (str, Path)) and str(model) == "default")


_ENGLISH_TYPES = ("decode.", "cascade.", "router.", "citod.")  # trained on DECODE (or CI-ToD): English


def model_language(model: Detector | str | Path) -> str | None:
    """The language of the dialogues ``model`` (a detector, a folder or a shipped model's name) was trained on:
    ``"zh"`` for a four-category CDConv detector (``cdconv.*``) or one on a base with the Chinese characters
    added (``NAME+zh``, e.g. an OCNLI pair classifier), ``"en"`` for the other DECODE, cascade, router and CI-ToD
    detectors, None for a type of your own or a model that cannot be read (loading it says why).

    >>> model_language("decode-utterance-minilm-v10"), model_language("cdconv-flat-zh-v2"), model_language("x/y")
    ('en', 'zh', None)
    """
    from .vocab import split_base

    config = _config_of(model)
    kind, base = getattr(config, "detector", None), getattr(config, "base", None)
    if not isinstance(kind, str):
        return None
    options = getattr(config, "options", None) or {}
    if (
        kind.startswith("cdconv.")
        or (isinstance(base, str) and split_base(base)[1] == "zh")
        or options.get("nli") == "ocnli"
    ):
        return "zh"
    return "en" if kind.startswith(_ENGLISH_TYPES) else None


def _config_of(model: Detector | str | Path) -> Any:
    """The config of ``model`` (a detector, a folder or a shipped model's name); None when it cannot be read."""
    from .detectors.modeling import CONFIG_NAME, DetectorConfig

    if isinstance(model, (str, Path)):
        try:
            return DetectorConfig.from_file(model_folder(model) / CONFIG_NAME)
        except (DialcheckError, OSError, ValueError):
            return None
    return getattr(model, "config", None)


def reads_others(model: Detector | str | Path, _depth: int = 0) -> bool:
    """Whether ``model`` (a detector, a folder or a shipped model's name) reads the checked turn against other
    speakers' turns as well as its own speaker's: an unstructured detector (``decode.unstructured.v1``, the whole
    history), a detector saved with ``options.speakers: "all"``, or a cascade or router with such a stage. Then a
    chat log's system prompt or tool result is read, and :func:`~dialcheck.language.foreign_turns` counts it
    (``same_speaker=False``). False for the shipped detectors and a model that cannot be read.

    >>> reads_others("decode-utterance-minilm-v10"), reads_others("x/y")
    (False, False)
    """
    config = _config_of(model)
    kind = getattr(config, "detector", None)
    options = getattr(config, "options", None) or {}
    if kind == "decode.unstructured.v1" or options.get("speakers") == "all":
        return True
    if kind not in ("cascade.v1", "router.v1") or _depth > 3:
        return False
    from .detectors.cascade import STAGES, _stage_folder
    from .detectors.router import KEYS

    keys = STAGES if kind == "cascade.v1" else KEYS
    if not isinstance(model, (str, Path)):  # a loaded cascade or router: its stages, none loaded here
        return any(reads_others(stage, _depth + 1) for stage in _stages_of(model, kind) if stage is not None)
    try:
        folder = model_folder(model)
    except (DialcheckError, OSError):
        return False
    refs = [options.get(k) for k in keys]
    return any(reads_others(_stage_folder(folder, r), _depth + 1) for r in refs if isinstance(r, str) and r)


def _stages_of(model: Detector, kind: str) -> list[Any]:
    """A loaded cascade's two stages or a router's two detectors, as :func:`reads_others` reads them: each one
    loaded, and a router's long detector not loaded yet by its folder. Never through ``.long``, which would load it
    (a router that checks only short replies would load its long cascade for a warning)."""
    held = model.__dict__
    if kind == "cascade.v1":
        return list(held.get("_stages") or ())
    return [held.get("_short"), held.get("_long") or held.get("_long_folder")]


def reads_as_chinese(model: Detector | str | Path) -> bool:
    """Whether ``model`` is a four-category CDConv detector (``cdconv.*``), which reads a chat log as
    :func:`~dialcheck.language.chinese_reading` says and refuses one ending with a turn it leaves out (a tool's
    result, a system message: :func:`~dialcheck.language.check_chinese_last_turn`), so that a command refuses it
    by file and line before any model work.

    >>> reads_as_chinese("cdconv-flat-zh-v2"), reads_as_chinese("decode-utterance-minilm-v10")
    (True, False)
    """
    kind = getattr(_config_of(model), "detector", None)
    return isinstance(kind, str) and kind.startswith("cdconv.")


MIXED = "a conversation mixing Chinese with another language"  # what no shipped default reads (route refuses it)

#: How a warning tells the library's user to give a model of their own (``{model}``: which).
PASS_MODEL = "pass {model}"
#: ... and the command line's: ``--model``.
CLI_MODEL = "set --model to {model}"
#: ... and the HTTP API's: its model is chosen when the server starts, never by a request.
SERVE_MODEL = "start the server with --model set to {model}"


def language_warning(
    model: str,
    language: str,
    where: str,
    many: bool,
    leave_out: str,
    scripts: Sequence[str] | None = None,
    instead: str | None = None,
    unread: Sequence[str] | None = None,
    routed: bool = True,
    pass_model: str = PASS_MODEL,
) -> str:
    """The warning about ``where`` (the dialogues named, ``many`` when several) holding turns in a language
    ``model``, trained on ``language``, does not read, and what to do instead (``leave_out``: how to name no
    model, so that they are routed by language; ``instead``: another sentence for a caller that routes none, such
    as ``evaluate --data``). For an English model, ``scripts`` names the scripts of those turns
    (``language.foreign_scripts``: ``["Chinese"]``, ``["Japanese", "Korean"]``, ...); None when the caller does not
    know them. ``unread`` names what of those dialogues no shipped default reads (``"Japanese"``, ``"Korean"``, ...,
    :data:`MIXED`; :func:`unread_by_defaults`) and ``routed`` whether some of them would go to the shipped default
    of the other language, which reads them (a Chinese conversation for an English model, one in Latin letters for
    a Chinese model): the advice to leave the model out is given only then. Without ``unread``, an English model's
    is read from ``scripts`` and a Chinese model's advice is to leave it out. ``pass_model`` is how the caller gives
    a model of its own, ``{model}`` the model (:data:`PASS_MODEL`; the command line's :data:`CLI_MODEL`, the HTTP
    API's :data:`SERVE_MODEL`). One wording
    for :func:`predict`'s log, the command line's stderr and the HTTP API's warnings.

    >>> print(language_warning("M", "en", "the dialogue", False, "-", ["Korean"]))  # doctest: +NORMALIZE_WHITESPACE
    M was trained on English dialogues, but the dialogue has Korean turns: its verdicts on them mean little. No
    shipped detector reads Korean: pass a model trained on it
    >>> print(language_warning("M", "zh", "the dialogue", False, "-", unread=["Japanese"], routed=False))
    ... # doctest: +NORMALIZE_WHITESPACE
    M was trained on Chinese conversations, but the dialogue has turns that are not Chinese: its verdicts on them
    mean little. No shipped detector reads Japanese: pass a model trained on it
    """
    has = "have" if many else "has"
    if language == "en":
        scripts = list(scripts or ())
        turns = f"{_and(scripts)} turns" if scripts else "turns in another script (Chinese, Japanese, Korean, ...)"
        if unread is None:
            unread, routed = [s for s in scripts if s != "Chinese"], "Chinese" in scripts
        instead = instead or f"{leave_out} to route Chinese conversations to the shipped Chinese default"
        if scripts and not unread:
            advice = f"{instead}, or {pass_model.format(model='a Chinese (cdconv.*) model')}"
        elif routed or not scripts:
            advice = f"{instead}; for the others, {pass_model.format(model='a model trained on their language')}"
        else:
            advice = _unread_advice(unread, pass_model)
        return (
            f"{model} was trained on English dialogues, but {where} {has} {turns}: its verdicts on them mean little. "
            + advice
        )
    instead = instead or f"{leave_out} to route them to the shipped default for their language"
    advice = f"{instead}, or {pass_model.format(model='a model trained on it')}"
    if unread:  # Japanese is refused without a model, Korean only warned of, a mixed conversation refused
        advice = _unread_advice(unread, pass_model)
        if routed:
            advice += f"; for the others (in English), {instead[:1].lower()}{instead[1:]}"
    return (
        f"{model} was trained on Chinese conversations, but {where} {has} turns that are not Chinese: its "
        f"verdicts on them mean little. {advice}"
    )


def _unread_advice(unread: Sequence[str], pass_model: str = PASS_MODEL) -> str:
    """ "No shipped detector reads Japanese: pass a model trained on it" for ``unread`` (:func:`language_warning`)."""
    names = [x for x in unread if x != MIXED]
    mixed = MIXED in unread
    it = "their languages" if mixed else "it" if len(names) == 1 else "them"
    read = ", nor ".join(([_and(names)] if names else []) + [MIXED] * mixed)
    return f"No shipped detector reads {read}: {pass_model.format(model=f'a model trained on {it}')}"


def unread_by_defaults(dialogues: Sequence[Dialogue], language: str) -> tuple[list[str], bool]:
    """What of ``dialogues`` (each with turns a model trained on ``language`` does not read) no shipped default
    reads when the model is left out, each once: ``"Japanese"`` (:func:`route` refuses it), :data:`MIXED` (refused
    too), another script (``"Korean"``, ...: the English default checks it, with a warning); and whether some go to
    the shipped default of the other language, which reads them: a Chinese conversation (for ``"en"``), one in
    Latin letters alone (for ``"zh"``).

    >>> ja, mixed = Dialogue.from_texts(["名前は？", "田中。"]), Dialogue.from_texts(["你好吗？", "I am fine, thanks."])
    >>> unread_by_defaults([ja, mixed], "en"), unread_by_defaults([Dialogue.from_texts(["Hi", "Hello"])], "zh")
    ((['Japanese', 'a conversation mixing Chinese with another language'], False), ([], True))
    """
    unread: list[str] = []
    routed = False
    for d in dialogues:
        scripts = foreign_scripts([d], "en")
        kind = dialogue_language(d)
        if "Japanese" in scripts:  # its kanji-only turns are no Chinese conversation either
            unread.append("Japanese")
        elif kind == "zh":
            routed = routed or language == "en"
        elif kind == "mixed":
            unread.append(MIXED)
        elif others := [s for s in scripts if s != "Chinese"]:
            unread.extend(others)
        else:  # Latin letters: the English default reads them
            routed = routed or language == "zh"
    return list(dict.fromkeys(unread)), routed


def _and(names: Sequence[str]) -> str:
    """``names`` joined for a sentence: ``A``, ``A and B``, ``A, B and C``."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def warn_language(
    det: Detector, dialogues: Sequence[Dialogue], names: Sequence[str] | None = None, total: int | None = None
) -> list[int]:
    """Log one warning naming the ``dialogues`` (``dialogues[i]``, or ``names[i]`` of ``total``) that hold turns
    in a language ``det`` was not trained on (see :func:`model_language`); returns their indices."""
    idx, text = language_gap(det, dialogues, names, total)
    if text is not None:
        log.warning(text)
    return idx


def language_gap(
    det: Detector,
    dialogues: Sequence[Dialogue],
    names: Sequence[str] | None = None,
    total: int | None = None,
    leave_out: str = "Leave the model out (model=None)",
    pass_model: str = PASS_MODEL,
) -> tuple[list[int], str | None]:
    """The ``dialogues`` that hold turns in a language ``det`` was not trained on (their indices) and the one
    warning that names them (:func:`foreign_warning`; None when there are none), which :func:`warn_language` logs
    and the HTTP API also returns (``pass_model``: :data:`SERVE_MODEL`)."""
    language = model_language(det)
    if language is None:
        return [], None
    name = Path(str(det.path)).name if getattr(det, "path", None) else det.config.detector
    others = reads_others(det)
    return foreign_warning(name, language, dialogues, names, total, leave_out, pass_model=pass_model, others=others)


def foreign_warning(
    model: str,
    language: str,
    dialogues: Sequence[Dialogue],
    names: Sequence[str] | None = None,
    total: int | None = None,
    leave_out: str = "Leave the model out (model=None)",
    instead: str | None = None,
    alone: str | None = "the dialogue",
    of: str = "",
    pass_model: str = PASS_MODEL,
    others: bool = False,
) -> tuple[list[int], str | None]:
    """The ``dialogues`` that hold turns in a language ``model`` (trained on ``language``) does not read
    (:func:`~dialcheck.language.foreign_turns`; their indices) and the one warning that names them and their
    scripts (:func:`language_warning`, ``leave_out``, ``instead`` and ``pass_model`` its advice; None when there are
    none). ``others``: the model reads other speakers' turns too (:func:`reads_others`), so a chat log's system
    prompt and tool results count. The
    dialogues are named as :func:`where_named` names them (``dialogues[i]``, or ``names[i]`` of ``total``).
    Every warning of a model on dialogues it was not trained to read is composed here: the library's log, the HTTP
    API's, the command line's for ``--model`` and for the shipped default a dialogue is routed to; only the names
    of where the dialogues are differ.

    >>> print(foreign_warning("M", "en", [Dialogue.from_texts(["Hi", "Hello"]), Dialogue.from_texts(["你好"])])[1])
    M was trained on English dialogues, but dialogues[1] has Chinese turns: its verdicts on them mean little. Leave \
the model out (model=None) to route Chinese conversations to the shipped Chinese default, or pass a Chinese \
(cdconv.*) model
    """
    idx = [i for i, d in enumerate(dialogues) if foreign_turns(d, language, not others)]
    if not idx:
        return [], None
    shown = [f"dialogues[{i}]" if names is None else names[i] for i in idx]
    total = len(dialogues) if total is None else total
    found = [dialogues[i] for i in idx]
    return idx, _foreign_text(model, language, found, shown, total, leave_out, instead, alone, of, pass_model, others)


def _foreign_text(
    model: str,
    language: str,
    found: Sequence[Dialogue],
    shown: Sequence[str],
    total: int,
    leave_out: str,
    instead: str | None,
    alone: str | None,
    of: str,
    pass_model: str = PASS_MODEL,
    others: bool = False,
) -> str:
    """:func:`foreign_warning`'s words for the dialogues ``found`` to hold foreign turns, named ``shown``."""
    scripts = foreign_scripts(found, language, not others)
    unread, routed = unread_by_defaults(found, language)
    where = where_named(shown, total, alone, of)
    many = len(found) > 1
    return language_warning(model, language, where, many, leave_out, scripts, instead, unread, routed, pass_model)


@functools.lru_cache(maxsize=16)
def _folder_language(path: str) -> str | None:
    return model_language(path)


def routed_gaps(dialogues: Sequence[Dialogue], routes: Sequence[str]) -> dict[str, list[int]]:
    """The dialogues (their indices) that the shipped default each was routed to (``routes[i]``: :func:`route` of
    ``dialogues[i]``) was not trained to read (:func:`model_language`, :func:`~dialcheck.language.foreign_turns`):
    a Korean, Russian or Arabic dialogue routed to the English default, by route. Japanese and Chinese never get
    here: :func:`route` refuses the one and sends the other to the Chinese default."""
    out: dict[str, list[int]] = {}
    for i, (d, key) in enumerate(zip(dialogues, routes, strict=True)):
        language = _folder_language(str(default_model_path(key)))
        if language is not None and foreign_turns(d, language):
            out.setdefault(key, []).append(i)
    return out


def routed_warnings(
    dialogues: Sequence[Dialogue],
    routes: Sequence[str],
    names: Sequence[str] | None = None,
    total: int | None = None,
    instead: str | None = None,
    of: str = "",
    pass_model: str = PASS_MODEL,
) -> list[tuple[list[int], str]]:
    """For each shipped default that :func:`routed_gaps` finds given dialogues it was not trained to read: their indices
    and one warning naming them (``dialogues[i]``, or ``names[i]`` of ``total``; "the dialogue" when there is one and no
    names; ``of``: the file they are in, " of FILE": :func:`where_named`) and their scripts (:func:`foreign_warning`;
    ``instead``: the advice for a caller whose dialogues would go to another default some other way; ``pass_model``:
    how its user gives a model of their own, :data:`SERVE_MODEL` for the HTTP API's, whose model is chosen when the
    server starts). The one place every entry point without a model of its own (:func:`predict`, ``BatchScorer``, the
    command line, the HTTP API) takes its warning from; none refuses the dialogues: they are checked all the same."""
    out = []
    total = len(dialogues) if total is None else total
    alone = "the dialogue" if names is None else None
    for key, idx in routed_gaps(dialogues, routes).items():
        path = default_model_path(key)
        language = _folder_language(str(path))
        assert language is not None
        shown = [f"dialogues[{i}]" if names is None else names[i] for i in idx]
        advice = instead or (  # only a conversation all in Chinese, without knowledge, goes to the Chinese default
            "A conversation goes to the shipped Chinese default only all in Chinese"
            + (" and without a knowledge table" if key == "tod" else "")
        )
        model = f"the shipped default {path.name}"
        found = [dialogues[i] for i in idx]  # routed_gaps found their foreign turns: not looked for again
        out.append((idx, _foreign_text(model, language, found, shown, total, "", advice, alone, of, pass_model)))
    return out


def warn_routed(
    dialogues: Sequence[Dialogue], routes: Sequence[str], names: Sequence[str] | None = None, total: int | None = None
) -> list[int]:
    """Log :func:`routed_warnings`; returns the indices of the dialogues they name."""
    idx = []
    for some, text in routed_warnings(dialogues, routes, names, total):
        log.warning(text)
        idx += some
    return sorted(idx)


def predict(
    dialogues: Sequence[Dialogue],
    model: str | Path | None = None,
    batch_size: int = 64,
    configure: Callable[[Detector], None] | None = None,
) -> list[Verdict]:
    """Verdicts in input order. With ``model`` every dialogue goes to it (a warning is logged for those in a
    language it was not trained on); without (None or ``"default"``), each goes to the shipped default that
    :func:`route` names, dialogues of one default being scored in shared batches (a warning is logged for those in
    a script that default was not trained on, :func:`routed_warnings`: Korean, Russian, Arabic, ...). ``configure``
    is applied to each detector used (e.g. threshold overrides); those are the process's shared detectors
    (:func:`load`), so a change it makes stays for every later call. A dialogue may be anything :func:`check`
    takes."""
    return _predict(dialogues, model, batch_size, configure)


def _predict(
    dialogues: Sequence[Dialogue],
    model: str | Path | None = None,
    batch_size: int = 64,
    configure: Callable[[Detector], None] | None = None,
    warn: bool = True,
) -> list[Verdict]:
    """:func:`predict`; without ``warn``, for a caller that has warned of a language mismatch in its own words
    (the command line names files and lines)."""
    batch_size = check_batch_size(batch_size)
    dialogues = as_dialogues(dialogues)
    if names_default(model):
        routes = [route(d) for d in dialogues]
        loaded = {key: load(language=key) for key in dict.fromkeys(routes)}  # once a default, not once a dialogue
        dets = [loaded[key] for key in routes]
        if warn:
            warn_routed(dialogues, routes)
    else:
        det = load(model)
        if warn:
            warn_language(det, dialogues)
        dets = [det] * len(dialogues)
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

    Without ``model`` (None or ``"default"``), the shipped default for the dialogue checks it (:func:`route`: the
    Chinese one for a Chinese conversation; the English one, with a warning logged, for a script no shipped default
    reads, such as Korean, Russian or Arabic); a model named explicitly checks it whatever its language, with a
    warning logged when that model was not trained on it (:func:`model_language`).

    With ``speaker`` (e.g. ``"assistant"``) the turn checked is that speaker's last turn with text, as
    ``dialcheck check --speaker``: a chat log may end with the user's message or a tool call. A dialogue object's
    own ``"speaker"`` is used over ``speaker``, as ``dialcheck check`` and the HTTP API read it; a ``"tau"``,
    ``"eta_e"`` or ``"threshold"`` in it is an :class:`InputError` (set a detector's ``tau`` and ``eta_e``). Evidence
    indices are those of the whole dialogue; :func:`dialcheck.io.upto_speaker` gives the turn checked."""
    speakers = check_speakers(speaker)
    if isinstance(dialogue, Dialogue):
        d = check_dialogue(dialogue, allow_empty_last=speakers is not None)
    else:
        d, speakers = parse_checked(dialogue, speakers)
    return predict([d if speakers is None else upto_speaker(d, speakers)], model)[0]
