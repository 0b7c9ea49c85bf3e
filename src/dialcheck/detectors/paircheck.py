"""A four-category detector with a pair check: the bot's reply read against each of its earlier turns.

The flat CDConv detectors read the whole conversation at once, and learn CDConv's trigger patterns more than the
comparison of the reply with what the bot said before (docs/chinese.md). A pair classifier trained on NLI
(``dialcheck train --task ocnli``) reads only that comparison: the reply against every earlier turn of the same
speaker, the highest score as ``s_n`` (the DECODE reading, :class:`~dialcheck.detectors.UtteranceDetector`).
The main detector decides, and the pair check changes two kinds of verdicts:

- a reply the main detector leaves alone is a history contradiction when ``s_n >= tau_pairs``; the earlier turns
  scored at least ``tau_pairs`` are its evidence;
- with ``veto_below`` above 0, a reply the main detector names history is consistent when ``s_n < veto_below``.

A verdict's ``score`` is the score of the signal that decided it; ``pair_scores`` holds the pair check's scores
wherever it ran. ``tau`` (``dialcheck check --tau``) is the main detector's.

The folder holds ``dialcheck.json`` (``options``: ``main`` and ``pairs``, each a sub-folder or the name of a
shipped model; ``thresholds``: ``tau_pairs`` and ``veto_below``) and the sub-folders:
``dialcheck train --task paircheck --init MAIN PAIRS --tau-pairs T [--veto-below V]`` builds one.
"""

from __future__ import annotations

import logging
import numbers
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..errors import ModelError
from ..io import as_dialogues
from ..schema import Dialogue, Verdict
from .base import Detector, check_threshold, register_detector
from .cascade import _ref, load_named, save_named
from .core import PairClassifier
from .modeling import CONFIG_NAME, DetectorConfig

__all__ = ["PairCheckedDetector", "combine"]

log = logging.getLogger(__name__)

PARTS = ("main", "pairs")


def combine(main: Verdict, pairs: Verdict, tau_pairs: float, veto_below: float = 0.0) -> Verdict:
    """One verdict from the main detector's and the pair check's (see the module text).

    >>> from dialcheck.schema import Verdict
    >>> missed = Verdict(False, 0.3, (), None)
    >>> v = combine(missed, Verdict(True, 0.97, (1,), None, {1: 0.97, 3: 0.2}), tau_pairs=0.9)
    >>> v.contradiction, v.score, v.evidence, v.category
    (True, 0.97, (1,), 'history')
    >>> named = Verdict(True, 0.8, (1, 3), "history")
    >>> v = combine(named, Verdict(False, 0.01, (), None, {1: 0.01, 3: 0.0}), 0.9, veto_below=0.02)
    >>> v.contradiction, v.score, v.evidence, v.category
    (False, 0.01, (), None)
    """
    s = float(pairs.score)
    scores = dict(pairs.pair_scores)
    if not main.contradiction and s >= tau_pairs:
        evidence = tuple(sorted(k for k, x in scores.items() if x >= tau_pairs)) or tuple(pairs.evidence)
        return Verdict(True, s, evidence, "history", scores, None, main.label_scores)
    if main.contradiction and main.category == "history" and s < veto_below:
        return Verdict(False, s, (), None, scores, None, main.label_scores)
    return replace(main, pair_scores=scores)


