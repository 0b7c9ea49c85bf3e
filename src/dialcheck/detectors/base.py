"""The detector surface shared by every detector, and the versioned registry of detector types."""

from __future__ import annotations

import contextlib
import contextvars
import logging
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from ..errors import InputError, ModelError
from ..io import as_context, as_texts, check_batch_size, check_reply_speaker, is_blank, reply_speaker
from ..schema import Dialogue, Turn, Verdict
from .core import CONTRADICTION, PairClassifier, _OnnxOnly
from .modeling import (
    CONFIG_NAME,
    DetectorConfig,
    check_threshold,
    check_thresholds,
    check_window,
    labels_from_hf_config,
    load_model,
    tokenizer_only,
)

__all__ = ["DETECTORS", "Detector", "RankedCandidate", "check_threshold", "interrupted_run", "register_detector"]

log = logging.getLogger(__name__)

DETECTORS: dict[str, type[Detector]] = {}
D = TypeVar("D", bound="type[Detector]")
_INT8_EXPORTS = contextvars.ContextVar("dialcheck_int8_exports", default=False)


@contextlib.contextmanager
def int8_exports_only() -> Iterator[None]:
    """Within the block, a pair classifier whose int8 ONNX export the cache's index already holds is loaded
    without its torch weights (tokenizer and export only): what :func:`dialcheck.load` does for a model
    calibrated on ONNX int8, which never runs on torch. Classifiers not in the index load as usual."""
    token = _INT8_EXPORTS.set(True)
    try:
        yield
    finally:
        _INT8_EXPORTS.reset(token)


def register_detector(name: str) -> Callable[[D], D]:
    """Class decorator: register a detector type under a versioned name such as ``decode.utterance.v1``."""

    def deco(cls: D) -> D:
        if name in DETECTORS:
            raise ValueError(f"detector {name!r} registered twice")
        cls.registry_name = name
        DETECTORS[name] = cls
        return cls

    return deco


@dataclass(frozen=True)
class RankedCandidate:
    """A candidate reply with its position in the input list and the detector's verdict."""

    index: int
    text: str
    verdict: Verdict


