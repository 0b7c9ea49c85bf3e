"""Training of the four-category detectors on CDConv-style examples, with the shared loop
(:func:`dialcheck.training.trainer.fit_pair_model`).

The 4-way detectors (``cdconv.pair.v1``, ``cdconv.flat.v1``) learn one classifier over the four labels.
The hierarchical detector learns its three binary stages one after another, each on every training
example (positive when the gold category is the stage's, as in the paper's released hierarchical
splits). Early stopping uses dev 4-class macro-F1 (4-way) or the stage's dev F1 at its best threshold
(cascade), and each stage keeps that threshold: intra-sentence and role-confusion positives are 4-6% of
the rows, so at 0.5 those stages never fire and their F1 would stay 0 whatever they learn. Chosen stage
by stage, those thresholds over-fire together (any stage's false alarm is a false alarm of the cascade),
so by default (``cascade_rule="joint"``) the three are then chosen together on dev for the mean of 2-class
accuracy and 4-class macro-F1 (:func:`cascade_thresholds`). The dev metrics of the finished detector are
stored in its config.

With ``init`` (a saved LoRA pair classifier, e.g. pre-trained on OCNLI by :mod:`dialcheck.training.nli`)
every classifier starts from its encoder adapter (and added vocabulary rows); the binary stages keep its
head, the 4-way classifiers get a new one (the paper's NLI pre-training before fine-tuning).
"""

from __future__ import annotations

import itertools
import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from ..detectors.base import Detector
from ..detectors.categories import (
    NON,
    STAGES,
    CategoryDetector,
    HierarchicalDetector,
    reads_speaker_tags,
    separator,
    stage_input,
)
from ..detectors.modeling import NEVER
from ..errors import InputError
from ..evaluation.cdconv import cdconv_metrics, example_label, f1_per_class, verdict_label
from ..evaluation.metrics import best_threshold
from ..schema import Example
from .card import model_reference
from .trainer import FitResult, TrainConfig, fit_pair_model, seed_everything

__all__ = [
    "CASCADE_RULES",
    "MIX_GRID",
    "TAU_GRID",
    "calibrate_cascade",
    "cascade_thresholds",
    "category_of_example",
    "choose_mix",
    "fit_cascade_lexical",
    "fit_lexical",
    "grid_scores",
    "perturbation_examples",
    "start_model",
    "train_category_detector",
    "user_statement_examples",
]

log = logging.getLogger(__name__)


CDCONV_AUGMENTATIONS = ("perturb", "random_context", "user_statement")
RATED_AUGMENTATIONS = ("random_context", "user_statement")  # the ones --context-rate applies to
CONTEXT_RATE = 0.3  # the share each of them copies unless --context-rate says otherwise
# a donor b1 that agrees with the user ("我也是", "一样") would make the user's statement the bot's own too
_AGREEING = ("也", "一样", "同样", "同感")


def _seeded_donor(
    seed: int, name: str, n: int, rate: float, donors: Sequence[Any], differs: Callable[[Any], bool]
) -> tuple[bool, Any]:
    """The seeded draw both context augmentations make for conversation ``n``: whether it is copied (a
    ``rate`` share) and, if so, the first of 8 donors sampled that ``differs`` accepts (None: no donor)."""
    import random

    rng = random.Random(f"{seed}:{name}:{n}")
    if rng.random() >= rate:
        return False, None
    return True, next((d for d in rng.sample(donors, min(len(donors), 8)) if differs(d)), None)


def random_context_examples(
    train: Sequence[Example], seed: int, rate: float = CONTEXT_RATE
) -> tuple[list[Example], dict[str, int]]:
    """Extra training conversations whose reply keeps its question but loses the history it was said after.

    For a seeded ``rate`` share of the history and intra-sentence contradictions in ``train`` (u1, b1, u2,
    b2), one copy with (u1, b1) taken from another training conversation, chosen at random, whose context
    differs: a **history** contradiction becomes **no contradiction** (what the reply took back is gone),
    an **intra-sentence** one stays intra-sentence (the reply contradicts itself wherever it is said). So a
    question about the bot ("你叫什么名字？") followed by an answer is no history contradiction by itself; the
    model has to find what is taken back in the history (the Chinese counterpart of DECODE's
    ``random_premise``). Role confusions and consistent replies are not copied (a role confusion can lean
    on b1). Returns the examples and counts.

    >>> from dialcheck.schema import Dialogue
    >>> rows = [Example(Dialogue.from_texts([f"q{i}", f"a{i}", "你叫什么？", "我叫小明。"]), True, None, "history")
    ...         for i in range(2)]
    >>> made, counts = random_context_examples(rows, seed=0, rate=1.0)
    >>> [e.dialogue.turns[0].text for e in made], [e.label for e in made], counts["made"]
    (['q1', 'q0'], [False, False], 2)
    """
    from dataclasses import replace

    def replaced(x: Example) -> tuple[str, ...]:  # the (u1, b1) a copy replaces
        return tuple(t.text for t in x.dialogue.turns[-4:-2])

    donors = [e for e in train if len(e.dialogue.turns) >= 4]
    out: list[Example] = []
    counts = {"history": 0, "intra_sentence": 0, "made": 0, "no_donor": 0}
    for n, e in enumerate(train):
        turns = e.dialogue.turns
        if e.category not in ("history", "intra_sentence") or len(turns) < 4:
            continue
        own = replaced(e)
        copied, chosen = _seeded_donor(seed, "random_context", n, rate, donors, lambda x, own=own: replaced(x) != own)
        if not copied:
            continue
        if chosen is None:
            counts["no_donor"] += 1
            continue
        donor = chosen.dialogue.turns
        new = tuple(replace(t, text=d.text) for t, d in zip(turns[-4:-2], donor[-4:-2], strict=True))
        d = replace(e.dialogue, turns=(*turns[:-4], *new, *turns[-2:]))
        keep = e.category == "intra_sentence"
        out.append(Example(d, keep, None, e.category if keep else None, id=f"{e.id}+context{int(keep)}"))
        counts[e.category] += 1
        counts["made"] += 1
    return out, counts


def _asks_about_user(e: Example) -> bool:
    """Whether u2 asks the bot about the user ("你知道我多大了吗？"): there a reply that gets the user's own
    statement wrong contradicts the history (CDConv labels it so), wherever the statement stands. By the
    trigger method where the corpus gives it, else by u2 naming the user and not the bot."""
    trigger = e.dialogue.meta.get("trigger")
    if trigger is not None:
        return str(trigger).startswith("inquiring_user")
    u2 = e.dialogue.turns[-2].text
    return "我" in u2 and "你" not in u2


