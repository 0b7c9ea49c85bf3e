"""Four-category detectors (CDConv, Zheng et al. 2022): is the bot's last reply an intra-sentence
contradiction, a role confusion, a history contradiction, or none?

They read any conversation by position, so they run on Chinese and English alike: ``b2`` is the last
turn, ``u2`` the one before it, ``b1`` the one before that and everything earlier is history (a CDConv
session is exactly u1, b1, u2, b2). Three detectors, all on the pair-classification core:

- ``cdconv.pair.v1``: one 4-way classifier on the sentence pair (b1, b2);
- ``cdconv.flat.v1``: one 4-way classifier on the flattened conversation (u1 b1 u2, b2);
- ``cdconv.hierarchical.v1``: three binary classifiers in sequence, intra-sentence on (u2, b2), then
  role confusion on (b1 u2, b2), then history on (the whole history, b2); the first that fires decides
  the category, and later stages are not run for that dialogue.

``Verdict.category`` is ``"intra_sentence"``, ``"role_confusion"``, ``"history"`` or ``None``;
``Verdict.label_scores`` holds the score of each category (for the cascade: each stage that ran);
``Verdict.score`` is P(any contradiction) for the 4-way detectors and, for the cascade, the score of the
stage that fired (else the highest stage score). Evidence: for ``history`` the earlier turns of the last
speaker, for ``role_confusion`` the user turn u2, for ``intra_sentence`` none (the reply contradicts itself).

A conversation longer than CDConv's four turns is read by the flat detector with every earlier turn as one first
segment, cut from the left to the model's window (``history="window"``, the default), so early turns of a long chat
fall out of it, and by the pair detector as (b1, b2); a history contradiction names only the earlier turns of the
last speaker that were read (some of). ``history="frames"`` (opt-in since session 76) reads the last four turns as
one frame and each earlier turn of the last speaker with the turn before it as another, (u_j, b_j, u2, b2)
(:func:`frames`). The last frame decides as a four-turn session would; an earlier frame adds a history
contradiction when its P(history) reaches τ, and names its b_j as evidence.

>>> d = Dialogue.from_texts(["Do you have pets?", "Two dogs.", "Cute! Do you?", "I never had pets."])
>>> stage_input("role_confusion", d, " | ")
('Two dogs. | Cute! Do you?', 'I never had pets.')
>>> category_evidence(d, "history"), category_evidence(d, "role_confusion"), category_evidence(d, "intra_sentence")
((1,), (2,), ())
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ..errors import InputError, ModelError
from ..io import as_dialogues
from ..language import check_chinese_last_turn, chinese_reading, renumbered
from ..schema import Dialogue, Turn, Verdict
from .base import Detector, check_threshold, register_detector
from .core import CONTRADICTION, PairClassifier
from .lexical import LexicalHead
from .modeling import CONFIG_NAME, DEFAULT_LABELS, DetectorConfig, load_model, save_model

__all__ = [
    "CATEGORIES",
    "CATEGORY_LABELS",
    "HISTORY_READINGS",
    "MAX_FRAMES",
    "STAGES",
    "CategoryDetector",
    "FlatCategoryDetector",
    "HierarchicalDetector",
    "PairCategoryDetector",
    "category_evidence",
    "frames",
    "reads_speaker_tags",
    "stage_input",
]

log = logging.getLogger(__name__)

NON = "non_contradiction"
CATEGORY_LABELS = (NON, "intra_sentence", "role_confusion", "history")
CATEGORIES = CATEGORY_LABELS[1:]
STAGES = CATEGORIES  # cascade order of the hierarchical detector
_TRUNCATION = {"intra_sentence": "right", "role_confusion": "left", "history": "left"}
FALLBACK_SEP = " | "
#: How the flat and pair detectors read a conversation of more than four turns (see the module's docstring).
HISTORY_READINGS = ("window", "frames")
#: The most earlier turns of the last speaker read as frames of their own (the most recent ones).
MAX_FRAMES = 16
SESSION = 4  # a CDConv session: u1, b1, u2, b2


def separator(tokenizer: Any) -> str:
    """The string that joins turns inside one segment: the tokenizer's separator token, else `` | ``."""
    sep = getattr(tokenizer, "sep_token", None)
    return f" {sep} " if isinstance(sep, str) and sep else FALLBACK_SEP