@register_detector("cdconv.paircheck.v1")
class PairCheckedDetector(Detector):
    """A CDConv detector (``main``) with a pair check (``pairs``) on what it leaves alone (see the module text).

    >>> import dialcheck
    >>> main = dialcheck.load("cdconv-flat-gemma-v9")  # doctest: +SKIP
    >>> pairs = dialcheck.load("runs/ocnli-gemma")  # doctest: +SKIP
    >>> det = PairCheckedDetector.build(main, pairs, tau_pairs=0.9)  # doctest: +SKIP
    """

    @classmethod
    def build(cls, main: Detector, pairs: Detector, tau_pairs: float, veto_below: float = 0.0) -> PairCheckedDetector:
        """A pair-checked detector from two loaded ones."""
        numbers_given = all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in (tau_pairs, veto_below))
        if not numbers_given or not 0.0 <= veto_below <= 1.0 or not tau_pairs >= 0.0:  # NaN is neither
            raise ModelError(f"tau_pairs must be >= 0 and veto_below in [0, 1], got {tau_pairs}, {veto_below}")
        config = DetectorConfig(
            detector=cls.registry_name,
            base=main.config.base,
            labels=list(main.config.labels),
            thresholds={
                "tau": main.tau,
                "eta_e": main.eta_e,
                "tau_pairs": float(tau_pairs),
                "veto_below": float(veto_below),
            },
            max_length=main.config.max_length,
            options={"main": _ref(main, "main"), "pairs": _ref(pairs, "pairs")},
        )
        det = cls.from_config(config)
        det.__dict__["_loaded"] = (main, pairs)
        return det

    def _parts(self) -> tuple[Detector, Detector]:
        parts = self.__dict__.get("_loaded")
        if parts is None:
            raise ModelError("the pair-checked detector has no detectors yet: load() it or build(main, pairs, ...)")
        return parts

    @property
    def main(self) -> Detector:
        return self._parts()[0]

    @property
    def pairs(self) -> Detector:
        return self._parts()[1]

    @property
    def tau_pairs(self) -> float:
        return float(self.config.thresholds.get("tau_pairs", 1.01))

    @property
    def veto_below(self) -> float:
        return float(self.config.thresholds.get("veto_below", 0.0))

    @property
    def tau(self) -> float:
        """The main detector's decision threshold."""
        return float(self.main.tau) if "_loaded" in self.__dict__ else float(self.config.thresholds.get("tau", 0.5))

    @tau.setter
    def tau(self, value: float) -> None:
        self.config.thresholds["tau"] = check_threshold(value, "tau")
        if "_loaded" in self.__dict__:
            self.main.tau = value

    @property
    def classifier(self) -> PairClassifier:
        raise ModelError("a pair-checked detector has two detectors: use .main and .pairs")

    def attach(self, model: Any, tokenizer: Any) -> Detector:
        raise ModelError("a pair-checked detector is built from two detectors: PairCheckedDetector.build(...)")

    def pair_classifiers(self) -> list[PairClassifier]:
        return [c for d in self._parts() for c in d.pair_classifiers()]

    def fit(self, pairs: Sequence[Any] | None = None, **training: Any) -> Detector:
        raise ModelError("a pair-checked detector is not trained: train its two detectors, then --task paircheck")

    def load_weights(self, folder: Path) -> None:
        self.__dict__["_loaded"] = load_named(folder, self.config.options, PARTS)
        self.main.tau = self.config.thresholds.get("tau", self.main.tau)

    def save(self, path: str | Path, half: bool = False) -> Path:
        """The config, and each part not shipped with dialcheck as a sub-folder (``main/``, ``pairs/``)."""
        folder = Path(path)
        save_named(folder, self.config.options, PARTS, self._parts(), half)
        self.config.thresholds["tau"] = self.tau
        (folder / CONFIG_NAME).write_text(self.config.to_json(), encoding="utf-8")
        self.path = folder
        return folder

    def predict(
        self, dialogues: Sequence[Dialogue], batch_size: int = 64, show_progress_bar: bool = False
    ) -> list[Verdict]:
        dialogues = as_dialogues(dialogues)
        main, pairs = self._parts()
        verdicts = main.predict(dialogues, batch_size=batch_size, show_progress_bar=show_progress_bar)
        veto = self.veto_below
        todo = [
            i
            for i, (d, v) in enumerate(zip(dialogues, verdicts, strict=True))
            if d.same_speaker_indices() and (not v.contradiction or (veto > 0 and v.category == "history"))
        ]
        if todo:
            checked = pairs.predict([dialogues[i] for i in todo], batch_size=batch_size)
            for i, p in zip(todo, checked, strict=True):
                verdicts[i] = combine(verdicts[i], p, self.tau_pairs, veto)
        log.debug("pair check: %d of %d replies read against their earlier turns", len(todo), len(dialogues))
        return verdicts