def user_statement_examples(
    train: Sequence[Example], seed: int, rate: float = CONTEXT_RATE
) -> tuple[list[Example], dict[str, int]]:
    """Extra training conversations in which what the reply takes back was said by the user, not the bot.

    For a seeded ``rate`` share of the history contradictions in ``train`` (u1, b1, u2, b2), one copy in
    which the **user** says b1 (it becomes u1) and the bot's b1 is taken from another training conversation
    (one that does not agree with anything: no 也, 一样, 同样, 同感), labelled **no contradiction**: CDConv's
    history category is the bot against its own words, and a bot that answers about itself differently
    from what the user said about themselves ("我养了一只狗。" / "真好！" / "你有宠物吗？" / "我从来没养过宠物。")
    contradicts nobody. Measured on hand-written set D (docs/benchmarks.md, session 54), the copies lower the
    false alarms on such conversations by flagging fewer of them at all, not by teaching whose words are whose
    (the models flag them as often with the user's statement masked). Conversations whose u2 asks about the
    user (the inquiring-user triggers) are not copied: a reply that gets the user's own words wrong is a
    history contradiction in CDConv. Returns the examples and counts.

    >>> from dialcheck.schema import Dialogue
    >>> def row(b1, category):
    ...     return Example(Dialogue.from_texts(["你有猫吗？", b1, "它几岁了？", "我没有猫。"]), True, None, category)
    >>> rows = [row("我养了一只猫。", "history"), row("我也是！", None), row("哈哈，好呀。", None)]
    >>> made, counts = user_statement_examples(rows, seed=0, rate=1.0)
    >>> [t.text for t in made[0].dialogue.turns], made[0].label, counts["made"]
    (['我养了一只猫。', '哈哈，好呀。', '它几岁了？', '我没有猫。'], False, 1)
    """
    from dataclasses import replace

    donors = [
        e.dialogue.turns[-3].text
        for e in train
        if len(e.dialogue.turns) >= 4 and not any(w in e.dialogue.turns[-3].text for w in _AGREEING)
    ]
    out: list[Example] = []
    counts = {"made": 0, "no_donor": 0}
    for n, e in enumerate(train):
        turns = e.dialogue.turns
        if e.category != "history" or len(turns) < 4 or _asks_about_user(e):
            continue
        b1 = turns[-3].text
        copied, chosen = _seeded_donor(seed, "user_statement", n, rate, donors, lambda x, b1=b1: x != b1)
        if not copied:
            continue
        if chosen is None:
            counts["no_donor"] += 1
            continue
        u1_, b1_ = replace(turns[-4], text=b1), replace(turns[-3], text=chosen)
        d = replace(e.dialogue, turns=(*turns[:-4], u1_, b1_, *turns[-2:]))
        out.append(Example(d, False, None, None, id=f"{e.id}+user"))
        counts["made"] += 1
    return out, counts


def perturbation_examples(
    train: Sequence[Example], seed: int, lexicon: Any = None, rate: float = 0.2
) -> tuple[list[Example], dict[str, int]]:
    """Extra training conversations in which the bot takes back, or restates, its own earlier reply.

    For a seeded ``rate`` share of ``train`` (u1, b1, u2, b2), two copies with b2 replaced: b1 with its
    polarity flipped (:func:`~dialcheck.probes.triggers.flip_polarity`) or, for half of those that have one,
    a word swapped for a dictionary antonym, labelled a **history** contradiction; and b1 with a verb,
    adjective or adverb swapped for a synonym that shares a character with it, labelled **no
    contradiction**. Both or neither, so that a near-copy of b1 is no label cue by itself (the Chinese
    counterpart of the DECODE ``perturb`` augmentation). ``lexicon`` defaults to
    ``chinese_dictionary`` in the data folder. Returns the examples and counts (made, skipped and why).
    """
    import random
    from dataclasses import replace

    from ..probes.triggers import ChineseLexicon, flip_polarity, swap_word
    from ..schema import Turn

    lex = lexicon if lexicon is not None else ChineseLexicon.load()
    # Cilin's synonym groups are loose (看 -> 扣押, 喜欢 -> 逸乐): keep a synonym only if it shares a character
    # with the word (喜欢 -> 喜爱, 知道 -> 知晓), so that the consistent copy stays a restatement
    synonyms = {w: c for w, o in lex.synonyms.items() if (c := tuple(x for x in o if set(x) & set(w)))}
    out: list[Example] = []
    counts = {"conversations": 0, "made": 0, "antonym": 0, "no_edit": 0}
    for n, e in enumerate(train):
        rng = random.Random(f"{seed}:perturb:{n}")
        turns = e.dialogue.turns
        if rng.random() >= rate or len(turns) < 4:
            continue
        counts["conversations"] += 1
        b1 = turns[-3].text
        flipped = swap_word(b1, rng, lex.antonyms) if rng.random() < 0.5 else None
        if flipped is not None:
            counts["antonym"] += 1
        contra = flipped[0] if flipped is not None else flip_polarity(b1)
        same = swap_word(b1, rng, synonyms, flags="vad")  # nouns: a synonym noun changes the fact too often
        if contra is None or same is None or contra == b1 or same[0] == b1:
            counts["no_edit"] += 1
            continue
        for text, label, category in ((contra, True, "history"), (same[0], False, None)):
            d = replace(e.dialogue, turns=(*turns[:-1], Turn(turns[-1].speaker, text)))
            out.append(Example(d, label, None, category, id=f"{e.id}+perturb{int(label)}"))
        counts["made"] += 2
    return out, counts


def category_of_example(e: Example) -> str:
    """The label name of an example: ``non_contradiction`` or its category; raises if a contradiction
    has no category (a 2-class corpus cannot train a 4-category detector)."""
    if not e.label:
        return NON
    if not e.category:
        raise InputError(f"example {e.id or '?'}: a contradiction without a category cannot train a 4-class detector")
    return e.category


def _dev_metrics(detector: Detector, dev: Sequence[Example], batch_size: int = 64) -> dict[str, float]:
    verdicts = detector.predict([e.dialogue for e in dev], batch_size=batch_size)
    return cdconv_metrics([example_label(e) for e in dev], [verdict_label(v) for v in verdicts])


MIX_GRID = tuple(round(0.1 * i, 1) for i in range(11))
TAU_GRID = tuple(round(0.3 + 0.05 * i, 2) for i in range(11))  # 0.30 .. 0.80


def grid_scores(
    gold: Sequence[int], labels_at: Callable[[float, float], Sequence[int]]
) -> dict[tuple[float, float], tuple[float, float, float]]:
    """``{(mix, tau): (criterion, 2-class accuracy, 4-class macro-F1)}`` over ``MIX_GRID`` x ``TAU_GRID``, where
    ``labels_at(mix, tau)`` gives the 4-class labels at that setting and the criterion is the mean of the two.

    >>> s = grid_scores([0, 1, 2, 3], lambda mix, tau: [0, 1, 2, 3] if mix >= 0.5 else [3, 3, 3, 3])
    >>> s[(0.6, 0.5)], s[(0.0, 0.5)][1]
    ((100.0, 100.0, 100.0), 75.0)
    """
    scores = {}
    for mix in MIX_GRID:
        for tau in TAU_GRID:
            m = cdconv_metrics(gold, labels_at(mix, tau))
            acc2, f4 = m["2class/accuracy"], m["4class/macro_f1"]
            scores[(mix, tau)] = (round((acc2 + f4) / 2, 3), acc2, f4)
    return scores