def _texts(d: Dialogue, start: int, tags: bool = False) -> list[str]:
    if len(d.turns) < 2:
        return []
    turns = d.turns[max(0, len(d.turns) + start) : -1]
    return [_tagged(t, d) for t in turns] if tags else [t.text for t in turns]


def _tagged(turn: Turn, d: Dialogue) -> str:
    """``B: text`` for a turn by the speaker of the checked reply, ``A: text`` for anyone else."""
    return f"{'B' if turn.speaker == d.turns[-1].speaker else 'A'}: {turn.text}"


def stage_input(stage: str, d: Dialogue, sep: str = FALLBACK_SEP, tags: bool = False) -> tuple[str, str]:
    """The (first, second) segments a stage or detector reads; the checked reply is always second.

    ``intra_sentence``: (u2, b2); ``role_confusion``: (b1 u2, b2); ``history`` and ``flat``: (every earlier
    turn, b2); ``pair``: (b1, b2). Missing turns give an empty first segment. With ``tags`` every turn
    starts with ``B:`` (the speaker of the checked reply) or ``A:`` (anyone else) and turns are joined by
    newlines, like a transcript, so the model can tell whose words are whose (role confusion).

    >>> d = Dialogue.from_texts(["Guess my age?", "Thirty?", "No. And you?", "I am thirty."])
    >>> stage_input("flat", d, tags=True)
    ('A: Guess my age?\\nB: Thirty?\\nA: No. And you?', 'B: I am thirty.')
    """
    if tags:
        sep = "\n"
    last = _tagged(d.turns[-1], d) if tags else d.turns[-1].text
    if stage == "intra_sentence":
        return sep.join(_texts(d, -2, tags)), last
    if stage == "role_confusion":
        return sep.join(_texts(d, -3, tags)), last
    if stage in ("history", "flat"):
        return sep.join(_texts(d, -len(d.turns), tags)), last
    if stage == "pair":
        if len(d.turns) < 3:
            return "", last
        return (_tagged(d.turns[-3], d) if tags else d.turns[-3].text), last
    raise ValueError(f"unknown stage {stage!r}")


def frames(d: Dialogue, limit: int = MAX_FRAMES) -> list[tuple[int, Dialogue]]:
    """The earlier turns of the last speaker before the last four turns, each as (its index, the frame (the turn
    before it, it, u2, b2)), the ``limit`` most recent; none for a conversation of four turns or fewer.

    >>> d = Dialogue.from_texts(["Pets?", "A cat.", "Job?", "Nurse.", "Fun?", "Hiking.", "Pets?", "None, ever."])
    >>> [(j, [t.text for t in f.turns]) for j, f in frames(d)]
    [(1, ['Pets?', 'A cat.', 'Pets?', 'None, ever.']), (3, ['Job?', 'Nurse.', 'Pets?', 'None, ever.'])]
    """
    n = len(d.turns)
    if n <= SESSION:
        return []
    speaker = d.turns[-1].speaker
    earlier = [j for j in range(n - SESSION) if d.turns[j].speaker == speaker][-limit:] if limit > 0 else []
    return [(j, Dialogue((*d.turns[max(0, j - 1) : j + 1], *d.turns[-2:]), meta=d.meta)) for j in earlier]


def reads_speaker_tags(config: DetectorConfig) -> bool:
    """Whether a saved four-category detector was trained on speaker-tagged input (``--speaker-tags``)."""
    return bool(config.options.get("speaker_tags", False))


def category_evidence(d: Dialogue, category: str | None) -> tuple[int, ...]:
    """Earlier turns a category points at: history -> the last speaker's earlier turns; role confusion ->
    the turn before the reply; intra-sentence or none -> nothing. A turn with no text is never evidence."""
    if category == "history":
        return tuple(i for i in d.same_speaker_indices() if d.turns[i].text.strip())
    if category == "role_confusion" and len(d.turns) >= 2:
        return (len(d.turns) - 2,)
    return ()