class Detector(ABC):
    """Base class: constructors store configuration; :meth:`load` or :meth:`fit` bring the weights."""

    registry_name: ClassVar[str] = ""
    truncation_side: ClassVar[str] = "right"
    names_evidence: ClassVar[bool] = True  # does ``predict`` name the earlier turns that are contradicted?

    def __init__(
        self,
        base: str = "all-MiniLM-L6-v2",
        tau: float = 0.5,
        eta_e: float = 0.5,
        max_length: int = 128,
        adapter: dict[str, Any] | None = None,
        **options: Any,
    ) -> None:
        self.config = DetectorConfig(
            detector=self.registry_name,
            base=base,
            thresholds={"tau": check_threshold(tau, "tau"), "eta_e": check_threshold(eta_e, "eta_e")},
            max_length=max_length,
            adapter=adapter,
            options=dict(options),
        )
        self.path: Path | None = None
        self._clf: PairClassifier | None = None

    # -- thresholds -------------------------------------------------------------------------------
    @property
    def tau(self) -> float:
        """Decision threshold on the dialogue score."""
        return float(self.config.thresholds.get("tau", 0.5))

    @tau.setter
    def tau(self, value: float) -> None:
        self.config.thresholds["tau"] = check_threshold(value, "tau")

    @property
    def eta_e(self) -> float:
        """Threshold above which an earlier turn is reported as evidence."""
        return float(self.config.thresholds.get("eta_e", self.tau))

    @eta_e.setter
    def eta_e(self, value: float) -> None:
        self.config.thresholds["eta_e"] = check_threshold(value, "eta_e")

    # -- weights ----------------------------------------------------------------------------------
    @property
    def classifier(self) -> PairClassifier:
        if self._clf is None:
            raise ModelError(f"{type(self).__name__} has no weights yet: call load() or fit() first")
        return self._clf

    def attach(self, model: Any, tokenizer: Any) -> Detector:
        """Use an in-memory (model, tokenizer), e.g. right after training."""
        self._clf = PairClassifier(
            model,
            tokenizer,
            self.config.labels,
            self.config.max_length,
            self.truncation_side,
            multi_label=self.config.problem_type == "multi_label_classification",
        )
        return self

    def quantize(self) -> Detector:
        """Switch to int8 dynamic quantization of the linear layers (CPU inference; about 2x faster).

        Scores move: on 400 ten-turn DECODE dialogues the shipped v3's dialogue scores moved by a median of
        0.036 (90th percentile 0.21) and 24 verdicts flipped (``benchmarks/throughput.py``); evaluate the
        quantized detector before relying on its threshold.
        """
        from .onnx import switch_to_int8

        switch_to_int8(self.pair_classifiers(), self.config.options)
        return self

    def use_onnx(self, int8: bool = False, threads: int | None = None, cache: str | Path | None = None) -> Detector:
        """Score pairs with ONNX Runtime instead of torch (``pip install "dialcheck[onnx]"``).

        Each pair classifier is exported once into the dialcheck cache (keyed by its weights) and, with
        ``int8``, quantized per channel. float32 scores equal torch's to about 1e-6; int8 ones move a little
        (less than with :meth:`quantize`). ``threads`` defaults to :func:`dialcheck.threads.thread_count`.

        >>> import dialcheck
        >>> det = dialcheck.load().use_onnx(int8=True)  # doctest: +SKIP
        """
        from .onnx import switch_to_onnx

        switch_to_onnx(self.pair_classifiers(), self.config.options, int8, threads, cache)
        return self

    def release_torch(self) -> Detector:
        """After :meth:`use_onnx`, free the torch weights ONNX Runtime no longer needs (for the default English
        cascade about 500 MB of its 1.15 GB). The detector then predicts and ranks as before, but cannot be
        saved, trained, quantized or exported again; :func:`dialcheck.load` does this for a model calibrated on
        ONNX int8.

        >>> import dialcheck
        >>> det = dialcheck.load()  # on ONNX int8, torch weights released  # doctest: +SKIP
        """
        for clf in self.pair_classifiers():
            clf.release_torch()
        return self

    def pair_classifiers(self) -> list[PairClassifier]:
        """The pair classifiers this detector scores with (one for most detectors)."""
        return [self.classifier]

    @classmethod
    def from_config(cls, config: DetectorConfig) -> Detector:
        """A detector of ``config`` (its thresholds checked again: the dict may have changed since it was made)."""
        check_thresholds(config.thresholds)
        det = cls.__new__(cls)
        Detector.__init__(det)
        det.config = config
        return det

    @classmethod
    def load(cls, path: str | Path) -> Detector:
        """Load a saved detector folder (any registered type) or a plain HF classifier folder."""
        return load_detector(path) if cls is Detector else _load_as(cls, Path(path))

    def load_weights(self, folder: Path) -> None:
        """Attach the weights saved in ``folder`` (detectors with several classifiers override this); within
        :func:`int8_exports_only`, only the tokenizer and the cached int8 export when there is one."""
        from .onnx import cached_int8_export, source_key

        key: str | None = None
        if _INT8_EXPORTS.get():  # only such a load reads the index, so only it needs (and records) the key
            try:
                key = source_key(folder, self.config)
            except OSError as e:  # an unreadable file: the weights load (or fail) as ever, just not from the index
                log.debug("%s: no ONNX source key (%s)", folder, e)
        export = cached_int8_export(key) if key else None
        tok = tokenizer_only(folder, self.config) if export is not None else None
        if export is not None and tok is not None:
            self.attach(_OnnxOnly(f"classifier of {folder.name}"), tok)
            self.classifier.onnx_int8 = export
            log.info("%s: int8 export %s from the cache, no torch weights loaded", folder, export.name)
        else:
            model, tok = load_model(folder, self.config)
            self.attach(model, tok)
        self.classifier.source_key = key

    def save(self, path: str | Path, half: bool = False) -> Path:
        """Write the config and weights to ``path`` (see :mod:`dialcheck.detectors.modeling`); ``half``
        stores a LoRA adapter and head in float16 (half the file; read back into float32)."""
        from .modeling import save_model

        clf = self.classifier
        folder = Path(path)
        save_model(clf.model, clf.tokenizer, folder, self.config, half=half)
        self.path = folder
        return folder

    def fit(self, pairs: Sequence[Any] | None = None, **training: Any) -> Detector:
        """Train on pairs (see :func:`dialcheck.training.train_detector`); returns ``self``."""
        from ..training import train_detector

        return train_detector(self, pairs=pairs, **training)

    # -- prediction -------------------------------------------------------------------------------
    @abstractmethod
    def predict(
        self, dialogues: Sequence[Dialogue], batch_size: int = 64, show_progress_bar: bool = False
    ) -> list[Verdict]:
        """One verdict per dialogue about its last turn, in input order. A dialogue is a :class:`Dialogue` or
        anything :func:`dialcheck.io.parse_dialogue` reads (e.g. a list of strings, alternating speakers)."""

    def __call__(self, dialogue: Dialogue) -> Verdict:
        return self.predict([dialogue])[0]

    def rank(
        self,
        context: Dialogue | Sequence[Turn | str] | dict[str, Any],
        candidates: Iterable[str],
        speaker: str | None = None,
        batch_size: int = 64,
    ) -> list[RankedCandidate]:
        """Candidate replies from least to most contradictory (stable for ties).

        ``context``: a :class:`Dialogue`, a list of strings (alternating speakers) or :class:`Turn` objects, or
        a ``{"turns": [...]}`` / ``{"messages": [...]}`` object; ``candidates``: a list of strings. A single
        string for either is an :class:`~dialcheck.errors.InputError`. ``speaker`` is who says the reply; by
        default :func:`~dialcheck.io.reply_speaker`: the speaker of the second-to-last context turn (alternating
        turns; a ``system`` message left out, ``assistant`` after a lone ``user`` turn; after a last turn without
        text, an assistant's tool call, that turn's speaker), else ``"B"``.

        A context without turns (``[]``, ``Dialogue(())``, ``{"turns": []}``) is the start of a conversation: the
        candidates open it, with nothing said before them to contradict, so each is consistent (score 0; a
        knowledge base, if the context has one, is still checked), where :meth:`predict` refuses a dialogue without
        turns. :func:`dialcheck.rerank`, ``dialcheck rerank`` and ``/rank`` take it alike.
        """
        texts = candidate_texts(candidates)
        dialogues = candidate_dialogues(context, texts, speaker)
        return ranked_candidates(texts, self.predict(dialogues, batch_size=check_batch_size(batch_size)))