def choose_mix(
    scores: dict[tuple[float, float], tuple[float, float, float]], n_dev: int
) -> tuple[tuple[float, float], tuple[float, float], float]:
    """``(chosen, top, one_se)`` from dev ``{(mix, tau): (criterion, 2-class accuracy, 4-class macro-F1)}``.

    ``top`` maximises the criterion; ``chosen`` is the smallest mix whose best setting is within one
    standard error of the top's 2-class accuracy (in points) of it, at that mix's best tau (ties: the tau
    nearer 0.5). The same one-standard-error rule as the DECODE threshold.

    >>> s = {(0.0, 0.5): (50.0, 70.0, 30.0), (0.4, 0.5): (59.6, 72.0, 47.2), (0.6, 0.6): (60.0, 72.0, 48.0)}
    >>> choose_mix(s, 2332)[0], choose_mix(s, 100_000)[0]
    ((0.4, 0.5), (0.6, 0.6))
    """
    top = max(scores, key=lambda k: (scores[k][0], -k[0], -abs(k[1] - 0.5)))
    p = scores[top][1] / 100
    se = 100 * math.sqrt(p * (1 - p) / n_dev)
    near = [k for k in scores if scores[k][0] >= scores[top][0] - se]
    mix = min(k[0] for k in near)
    best = max((k for k in near if k[0] == mix), key=lambda k: (scores[k][0], -abs(k[1] - 0.5)))
    return best, top, se


def _fit_head(
    examples: Sequence[Example], c: float = 1.0, min_df: int = 2, blocks: Sequence[str] | None = None, n: int = 2
) -> Any:
    """A :class:`~dialcheck.detectors.lexical.LexicalHead` fitted on CDConv ``examples`` and their four-category
    labels (its mix is left at the default; the callers set or choose it); ``blocks`` and ``n`` as the head's
    (default: b2, b1, u2 and 1-2-grams). Needs scikit-learn."""
    from ..datasets.cdconv import LABEL_NAMES
    from ..detectors.lexical import DEFAULT_BLOCKS, LexicalHead

    labels = [example_label(e) for e in examples]
    return LexicalHead.fit(
        [e.dialogue for e in examples], labels, LABEL_NAMES, c=c, min_df=min_df, blocks=blocks or DEFAULT_BLOCKS, n=n
    )


def fit_lexical(
    detector: CategoryDetector,
    train: Sequence[Example],
    dev: Sequence[Example],
    c: float = 1.0,
    blocks: Sequence[str] | None = None,
    n: int = 2,
) -> dict[str, Any]:
    """Fit a :class:`~dialcheck.detectors.lexical.LexicalHead` on ``train``, attach it to ``detector`` and
    choose its mix (0, 0.1, ..., 1) together with the decision threshold ``tau`` (0.30 ... 0.80) on dev.

    The criterion is the mean of the two numbers CDConv is judged by, dev 2-class accuracy and 4-class
    macro-F1. The smallest mix whose best tau comes within one standard error (of the top setting's dev
    2-class accuracy) of the top criterion is kept, with its best tau (ties: the tau nearer 0.5): the
    encoder is the part that reads meaning, so it keeps as much weight as the dev data allow. The
    encoder runs once over dev; each setting only re-decides. Returns the choice and, per mix, its best
    dev score. ``blocks`` and ``n``: the head's n-gram blocks and longest n-gram
    (:mod:`dialcheck.detectors.lexical`). Needs scikit-learn.
    """
    return _fit_lexical(detector, train, dev, c, blocks, n)[0]


def _fit_lexical(
    detector: CategoryDetector,
    train: Sequence[Example],
    dev: Sequence[Example],
    c: float,
    blocks: Sequence[str] | None = None,
    n: int = 2,
) -> tuple[dict[str, Any], list[int]]:
    """:func:`fit_lexical`, and the 4-class dev labels at the chosen setting (the encoder ran once)."""
    if not isinstance(detector, CategoryDetector):
        raise InputError(f"a lexical head mixes into the flat or pair detector, not {type(detector).__name__}")
    if not dev:
        raise InputError("choosing the lexical mix needs dev examples")
    head = _fit_head(train, c, blocks=blocks, n=n)
    detector.lexical = head
    dialogues = [e.dialogue for e in dev]
    gold = [example_label(e) for e in dev]
    enc = detector.classifier.proba(detector.inputs(dialogues), batch_size=64)
    lex = head.proba(dialogues)
    old_tau = detector.tau
    mixed: dict[float, Any] = {}

    def labels_at(mix: float, tau: float) -> list[int]:
        head.mix, detector.tau = mix, tau
        if mix not in mixed:
            mixed[mix] = detector.mixed_proba(dialogues, enc, lexical_probs=lex)
        return [verdict_label(v) for v in detector.decide(dialogues, mixed[mix])]

    scores = grid_scores(gold, labels_at)
    best, top, se = choose_mix(scores, len(dev))
    head.mix, detector.tau = best
    alone = max((k for k in scores if k[0] == 0.0), key=lambda k: scores[k][0])
    log.info(
        "lexical head: %d n-grams; mix %.1f, tau %.2f: dev 2-class acc %.2f, 4-class macro-F1 %.2f "
        "(encoder alone at its best tau %.2f: %.2f, %.2f; tau was %.2f)",
        len(head.vocab), *best, *scores[best][1:], alone[1], *scores[alone][1:], old_tau,
    )  # fmt: skip
    per_mix = {
        str(mix): dict(zip(("tau", "mean", "acc2", "macro_f1_4"), (t, *scores[(mix, t)]), strict=True))
        for mix in MIX_GRID
        for t in [max(TAU_GRID, key=lambda t, mix=mix: scores[(mix, t)][0])]
    }
    chosen = {"mix": best[0], "tau": best[1], "tau_before": old_tau, "C": c, "n_grams": len(head.vocab),
              "blocks": list(head.blocks), "n": head.n,
              "top": {"mix": top[0], "tau": top[1], "mean": scores[top][0]}, "one_se": round(se, 3),
              "dev_best_per_mix": per_mix}  # fmt: skip
    return chosen, labels_at(*best)


def fit_cascade_lexical(
    detector: HierarchicalDetector,
    train: Sequence[Example],
    dev: Sequence[Example],
    c: float = 1.0,
    blocks: Sequence[str] | None = None,
    n: int = 2,
) -> dict[str, Any]:
    """Fit a :class:`~dialcheck.detectors.lexical.LexicalHead` on ``train``, attach it to the cascade and
    choose its mix with the three stage thresholds on dev (:func:`calibrate_cascade`). Needs scikit-learn."""
    if not dev:
        raise InputError("choosing the lexical mix needs dev examples")
    head = _fit_head(train, c, blocks=blocks, n=n)
    detector.lexical = head
    res = calibrate_cascade(detector, dev)
    return {"mix": head.mix, "C": c, "n_grams": len(head.vocab), "blocks": list(head.blocks), "n": head.n,
            **res["lexical"], "thresholds": res["thresholds"]}  # fmt: skip