def read_as_chinese(
    predict: Callable[[Sequence[Dialogue], int, bool], list[Verdict]],
    dialogues: Sequence[Dialogue],
    batch_size: int,
    show_progress_bar: bool,
) -> list[Verdict]:
    """``predict`` (a four-category detector's own) on ``dialogues`` as a Chinese detector reads them
    (:func:`~dialcheck.language.chinese_reading`: a chat log without its tool calls and results and its system
    messages), the verdicts' turn indices those of the input (:func:`~dialcheck.language.renumbered`). A dialogue
    ending with a turn left out (a tool's result, a system message) is refused as routing refuses it
    (:func:`~dialcheck.language.check_chinese_last_turn`), named ``dialogues[i]`` among several: its tool output
    would otherwise be read as b2. Every way to these detectors goes through here: routing, ``--model``,
    ``dialcheck.load(...).predict``."""
    dialogues = as_dialogues(dialogues)
    for i, d in enumerate(dialogues):
        try:
            check_chinese_last_turn(d)
        except InputError as e:
            raise InputError(f"dialogues[{i}]: {e.message}" if len(dialogues) > 1 else e.message) from None
    read = [chinese_reading(d) for d in dialogues]
    verdicts = predict([d for d, _ in read], batch_size, show_progress_bar)
    return [renumbered(v, where) for v, (_, where) in zip(verdicts, read, strict=True)]


