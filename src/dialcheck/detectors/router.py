"""A router: one detector for replies as short as the ones it was built on, another for longer replies.

The default English cascade was trained and calibrated on DECODE's persona chit-chat, whose checked turns are
short (median 12 words; 99% under 35). A reply of an LLM-style assistant or a support bot is often longer,
and there a detector trained further on written chats of that style is judged right more often (measured in
docs/benchmarks.md, "Long replies to a second detector"). :class:`RouterDetector` sends each dialogue whose
checked (last) turn has at least ``options.long_words`` whitespace words to ``options.long``, every other one
to ``options.short``, and scores each group in shared batches.

The long detector is loaded on first use, with the runtime switches and reading options already applied to
the short one, so a service that never sees a long reply pays nothing for it. ``tau`` and ``eta_e`` read the
short detector's; setting them sets both. A reading option (``--slots``, ...) or a cascade option
(``--cascade-evidence``, ``--recheck-floor``; ``reread_pieces``, ``piece_pairs`` in Python) reaches both detectors
where they have it.

The folder holds ``dialcheck.json`` with ``detector: "router.v1"`` and ``options``: ``short`` and ``long``
(each a sub-folder or the name of a shipped model) and ``long_words``.

>>> RouterDetector.is_long(Dialogue.from_texts(["Hi!", "Hello there."]), 35)
False
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..errors import ModelError
from ..io import as_dialogues
from ..schema import Dialogue, Verdict
from .base import Detector, int8_exports_only, load_detector, register_detector
from .cascade import READINGS, _stage_folder, named_folder
from .core import PairClassifier
from .modeling import CONFIG_NAME

__all__ = ["RouterDetector", "router_folders"]

log = logging.getLogger(__name__)

KEYS = ("short", "long")
# set on the router: set on each detector that has it (a cascade's options too, so a router of cascades is set up
# as either cascade is: before reread_pieces was here, setting it on the router changed neither)
FORWARDED = (*READINGS, "evidence", "recheck_floor", "reread_pieces")


def router_folders(folder: Path, options: dict[str, Any]) -> list[Path]:
    """The folders of a saved router's two detectors (``short``, then ``long``), where named.

    >>> [p.name for p in router_folders(Path("r"), {"short": "decode-cascade-v9"})]
    ['decode-cascade-v9']
    """
    return [_stage_folder(folder, ref) for ref in (options.get(k) for k in KEYS) if isinstance(ref, str) and ref]


def _threshold(name: str) -> property:
    """A threshold read from the short detector (the config's before loading) and set on both detectors."""

    def get(self: RouterDetector) -> float:
        return getattr(self.short, name) if "_short" in self.__dict__ else float(self.config.thresholds.get(name, 0.5))

    def put(self: RouterDetector, value: float) -> None:
        self._apply(lambda d: setattr(d, name, value))

    return property(get, put)


@register_detector("router.v1")
class RouterDetector(Detector):
    """``short`` checks dialogues whose last turn has fewer than ``long_words`` words, ``long`` the others."""

    @staticmethod
    def is_long(dialogue: Dialogue, long_words: int) -> bool:
        """Does the checked (last) turn have at least ``long_words`` whitespace-separated words?"""
        turns = dialogue.turns
        return bool(turns) and len(turns[-1].text.split()) >= long_words

    @property
    def long_words(self) -> int:
        return int(self.config.options.get("long_words", 0))

    # -- the two detectors -------------------------------------------------------------------------
    @property
    def short(self) -> Detector:
        det = self.__dict__.get("_short")
        if det is None:
            raise ModelError("the router has no detectors yet: load() its folder")
        return det

    @property
    def long(self) -> Detector:
        """The detector of long replies, loaded (and set up like the short one) on first use."""
        det = self.__dict__.get("_long")
        if det is not None:
            return det
        with self.__dict__.setdefault("_lock", threading.Lock()):  # request threads of a service may race here
            det = self.__dict__.get("_long")
            if det is not None:
                return det
            folder = self.__dict__.get("_long_folder")
            if folder is None:
                raise ModelError("the router has no detectors yet: load() its folder")
            with int8_exports_only() if self.__dict__.get("_int8_only") else contextlib.nullcontext():
                det = load_detector(folder)
            for step in self.__dict__.get("_setup", []):
                step(det)
            log.info("router: %s loaded for replies of %d words or more", Path(folder).name, self.long_words)
            self.__dict__["_long"] = det
            return det

    def _loaded(self) -> list[Detector]:
        return [d for d in (self.__dict__.get("_short"), self.__dict__.get("_long")) if d is not None]

    def _apply(self, step: Callable[[Detector], Any]) -> None:
        """``step`` on each detector loaded now, and remembered for the long one if it loads later."""
        for det in self._loaded():
            step(det)  # a bad value fails here, before it is remembered
        if self.__dict__.get("_long") is None:
            self.__dict__.setdefault("_setup", []).append(step)

    def __getattr__(self, name: str) -> Any:  # reading and cascade options: the short detector's
        if name in FORWARDED and "_short" in self.__dict__:
            return getattr(self.__dict__["_short"], name)
        raise AttributeError(name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in FORWARDED:
            super().__setattr__(name, value)
            return
        if "_short" not in self.__dict__ or not hasattr(self.short, name):
            raise AttributeError(f"{self.config.detector}: its detectors have no option {name!r}")
        self._apply(lambda d: setattr(d, name, value) if hasattr(d, name) else None)

    tau = _threshold("tau")
    eta_e = _threshold("eta_e")

    @property
    def classifier(self) -> PairClassifier:
        raise ModelError("a router has two detectors: use .short and .long")

    def attach(self, model: Any, tokenizer: Any) -> Detector:
        raise ModelError("a router is made of two saved detectors: name them in its dialcheck.json")

    def fit(self, pairs: Sequence[Any] | None = None, **training: Any) -> Detector:
        raise ModelError("a router is not trained: train its two detectors")

    def pair_classifiers(self) -> list[PairClassifier]:
        return [c for d in self._loaded() for c in d.pair_classifiers()]

    def quantize(self) -> Detector:
        self._apply(lambda d: d.quantize())
        self.config.options["int8"] = True
        return self

    def use_onnx(self, int8: bool = False, threads: int | None = None, cache: str | Path | None = None) -> Detector:
        self._apply(lambda d: d.use_onnx(int8, threads, cache))
        self.config.options.update(onnx=True, int8=bool(int8))
        return self

    def release_torch(self) -> Detector:
        self.__dict__["_int8_only"] = True  # the long detector then loads from its int8 exports alone
        self._apply(lambda d: d.release_torch())
        return self

    # -- folders ----------------------------------------------------------------------------------
    def load_weights(self, folder: Path) -> None:
        options = self.config.options
        where = folder / CONFIG_NAME
        words = options.get("long_words")
        if not isinstance(words, int) or isinstance(words, bool) or words < 1:
            raise ModelError(f"{where}: options.long_words: expected a whole number of at least 1, got {words!r}")
        paths = [named_folder(folder, options, key) for key in KEYS]
        self.__dict__["_short"] = load_detector(paths[0])
        self.__dict__["_long_folder"] = paths[1]

    def save(self, path: str | Path, half: bool = False) -> Path:
        raise ModelError("a router is saved by writing its dialcheck.json (options.short, options.long, long_words)")

    # -- prediction -------------------------------------------------------------------------------
    def predict(
        self, dialogues: Sequence[Dialogue], batch_size: int = 64, show_progress_bar: bool = False
    ) -> list[Verdict]:
        dialogues = as_dialogues(dialogues)
        groups: tuple[list[int], list[int]] = ([], [])
        for i, d in enumerate(dialogues):
            groups[self.is_long(d, self.long_words)].append(i)
        out: list[Verdict | None] = [None] * len(dialogues)
        for idx, pick in zip(groups, (lambda: self.short, lambda: self.long), strict=True):
            if idx:
                verdicts = pick().predict([dialogues[i] for i in idx], batch_size, show_progress_bar)
                for i, v in zip(idx, verdicts, strict=True):
                    out[i] = v
        log.debug("router: %d of %d dialogues to the long detector", len(groups[1]), len(dialogues))
        return [v for v in out if v is not None]