def start_model(config: Any, init: str | Path | None = None, seed: int = 0) -> tuple[Any, Any]:
    """A trainable (model, tokenizer) for ``config``: fresh, or started from the saved detector ``init``.

    New weights (a head, LoRA matrices) are drawn from ``seed``."""
    from ..detectors.modeling import build_model, load_pretrained

    seed_everything(seed)
    return load_pretrained(Path(init), config) if init is not None else build_model(config)


def stage_init(init: str | Path | None, stage: str) -> Path | None:
    """The saved classifier a hierarchical stage starts from: ``init/<stage>`` when ``init`` is a saved
    hierarchical detector (each stage continues its own training), else ``init`` itself (one pair
    classifier, e.g. pre-trained on OCNLI, starts every stage).

    >>> stage_init(None, "history") is None
    True
    """
    if init is None:
        return None
    from ..detectors.modeling import CONFIG_NAME

    own = Path(init) / stage
    return own if (own / CONFIG_NAME).exists() else Path(init)


def _fit_category(
    det: CategoryDetector,
    train: Sequence[Example],
    dev: Sequence[Example],
    cfg: TrainConfig,
    progress: bool,
    init: str | Path | None = None,
    resume_dir: Path | None = None,
    resume: bool = False,
) -> FitResult:
    model, tok = start_model(det.config, init, cfg.seed)
    det.attach(model, tok)
    labels = det.classifier.labels
    targets = np.array([labels.index(category_of_example(e)) for e in train], dtype=np.int64)

    checkpoints = itertools.count(1)

    def evaluate() -> dict[str, float]:
        if not dev:  # no validation (--with-dev): each checkpoint counts as the best so far, so the last
            return {"score": float(next(checkpoints))}  # weights are kept and the run can --resume
        return {"score": _dev_metrics(det, dev)["4class/macro_f1"]}

    return fit_pair_model(
        det.classifier,
        det.inputs([e.dialogue for e in train]),
        targets,
        cfg,
        evaluate,
        show_progress_bar=progress,
        resume_dir=resume_dir,
        resume=resume,
    )


def _positive_f1(gold: Sequence[bool], pred: Sequence[bool]) -> float:
    """F1 of the positive class.

    >>> _positive_f1([True, True, False], [True, False, True])
    0.5
    """
    return f1_per_class([int(g) for g in gold], [int(p) for p in pred], [1])[1]


def _fit_hierarchical(
    det: HierarchicalDetector,
    train: Sequence[Example],
    dev: Sequence[Example],
    cfg: TrainConfig,
    progress: bool,
    init: str | Path | None = None,
    resume_dir: Path | None = None,
    resume: bool = False,
) -> dict[str, FitResult]:
    results = {}
    for stage in STAGES:
        need = 2 if stage == "intra_sentence" else 3
        rows = [e for e in train if len(e.dialogue.turns) >= need]
        if not rows:
            raise InputError(f"no training example is long enough for the {stage!r} stage")
        model, tok = start_model(det.stage_config(stage), stage_init(init, stage), cfg.seed)
        clf = det.attach_stage(stage, model, tok)
        cidx = clf.contradiction_index
        sep = separator(tok)
        tags = reads_speaker_tags(det.config)
        texts = [stage_input(stage, e.dialogue, sep, tags) for e in rows]
        targets = np.array([cidx if category_of_example(e) == stage else 1 - cidx for e in rows], dtype=np.int64)
        dev_rows = [e for e in dev if len(e.dialogue.turns) >= need]
        dev_texts = [stage_input(stage, e.dialogue, sep, tags) for e in dev_rows]
        dev_gold = [int(category_of_example(e) == stage) for e in dev_rows]

        def evaluate(clf: Any = clf, dev_texts: list = dev_texts, dev_gold: list = dev_gold) -> dict:
            threshold, f1 = best_threshold(clf.score(dev_texts), dev_gold, _positive_f1)
            return {"score": f1, "threshold": threshold}

        log.info("training the %s stage on %d examples (%d positive)", stage, len(rows), int((targets == cidx).sum()))
        state = resume_dir / stage if resume_dir is not None else None
        results[stage] = fit_pair_model(
            clf,
            texts,
            targets,
            cfg,
            evaluate if dev_rows else None,
            show_progress_bar=progress,
            resume_dir=state,
            resume=resume,
        )
        # the kept weights' dev threshold (recorded at their validation) becomes the stage's
        best = next((h for h in results[stage].history if h["step"] == results[stage].best_step), None)
        if best is not None:
            det.config.thresholds[stage] = round(float(best["threshold"]), 6)
            log.info("%s stage: dev F1 %.4f at threshold %.4f", stage, best["score"], best["threshold"])
    return results


CASCADE_RULES = ("joint", "stage")


def _cascade_confusions(
    s1: np.ndarray, s2: np.ndarray, s3: np.ndarray, gold: np.ndarray, t1: float, t2: float, t3s: np.ndarray
) -> np.ndarray:
    """(len(t3s), 4, 4) confusion counts (gold x predicted CDConv id) of the cascade at thresholds
    (t1, t2, each of t3s); NaN scores (a stage that does not apply) never fire."""  # fmt: skip
    with np.errstate(invalid="ignore"):
        f1 = s1 >= t1
        f2 = ~f1 & (s2 >= t2)
        rest = ~f1 & ~f2
        f3 = rest[None, :] & (s3[None, :] >= t3s[:, None])
    pred = np.where(f1, 1, np.where(f2, 2, 0))[None, :].repeat(len(t3s), 0)
    pred[f3] = 3
    rows = np.arange(len(t3s))[:, None] * 16 + gold[None, :] * 4 + pred
    return np.bincount(rows.ravel(), minlength=16 * len(t3s)).reshape(len(t3s), 4, 4)