class CategoryDetector(Detector):
    """One 4-way classifier (labels :data:`CATEGORY_LABELS`): contradiction when P(any) >= ``tau``; the
    category is then the most likely of the three contradiction labels.

    With a :class:`~dialcheck.detectors.lexical.LexicalHead` in ``lexical`` (saved beside the weights),
    the probabilities are ``(1 - mix) * encoder + mix * lexical`` before that decision."""

    view = "flat"
    lexical: LexicalHead | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.config.labels = list(CATEGORY_LABELS)

    def load_weights(self, folder: Path) -> None:
        super().load_weights(folder)
        self.lexical = LexicalHead.load(folder) if LexicalHead.present(folder) else None

    def save(self, path: str | Path, half: bool = False) -> Path:
        folder = super().save(path, half=half)
        if self.lexical is not None:
            self.lexical.save(folder)
        return folder

    def mixed_proba(
        self, dialogues: Sequence[Dialogue], probs: np.ndarray, lexical_probs: np.ndarray | None = None
    ) -> np.ndarray:
        """Encoder probabilities (columns in the classifier's label order) mixed with the lexical head's
        (``lexical_probs``: the head's own output for ``dialogues`` when already computed)."""
        head = self.lexical
        if head is None:
            return np.asarray(probs)
        lex = head.proba(dialogues) if lexical_probs is None else lexical_probs
        order = [head.labels.index(lab) for lab in self.classifier.labels]
        return (1.0 - head.mix) * np.asarray(probs) + head.mix * lex[:, order]

    @property
    def history(self) -> str:
        """How a conversation of more than four turns is read: ``"window"`` (default) or ``"frames"``."""
        return str(self.config.options.get("history", HISTORY_READINGS[0]))

    @history.setter
    def history(self, value: str) -> None:
        if value not in HISTORY_READINGS:
            raise ModelError(f"history: expected one of {', '.join(HISTORY_READINGS)}, got {value!r}")
        self.config.options = {**self.config.options, "history": value}

    def inputs(self, dialogues: Sequence[Dialogue]) -> list[tuple[str, str]]:
        sep = separator(self.classifier.tokenizer)
        tags = reads_speaker_tags(self.config)
        return [stage_input(self.view, d, sep, tags) for d in dialogues]

    def predict(
        self, dialogues: Sequence[Dialogue], batch_size: int = 64, show_progress_bar: bool = False
    ) -> list[Verdict]:
        """Verdicts on the last turn of each dialogue, read as :func:`read_as_chinese` says: a chat log's tool calls
        and results and its system messages are not read, evidence counts every turn of the input, and a log ending
        with one of them is an :class:`~dialcheck.errors.InputError`."""
        return read_as_chinese(self._predict, dialogues, batch_size, show_progress_bar)

    def _predict(self, dialogues: Sequence[Dialogue], batch_size: int, show_progress_bar: bool) -> list[Verdict]:
        clf = self.classifier
        missing = [c for c in CATEGORY_LABELS if c not in clf.labels]
        if missing:
            raise ModelError(f"{type(self).__name__} needs the labels {list(CATEGORY_LABELS)}; {missing} are missing")
        if self.history == "window":
            inputs = self.inputs(dialogues)
            self._warn_cut(dialogues, inputs)
            probs = clf.proba(inputs, batch_size=batch_size, show_progress_bar=show_progress_bar)
            verdicts = self.decide(dialogues, self.mixed_proba(dialogues, probs))
            return [self._named_if_read(d, pair, v) for d, pair, v in zip(dialogues, inputs, verdicts, strict=True)]
        heads = [d if len(d.turns) <= SESSION else Dialogue(d.turns[-SESSION:], meta=d.meta) for d in dialogues]
        extra = [(k, j, f) for k, d in enumerate(dialogues) for j, f in frames(d)]
        read = heads + [f for _, _, f in extra]
        probs = clf.proba(self.inputs(read), batch_size=batch_size, show_progress_bar=show_progress_bar)
        mixed = self.mixed_proba(read, probs)
        verdicts = self.decide(heads, mixed[: len(heads)])
        hist = clf.labels.index("history")
        earlier: list[dict[int, float]] = [{} for _ in dialogues]  # b_j -> P(history) of its frame
        for (k, j, _), row in zip(extra, mixed[len(heads) :], strict=True):
            earlier[k][j] = float(row[hist])
        return [
            self._with_frames(len(d.turns) - SESSION, h, v, e) if len(d.turns) > SESSION else v
            for d, h, v, e in zip(dialogues, heads, verdicts, earlier, strict=True)
        ]

    def _named_if_read(self, d: Dialogue, pair: tuple[str, str], v: Verdict) -> Verdict:
        """``v`` with a history contradiction's evidence cut to the turns the window reading read (some of): the
        pair view reads b1 alone, the flat view every earlier turn but cut from the left when the pair does not fit
        the window. A turn that fell out of the window is not named: the model never saw it."""
        if v.category != "history" or not v.evidence:
            return v
        first = max(0, len(d.turns) - 3) if self.view == "pair" else self._first_read(d, pair)
        return dataclasses.replace(v, evidence=tuple(i for i in v.evidence if i >= first)) if first else v

    def _first_read(self, d: Dialogue, pair: tuple[str, str]) -> int:
        """The first turn of ``d`` whose text (some of it) is in the window: the turn of the flat view's first
        segment (its earlier turns joined, as :meth:`inputs` joined them) in which the classifier's kept text
        starts (:meth:`~dialcheck.detectors.core.PairClassifier.first_kept`). 0 when the pair fits or the
        classifier cannot tell."""
        kept = getattr(self.classifier, "first_kept", None)
        start = kept(*pair) if kept is not None else 0
        if not start:
            return 0
        texts = _texts(d, -len(d.turns), reads_speaker_tags(self.config))
        # the segment is the texts joined by one separator, whichever inputs() chose: its length is what is left
        gap = (len(pair[0]) - sum(map(len, texts))) // max(1, len(texts) - 1)
        pos = 0
        for k, text in enumerate(texts):
            if start < pos + len(text):
                return k
            pos += len(text) + gap
        return len(d.turns) - 1

    def _warn_cut(self, dialogues: Sequence[Dialogue], inputs: Sequence[tuple[str, str]]) -> None:
        """Log how many conversations longer than a session the window reading did not read whole, naming them by
        their ids (up to five) when every one has an id."""
        fits = getattr(self.classifier, "pair_fits", None)
        if fits is None:
            return
        cut = [d for d, pair in zip(dialogues, inputs, strict=True) if len(d.turns) > SESSION and not fits(*pair)]
        if cut:
            ids = [str(d.meta["id"]) for d in cut if d.meta.get("id") is not None]
            which = f" ({', '.join(ids[:5])}{', ...' if len(ids) > 5 else ''})" if len(ids) == len(cut) else ""
            log.warning(
                "%d of %d conversations%s are longer than the model's %d-token window: their earliest turns were not "
                "read, and a history contradiction names only the replier's earlier turns that were read; "
                "history='frames' (--history frames) reads each earlier turn in a session of its own",
                len(cut),
                len(dialogues),
                which,
                self.config.max_length,
            )

    def _with_frames(self, offset: int, last: Dialogue, head: Verdict, earlier: dict[int, float]) -> Verdict:
        """The verdict ``head`` of a conversation's last four turns (``last``, from its turn ``offset`` on) with the
        earlier frames' P(history) added."""
        b1 = [offset + i for i in category_evidence(last, "history")]
        scores = dict(head.label_scores or {})
        pair_scores = {**earlier, **{i: scores.get("history", 0.0) for i in b1}}
        fired = sorted(j for j, p in earlier.items() if p >= self.tau)
        if earlier:
            scores["history"] = max(scores.get("history", 0.0), *earlier.values())
        if head.contradiction:
            evidence = tuple(offset + i for i in head.evidence)
            if head.category == "history":
                evidence = tuple(sorted({*evidence, *fired}))
            return Verdict(True, head.score, evidence, head.category, pair_scores, None, scores)
        if fired:
            return Verdict(True, max(earlier[j] for j in fired), tuple(fired), "history", pair_scores, None, scores)
        return Verdict(False, max(head.score, *earlier.values(), 0.0), (), None, pair_scores, None, scores)

    def decide(self, dialogues: Sequence[Dialogue], probs: np.ndarray) -> list[Verdict]:
        """Verdicts from class probabilities (columns in the classifier's label order)."""
        clf = self.classifier
        idx = [clf.labels.index(c) for c in CATEGORIES]
        non = clf.labels.index(NON)
        out = []
        for d, row in zip(dialogues, probs, strict=True):
            score = float(1.0 - row[non])
            contradiction = len(d.turns) > 1 and score >= self.tau
            category = CATEGORIES[int(np.argmax(row[idx]))] if contradiction else None
            scores = {c: float(row[i]) for c, i in zip(CATEGORIES, idx, strict=True)}
            out.append(Verdict(contradiction, score, category_evidence(d, category), category, {}, None, scores))
        return out

    def fit(self, pairs: Sequence[Any] | None = None, **training: Any) -> Detector:
        """Train on CDConv-style :class:`Example` records (see :mod:`dialcheck.training.cdconv`)."""
        from ..training.cdconv import train_category_detector

        return train_category_detector(self, pairs or [], **training)


