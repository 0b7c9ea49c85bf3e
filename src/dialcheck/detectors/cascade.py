"""A cascade: a fast detector reads every dialogue, a slower and better one re-reads the uncertain ones.

The fast detector's score decides outside the band ``[recheck_low, recheck_high]``: below it the reply is
consistent, above it a contradiction (its own τ lies inside the band, so these are its own verdicts).
Inside the band the slow detector's verdict (score, evidence, category) replaces the fast one's. The
cascade's speed is set by the share re-read, and its verdicts agree with the slow detector's on all but a
chosen share of dialogues: ``dialcheck train --task cascade --init FAST SLOW`` picks the narrowest band that
keeps that share on held-out dialogues (:func:`choose_band`). Measured (docs/benchmarks.md): v9 in front of an
MPNet-base student re-read about half of DECODE's ten-turn dialogues, 0.2x v9's speed.

A contradiction the fast detector decides alone names its own evidence turns; with ``options.evidence``
``"confirm"`` (``--cascade-evidence confirm``) the slow detector reads the pairs of those turns where there are two
or more and keeps the ones it scores >= its ``eta_e`` (else the one it scores highest): the verdicts and scores do
not change, fewer turns are named beside the right one (measured in docs/benchmarks.md, "Who names the evidence").

With ``recheck_floor`` f above 0 (``--recheck-floor``) the slow detector re-reads, of a dialogue in the band, only
the turns the fast one scored >= f (and the one it scored highest), so the pairs the fast detector rules out cost
nothing twice: a speed option, whose verdicts can differ from the full re-read's where the slow detector would have
flagged a pair the fast one scored below f. The turns left unread keep the fast detector's score in
``pair_scores``; the verdict, its score and evidence are the slow detector's on the turns it read.

An earlier turn too long to share the window with the last one (a long reply, a code block) is read in pairs of
pieces, every piece of the one against every piece of the other (``long_turns`` of the utterance detector; with
``long_turns="pieces"``, ``--long-turns pieces``, so is every pair where either turn has more than ``chunk_tokens``,
32, tokens, even one that fits the window, and what follows applies to those pairs too): a sixth 500-token reply
against five earlier ones is about 1,280 pairs. The first detector scores at most ``piece_pairs`` (64) of them per
earlier turn (``UtteranceDetector.piece_pairs``); the second re-reads, of each such turn, only the ``reread_pieces``
pairs (``REREAD_PIECES``, 4) the first scored highest, the turn's score their maximum as before, so a re-read long
chat costs it 5 x 4 pairs, not 1,280 (pairs read whole are re-read as before). ``reread_pieces`` 0
(``options.reread_pieces``) re-reads every pair of pieces, as before 2026-12-03: measured in
``benchmarks/long_code_replies.py`` (docs/benchmarks.md, "Long code replies").

A verdict's ``score`` is the score of the detector that decided it; ``tau``, ``eta_e`` and
``dialcheck check --tau`` are the slow detector's. A ``tau`` set outside the band stretches the band to hold it
(:attr:`CascadeDetector.reread_band`), so a verdict is a contradiction exactly when its score reaches ``tau``.
A reading option of the utterance-based detector (``pair_order``, ``long_turns``, ``ellipsis``, ``questions``,
``slots``, ``subjects``, ``introductions``, ``times``, ``answers``, ``piece_pairs``; ``--ellipsis resolve`` on the
command line) set on a cascade is set on each stage that has it and saved in the cascade's ``options.readings`` (the
stages' own folders are kept as they were); the band was chosen on the stages' own readings, so measure the cascade
again after changing one.

The folder holds ``dialcheck.json`` (``options``: ``first`` and ``second``, each a sub-folder of the cascade
or the name of a shipped model) and the sub-folders.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError, ModelError
from ..io import as_dialogues
from ..schema import Dialogue, Verdict
from .base import Detector, check_threshold, load_detector, register_detector
from .core import PairClassifier
from .modeling import CONFIG_NAME, DetectorConfig, shipped_or_path
from .utterance import UtteranceDetector, decide

__all__ = [
    "REREAD_PIECES",
    "CascadeDetector",
    "choose_band",
    "load_named",
    "not_ruled_out",
    "save_named",
    "stage_folders",
]

log = logging.getLogger(__name__)

STAGES = ("first", "second")
#: Of an earlier turn read in pairs of pieces (a pair too long for the window), how many the second stage re-reads:
#: the ones the first scored highest (``options.reread_pieces``; 0: every one, as before 2026-12-03).
REREAD_PIECES = 4
EVIDENCE = ("first", "confirm")  # who names the turns of a contradiction the first detector decides alone
READINGS = (
    "pair_order",
    "long_turns",
    "ellipsis",
    "questions",
    "slots",
    "subjects",
    "introductions",
    "times",
    "answers",
    "piece_pairs",
)


def stage_folders(folder: Path, options: dict[str, Any]) -> list[Path]:
    """The folders of a saved cascade's stages, in order: a sub-folder of ``folder`` (a stage saved with it) or a
    shipped model by name. Stages not named in ``options`` are left out (loading the cascade says why).

    >>> [p.name for p in stage_folders(Path("c"), {"first": "decode-utterance-minilm-v10"})]
    ['decode-utterance-minilm-v10']
    """
    refs = [options.get(key) for key in STAGES]
    return [_stage_folder(folder, ref) for ref in refs if isinstance(ref, str) and ref]


def _stage_folder(folder: Path, ref: str) -> Path:
    return folder / ref if (folder / ref / CONFIG_NAME).exists() else shipped_or_path(ref, _models_dir())


class StageReading:
    """A reading option of the stages: set on each stage that has it, remembered in ``options.readings``."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: CascadeDetector | None, objtype: type | None = None) -> Any:
        if obj is None:
            return self
        stages = [d for d in obj._pair() if hasattr(d, self.name)]
        return getattr(stages[-1], self.name) if stages else obj.config.options.get("readings", {}).get(self.name)

    def __set__(self, obj: CascadeDetector, value: Any) -> None:
        for d in obj._pair():
            if hasattr(d, self.name):
                setattr(d, self.name, value)
        obj.config.options.setdefault("readings", {})[self.name] = value