def _confusion_scores(conf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """2-class accuracy and 4-class macro-F1 (percent) of each confusion matrix in ``conf`` (k, 4, 4)."""
    n = conf.sum(axis=(1, 2))
    acc2 = (conf[:, 0, 0] + conf[:, 1:, 1:].sum(axis=(1, 2))) / n
    tp = np.diagonal(conf, axis1=1, axis2=2)
    fp = conf.sum(axis=1) - tp
    fn = conf.sum(axis=2) - tp
    with np.errstate(invalid="ignore", divide="ignore"):
        f1 = np.where(tp > 0, 2 * tp / (2 * tp + fp + fn), 0.0)
    return 100 * acc2, 100 * f1.mean(axis=1)


def cascade_thresholds(
    stage_scores: dict[str, Sequence[float]], gold: Sequence[int], levels: int = 36
) -> dict[str, Any]:
    """Choose the three stage thresholds of the cascade together on dev.

    ``stage_scores``: each stage's P(contradiction) per dev example (NaN where the stage does not apply);
    ``gold``: CDConv label ids. Each stage's candidates are its dev-score quantiles from 30% to 100%
    (``levels`` of them) plus "never fires". The criterion is the one CDConv is judged by, the mean of
    2-class accuracy and 4-class macro-F1; of the settings within one standard error (of the top
    setting's 2-class accuracy) of the top criterion, the one that fires on the fewest dev examples is
    kept (ties: the higher criterion), as the DECODE threshold keeps the highest within one SE: trained
    per stage for its own F1, the stages together over-fire.

    >>> gold = [0, 0, 0, 1, 2, 3, 3, 0]
    >>> s = {"intra_sentence": [.1, .2, .1, .9, .1, .1, .2, .3], "role_confusion": [.1, .1, .2, .1, .8, .2, .1, .1],
    ...      "history": [.2, .1, .6, .1, .2, .9, .7, .1]}
    >>> r = cascade_thresholds(s, gold)
    >>> r["dev"]["2class/accuracy"], r["dev"]["4class/macro_f1"]
    (100.0, 100.0)
    """
    g = np.asarray(gold, dtype=np.int64)
    s1, s2, s3 = (np.asarray(stage_scores[st], dtype=float) for st in STAGES)
    if not (len(s1) == len(s2) == len(s3) == len(g)) or not len(g):
        raise ValueError("every stage needs one score per dev example")
    if not set(np.unique(g)) <= {0, 1, 2, 3}:
        raise ValueError("gold labels are CDConv ids 0-3")

    def candidates(s: np.ndarray) -> np.ndarray:
        v = s[~np.isnan(s)]
        q = np.unique(np.quantile(v, np.linspace(0.3, 1.0, levels))) if len(v) else np.array([])
        return np.concatenate([q, [np.inf]])

    c1, c2, c3 = candidates(s1), candidates(s2), candidates(s3)
    crit, acc2, f4, fires, keys = [], [], [], [], []
    for t1 in c1:
        for t2 in c2:
            conf = _cascade_confusions(s1, s2, s3, g, t1, t2, c3)
            a, f = _confusion_scores(conf)
            crit.append((a + f) / 2)
            acc2.append(a)
            f4.append(f)
            fires.append(conf[:, :, 1:].sum(axis=(1, 2)))
            keys.extend((t1, t2, t3) for t3 in c3)
    crit_a, acc_a, f4_a, fires_a = (np.concatenate(x) for x in (crit, acc2, f4, fires))
    top = int(np.argmax(crit_a))
    p = acc_a[top] / 100
    se = 100 * math.sqrt(p * (1 - p) / len(g))
    near = np.flatnonzero(crit_a >= crit_a[top] - se)
    chosen = int(near[np.lexsort((-crit_a[near], fires_a[near]))[0]])

    def finite(t: float) -> float | None:
        return None if not np.isfinite(t) else round(float(t), 6)

    return {
        "thresholds": {st: finite(t) for st, t in zip(STAGES, keys[chosen], strict=True)},
        "dev": {"2class/accuracy": round(float(acc_a[chosen]), 2), "4class/macro_f1": round(float(f4_a[chosen]), 2),
                "fires": int(fires_a[chosen])},
        "top": {"thresholds": {st: finite(t) for st, t in zip(STAGES, keys[top], strict=True)},
                "2class/accuracy": round(float(acc_a[top]), 2), "4class/macro_f1": round(float(f4_a[top]), 2)},
        "one_se": round(se, 3),
        "settings": len(keys),
    }  # fmt: skip


def calibrate_cascade(det: HierarchicalDetector, dev: Sequence[Example], batch_size: int = 64) -> dict[str, Any]:
    """Score ``dev`` once with every stage, choose the three thresholds together
    (:func:`cascade_thresholds`) and set them on ``det`` (a stage that should never fire gets ``NEVER``, 1.01);
    returns the choice, also recorded in ``det.config.training["cascade"]``.

    With a lexical head on ``det``, its mix (0, 0.1, ..., 1) is chosen too: the smallest mix whose best
    setting comes within one standard error of the best mix's, as for the flat detector."""
    if not dev:
        raise InputError("choosing the cascade thresholds needs dev examples")
    n = len(dev)
    scores = det.stage_scores([e.dialogue for e in dev], batch_size=batch_size)
    before = {st: det.stage_threshold(st) for st in STAGES}
    gold = [example_label(e) for e in dev]
    head = det.lexical
    if head is None:
        res = cascade_thresholds(scores, gold)
    else:
        lex = head.proba([e.dialogue for e in dev])
        per_mix = {}
        for mix in MIX_GRID:
            mixed = {st: (1.0 - mix) * scores[st] + mix * lex[:, head.labels.index(st)] for st in STAGES}
            per_mix[mix] = cascade_thresholds(mixed, gold)

        # the flat detector's rule for the mix, on each mix's best setting (the tau slot is unused here)
        tops = {m: (r["top"]["2class/accuracy"], r["top"]["4class/macro_f1"]) for m, r in per_mix.items()}
        (head.mix, _), (best, _), se = choose_mix({(m, 0.5): ((a + f) / 2, a, f) for m, (a, f) in tops.items()}, n)
        res = dict(per_mix[head.mix])
        res["lexical"] = {"mix": head.mix, "top_mix": best, "one_se": round(se, 3),
                          "dev_top_per_mix": {str(m): round((a + f) / 2, 3) for m, (a, f) in tops.items()}}  # fmt: skip
    for st, t in res["thresholds"].items():
        det.config.thresholds[st] = NEVER if t is None else t
    # each stage's own best-F1 threshold (from training) stays on record through later calibrations
    res["stage_thresholds"] = det.config.training.get("cascade", {}).get("stage_thresholds", before)
    res["thresholds_before"] = before
    det.config.training = {**det.config.training, "cascade": res}
    log.info(
        "cascade thresholds chosen together on dev: %s (dev 2-class acc %.2f, 4-class macro-F1 %.2f; "
        "thresholds before: %s)%s", res["thresholds"], res["dev"]["2class/accuracy"],
        res["dev"]["4class/macro_f1"], before, f"; lexical mix {head.mix}" if head is not None else "",
    )  # fmt: skip
    return res


def train_category_detector(
    detector: Detector,
    train: Sequence[Example],
    dev: Sequence[Example] | None = None,
    config: TrainConfig | None = None,
    data_info: dict[str, Any] | None = None,
    show_progress_bar: bool = False,
    init: str | Path | None = None,
    resume_dir: str | Path | None = None,
    resume: bool = False,
) -> Detector:
    """Fine-tune a four-category ``detector`` (pair, flat or hierarchical) on ``train``; returns it with
    weights attached and, when ``dev`` is given, its dev metrics in ``config.metrics``. ``init``: a saved
    LoRA pair classifier (same base and adapter) every classifier starts from.

    With ``resume_dir`` each classifier keeps its training state there (a cascade: one folder per stage),
    and ``resume`` continues an interrupted run: finished stages are not trained again, the stage that
    was cut continues from its last validation (see :func:`~dialcheck.training.trainer.fit_pair_model`)."""
    cfg = config or TrainConfig()
    if not train:
        raise InputError("no training examples")
    dev = list(dev or [])
    rule = cfg.extra.get("cascade_rule", "joint")
    state = Path(resume_dir) if resume_dir is not None else None
    if rule not in CASCADE_RULES:
        raise InputError(f"cascade threshold rule {rule!r}; use one of {', '.join(CASCADE_RULES)}")
    if isinstance(detector, HierarchicalDetector):
        fits = _fit_hierarchical(detector, train, dev, cfg, show_progress_bar, init, state, resume)
    elif isinstance(detector, CategoryDetector):
        fits = {"all": _fit_category(detector, train, dev, cfg, show_progress_bar, init, state, resume)}
    else:
        raise TypeError(f"{type(detector).__name__} is not a four-category detector")
    counts: dict[str, int] = {}
    for e in train:
        counts[category_of_example(e)] = counts.get(category_of_example(e), 0) + 1
    detector.config.training = {
        **({"init": str(init)} if init is not None else {}),
        **(data_info or {}),
        "train_examples": len(train),
        "train_labels": counts,
        "dev_examples": len(dev),
        "fits": {
            k: {"steps": r.steps, "best_step": r.best_step, "seconds": r.seconds}
            | ({"window": r.window} if r.window else {})
            for k, r in fits.items()
        },
        "threads": next(iter(fits.values())).threads,
        "lr": next(iter(fits.values())).lr,
        **{k: v for k, v in asdict(cfg).items() if k not in ("extra", "lr")},
        **cfg.extra,
    }
    if dev and isinstance(detector, HierarchicalDetector) and rule == "joint":
        calibrate_cascade(detector, dev)
    if dev:
        detector.config.metrics = {
            **detector.config.metrics,
            **{f"dev/{k}": v for k, v in _dev_metrics(detector, dev).items()},
        }
    return detector


def lexical_spec(args: Any) -> tuple[tuple[str, ...] | None, int]:
    """(blocks, n) of the lexical head ``--lexical-blocks`` and ``--lexical-ngrams`` ask for (None: the default
    blocks), checked.

    >>> from types import SimpleNamespace as N
    >>> lexical_spec(N(lexical_blocks="b2,b1,u2,b2&b1", lexical_ngrams=3))
    (('b2', 'b1', 'u2', 'b2&b1'), 3)
    """
    from ..detectors.lexical import DEFAULT_BLOCKS, check_blocks

    text, n = getattr(args, "lexical_blocks", None), getattr(args, "lexical_ngrams", None) or 2
    blocks = tuple(b.strip() for b in text.split(",")) if text else None
    try:
        checked = check_blocks(blocks or DEFAULT_BLOCKS, n)
    except InputError as e:
        raise InputError(f"--lexical-blocks / --lexical-ngrams: {e}") from None
    return (checked if blocks else None), n


def _attach_lexical(
    det: CategoryDetector | HierarchicalDetector,
    train: Sequence[Example],
    dev: Sequence[Example],
    command: str,
    blocks: Sequence[str] | None = None,
    n: int = 2,
) -> None:
    """Fit the lexical head (``blocks``, ``n``: its n-gram blocks), choose its mix on dev, and record both in the
    detector's config."""
    import datetime as dt

    if isinstance(det, HierarchicalDetector):
        chosen, metrics = fit_cascade_lexical(det, train, dev, blocks=blocks, n=n), _dev_metrics(det, dev)
    else:  # the labels the mix was chosen with are the detector's: no second pass over dev
        chosen, dev_labels = _fit_lexical(det, train, dev, 1.0, blocks, n)
        metrics = cdconv_metrics([example_label(e) for e in dev], dev_labels)
    det.config.training = {
        **det.config.training,
        "lexical": {
            **chosen,
            "train_examples": len(train),
            "command": command,
            "date": dt.date.today().isoformat(),
        },
    }
    # earlier metrics describe the encoder alone: only the mixed detector's dev metrics stay
    det.config.metrics = {f"dev/{k}": v for k, v in metrics.items()}


def _load_saved(folder: str | Path, threads: int | None, refusal: str) -> CategoryDetector | HierarchicalDetector:
    """The saved CDConv detector in ``folder`` (``refusal``, naming the folder, if it is another kind)."""
    if threads:
        import torch

        torch.set_num_threads(threads)
    det = Detector.load(folder)
    if not isinstance(det, CategoryDetector | HierarchicalDetector):
        raise InputError(refusal, str(folder))
    return det


def _save_copy(det: CategoryDetector | HierarchicalDetector, source: Path, out: Path) -> int:
    """The saved detector ``source`` copied to ``out`` as is (a loaded adapter is merged and cannot be
    saved again), with the new config, the detector's lexical head (if it has one) beside its weights and
    a model card."""
    import shutil

    from ..detectors.modeling import CONFIG_NAME

    shutil.copytree(source, out, dirs_exist_ok=True, ignore=shutil.ignore_patterns("MODEL_CARD.md", "lexical.*"))
    (out / CONFIG_NAME).write_text(det.config.to_json(), encoding="utf-8")
    if det.lexical is not None:
        det.lexical.save(out)
    det.path = out
    return _card_and_report(det, out)


def _card_and_report(det: CategoryDetector | HierarchicalDetector, out: Path) -> int:
    """Write the model card of the detector saved in ``out`` and report its dev metrics; the exit code."""
    import json
    import sys

    from .card import write_model_card

    write_model_card(out, det.config)
    print(f"dialcheck: saved {out} ({json.dumps(det.config.metrics)})", file=sys.stderr)
    return 0


def _measure_init(
    args: Any,
    init: Path,
    old: Any,
    train: Sequence[Example],
    dev: Sequence[Example],
    out: Any,
    command: str,
    machine: str,
) -> int:
    """``--epochs 0``: the ``--init`` detector (or soup) as it is, measured on dev, with ``--lexical`` given its
    lexical head, saved to ``out`` with what it was made from."""
    import datetime as dt
    import sys

    from .card import init_record

    det = _load_saved(init, args.threads, "--epochs 0 measures a saved CDConv detector; this one is not")
    if args.detector and det.registry_name != f"cdconv.{args.detector}.v1":
        raise InputError(f"--detector {args.detector}, but the --init detector is {det.registry_name}", str(init))
    train_name, dev_name = SPLIT_DATASETS[args.split]
    soup = getattr(args, "init_soup", None)
    # --with-dev (with --lexical-from, checked by the caller): that head is refitted on ``train``, which then holds
    # train and dev together
    refit = bool(getattr(args, "with_dev", False))
    seen = saw_dev(soup or [init])
    if seen and args.lexical:
        raise InputError(
            "--lexical chooses the head's mix on dev, which this detector was trained on (--with-dev); "
            "give --lexical-from a detector whose head was fitted without it",
            seen[0],
        )
    lexical_from = getattr(args, "lexical_from", None)
    kept = {"lexical": old.training["lexical"]} if det.lexical is not None and "lexical" in old.training else {}
    if args.lexical:
        data = f"lexical head fitted on {train_name}, dev {dev_name}"
    elif refit:
        data = f"lexical head refitted on {train_name} and {dev_name} together (--with-dev)"
    elif seen:
        data = f"not measured on {dev_name}, which --with-dev trained on"
    else:
        data = f"measured on {dev_name}"
    det.config.training = {
        "init": old.training["init"] if soup else init_record(init, old),
        "command": command,
        "data": f"CDConv {args.split} split, encoder not trained (--epochs 0): {data}",
        "machine": machine,
        "date": dt.date.today().isoformat(),
        "epochs": 0,
        **({"with_dev": seen or True} if seen or refit else {}),
        **({} if args.lexical or lexical_from else kept),
    }
    what = f"the soup of {len(soup)} detectors" if soup else str(init)
    if lexical_from:
        copy_lexical(det, Path(lexical_from), command, refit_on=train if refit else None)
    if args.lexical:
        print(f"dialcheck: fitting a lexical head on {len(train)} examples onto {what}", file=sys.stderr)
        _attach_lexical(det, train, dev, command, *lexical_spec(args))
    elif seen or refit:
        why = f"{seen[0]} was trained on it" if seen else "its lexical head was refitted on it"
        print(f"dialcheck: {what} not measured on dev ({why})", file=sys.stderr)
        det.config.metrics = {}
    else:
        print(f"dialcheck: measuring {what} on {len(dev)} dev examples", file=sys.stderr)
        det.config.metrics = {f"dev/{k}": v for k, v in _dev_metrics(det, dev).items()}
    return _save_copy(det, init, Path(out))


def saw_dev(folders: Sequence[str | Path]) -> list[str]:
    """The saved detectors among ``folders`` whose training included the CDConv dev split (``--with-dev``, or
    a soup with such an ingredient): for them dev is no longer a held-out measure."""
    from ..detectors.modeling import CONFIG_NAME, DetectorConfig

    found = []
    for folder in folders:
        path = Path(folder) / CONFIG_NAME
        training = DetectorConfig.from_file(path).training if path.exists() else {}
        if training.get("with_dev") or "--with-dev" in str(training.get("command", "")).split():
            found.append(str(folder))
    return found


def copy_lexical(
    det: CategoryDetector | HierarchicalDetector,
    source: Path,
    command: str,
    refit_on: Sequence[Example] | None = None,
) -> None:
    """Give ``det`` the lexical head of the saved flat or pair detector in ``source``, with its mix and the
    decision threshold ``tau`` it was chosen with; nothing is chosen.

    ``refit_on``: fit a head of the same kind (its ``C``, ``min_df``, blocks and n-grams) on these examples
    instead of copying the fitted one (``--with-dev``: train and dev together); the mix and ``tau`` are still the
    source's."""
    from ..detectors.lexical import LexicalHead
    from ..detectors.modeling import CONFIG_NAME, DetectorConfig

    if isinstance(det, HierarchicalDetector):
        raise InputError("--lexical-from gives a flat or pair detector a lexical head; this one is hierarchical")
    if not (source / CONFIG_NAME).exists() or not LexicalHead.present(source):
        raise InputError("--lexical-from needs a saved CDConv detector with a lexical head", str(source))
    cfg = DetectorConfig.from_file(source / CONFIG_NAME)
    if cfg.detector != det.registry_name or list(cfg.labels) != list(det.config.labels):
        raise InputError(
            f"its lexical head belongs to {cfg.detector}; this detector is {det.registry_name}", str(source)
        )
    head = LexicalHead.load(source)
    record: dict[str, Any] = {"copied_from": model_reference(source), "copy_command": command}
    if refit_on is not None:
        fitted = _fit_head(
            refit_on, float(head.meta.get("C", 1.0)), int(head.meta.get("min_df", 2)), head.blocks, head.n
        )
        fitted.mix = head.mix
        head = fitted
        record = {**record, "refitted": True, "train_examples": len(refit_on), "n_grams": len(head.vocab)}
        log.info("lexical head refitted on %d examples: %d n-grams, mix %.2f", len(refit_on), len(head.vocab), head.mix)
    det.lexical = head
    det.config.thresholds["tau"] = cfg.thresholds["tau"]
    det.config.training["lexical"] = {**cfg.training.get("lexical", {}), **record}


SPLIT_DATASETS = {
    "official": ("cdconv.train.v1", "cdconv.dev.v1"),
    "disjoint": ("cdconv.disjoint.train.v1", "cdconv.disjoint.dev.v1"),
}


def run_cdconv(args: Any, out: Any, command: str = "", machine: str = "") -> int:
    """``dialcheck train --task cdconv``: train a four-category detector on a CDConv split and save it.

    Several ``--init`` folders (``args.init_soup``: flat or pair detectors continued from one start) start
    from their weight average, a model soup (:func:`dialcheck.training.soup.average_detectors`); with
    ``--epochs 0`` the soup is not trained, only measured on dev (and given a lexical head with ``--lexical``).
    """
    import sys
    import tempfile

    soup = getattr(args, "init_soup", None)
    if not soup:
        return _run_cdconv(args, out, command, machine)
    from ..detectors.modeling import CONFIG_NAME, DetectorConfig
    from .soup import average_detectors

    if args.add_lexical:
        raise InputError("--add-lexical reads one saved detector; for a soup give --init A B --epochs 0 --lexical")
    for folder in soup:
        path = Path(folder) / CONFIG_NAME
        if path.exists() and DetectorConfig.from_file(path).detector == HierarchicalDetector.registry_name:
            raise InputError(
                "a soup of hierarchical detectors is not supported (average flat or pair detectors)", str(folder)
            )
    # the soup lives in a temporary folder (never in OUT: a failed run must leave OUT as it was)
    with tempfile.TemporaryDirectory(prefix="dialcheck-soup-") as tmp:
        # with --half the soup is rounded first, so what is measured is what is stored
        rank = getattr(args, "rank", None)
        args.init = str(average_detectors(soup, Path(tmp) / "soup", rank=rank, half=getattr(args, "half", False)))
        cut = f", its adapter cut to rank {rank}" if rank is not None else ""
        print(f"dialcheck: starting from the average of {len(soup)} detectors{cut}", file=sys.stderr)
        return _run_cdconv(args, out, command, machine)


def _run_cdconv(args: Any, out: Any, command: str, machine: str) -> int:
    import datetime as dt
    import json
    import sys

    from ..datasets import load_dataset
    from ..detectors.categories import FlatCategoryDetector, PairCategoryDetector
    from .card import init_record

    kinds = {"hierarchical": HierarchicalDetector, "flat": FlatCategoryDetector, "pair": PairCategoryDetector}
    kind = args.detector or "hierarchical"
    if kind not in kinds:
        raise InputError(f"--detector {kind} is not a CDConv detector; use {', '.join(kinds)}")
    if getattr(args, "teacher", None):
        raise InputError("--teacher applies to --task decode only")
    augment = tuple(a for a in (args.augment or "").split(",") if a)
    unknown = [a for a in augment if a not in CDCONV_AUGMENTATIONS]
    if unknown:
        raise InputError(f"--augment {','.join(unknown)}: --task cdconv knows {', '.join(CDCONV_AUGMENTATIONS)}")
    if (getattr(args, "lexical_blocks", None) or getattr(args, "lexical_ngrams", None)) and not (
        args.lexical or args.add_lexical
    ):
        raise InputError("--lexical-blocks and --lexical-ngrams shape a head --lexical or --add-lexical fits")
    lexical_spec(args)  # a bad block name stops the run before any data is read
    train_name, dev_name = SPLIT_DATASETS[args.split]
    train = load_dataset(train_name, args.data_dir)
    dev = load_dataset(dev_name, args.data_dir)
    if args.limit:
        train, dev = train[: args.limit], dev[: max(1, args.limit // 4)]
    with_dev = getattr(args, "with_dev", False)
    if with_dev:
        if kind == "hierarchical":
            raise InputError("--with-dev trains a flat or pair detector (the cascade's thresholds are chosen on dev)")
        if (args.epochs == 0 and not getattr(args, "lexical_from", None)) or args.lexical or args.add_lexical:
            raise InputError(
                "--with-dev trains the encoder on train and dev together (or, with --epochs 0 and --lexical-from, "
                "refits that head on both); --epochs 0 alone, --lexical and --add-lexical choose or measure on dev "
                "(fit a lexical head on a model trained without --with-dev)"
            )
        train, dev = [*train, *dev], []
    extra: list[Example] = []
    context_rate = CONTEXT_RATE if args.context_rate is None else args.context_rate
    rated = [a for a in augment if a in RATED_AUGMENTATIONS]
    if args.context_rate is not None and not rated:
        raise InputError(
            "--context-rate is the share --augment random_context or user_statement copies: give one of them too"
        )
    if not 0.0 < context_rate <= 1.0:
        raise InputError(f"--context-rate {context_rate}: expected a share in (0, 1]")
    if args.epochs < 0 or (args.epochs == 0 and not getattr(args, "init", None)):
        raise InputError(
            f"--epochs must be positive (0 only with --init: the saved detector measured, not trained), "
            f"got {args.epochs}"
        )
    if augment and args.epochs == 0:
        raise InputError("--augment adds training data; --epochs 0 does not train")
    if augment and args.add_lexical:
        raise InputError(
            "--augment trains the encoder; --add-lexical fits only a lexical head on the CDConv train split "
            "of an encoder already trained (give --augment when training that encoder)"
        )
    if "perturb" in augment:
        from ..datasets.base import data_dir
        from ..probes.triggers import ChineseLexicon

        folder = data_dir(args.data_dir) / "chinese_dictionary"
        try:
            lexicon = ChineseLexicon.load(folder)
        except InputError:  # its message names the probe command's --dict-dir
            raise InputError("--augment perturb needs the Chinese dictionary (see --data-dir)", str(folder)) from None
        extra, made = perturbation_examples(train, args.seed, lexicon)
        print(f"dialcheck: --augment perturb: {json.dumps(made)}", file=sys.stderr)
    if "random_context" in augment:
        more, made = random_context_examples(train, args.seed, context_rate)
        extra.extend(more)
        print(f"dialcheck: --augment random_context: {json.dumps(made)}", file=sys.stderr)
    if "user_statement" in augment:
        more, made = user_statement_examples(train, args.seed, context_rate)
        extra.extend(more)
        print(f"dialcheck: --augment user_statement: {json.dumps(made)}", file=sys.stderr)
    if args.add_lexical:
        det0 = _load_saved(args.add_lexical, args.threads, "--add-lexical needs a saved CDConv detector")
        print(f"dialcheck: fitting a lexical head on {len(train)} examples onto {args.add_lexical}", file=sys.stderr)
        _attach_lexical(det0, train, dev, command, *lexical_spec(args))
        return _save_copy(det0, Path(args.add_lexical), Path(out))
    rank = 0 if args.full else args.lora
    adapter = {"type": "lora", "r": rank, "alpha": 2 * rank, "dropout": 0.1} if rank > 0 else None
    init = getattr(args, "init", None)
    if init:
        from ..detectors.modeling import CONFIG_NAME, DetectorConfig

        if not (Path(init) / CONFIG_NAME).exists():
            raise InputError("--init needs a saved dialcheck detector folder (dialcheck.json is missing)", str(init))
        old = DetectorConfig.from_file(Path(init) / CONFIG_NAME)
        if not (old.adapter and old.adapter.get("type") == "lora"):
            raise InputError("--init starts CDConv detectors from a LoRA pair classifier only", str(init))
        if old.detector == HierarchicalDetector.registry_name and kind != "hierarchical":
            raise InputError(
                "--init is a hierarchical detector: its three stages continue with --detector hierarchical", str(init)
            )
        args.base, adapter = old.base, dict(old.adapter)
        args.max_length = args.max_length or old.max_length
    if args.epochs == 0:
        return _measure_init(args, Path(init), old, train, dev, out, command, machine)
    det = kinds[kind](base=args.base, adapter=adapter, max_length=args.max_length or 128)
    if getattr(args, "speaker_tags", False) or (init and reads_speaker_tags(old)):
        det.config.options["speaker_tags"] = True
    cfg = TrainConfig.from_args(args, cascade_rule=getattr(args, "cascade", None) or "joint")
    info = {
        "command": command,
        "data": f"CDConv {args.split} split: "
        + (
            f"{train_name} and {dev_name} together (--with-dev: no validation, the last weights kept)"
            if with_dev
            else f"{train_name} (dev {dev_name})"
        ),
        "machine": machine,
        "date": dt.date.today().isoformat(),
    }
    if init:
        info["init"] = old.training["init"] if getattr(args, "init_soup", None) else init_record(init, old)
    if augment:
        info["augment"] = list(augment)
    if with_dev:
        info["with_dev"] = True
    if rated:
        info["context_rate"] = context_rate
    print(
        f"dialcheck: training {det.registry_name} on {len(train) + len(extra)} examples, dev {len(dev)}",
        file=sys.stderr,
    )
    train_category_detector(
        det,
        [*train, *extra],
        dev,
        cfg,
        data_info=info,
        show_progress_bar=not args.no_progress,
        init=init or None,
        resume_dir=Path(out) / "resume",
        resume=getattr(args, "resume", False),
    )
    if args.lexical:
        _attach_lexical(det, train, dev, command, *lexical_spec(args))
    det.save(out)
    return _card_and_report(det, Path(out))