def candidate_texts(candidates: Iterable[str]) -> list[str]:
    """Candidate replies as a list of strings (:func:`~dialcheck.io.as_texts`); an empty or blank one
    (:func:`~dialcheck.io.is_blank`: white space or invisible characters such as a zero-width space only) is an
    :class:`~dialcheck.errors.InputError` naming it, as an empty last turn is for ``check``: it says nothing to
    check, and scored it would rank above any reply that contradicts.

    >>> candidate_texts(["I have a cat.", " "])
    Traceback (most recent call last):
    ...
    dialcheck.errors.InputError: candidates[1]: the candidate is empty: there is nothing to check
    """
    texts = as_texts(candidates)
    for i, c in enumerate(texts):
        if is_blank(c):
            raise InputError(f"candidates[{i}]: the candidate is empty: there is nothing to check")
    return texts


def candidate_dialogues(
    context: Dialogue | Sequence[Turn | str] | dict[str, Any], candidates: Sequence[str], speaker: str | None = None
) -> list[Dialogue]:
    """The context followed by each candidate reply, one dialogue per candidate (see :meth:`Detector.rank`);
    ``context`` as :func:`dialcheck.io.as_context` reads it.

    >>> [d.turns[-1].speaker for d in candidate_dialogues(["I have a cat.", "Nice."], ["x", "y"])]
    ['A', 'A']
    """
    ctx = as_context(context)
    speaker = check_reply_speaker(speaker) or reply_speaker(ctx)
    return [Dialogue((*ctx.turns, Turn(speaker, c)), ctx.knowledge, ctx.meta) for c in candidates]