@register_detector("cascade.v1")
class CascadeDetector(Detector):
    """``first`` decides outside ``[recheck_low, recheck_high]``, ``second`` inside (see the module text).

    >>> import dialcheck
    >>> fast = dialcheck.load()  # doctest: +SKIP
    >>> slow = dialcheck.load("runs/mpnet-student")  # doctest: +SKIP
    >>> det = CascadeDetector.build(fast, slow, low=0.2, high=0.95)  # doctest: +SKIP
    >>> det(["I have two cats.", "Nice!", "I have never had a pet."]).contradiction  # doctest: +SKIP
    True
    """

    pair_order = StageReading()
    long_turns = StageReading()
    ellipsis = StageReading()
    questions = StageReading()
    slots = StageReading()
    subjects = StageReading()
    introductions = StageReading()
    times = StageReading()
    answers = StageReading()
    piece_pairs = StageReading()

    @classmethod
    def build(cls, first: Detector, second: Detector, low: float, high: float) -> CascadeDetector:
        """A cascade of two loaded detectors (``low <= first.tau <= high``)."""
        low, high = check_threshold(low, "recheck_low"), check_threshold(high, "recheck_high")
        det = cls.from_config(
            _config(second, low, high, {"first": _ref(first, "first"), "second": _ref(second, "second")})
        )
        det.__dict__["_stages"] = (first, second)
        det._check_band()
        return det

    # -- the two stages ---------------------------------------------------------------------------
    @property
    def first(self) -> Detector:
        return self._pair()[0]

    @property
    def second(self) -> Detector:
        return self._pair()[1]

    def _pair(self) -> tuple[Detector, Detector]:
        stages = self.__dict__.get("_stages")
        if stages is None:
            raise ModelError("the cascade has no detectors yet: load() it or build(first, second, low, high)")
        return stages

    @property
    def evidence(self) -> str:
        """Who names the evidence turns of a contradiction the first detector decides alone (above the band):
        ``"first"`` (its turns >= its ``eta_e``) or ``"confirm"`` (of the two or more it names, those the second
        scores >= the second's ``eta_e``, else the one it scores highest). Saved in ``options.evidence``."""
        return str(self.config.options.get("evidence", "first"))

    @evidence.setter
    def evidence(self, value: str) -> None:
        if value not in EVIDENCE:
            raise ValueError(f"expected one of {EVIDENCE}, got {value!r}")
        if value == "first":
            self.config.options.pop("evidence", None)
        else:
            self.config.options["evidence"] = value

    @property
    def band(self) -> tuple[float, float]:
        """``(recheck_low, recheck_high)``: the first detector's scores the second one re-reads."""
        t = self.config.thresholds
        return float(t.get("recheck_low", 0.0)), float(t.get("recheck_high", 1.0))

    @property
    def reread_band(self) -> tuple[float, float]:
        """The first detector's scores the second one re-reads as the cascade runs: :attr:`band`, stretched to
        hold ``tau`` when ``tau`` was set outside it (``--tau 0.95`` on a band ending at 0.91), so that every
        verdict is a contradiction exactly when its ``score`` reaches ``tau``. Otherwise a first-stage score of
        0.93 would stand as a contradiction under a τ of 0.95; stretched, the second detector re-reads it (slower:
        more dialogues are read twice). Inside the band, ``tau`` changes only the second detector's verdicts.
        """
        low, high = self.band
        tau = self.tau
        return min(low, tau), max(high, tau)

    @property
    def reread_pieces(self) -> int:
        """Of an earlier turn read in pairs of pieces (a pair too long for the model's window: long replies, code
        blocks), the second detector re-reads only the ``reread_pieces`` pairs the first scored highest, the
        turn's score their maximum; 0: every pair of pieces. Default ``REREAD_PIECES``; saved in
        ``options.reread_pieces`` when it differs. Both stages must be utterance detectors, else every pair is
        re-read. Short pairs are read whole either way."""
        return int(self.config.options.get("reread_pieces", REREAD_PIECES))

    @reread_pieces.setter
    def reread_pieces(self, value: int) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise InputError(f"reread_pieces: expected a whole number >= 0 (0: every pair of pieces), got {value!r}")
        if value == REREAD_PIECES:
            self.config.options.pop("reread_pieces", None)
        else:
            self.config.options["reread_pieces"] = value

    def _reads_top_pieces(self) -> bool:
        """Does the second stage re-read only the first's top pairs of pieces (:attr:`reread_pieces`)?"""
        first, second = self._pair()
        both = isinstance(first, UtteranceDetector) and isinstance(second, UtteranceDetector)
        return both and self.reread_pieces > 0

    @property
    def recheck_floor(self) -> float:
        """In the band, the second detector reads only the turns the first scored >= this (and the first's
        highest); 0 (the default): every turn. Saved in ``thresholds.recheck_floor``."""
        return float(self.config.thresholds.get("recheck_floor", 0.0))

    @recheck_floor.setter
    def recheck_floor(self, value: float) -> None:
        value = check_threshold(value, "recheck_floor")
        if value == 0.0:
            self.config.thresholds.pop("recheck_floor", None)
        else:
            self.config.thresholds["recheck_floor"] = float(value)

    def _check_band(self, where: str = "cascade band") -> None:
        low, high = self.band
        if not 0.0 <= low <= self.first.tau <= high <= 1.0:
            raise ModelError(
                f"{where} [{low}, {high}] must hold the first detector's tau ({self.first.tau}) and lie in [0, 1]"
            )

    def _threshold(self, key: str) -> float:
        """The second detector's ``tau`` or ``eta_e`` (it decides inside the band); the config's before loading."""
        if "_stages" in self.__dict__:
            return float(getattr(self.second, key))
        return float(self.config.thresholds.get(key, 0.5))

    def _set_threshold(self, key: str, value: float) -> None:
        self.config.thresholds[key] = check_threshold(value, key)
        if "_stages" in self.__dict__:
            setattr(self.second, key, value)

    @property
    def tau(self) -> float:
        """The second detector's decision threshold (it decides inside the band)."""
        return self._threshold("tau")

    @tau.setter
    def tau(self, value: float) -> None:
        self._set_threshold("tau", value)

    @property
    def eta_e(self) -> float:
        return self._threshold("eta_e")

    @eta_e.setter
    def eta_e(self, value: float) -> None:
        self._set_threshold("eta_e", value)

    @property
    def classifier(self) -> PairClassifier:
        raise ModelError("a cascade has two detectors: use .first and .second")

    def attach(self, model: Any, tokenizer: Any) -> Detector:
        raise ModelError("a cascade is built from two detectors: CascadeDetector.build(first, second, low, high)")

    def pair_classifiers(self) -> list[PairClassifier]:
        return [c for d in self._pair() for c in d.pair_classifiers()]

    def quantize(self) -> Detector:
        for d in self._pair():
            d.quantize()
        self.config.options["int8"] = True  # as for one detector: what `serve` reports, never saved
        return self

    def use_onnx(self, int8: bool = False, threads: int | None = None, cache: str | Path | None = None) -> Detector:
        """Both stages on ONNX Runtime; on int8, a cascade whose thresholds name a τ per int8 range
        (``thresholds.tau_int8``) takes the one of the range this CPU runs, unless its τ was set since loading."""
        for d in self._pair():
            d.use_onnx(int8, threads, cache)
        self.config.options.update(onnx=True, int8=bool(int8))
        by_range = self.config.thresholds.get("tau_int8")
        if int8 and by_range and self.tau == self.__dict__.get("_loaded_tau"):
            from .onnx import int8_range

            r = int8_range()
            if r in by_range:  # the stage's own, so the config keeps the τ it was saved with
                self.second.tau = by_range[r]
                self.__dict__["_loaded_tau"] = self.tau
                log.info("cascade: tau %g, chosen on %s-range int8 scores", self.tau, r)
        return self

    def fit(self, pairs: Sequence[Any] | None = None, **training: Any) -> Detector:
        raise ModelError("a cascade is not trained: train its two detectors, then dialcheck train --task cascade")

    # -- folders ----------------------------------------------------------------------------------
    def load_weights(self, folder: Path) -> None:
        self.__dict__["_stages"] = load_named(folder, self.config.options, STAGES)
        readings = self.config.options.get("readings", {})
        if not isinstance(readings, dict) or set(readings) - set(READINGS):
            raise ModelError(f"{folder / CONFIG_NAME}: options.readings: expected an object with keys among {READINGS}")
        for name, value in readings.items():
            try:
                setattr(self, name, value)
            except ValueError as e:
                raise ModelError(f"{folder / CONFIG_NAME}: options.readings.{name}: {e}") from None
        t = self.config.thresholds
        self.second.tau, self.second.eta_e = t.get("tau", self.second.tau), t.get("eta_e", self.second.eta_e)
        self.__dict__["_loaded_tau"] = self.second.tau
        self._check_band(f"{folder / CONFIG_NAME}: thresholds.recheck_low, recheck_high: the band")
        _check_tau_int8(folder / CONFIG_NAME, t.get("tau_int8"))
        where = f"{folder / CONFIG_NAME}: options.evidence"
        if self.evidence not in EVIDENCE:
            raise ModelError(f"{where}: expected one of {EVIDENCE}, got {self.evidence!r}")
        if self.evidence == "confirm":
            self._pair_scoring_second(f"{where}: confirm")
        try:
            self.recheck_floor = t.get("recheck_floor", 0.0)  # the setter's check, on the saved value
        except InputError as e:
            raise ModelError(f"{folder / CONFIG_NAME}: thresholds.{e.message}") from None
        if self.recheck_floor:
            self._pair_scoring_second(f"{folder / CONFIG_NAME}: thresholds.recheck_floor")
        try:
            self.reread_pieces = self.config.options.get("reread_pieces", REREAD_PIECES)
        except InputError as e:
            raise ModelError(f"{folder / CONFIG_NAME}: options.{e.message}") from None

    def save(self, path: str | Path, half: bool = False) -> Path:
        """The config, and each stage not shipped with dialcheck as a sub-folder (``first/``, ``second/``)."""
        folder = Path(path)
        save_named(folder, self.config.options, STAGES, self._pair(), half)
        self.config.thresholds["tau"], self.config.thresholds["eta_e"] = self.tau, self.eta_e
        (folder / CONFIG_NAME).write_text(self.config.to_json(), encoding="utf-8")
        self.path = folder
        return folder

    # -- prediction -------------------------------------------------------------------------------
    def predict(
        self, dialogues: Sequence[Dialogue], batch_size: int = 64, show_progress_bar: bool = False
    ) -> list[Verdict]:
        dialogues = as_dialogues(dialogues)
        first, second = self._pair()
        top: dict[str, Any] = {}  # how the second re-reads long pairs: only the first's top pairs of pieces
        if self._reads_top_pieces():
            verdicts, pieces = first.predict_pieces(dialogues, batch_size, show_progress_bar)
            top = {"top_pieces": self.reread_pieces, "rank": _Ranking(first, pieces, batch_size)}
        else:
            verdicts = first.predict(dialogues, batch_size=batch_size, show_progress_bar=show_progress_bar)
        low, high = self.reread_band
        again = [i for i, v in enumerate(verdicts) if low <= v.score <= high]
        # the first's sure contradictions naming two or more turns (outside the band: the re-read leaves them)
        sure = [i for i, v in enumerate(verdicts) if v.score > high and len(v.evidence) > 1]
        if again:
            band = [dialogues[i] for i in again]
            floor = self.recheck_floor
            if floor > 0.0:
                turns = [not_ruled_out(verdicts[i].pair_scores, floor) for i in again]
                reread = self._pair_scoring_second("recheck_floor").predict_turns(
                    band, turns, batch_size=batch_size, **top
                )
                # the turns left unread keep the first's scores (below the floor): every paired turn has one
                reread = [
                    replace(v, pair_scores=dict(sorted((verdicts[i].pair_scores | v.pair_scores).items())))
                    for i, v in zip(again, reread, strict=True)
                ]
            elif top:
                reread = second.predict_turns(band, None, batch_size=batch_size, **top)
            else:
                reread = second.predict(band, batch_size=batch_size)
            for i, v in zip(again, reread, strict=True):
                verdicts[i] = v
        log.debug("cascade: %d of %d dialogues re-read by the second detector", len(again), len(dialogues))
        if self.evidence == "confirm":
            self._confirm_evidence(dialogues, verdicts, sure, batch_size, top)
        return verdicts

    def _pair_scoring_second(self, what: str) -> Any:
        """The second detector, which ``what`` needs to score chosen turns (``predict_turns``, ``score_turns``):
        a model error naming ``what`` when it cannot (it checks a loaded config early and a built cascade late)."""
        second = self.second
        if not (hasattr(second, "predict_turns") and hasattr(second, "score_turns")):
            raise ModelError(f"{what} needs a second stage that scores pairs ({second.config.detector})")
        return second

    def _confirm_evidence(
        self,
        dialogues: Sequence[Dialogue],
        verdicts: list[Verdict],
        sure: Sequence[int],
        batch_size: int,
        top: dict[str, Any],
    ) -> None:
        """``evidence = "confirm"``: the second detector re-scores the turns the first named in the verdicts
        ``sure`` (decided by the first alone; of a long pair, the first's top pairs of pieces as ``top`` says);
        the verdicts are replaced in place."""
        second = self._pair_scoring_second("evidence confirm")
        if not sure:
            return
        named = [verdicts[i].evidence for i in sure]
        scored = second.score_turns([dialogues[i] for i in sure], named, batch_size, **top)
        for i, scores in zip(sure, scored, strict=True):
            if scores:  # the second's evidence rule on those turns alone: >= its eta_e, else the highest
                verdicts[i] = replace(verdicts[i], evidence=decide(scores, 0.0, second.eta_e).evidence)