@register_detector("cdconv.pair.v1")
class PairCategoryDetector(CategoryDetector):
    """Sentence-pair detector: (b1, b2) through one 4-way classifier."""

    view = "pair"
    truncation_side = "right"


@register_detector("cdconv.flat.v1")
class FlatCategoryDetector(CategoryDetector):
    """Flattened detector: (u1 b1 u2, b2) through one 4-way classifier; the oldest tokens are cut first."""

    view = "flat"
    truncation_side = "left"


class StageScorer(Protocol):
    """What a cascade stage needs: P(contradiction) for text pairs (a :class:`PairClassifier` fits)."""

    def score(self, pairs: Sequence[tuple[str, str]], batch_size: int = ..., show_progress_bar: bool = ...) -> Any:
        """P(contradiction) for each pair."""


@register_detector("cdconv.hierarchical.v1")
class HierarchicalDetector(Detector):
    """Three binary classifiers in sequence (intra-sentence, role confusion, history); the first whose
    score reaches its threshold (``thresholds[stage]``, chosen by training for the three stages together on
    dev; default ``tau``) decides the category.

    The folder holds ``dialcheck.json`` and one sub-folder per stage, each a saved binary classifier.
    With a :class:`~dialcheck.detectors.lexical.LexicalHead` in ``lexical`` (saved beside them), each
    stage's score is ``(1 - mix) * stage + mix * P_lexical(stage's category)`` before its threshold.
    """

    truncation_side = "right"
    lexical: LexicalHead | None = None

    @property
    def stages(self) -> dict[str, Any]:
        """Stage name -> scorer; raises when a stage has no weights yet."""
        stages = self.__dict__.setdefault("_stages", {})
        missing = [s for s in STAGES if s not in stages]
        if missing:
            raise ModelError(f"the hierarchical detector has no weights for {missing}: call load() or fit() first")
        return stages

    @property
    def classifier(self) -> PairClassifier:
        raise ModelError("a hierarchical detector has three classifiers, one per stage: use .stages")

    def stage_threshold(self, stage: str) -> float:
        return float(self.config.thresholds.get(stage, self.tau))

    @Detector.tau.setter
    def tau(self, value: float) -> None:
        """Setting ``tau`` (``dialcheck check --tau``) moves every stage's threshold to it.

        >>> d = HierarchicalDetector()
        >>> d.config.thresholds["intra_sentence"] = 0.06
        >>> d.tau = 0.7
        >>> d.stage_threshold("intra_sentence"), d.stage_threshold("history")
        (0.7, 0.7)
        """
        self.config.thresholds["tau"] = check_threshold(value, "tau")
        for stage in STAGES:
            self.config.thresholds[stage] = float(value)

    def stage_scores(self, dialogues: Sequence[Dialogue], batch_size: int = 64) -> dict[str, np.ndarray]:
        """Every stage's own score (no lexical mix) for every dialogue, NaN where the stage does not apply;
        unlike :meth:`predict`, later stages also score what an earlier one decided (for calibration)."""
        out = {st: np.full(len(dialogues), np.nan) for st in STAGES}
        for st in STAGES:
            need = 2 if st == "intra_sentence" else 3
            idx = [i for i, d in enumerate(dialogues) if len(d.turns) >= need]
            if idx:
                pairs = self._stage_pairs(st, dialogues, idx)
                out[st][idx] = np.asarray(self.stages[st].score(pairs, batch_size=batch_size), dtype=float)
        return out

    def set_stage(self, stage: str, scorer: StageScorer) -> HierarchicalDetector:
        """Use ``scorer`` (e.g. a :class:`PairClassifier`) for ``stage``."""
        if stage not in STAGES:
            raise ValueError(f"unknown stage {stage!r}; stages: {', '.join(STAGES)}")
        self.__dict__.setdefault("_stages", {})[stage] = scorer
        return self

    def attach_stage(self, stage: str, model: Any, tokenizer: Any, labels: Sequence[str] = DEFAULT_LABELS) -> Any:
        """Wrap an in-memory binary (model, tokenizer) as the scorer of ``stage``; returns the classifier."""
        clf = PairClassifier(model, tokenizer, labels, self.config.max_length, _TRUNCATION[stage])
        self.set_stage(stage, clf)
        return clf

    def attach(self, model: Any, tokenizer: Any) -> Detector:
        raise ModelError("a hierarchical detector has one classifier per stage: use attach_stage(stage, model, tok)")

    def _stage_pairs(self, stage: str, dialogues: Sequence[Dialogue], idx: Sequence[int]) -> list[tuple[str, str]]:
        """What ``stage`` reads for ``dialogues[i]``, ``i`` in ``idx`` (its separator, the config's tags)."""
        sep, tags = separator(getattr(self.stages[stage], "tokenizer", None)), reads_speaker_tags(self.config)
        return [stage_input(stage, dialogues[i], sep, tags) for i in idx]

    def predict(
        self, dialogues: Sequence[Dialogue], batch_size: int = 64, show_progress_bar: bool = False
    ) -> list[Verdict]:
        """As :meth:`CategoryDetector.predict` (:func:`read_as_chinese`)."""
        return read_as_chinese(self._predict, dialogues, batch_size, show_progress_bar)

    def _predict(self, dialogues: Sequence[Dialogue], batch_size: int, show_progress_bar: bool) -> list[Verdict]:
        stages = self.stages
        scores: list[dict[str, float]] = [{} for _ in dialogues]
        fired: list[str | None] = [None] * len(dialogues)
        head = self.lexical
        lex = head.proba(dialogues) if head is not None and dialogues else None
        for stage in STAGES:
            # role confusion and history need an earlier bot turn; intra-sentence only a reply
            need = 2 if stage == "intra_sentence" else 3
            todo = [i for i, d in enumerate(dialogues) if fired[i] is None and len(d.turns) >= need]
            if not todo:
                continue
            pairs = self._stage_pairs(stage, dialogues, todo)
            s = np.asarray(stages[stage].score(pairs, batch_size=batch_size, show_progress_bar=show_progress_bar))
            if lex is not None and head is not None:
                s = (1.0 - head.mix) * s + head.mix * lex[todo, head.labels.index(stage)]
            thr = self.stage_threshold(stage)
            for i, v in zip(todo, s, strict=True):
                scores[i][stage] = float(v)
                if float(v) >= thr:
                    fired[i] = stage
        out = []
        for d, sc, cat in zip(dialogues, scores, fired, strict=True):
            score = sc[cat] if cat is not None else max(sc.values(), default=0.0)
            out.append(Verdict(cat is not None, score, category_evidence(d, cat), cat, {}, None, sc))
        return out

    # -- weights ----------------------------------------------------------------------------------
    def stage_config(self, stage: str, labels: Sequence[str] = DEFAULT_LABELS) -> DetectorConfig:
        """The config of one stage's binary classifier (base, adapter and window of the detector)."""
        return DetectorConfig(
            detector=self.registry_name,
            base=self.config.base,
            labels=list(labels),
            thresholds={"tau": self.stage_threshold(stage)},
            max_length=self.config.max_length,
            adapter=dict(self.config.adapter) if self.config.adapter else None,
            options={"stage": stage},
        )

    def save(self, path: str | Path, half: bool = False) -> Path:
        folder = Path(path)
        folder.mkdir(parents=True, exist_ok=True)
        for stage, clf in self.stages.items():
            if not isinstance(clf, PairClassifier):
                raise ModelError(f"stage {stage!r} is not a trained classifier and cannot be saved")
            save_model(clf.model, clf.tokenizer, folder / stage, self.stage_config(stage, clf.labels), half=half)
        self.config.options = {**self.config.options, "stages": list(STAGES)}
        (folder / CONFIG_NAME).write_text(self.config.to_json(), encoding="utf-8")
        if self.lexical is not None:
            self.lexical.save(folder)
        self.path = folder
        return folder

    def load_weights(self, folder: Path) -> None:
        if self.config.options.get("stage"):
            raise ModelError(
                f"{folder} is the {self.config.options['stage']!r} stage of a hierarchical detector: "
                "load its parent folder"
            )
        for stage in STAGES:
            sub = folder / stage
            if not (sub / CONFIG_NAME).exists():
                raise ModelError(f"{folder}: the {stage!r} stage is missing (expected {sub / CONFIG_NAME})")
            cfg = DetectorConfig.from_file(sub / CONFIG_NAME)
            if CONTRADICTION not in cfg.labels:
                raise ModelError(f"{sub}: the stage's labels {cfg.labels} have no {CONTRADICTION!r}")
            model, tok = load_model(sub, cfg)
            self.attach_stage(stage, model, tok, cfg.labels)
        self.lexical = LexicalHead.load(folder) if LexicalHead.present(folder) else None

    def pair_classifiers(self) -> list[PairClassifier]:
        return [clf for clf in self.stages.values() if isinstance(clf, PairClassifier)]

    def fit(self, pairs: Sequence[Any] | None = None, **training: Any) -> Detector:
        """Train the three stages on CDConv-style :class:`Example` records."""
        from ..training.cdconv import train_category_detector

        return train_category_detector(self, pairs or [], **training)