def ranked_candidates(candidates: Sequence[str], verdicts: Sequence[Verdict]) -> list[RankedCandidate]:
    """``candidates`` with their verdicts, least contradictory first (stable for ties)."""
    ranked = [RankedCandidate(i, c, v) for i, (c, v) in enumerate(zip(candidates, verdicts, strict=True))]
    return sorted(ranked, key=lambda r: (r.verdict.contradiction, r.verdict.score))


def interrupted_run(folder: Path) -> str | None:
    """What to say of ``folder`` when it is the OUT of an interrupted ``dialcheck train`` (a ``resume/`` folder or
    a ``checkpoint/`` with its config, and no config of its own): what it is and what can be read, not only what it
    lacks; None for any other folder. Loading and ``dialcheck models`` say it in these words."""
    folder = Path(folder)
    if (folder / CONFIG_NAME).exists() or not (
        (folder / "resume").is_dir() or (folder / "checkpoint" / CONFIG_NAME).exists()
    ):
        return None
    best = f"; {folder / 'checkpoint'} holds its best validation so far" if (folder / "checkpoint").is_dir() else ""
    return (
        f"{folder} holds an interrupted training run, not a model{best}; finish it with the same train command "
        "and --resume"
    )


def _load_as(cls: type[Detector], folder: Path, config: DetectorConfig | None = None) -> Detector:
    """A detector of type ``cls`` from ``folder``; ``config``: its ``dialcheck.json`` when the caller has read it
    already (:func:`load_detector`, which read it for the type), so that it is not read twice."""
    if not folder.exists():
        from ..catalog import repository_only_note

        # a superseded model named where the wheel left it out (train --init NAME, a cascade's stage): say so
        raise ModelError(repository_only_note(folder) or f"model folder {folder} does not exist")
    cfg_path = folder / CONFIG_NAME
    if config is not None:
        pass
    elif cfg_path.exists():
        config = DetectorConfig.from_file(cfg_path)
    elif (folder / "config.json").exists():
        labels = labels_from_hf_config(folder)
        if CONTRADICTION not in labels:
            raise ModelError(
                f"{folder} is a Hugging Face classifier whose labels {labels} do not include 'contradiction'; "
                "set id2label in its config.json"
            )
        config = DetectorConfig(detector=cls.registry_name or "decode.utterance.v1", base=".", labels=labels)
    elif (interrupted := interrupted_run(folder)) is not None:
        raise ModelError(interrupted)
    else:
        raise ModelError(f"{folder} holds neither {CONFIG_NAME} nor a Hugging Face config.json")
    check_window(folder, config)
    det = cls.from_config(config)
    det.load_weights(folder)
    det.path = folder
    log.info("loaded %s from %s", config.detector, folder)
    return det


def detector_type(cfg_path: Path, config: DetectorConfig | None = None) -> type[Detector]:
    """The registered detector class the config ``cfg_path`` (a ``dialcheck.json``) names, the config read as
    loading reads it (a threshold of the wrong type is an :class:`InputError`); a :class:`ModelError` naming the
    file for a type no detector registers. :func:`load_detector` and ``dialcheck models FOLDER`` refuse a folder
    by it alike. ``config``: the file, when the caller has read it already."""
    name = (config if config is not None else DetectorConfig.from_file(cfg_path)).detector
    if name not in DETECTORS:
        raise ModelError(f"{cfg_path}: unknown detector type {name!r}; known: {', '.join(sorted(DETECTORS))}")
    return DETECTORS[name]


def load_detector(path: str | Path) -> Detector:
    """A detector from a folder; its registered type is read from ``dialcheck.json``."""
    folder = Path(path)
    cfg_path = folder / CONFIG_NAME
    if cfg_path.exists():
        config = DetectorConfig.from_file(cfg_path)  # read once: for the type, then for the detector
        return _load_as(detector_type(cfg_path, config), folder, config)
    return _load_as(DETECTORS["decode.utterance.v1"], folder)


def int8_model(model: Any) -> Any:
    """``model`` with its linear layers quantized to int8 (torch's dynamic quantization).

    torch 2.13 warns that these quantized tensors are deprecated; the warning says nothing the user can act
    on, so it is silenced here (the pinned torch still supports them).
    """
    import warnings

    import torch

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*quantized tensor creation functions.*deprecated")
        return torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)
