"""Training data for the DECODE detectors, built from the corpus files at run time.

DECODE's train dialogues are not available here, only their utterance pairs (one group of pairs per
train dialogue, keyed by its last utterance). From them this module builds:

- utterance pairs for the structured detector, optionally augmented with
  ``random_premise`` negatives (the last turn of a contradiction paired with an utterance of another
  dialogue: teaches the model that a contradiction needs a premise, which is what RCT tests),
  ``restate`` negatives (an utterance against itself, one of its own sentences, or itself extended by
  an unrelated sentence: DECODE's negatives are mostly off-topic turns, so without them a detector
  learns "same topic = contradiction" and flags a speaker who repeats or restates themself),
  ``perturb`` pairs (an utterance against its negation or antonym swap, label 1, and against a synonym
  paraphrase, label 0: the counterweight to ``restate``), ``values`` pairs (an utterance against
  itself with one number, weekday or month changed, label 1, and against a paraphrase that keeps its
  values, label 0: without them every near-copy that is not a negation or an antonym reads as a
  restatement, and "I have two dogs." / "I have three dogs." scores 0.01) and NLI pairs (ANLI, MNLI/SNLI samples)
  converted to two labels; ``reverse`` then reads half of all training pairs (chosen by a seeded hash
  of the pair) backwards, label unchanged: contradiction and its absence are symmetric, and a model that
  only ever sees the checked turn second can learn how such turns are phrased rather than whether they
  conflict (use with ``--pair-order both``);
- pseudo-dialogues per group for validation and calibration at the dialogue level, including an
  RCT-like version of each contradiction (its evidence turns removed);
- synthetic speaker-tagged histories for the unstructured detector;
- pairs from your own labelled dialogues (:func:`labelled_dialogue_pairs`, ``dialcheck train
  --dialogues``), e.g. your bot's logs: the conversations the detector will be used on.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..datasets import load_dataset
from ..datasets.decode import group_pairs
from ..language import SENTENCE_END
from ..schema import Dialogue, Example, Pair, Turn

__all__ = [
    "AUGMENTATIONS",
    "UNLABELLED_SOURCES",
    "DecodeTrainingData",
    "build_decode_training_data",
    "history_pairs",
    "labelled_dialogue_pairs",
    "neighbour_pairs",
    "paragraph_pairs",
    "perturbation_pairs",
    "pseudo_dialogues",
    "random_premise_negatives",
    "restatement_negatives",
    "reverse_half",
    "sentence_embeddings",
    "split_groups",
    "synthetic_histories",
    "top_pair_evidence",
    "value_swap_pairs",
    "values_of",
]

UNLABELLED_SOURCES = ("aug.neighbour",)  # pairs whose label is a placeholder: for distillation only

AUGMENTATIONS = (
    "random_premise",
    "restate",
    "perturb",
    "values",
    "history",
    "coevidence",
    "neighbour",
    "anli",
    "nli_samples",
    "swap",
    "reverse",
    "paragraph",
)


def _bucket(key: str, seed: int) -> float:
    h = hashlib.sha1(f"{seed}:{key}".encode()).hexdigest()
    return int(h[:8], 16) / 0xFFFFFFFF


def split_groups(pairs: Sequence[Pair], fraction: float, seed: int = 0) -> tuple[list[Pair], list[Pair]]:
    """Split pairs into (train, validation) by group, so no dialogue is on both sides.

    >>> ps = [Pair("a", "x", 1, group="x"), Pair("b", "x", 0, group="x"), Pair("c", "y", 0, group="y")]
    >>> tr, va = split_groups(ps, 0.5, seed=1)
    >>> sorted({p.group for p in tr}.isdisjoint({p.group for p in va}) for _ in [0])
    [True]
    """
    train, val = [], []
    for p in pairs:
        (val if _bucket(p.group or p.second, seed) < fraction else train).append(p)
    return train, val


PARAGRAPH_SHARE = 0.3  # of the train pairs that get a paragraph copy
PARAGRAPH_WORDS = (40, 75)  # the copy's second turn: about as long as an assistant's paragraph, and the pair
# still fits the 128-token window with a DECODE first turn (read whole, as the detector reads it)


def paragraph_pairs(pairs: Sequence[Pair], seed: int = 0, share: float = PARAGRAPH_SHARE) -> list[Pair]:
    """Copies of a ``share`` of the labelled pairs whose second turn is a paragraph: the original utterance at
    a random place among utterances of other groups, up to 40-75 words; the label stays. A contradiction inside
    a long reply is then one the model has seen, and length alone says nothing.

    >>> ps = [Pair("I have a dog.", "I never had a dog.", 1, group="g1")] + [
    ...     Pair(f"I like tea number {i}.", f"My sister works at a bank in town number {i}.", 0, group=f"h{i}")
    ...     for i in range(20)]
    >>> out = paragraph_pairs(ps, seed=0, share=1.0)
    >>> c = [p for p in out if p.group == "g1"][0]
    >>> c.label, c.source, "I never had a dog." in c.second, len(c.second.split()) >= 40
    (1, 'aug.paragraph', True, True)
    """
    rng = random.Random(seed)
    pool = [(p.second, p.group) for p in pairs if p.label in (0, 1)]
    out = []
    for p in pairs:
        if p.label not in (0, 1) or rng.random() >= share:
            continue
        target = rng.randint(*PARAGRAPH_WORDS)
        parts, words = [p.second], len(p.second.split())
        for _ in range(50):
            if words >= target:
                break
            text, group = rng.choice(pool)
            if group == p.group or text in parts:
                continue
            parts.insert(rng.randint(0, len(parts)), text)
            words += len(text.split())
        out.append(Pair(p.first, " ".join(parts), p.label, "aug.paragraph", p.group))
    return out


def random_premise_negatives(pairs: Sequence[Pair], per_positive: int = 1, seed: int = 0) -> list[Pair]:
    """For each contradicting pair, its second utterance after a first utterance of another group (label 0).

    >>> ps = [Pair("I love cats.", "I hate cats.", 1, group="g1"), Pair("I am a nurse.", "I cook.", 0, group="g2")]
    >>> [(p.first, p.second, p.label) for p in random_premise_negatives(ps, seed=0)]
    [('I am a nurse.', 'I hate cats.', 0)]
    """
    rng = random.Random(seed)
    firsts = [(p.first, p.group) for p in pairs]
    out = []
    for p in pairs:
        if p.label != 1:
            continue
        for _ in range(per_positive):
            first = _from_another_group(rng, firsts, p.group, avoid=p.first)
            if first is not None:
                out.append(Pair(first, p.second, 0, "aug.random_premise", p.group))
    return out


def _from_another_group(
    rng: random.Random, firsts: Sequence[tuple[str, str]], group: str, avoid: str | None = None
) -> str | None:
    """A random utterance of ``firsts`` from a group other than ``group`` (20 tries, else None)."""
    for _attempt in range(20):
        text, g = firsts[rng.randrange(len(firsts))]
        if g != group and text != avoid:
            return text
    return None


def _sentences(text: str) -> list[str]:
    return [s for s in SENTENCE_END.split(text.strip()) if len(s.split()) >= 3]


def restatement_negatives(pairs: Sequence[Pair], per_positive: int = 1, seed: int = 0) -> list[Pair]:
    """Consistent restatements (label 0) built from the utterances of contradicting pairs.

    For each utterance ``u`` of a contradicting pair, one of: ``(u, u)`` (a speaker repeating
    themself), ``u`` against one of its own sentences (either order), or ``u`` against ``u`` with an
    utterance of another group added before or after it. None of them can be a contradiction, and all
    share the topic and most of the words, which DECODE's own negatives rarely do.

    >>> ps = [Pair("I love cats. I have two of them.", "I hate cats.", 1, group="g1"),
    ...       Pair("I am a nurse.", "I cook.", 0, group="g2")]
    >>> negs = restatement_negatives(ps, seed=0)
    >>> all(p.label == 0 and p.source == "aug.restate" for p in negs), len(negs)
    (True, 1)
    >>> all(p.first in p.second or p.second in p.first for p in negs)
    True
    """
    rng = random.Random(seed)
    firsts = [(p.first, p.group) for p in pairs]
    out = []
    for p in pairs:
        if p.label != 1:
            continue
        for _ in range(per_positive):
            u = rng.choice((p.first, p.second))
            parts = _sentences(u)
            kinds = ["same", "extend"] + (["part"] if len(parts) >= 2 else [])
            kind = rng.choice(kinds)
            if kind == "same":
                first, second = u, u
            elif kind == "part":
                first, second = u, rng.choice(parts)
            else:
                other = _from_another_group(rng, firsts, p.group)
                if other is None:
                    continue
                second = f"{u} {other}" if rng.random() < 0.5 else f"{other} {u}"
                first = u
            if rng.random() < 0.5:
                first, second = second, first
            out.append(Pair(first, second, 0, "aug.restate", p.group))
    return out


def history_pairs(pairs: Sequence[Pair], seed: int = 0, coevidence_only: bool = False) -> list[Pair]:
    """Consistent pairs (label 0) of two *earlier* turns of one train dialogue, either order.

    A DECODE train dialogue's history is consistent, and its pairs name several earlier turns of the last
    speaker: the ones the last turn contradicts (label 1) and others (label 0). Any two of them make a
    consistent pair written by the same speaker in one conversation, in their own words, neither of them
    a crowd-written contradicting turn. Two turns that the same last turn contradicts (co-evidence: "Man I
    LOVE shrimp!" and "It is amazing, especially with alfredo sauce." against "I'm allergic to shrimp.") are
    on the same subject, which DECODE's own negatives almost never are. ``coevidence_only`` keeps those.

    >>> ps = [Pair("I love shrimp!", "I'm allergic to shrimp.", 1, group="g"),
    ...       Pair("Shrimp pasta is the best.", "I'm allergic to shrimp.", 1, group="g"),
    ...       Pair("I live in Ohio.", "I'm allergic to shrimp.", 0, group="g"),
    ...       Pair("I cook.", "Me too.", 0, group="h")]
    >>> sorted(sorted((p.first, p.second)) for p in history_pairs(ps, coevidence_only=True))
    [['I love shrimp!', 'Shrimp pasta is the best.']]
    >>> len(history_pairs(ps)), {p.label for p in history_pairs(ps)}, {p.source for p in history_pairs(ps)}
    (3, {0}, {'aug.history'})
    """
    rng = random.Random(seed)
    out = []
    for group, members in group_pairs(list(pairs)).items():
        firsts: dict[str, int] = {}
        for p in members:
            firsts[p.first] = max(firsts.get(p.first, 0), int(p.label))
        turns = [u for u, lab in firsts.items() if lab == 1 or not coevidence_only]
        for i, a in enumerate(turns):
            for b in turns[i + 1 :]:
                if a.strip() == b.strip():
                    continue
                out.append(Pair(*((a, b) if rng.random() < 0.5 else (b, a)), 0, "aug.history", group))
    return out


def sentence_embeddings(texts: Sequence[str], encoder: str = "all-MiniLM-L6-v2", batch_size: int = 128) -> Any:
    """Unit-length mean-pooled embeddings of ``texts`` by a sentence encoder (the base MiniLM is one),
    cached under ``$DIALCHECK_CACHE/embeddings/`` by encoder and texts."""
    import numpy as np

    from ..backbones import cache_dir, resolve_base

    folder = resolve_base(encoder)
    h = hashlib.sha256(str(folder.resolve()).encode())
    for t in texts:
        h.update(t.encode() + b"\x00")
    path = cache_dir() / "embeddings" / f"{h.hexdigest()[:24]}.npy"
    if path.exists():
        return np.load(path, allow_pickle=False).astype(np.float32)
    import torch
    from transformers import AutoModel, AutoTokenizer

    tok, model = AutoTokenizer.from_pretrained(folder), AutoModel.from_pretrained(folder).eval()
    vecs = np.zeros((len(texts), model.config.hidden_size), dtype=np.float32)
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # similar lengths batched: little padding
    with torch.inference_mode():
        for s in range(0, len(order), batch_size):
            idx = order[s : s + batch_size]
            enc = tok([texts[i] for i in idx], padding=True, truncation=True, max_length=128, return_tensors="pt")
            hid = model(**enc).last_hidden_state
            mask = enc["attention_mask"].unsqueeze(-1).to(hid.dtype)
            emb = (hid * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            vecs[idx] = torch.nn.functional.normalize(emb, dim=-1).numpy()
    path.parent.mkdir(parents=True, exist_ok=True)
    vecs = vecs.astype(np.float16)  # the cache's precision, returned on the first call too: neighbour_pairs
    np.save(path, vecs, allow_pickle=False)  # must pick the same neighbours whether the cache existed or not
    return vecs.astype(np.float32)


def neighbour_pairs(
    pairs: Sequence[Pair],
    embed: Any = None,
    min_similarity: float = 0.4,
    max_similarity: float = 0.95,
    block: int = 2048,
) -> list[Pair]:
    """Unlabelled same-subject pairs: each dialogue's last turn after its nearest utterance of another dialogue.

    DECODE's pairs of one dialogue are rarely on the same subject unless they contradict, so a detector
    learns "same subject = contradiction" and flags consistent follow-ups. The nearest utterance of another
    conversation ("I have two dogs." / "My dog is a lab.") is on the same subject and may or may not
    conflict with it; no gold label exists (``label`` is 0 as a placeholder), so these pairs are for
    distillation only: their targets are a teacher's scores (``dialcheck train --teacher``). ``embed`` maps
    texts to unit vectors (default: :func:`sentence_embeddings` with the base MiniLM); a last turn whose
    nearest neighbour is below cosine ``min_similarity`` (another subject) gets no pair, and neighbours at
    ``max_similarity`` or above (copies) are passed over.

    >>> import numpy as np
    >>> words = ["dog", "cat", "tea", "paris"]
    >>> def bag(texts):  # unit bag-of-words vectors
    ...     v = np.array([[float(w in t) for w in words] for t in texts])
    ...     return v / np.linalg.norm(v, axis=1, keepdims=True)
    >>> ps = [Pair("a dog", "my dog and cat", 1, group="g"), Pair("tea please", "paris tea", 0, group="h"),
    ...       Pair("a cat", "cat and dog", 0, group="k")]
    >>> [(p.first, p.second, p.source) for p in neighbour_pairs(ps, embed=bag, max_similarity=0.99)]
    [('a cat', 'my dog and cat', 'aug.neighbour'), ('a dog', 'cat and dog', 'aug.neighbour')]
    """
    import numpy as np

    last = {p.group or p.second: p.second for p in pairs}
    index: dict[str, int] = {}
    own: dict[str, set[int]] = {}  # a text said in several dialogues belongs to each of them
    for p in pairs:
        for t in (p.first, p.second):
            own.setdefault(p.group or p.second, set()).add(index.setdefault(t, len(index)))
    texts = list(index)
    vecs = np.asarray((embed or sentence_embeddings)(texts), dtype=np.float32)
    queries = list(last.items())
    out = []
    for start in range(0, len(queries), block):
        chunk = queries[start : start + block]
        sims = vecs[[index[t] for _, t in chunk]] @ vecs.T
        for row, (group, _) in zip(sims, chunk, strict=True):
            row[row >= max_similarity] = -np.inf
            row[list(own[group])] = -np.inf
            best = int(np.argmax(row))
            if row[best] >= min_similarity:
                out.append(Pair(texts[best], last[group], 0, "aug.neighbour", group))
    return out


def perturbation_pairs(
    pairs: Sequence[Pair], seed: int = 0, lexicon: Any = None, antonym_share: float = 0.5, parse_batch: int = 256
) -> list[Pair]:
    """Near-copies that flip polarity (label 1), each beside a near-copy that keeps it (label 0).

    For one utterance ``u`` of each contradicting pair: ``u`` against ``u`` with its polarity flipped (a
    negation added or removed, or, for ``antonym_share`` of the utterances that have one, a verb or
    adjective replaced by a WordNet antonym: "I love my job." / "I hate my job.") as a contradiction,
    and ``u`` against a WordNet synonym paraphrase of itself as a non-contradiction, either order; both
    or neither, so a one-word edit is no label cue. Edits inside a question are skipped. ``restate``
    teaches that a near-copy is consistent; without these a detector learns "almost the same words =
    consistent" and misses "I love it" ... "I hate it" (the shipped v2 flagged 10% of negated human-bot
    utterances, ``benchmarks/perturbation_probe.py``). Needs spaCy (the ``spacy`` extra) and a lexicon
    (default WordNet, the ``wordnet`` extra).
    """
    from ..probes.triggers_en import rules_version

    with rules_version(PERTURB_RULES):  # the rules every shipped model's ``perturb`` data was built with
        return _perturbation_pairs(pairs, seed, lexicon, antonym_share, parse_batch)


# ``perturb`` data is built with version 1 of the English trigger rules, whatever the trigger methods use
# now: a new rule would change the pairs, so the shipped models' recipes would no longer rebuild them
PERTURB_RULES = 1


def _perturbation_pairs(
    pairs: Sequence[Pair], seed: int, lexicon: Any, antonym_share: float, parse_batch: int
) -> list[Pair]:
    from ..probes.triggers_en import (
        EnglishSynonymParaphraser,
        WordNetLexicon,
        _candidates,
        _replace,
        edits_a_question,
        negate,
        parse_all,
    )

    rng = random.Random(seed)
    chosen = [(rng.choice((p.first, p.second)), p.group) for p in pairs if p.label == 1]
    parser = parse_all((u for u, _ in chosen), parse_batch)
    lexicon = lexicon if lexicon is not None else WordNetLexicon.load()
    para = EnglishSynonymParaphraser(lexicon, parser=parser)
    out = []
    for u, group in chosen:
        toks = parser(u)
        flipped = negate(toks, rng)
        second = flipped[0] if flipped and flipped[0] != u.strip() else None
        opposites = [(i, alts) for i, alts in _candidates(toks, lexicon.antonyms) if toks[i].tag[:2] in ("VB", "JJ")]
        if opposites and (second is None or rng.random() < antonym_share):
            i, alts = rng.choice(opposites)
            second = _replace(toks, [(i, rng.choice(alts))])
        same = para.paraphrase(u, rng)
        if second is None or same is None or same == u.strip() or edits_a_question(u, second):
            continue
        out.append(Pair(*((u, second) if rng.random() < 0.5 else (second, u)), 1, "aug.perturb", group))
        out.append(Pair(*((u, same) if rng.random() < 0.5 else (same, u)), 0, "aug.perturb", group))
    return out


_NUMBER_WORDS = (
    "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
    "twenty", "thirty", "forty", "fifty", "sixty", "hundred", "thousand",
)  # fmt: skip
_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTHS = (  # not "May" (a modal verb at the start of a sentence); capitalised only ("march" is a verb)
    "January", "February", "March", "April", "June", "July", "August", "September", "October", "November", "December",
)  # fmt: skip
_VALUE = re.compile(
    r"(?P<digit>(?<![\w.,:])\d{1,4}(?![\d]|[.,:]\d)(?=[a-zA-Z]{0,2}\b|\W|$))"
    rf"|(?i:\b(?P<word>{'|'.join(_NUMBER_WORDS)})\b)"
    rf"|(?i:\b(?P<day>{'|'.join(_DAYS)})(?=s?\b))"
    rf"|\b(?P<month>{'|'.join(_MONTHS)})\b"
)
_SMALL = {str(i): w for i, w in enumerate(_NUMBER_WORDS[:11], start=2)}


def values_of(text: str) -> list[str]:
    """The numbers, weekdays and months of ``text``, in order (what :func:`value_swap_pairs` changes).

    >>> values_of("I have 3 kids and two dogs; we meet on Fridays in March, at 9am.")
    ['3', 'two', 'Friday', 'March', '9']
    """
    return [m.group(0) for m in _VALUE.finditer(text)]


def _other_value(m: re.Match[str], rng: random.Random) -> str:
    """A different value of the same kind as the match, in its case."""
    kind, old = m.lastgroup, m.group(0)
    if kind == "digit":
        n = int(old)
        if n <= 12:
            new = rng.choice([k for k in range(max(1, n - 4), min(12, n + 4) + 1) if k != n])
        elif 1900 <= n <= 2100:  # a year
            new = n + rng.choice((-1, 1)) * rng.randint(1, 12)
        else:
            new = max(1, n + rng.choice((-1, 1)) * rng.randint(max(1, n // 10), max(2, n // 2)))
            new = new if new != n else n + 1
        return str(new)
    pool = {"word": _NUMBER_WORDS, "day": _DAYS, "month": _MONTHS}[str(kind)]
    i = [x.lower() for x in pool].index(old.lower())
    near = [x for j, x in enumerate(pool) if j != i and (kind != "word" or abs(j - i) <= 3)]
    new = rng.choice(near)
    return new.capitalize() if old[:1].isupper() else new.lower() if kind != "month" else new


def _swap_value(text: str, k: int, rng: random.Random) -> str:
    """``text`` with its ``k``-th value (see :func:`values_of`) replaced by another of the same kind."""
    m = list(_VALUE.finditer(text))[k]
    return text[: m.start()] + _other_value(m, rng) + text[m.end() :]


def value_swap_pairs(pairs: Sequence[Pair], seed: int = 0, lexicon: Any = None, parse_batch: int = 256) -> list[Pair]:
    """Near-copies that change one value (label 1), each beside a paraphrase that keeps the values (label 0).

    For every utterance of ``pairs`` with a number, weekday or month outside a question: the utterance
    against itself (or, half the time, against its paraphrase) with one value changed ("I have three
    dogs." after "I have two dogs."; "on Friday" after "on Tuesday"; "at 11am" after "at 9am") as a
    contradiction, and against a WordNet synonym paraphrase that keeps every value (or, for 2-12, the
    number written the other way: "2" / "two") as a non-contradiction, either order; both or neither, so
    the edit itself is no label cue. ``restate`` and ``perturb`` teach that near-copies are consistent
    unless a negation or an antonym flips them; these teach that a changed value is not a restatement.
    Needs spaCy (the ``spacy`` extra) and a lexicon (default WordNet, the ``wordnet`` extra).
    """
    from ..probes.triggers_en import EnglishSynonymParaphraser, WordNetLexicon, edits_a_question, parse_all

    rng = random.Random(seed)
    utterances = list(dict.fromkeys(u.strip() for p in pairs for u in (p.first, p.second) if _VALUE.search(u)))
    parser = parse_all(utterances, parse_batch)
    para = EnglishSynonymParaphraser(lexicon if lexicon is not None else WordNetLexicon.load(), parser=parser)
    out = []
    for u in utterances:
        values = values_of(u)
        k = rng.randrange(len(values))
        changed = _swap_value(u, k, rng)
        if edits_a_question(u, changed):
            continue
        same = para.paraphrase(u, rng)
        if same is None or same == u or values_of(same) != values:
            m = list(_VALUE.finditer(u))[k]  # no paraphrase: write a number 2-12 the other way, if it is one
            if m.group(0) not in _SMALL or u[m.end() : m.end() + 1].isalpha():  # not "9th", "2pm"
                continue
            same = u[: m.start()] + _SMALL[m.group(0)] + u[m.end() :]
        elif rng.random() < 0.5:
            changed = _swap_value(same, k, rng)
        group = f"values:{u}"
        out.append(Pair(*((u, changed) if rng.random() < 0.5 else (changed, u)), 1, "aug.values", group))
        out.append(Pair(*((u, same) if rng.random() < 0.5 else (same, u)), 0, "aug.values", group))
    return out


def pseudo_dialogues(pairs: Sequence[Pair], rct: bool = True, seed: int = 0) -> list[Example]:
    """One dialogue per group: the group's first utterances (same speaker) then its last utterance.

    Only same-speaker turns are known, so the dialogue alternates with empty-speaker filler turns
    removed: every turn has speaker ``"S"``. With ``rct``, each contradiction also yields an RCT-like
    non-contradiction (its evidence turns dropped) when non-evidence turns remain.
    """
    rng = random.Random(seed)
    out = []
    for group, ps in group_pairs(list(pairs)).items():
        ps = list({p.first: p for p in ps}.values())
        rng.shuffle(ps)
        turns = (*(Turn("S", p.first) for p in ps), Turn("S", ps[0].second))
        evidence = tuple(i for i, p in enumerate(ps) if p.label == 1)
        label = bool(evidence)
        out.append(Example(Dialogue(turns, meta={"id": group}), label, evidence, id=group))
        if rct and label and len(evidence) < len(ps):
            kept = (*(Turn("S", p.first) for p in ps if p.label == 0), Turn("S", ps[0].second))
            out.append(Example(Dialogue(kept, meta={"id": group + "#rct"}), False, (), id=group + "#rct"))
    return out


def synthetic_histories(
    pairs: Sequence[Pair], seed: int = 0, rct: bool = True, min_turns: int = 2, max_turns: int = 12
) -> list[Pair]:
    """(tagged history, last turn) pairs for the unstructured detector from grouped utterance pairs.

    Each group's first utterances become the last speaker's earlier turns, padded with utterances of
    other groups, interleaved with other-speaker utterances drawn from other groups. Contradiction
    groups also give an RCT-like negative with the evidence turns left out.
    """
    from ..detectors.unstructured import history_text

    rng = random.Random(seed)
    pool = [(p.first, p.group) for p in pairs]
    if len({g for _, g in pool}) < 2:  # the fillers come from other groups: none would ever be found
        raise ValueError(f"synthetic histories need utterance pairs of at least two dialogues, got {len(pool)} pairs")

    def filler(group: str) -> str:
        while True:
            text, g = pool[rng.randrange(len(pool))]
            if g != group:
                return text

    def make(group: str, same: list[str], last: str) -> str:
        n_same = max(len(same), rng.randint(min_turns // 2, max_turns // 2))
        same = same + [filler(group) for _ in range(n_same - len(same))]
        rng.shuffle(same)
        turns: list[Turn] = []
        for s in same:
            turns.append(Turn("O", filler(group)))
            turns.append(Turn("S", s))
        if rng.random() < 0.5 and len(turns) > 1:
            turns = turns[1:]
        turns.append(Turn("O", filler(group)))
        turns.append(Turn("S", last))
        return history_text(Dialogue(tuple(turns)))

    out = []
    for group, ps in group_pairs(list(pairs)).items():
        last = ps[0].second
        label = int(any(p.label for p in ps))
        out.append(Pair(make(group, [p.first for p in ps], last), last, label, "synthetic.history", group))
        negatives = [p.first for p in ps if p.label == 0]
        if rct and label and negatives:
            out.append(Pair(make(group, negatives, last), last, 0, "synthetic.history.rct", group + "#rct"))
    return out


def reverse_half(pairs: Sequence[Pair], seed: int = 0) -> list[Pair]:
    """Each pair read backwards (``first`` and ``second`` exchanged) when a seeded hash of its two texts
    falls below one half; labels, sources and groups are kept, and so is the order of the list.

    >>> ps = [Pair(f"a{i}", f"b{i}", i % 2) for i in range(200)]
    >>> out = reverse_half(ps, seed=0)
    >>> 70 < sum(p.first.startswith("b") for p in out) < 130, [p.label for p in out] == [p.label for p in ps]
    (True, True)
    """
    return [
        Pair(p.second, p.first, p.label, p.source, p.group) if _bucket(f"{p.first}\x00{p.second}", seed) < 0.5 else p
        for p in pairs
    ]


def labelled_dialogue_pairs(examples: Sequence[Example], source: str = "dialogues") -> tuple[list[Pair], int]:
    """Training pairs from labelled dialogues, the pairs the utterance-based detector scores.

    Each earlier turn of the last turn's speaker is paired with the last turn: label 1 when the turn is
    named as evidence, else 0 (every pair of a dialogue labelled consistent is a negative). A
    contradiction without evidence turns gives no pair (which of its pairs conflicts is unknown); the
    second value counts them.

    >>> from dialcheck.io import parse_example
    >>> ok = parse_example({"turns": ["I like tea.", "Me too.", "Tea is my favourite drink."],
    ...                     "contradiction": False})
    >>> bad = parse_example({"turns": ["I have a dog.", "Nice!", "I have no pets."],
    ...                      "contradiction": True, "evidence": [0]})
    >>> unknown = parse_example({"turns": ["I have a cat.", "Nice!", "I have no pets."], "contradiction": True})
    >>> pairs, skipped = labelled_dialogue_pairs([ok, bad, unknown])
    >>> [(p.first, p.label) for p in pairs], skipped
    ([('I like tea.', 0), ('I have a dog.', 1)], 1)
    """
    pairs: list[Pair] = []
    skipped = 0
    for k, e in enumerate(examples):
        if e.label and not e.evidence:
            skipped += 1
            continue
        d = e.dialogue
        evidence = set(e.evidence or ())
        indices = sorted(set(d.same_speaker_indices()) | evidence)
        group = f"{source}:{e.id or k}"
        last = d.turns[-1].text
        for i in indices:
            label = int(i in evidence)
            pairs.append(Pair(d.turns[i].text, last, label, f"{source}.{'positive' if label else 'negative'}", group))
    return pairs, skipped


def top_pair_evidence(examples: Sequence[Example], verdicts: Sequence[Any]) -> list[Example]:
    """Contradictions labelled without evidence turns get, as evidence, the earlier turn whose pair a
    detector scored highest (``verdicts[i].pair_scores``); every other example is returned unchanged.

    For logs labelled at the dialogue level only: a multiple-instance guess, as good as the detector.

    >>> from dialcheck.io import parse_example
    >>> from dialcheck.schema import Verdict
    >>> e = parse_example({"turns": ["I have a cat.", "Nice!", "I love cats.", "Yes!", "I have no pets."],
    ...                    "contradiction": True})
    >>> top_pair_evidence([e], [Verdict(True, 0.9, (), None, {0: 0.9, 2: 0.2})])[0].evidence
    (0,)
    """
    if len(examples) != len(verdicts):
        raise ValueError(f"{len(examples)} examples but {len(verdicts)} verdicts")
    out = []
    for e, v in zip(examples, verdicts, strict=True):
        if e.label and not e.evidence and v.pair_scores:
            e = replace(e, evidence=(max(v.pair_scores, key=v.pair_scores.get),))
        out.append(e)
    return out


@dataclass
class DecodeTrainingData:
    """Train pairs, validation pairs and validation dialogues, with counts per source."""

    train: list[Pair]
    validation: list[Pair]
    validation_dialogues: list[Example]
    counts: dict[str, int]


def build_decode_training_data(
    root: Path | str | None = None,
    detector: str = "decode.utterance.v1",
    augment: Sequence[str] = ("random_premise",),
    validation_fraction: float = 0.08,
    seed: int = 0,
    limit: int | None = None,
) -> DecodeTrainingData:
    """Everything a DECODE training run needs, read from the data directory.

    ``limit`` keeps only the first ``limit`` groups (quick runs and tests).
    """
    unknown = set(augment) - set(AUGMENTATIONS)
    if unknown:
        raise ValueError(f"unknown augmentation(s) {sorted(unknown)}; known: {', '.join(AUGMENTATIONS)}")
    if "reverse" in augment and detector == "decode.unstructured.v1":
        raise ValueError("the reverse augmentation applies to the utterance-based detector (pairs of turns)")
    pairs = load_dataset("decode.train_pairs.v1", root)
    if limit is not None:
        keep = set(list(group_pairs(pairs))[:limit])
        pairs = [p for p in pairs if p.group in keep]
    train, val = split_groups(pairs, validation_fraction, seed)
    val_dialogues = pseudo_dialogues(val, rct=True, seed=seed)
    if detector == "decode.unstructured.v1":
        train_out = synthetic_histories(train, seed=seed)
        # held-out pairs of fewer than two dialogues make no history (its fillers come from other dialogues): the
        # run then has nothing to validate on, as an utterance-based one with none held out (train warns)
        val_out = synthetic_histories(val, seed=seed + 1) if len({p.group for p in val}) > 1 else []
    else:
        train_out = list(train)
        val_out = list(val)
        if "random_premise" in augment:
            train_out += random_premise_negatives(train, 1, seed)
        if "restate" in augment:
            train_out += restatement_negatives(train, 1, seed)
        if "perturb" in augment:
            train_out += perturbation_pairs(train, seed)
        if "values" in augment:
            train_out += value_swap_pairs(train, seed)
        if "history" in augment:
            train_out += history_pairs(train, seed)
        elif "coevidence" in augment:  # the same-subject part of history, in both orders
            for p in history_pairs(train, seed, coevidence_only=True):
                q = replace(p, source="aug.coevidence")
                train_out += [q, replace(q, first=q.second, second=q.first)]
        if "neighbour" in augment:
            train_out += neighbour_pairs(train)
        if "paragraph" in augment:
            train_out += paragraph_pairs(train, seed)
        if "swap" in augment:
            train_out += [Pair(p.second, p.first, 1, "aug.swap", p.group) for p in train if p.label == 1]
    if "anli" in augment:
        train_out += load_dataset("nli.anli.v1", root)
    if "nli_samples" in augment:
        train_out += load_dataset("nli.mnli_snli_samples.v1", root)
    reversed_pairs = 0
    if "reverse" in augment:
        flipped = reverse_half(train_out, seed)
        reversed_pairs = sum(a is not b for a, b in zip(flipped, train_out, strict=True))
        train_out = flipped
    counts: dict[str, int] = {}
    for p in train_out:
        counts[p.source] = counts.get(p.source, 0) + 1
    if reversed_pairs:
        counts["reversed"] = reversed_pairs
    counts["validation_pairs"] = len(val_out)
    counts["validation_dialogues"] = len(val_dialogues)
    return DecodeTrainingData(train_out, val_out, val_dialogues, counts)