class _Ranking:
    """Ranks pairs of pieces by the first stage's scores: those it read (``pieces``, from ``predict_pieces``) by
    their score, any other (where the second stage's tokenizer cuts a turn otherwise) scored by the first now."""

    def __init__(self, first: UtteranceDetector, pieces: dict[tuple[str, str], float], batch_size: int) -> None:
        self.first, self.pieces, self.batch_size = first, pieces, batch_size

    def __call__(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        missing = list(dict.fromkeys(p for p in pairs if p not in self.pieces))
        if missing:
            self.pieces.update(zip(missing, self.first.score_pairs(missing, self.batch_size), strict=True))
        return [self.pieces[p] for p in pairs]


def _check_tau_int8(where: Path, by_range: Any) -> None:
    """``thresholds.tau_int8``, where present: a τ in [0, 1] for each of some int8 ranges (``full``, ``reduced``)."""
    from .onnx import INT8_RANGES

    if by_range is None:
        return
    ok = isinstance(by_range, dict) and by_range and set(by_range) <= set(INT8_RANGES)
    if not ok or not all(isinstance(v, int | float) and 0.0 <= v <= 1.0 for v in by_range.values()):
        raise ModelError(
            f"{where}: thresholds.tau_int8: expected an object of thresholds in [0, 1] keyed by {INT8_RANGES}"
        )


def not_ruled_out(pair_scores: dict[int, float], floor: float) -> set[int]:
    """The earlier turns a first stage scored >= ``floor``, and always the one it scored highest.

    >>> sorted(not_ruled_out({0: 0.01, 2: 0.3, 4: 0.6}, 0.05))
    [2, 4]
    >>> sorted(not_ruled_out({0: 0.01, 2: 0.02}, 0.05))
    [2]
    """
    keep = {i for i, s in pair_scores.items() if s >= floor}
    if pair_scores:
        keep.add(max(pair_scores, key=pair_scores.__getitem__))
    return keep


def choose_band(
    first_scores: Sequence[float], second_flags: Sequence[bool], tau: float, max_disagreement: float = 0.01
) -> tuple[float, float]:
    """The band that sends the fewest dialogues to the second detector while the cascade's verdicts differ
    from the second detector's on at most ``max_disagreement`` of them (``tau``: the first detector's).

    A dialogue scored outside ``[low, high]`` keeps the first detector's verdict (consistent below ``low``, a
    contradiction above ``high``); the band always holds ``tau``; ``high`` 1 leaves every contradiction to
    the second detector.

    >>> choose_band([0.1, 0.2, 0.5, 0.8, 0.9], [False, False, True, True, True], tau=0.5, max_disagreement=0.0)
    (0.5, 0.5)
    >>> choose_band([0.1, 0.2, 0.5, 0.8, 0.9], [False, True, False, True, True], tau=0.5, max_disagreement=0.0)
    (0.2, 0.5)
    >>> choose_band([0.1, 0.2, 0.5, 0.8, 0.9], [False, True, False, True, True], tau=0.5, max_disagreement=0.2)
    (0.5, 0.5)
    """
    s = np.asarray(first_scores, dtype=float)
    flags = np.asarray(second_flags, dtype=bool)
    if s.shape != flags.shape or s.ndim != 1 or not len(s):
        raise InputError("choose_band needs one second-detector verdict per first-detector score, at least one")
    if not 0.0 <= max_disagreement < 1.0:
        raise InputError(f"max_disagreement must lie in [0, 1), got {max_disagreement}")
    budget = int(np.floor(max_disagreement * len(s) + 1e-9))
    lows = np.unique(np.concatenate([[0.0, tau], s[s <= tau]]))  # below low: the first says consistent
    highs = np.unique(np.concatenate([[tau, 1.0], s[(s >= tau) & (s < 1.0)]]))  # above high: contradiction
    above_wrong = np.array([np.sum(~flags & (s > hi)) for hi in highs])  # non-increasing in high
    above_kept = np.array([np.sum(s > hi) for hi in highs])
    best = (-1, 0.0, 1.0)
    for lo in lows:
        room = budget - int(np.sum(flags & (s < lo)))  # the second would call these contradictions
        if room < 0:
            break
        j = int(np.nonzero(above_wrong <= room)[0][0])  # the lowest high within budget keeps the most
        kept = int(np.sum(s < lo) + above_kept[j])
        if kept > best[0]:
            best = (kept, float(lo), float(highs[j]))
    return best[1], best[2]


def load_named(folder: Path, options: dict[str, Any], keys: Sequence[str]) -> tuple[Detector, ...]:
    """The detectors a folder that combines others names in ``options`` (each a sub-folder of ``folder`` or a
    shipped model's name), in the order of ``keys``; a missing or wrong name is an error naming the config."""
    return tuple(load_detector(named_folder(folder, options, key)) for key in keys)


def named_folder(folder: Path, options: dict[str, Any], key: str) -> Path:
    """The folder of the detector ``options[key]`` names (a sub-folder of ``folder`` or a shipped model's name);
    a missing or wrong name is an error naming the config."""
    ref = options.get(key)
    if not isinstance(ref, str) or not ref:
        raise ModelError(f"{folder / CONFIG_NAME}: options.{key}: expected a folder or shipped model name")
    path = _stage_folder(folder, ref)
    if not (path / CONFIG_NAME).exists():
        from ..catalog import repository_only_note

        note = repository_only_note(ref, "stage", key)  # a stage the wheel left out: where it is, how to name it
        raise ModelError(f"{folder / CONFIG_NAME}: options.{key}: {note or f'no detector at {ref!r}'}")
    return path


def save_named(
    folder: Path, options: dict[str, Any], keys: Sequence[str], detectors: Sequence[Detector], half: bool
) -> None:
    """Name each of ``detectors`` in ``options`` under its key: a shipped model by its name, any other stored as
    the sub-folder ``folder/key`` (the counterpart of :func:`load_named`)."""
    folder.mkdir(parents=True, exist_ok=True)
    for key, det in zip(keys, detectors, strict=True):
        ref = _ref(det, key)
        options[key] = ref
        if ref == key:
            _store(det, folder / key, half)


def _store(det: Detector, folder: Path, half: bool) -> None:
    """A copy of the folder ``det`` was loaded from (its adapter as trained), else ``det.save``."""
    import shutil

    if det.path is None:
        det.save(folder, half=half)
    elif det.path.resolve() != folder.resolve():
        shutil.copytree(det.path, folder, ignore=shutil.ignore_patterns("resume", "checkpoint"), dirs_exist_ok=True)


def _models_dir() -> Path:
    from ..catalog import models_dir

    return models_dir()


def _ref(det: Detector, key: str) -> str:
    """How the cascade's config names a stage: a shipped model by its name, anything else by sub-folder."""
    path = det.path
    if path is not None and path.resolve().parent == _models_dir().resolve():
        return path.name
    return key


def _config(second: Detector, low: float, high: float, refs: dict[str, str]) -> DetectorConfig:
    """A cascade's config: the second detector's base, labels and thresholds, the band, the stages' names."""
    return DetectorConfig(
        detector="cascade.v1",
        base=second.config.base,
        labels=list(second.config.labels),
        thresholds={"tau": second.tau, "eta_e": second.eta_e, "recheck_low": float(low), "recheck_high": float(high)},
        max_length=second.config.max_length,
        options=dict(refs),
    )
