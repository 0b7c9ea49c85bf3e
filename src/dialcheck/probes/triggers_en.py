"""English counterparts of the CDConv trigger methods (see :mod:`dialcheck.probes.triggers`).

The same seven methods, built by rule on spaCy tags (``en_core_web_sm`` from the ``spacy`` extra) and,
for synonyms and antonyms, WordNet 3.0 read by NLTK from Debian's ``wordnet-base`` and
``wordnet-sense-index`` packages (:class:`WordNetLexicon`, the ``wordnet`` extra):

- ``short_utterance``: "Really?", "Oh.", "I see." ... (:data:`EN_SHORT_UTTERANCES`);
- ``inquire_user``: "Do you know what I like?" from "I like dogs." (the user's sentence with ``I`` or
  ``my ...`` as subject, its object or place asked for);
- ``inquire_bot``: "What do you like?" from the bot's "I like dogs." (persons swapped, do-support);
- ``paraphrase``: up to two words replaced by synonyms (:class:`EnglishSynonymParaphraser`) or any
  :class:`~dialcheck.probes.triggers.Paraphraser`;
- ``synonym`` / ``antonym``: one content word of ``u1`` replaced by a synonym or an antonym, inflected
  like the original (plural, third person, past) and in its case; "a"/"an" follow the new word;
- ``negation``: the first verbal negation removed ("I don't like dogs" -> "I like dogs"), else one
  added to a sentence ("She went home" -> "She didn't go home", "I am happy" -> "I am not happy"); the
  words that follow the polarity follow it ("Yes, I like it too." -> "No, I don't like it either.").

How often each method applies and is right, checked by hand: ``docs/trigger_checks/en_round3.md``.

An input the rules cannot handle gives None (counted as skipped), never a half-built sentence. The
rules are pure functions of tagged tokens (:class:`Tok`); :func:`tagged` builds tokens by hand:

>>> negate(tagged("I/PRP like/VBP dogs/NNS/dog ./."))
("I don't like dogs.", "+don't")
>>> negate(tagged("She/PRP did/VBD/do n't/RB/not go/VB home/RB ./."))
('She went home.', "-didn't")
>>> negate(tagged("I/PRP 'm/VBP/be happy/JJ ./."))
("I'm not happy.", '+not')
>>> negate(tagged("Is/VBZ/be n't/RB/not it/PRP nice/JJ ?/."))
('Is it nice?', "-n't")
>>> third_person("watch"), past_tense("stop"), past_tense("go"), plural("city")
('watches', 'stopped', 'went', 'cities')
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import logging
import os
import random
import re
import shutil
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from ..errors import MissingDependencyError
from ..language import SENTENCE_END
from .echo import NEGATIVE_FORMS
from .triggers import BATCH_SIZE, METHODS, Paraphraser, Trigger, TriggerInput, TriggerSet, paraphrase, run_methods

__all__ = [
    "APT_COMMAND",
    "DEBIAN_WORDNET",
    "EN_SHORT_UTTERANCES",
    "RULES_LATEST",
    "EnglishLexicon",
    "EnglishSynonymParaphraser",
    "Tok",
    "WordListLexicon",
    "WordNetLexicon",
    "build_english_triggers",
    "english_trigger_batches",
    "inquire_bot_en",
    "inquire_user_en",
    "negate",
    "negation_en",
    "parse",
    "parse_all",
    "past_tense",
    "perturb_en",
    "plural",
    "rules_version",
    "tagged",
    "third_person",
    "wordnet_root",
]

log = logging.getLogger(__name__)

# -- rule versions ------------------------------------------------------------------------------------

RULES_LATEST = 2
_RULES: contextvars.ContextVar[int] = contextvars.ContextVar("dialcheck_en_trigger_rules", default=RULES_LATEST)


@contextlib.contextmanager
def rules_version(version: int) -> Iterator[None]:
    """Run the rules of an earlier ``version`` inside the block (training recipes pin the version their
    data was built with, so a shipped model can be rebuilt after the rules improve).

    1 (frozen): the rules up to 2026-11-24 (``--augment perturb`` of every shipped English model); 2: the
    current rules, after the hand checks in ``docs/trigger_checks/`` (polarity agreement, conditions,
    titles, stop lists, no abbreviations as synonyms, ...); they may still change.

    >>> with rules_version(1):
    ...     negate(tagged("I/PRP like/VBP dogs/NNS/dog too/RB ./."))[0]
    "I don't like dogs too."
    >>> negate(tagged("I/PRP like/VBP dogs/NNS/dog too/RB ./."))[0]
    "I don't like dogs either."
    """
    if version not in (1, 2):
        raise ValueError(f"unknown trigger rules version {version}; known: 1, 2")
    token = _RULES.set(version)
    try:
        yield
    finally:
        _RULES.reset(token)


def _v2() -> bool:
    return _RULES.get() >= 2


EN_SHORT_UTTERANCES = (
    "Really?",
    "Oh.",
    "I see.",
    "Okay.",
    "Oh really?",
    "Hmm.",
    "Why?",
    "And then?",
    "Is that so?",
    "Haha.",
    "Right.",
    "Sure.",
    "Wow.",
    "Huh?",
    "Seriously?",
    "Yeah.",
    "Uh-huh.",
    "Cool.",
    "What?",
    "...",
)
DEBIAN_WORDNET = Path("/usr/share/wordnet")
APT_COMMAND = "apt-get install -y wordnet-base wordnet-sense-index"
PIP_COMMAND = 'pip install "dialcheck[wordnet]"'

# -- tokens -------------------------------------------------------------------------------------------


class Tok(NamedTuple):
    """One token: text, Penn tag, lemma, the whitespace after it, its sentence, and (from spaCy) the
    dependency label, the head's index in the token list and the entity type."""

    text: str
    tag: str
    lemma: str
    ws: str = " "
    sent: int = 0
    dep: str = ""
    head: int = -1
    ent: str = ""


_PUNCT_TAGS = frozenset({".", ",", ":", "''", "``", "-RRB-", "HYPH", "NFP"})
_FINAL = frozenset({".", "!", "?"})


def tagged(spec: str) -> list[Tok]:
    """Tokens from ``"word/TAG[/lemma] ..."`` (lemma defaults to the lower-cased word; no space is put
    before punctuation, clitics and ``n't``; a sentence ends after ``.``, ``!`` or ``?``).

    >>> [t.text + t.ws for t in tagged("I/PRP 'm/VBP/be fine/JJ ./.")]
    ['I', "'m ", 'fine', '.']
    """
    items = [x.split("/") for x in spec.split()]
    out: list[Tok] = []
    sent = 0
    for n, parts in enumerate(items):
        text, tag = parts[0], parts[1]
        lemma = parts[2] if len(parts) > 2 else text.lower()
        nxt = items[n + 1] if n + 1 < len(items) else None
        tight = nxt is None or nxt[1] in _PUNCT_TAGS or nxt[0].startswith("'") or nxt[0].lower() == "n't"
        out.append(Tok(text, tag, lemma, "" if tight else " ", sent))
        if text in _FINAL:
            sent += 1
    return out


@functools.lru_cache(maxsize=1)
def _spacy() -> Any:
    from .echo import load_spacy

    return load_spacy(purpose="English trigger methods")


@functools.lru_cache(maxsize=4096)
def _parse_default(text: str) -> tuple[Tok, ...]:
    return tuple(_from_doc(_spacy()(text)))


def _from_doc(doc: Any) -> list[Tok]:
    sent_of = {}
    for s, span in enumerate(doc.sents):
        for t in span:
            sent_of[t.i] = s
    return [Tok(t.text, t.tag_, t.lemma_, t.whitespace_, sent_of[t.i], t.dep_, t.head.i, t.ent_type_) for t in doc]


def parse(text: str, nlp: Any = None) -> list[Tok]:
    """``text`` tagged and parsed by spaCy (``en_core_web_sm`` 3.8, loaded once, results cached)."""
    if nlp is None:
        return list(_parse_default(text))
    return _from_doc(nlp(text))


Parser = Callable[[str], Sequence[Tok]]


def parse_all(texts: Iterable[str], batch_size: int = 256) -> Parser:
    """A :data:`Parser` that has parsed ``texts`` in spaCy batches up front (much faster than one by one
    for thousands of texts) and parses any other text on demand."""
    nlp = _spacy()
    unique = list(dict.fromkeys(texts))
    parsed = {t: _from_doc(doc) for t, doc in zip(unique, nlp.pipe(unique, batch_size=batch_size), strict=True)}
    return lambda text: parsed[text] if text in parsed else parse(text)


def _render(parts: Sequence[tuple[str | None, str]]) -> str:
    return "".join(t + ws for t, ws in parts if t is not None).strip()


class _Edit:
    """Tokens being rewritten: replace, insert, delete (a deleted token's whitespace goes to the token
    before it), then render."""

    def __init__(self, toks: Sequence[Tok]) -> None:
        self.parts: list[list[Any]] = [[t.text, t.ws] for t in toks]

    def set(self, i: int, text: str) -> None:
        self.parts[i][0] = text

    def delete(self, i: int) -> None:
        ws = self.parts[i][1]
        self.parts[i][0] = None
        for j in range(i - 1, -1, -1):
            if self.parts[j][0] is not None:
                self.parts[j][1] = ws
                break

    def space_before(self, i: int) -> None:
        for j in range(i - 1, -1, -1):
            if self.parts[j][0] is not None:
                self.parts[j][1] = self.parts[j][1] or " "
                break

    def text(self) -> str:
        return _render([(p[0], p[1]) for p in self.parts])


# -- inflection ---------------------------------------------------------------------------------------

# base -> past tense of common irregular verbs (past participles are not needed)
_IRREGULAR_TEXT = (
    "arise:arose awake:awoke be:was bear:bore beat:beat become:became begin:began bend:bent bet:bet "
    "bind:bound bite:bit bleed:bled blow:blew break:broke breed:bred bring:brought build:built "
    "burn:burnt buy:bought catch:caught choose:chose cling:clung come:came cost:cost creep:crept cut:cut "
    "deal:dealt dig:dug do:did draw:drew dream:dreamt drink:drank drive:drove eat:ate fall:fell feed:fed "
    "feel:felt fight:fought find:found flee:fled fly:flew forbid:forbade forget:forgot forgive:forgave "
    "freeze:froze get:got give:gave go:went grind:ground grow:grew hang:hung have:had hear:heard "
    "hide:hid hit:hit hold:held hurt:hurt keep:kept kneel:knelt know:knew lay:laid lead:led leave:left "
    "lend:lent let:let lie:lay light:lit lose:lost make:made mean:meant meet:met pay:paid put:put "
    "quit:quit read:read ride:rode ring:rang rise:rose run:ran say:said see:saw seek:sought sell:sold "
    "send:sent set:set shake:shook shine:shone shoot:shot show:showed shrink:shrank shut:shut sing:sang "
    "sink:sank sit:sat sleep:slept slide:slid speak:spoke spend:spent spin:spun split:split spread:spread "
    "stand:stood steal:stole stick:stuck sting:stung strike:struck swear:swore sweep:swept swim:swam "
    "swing:swung take:took teach:taught tear:tore tell:told think:thought throw:threw understand:understood "
    "wake:woke wear:wore weep:wept win:won wind:wound write:wrote"
)
_IRREGULAR_PAST = dict(pair.split(":") for pair in _IRREGULAR_TEXT.split())
_PLURAL = {"man": "men", "woman": "women", "child": "children", "person": "people", "foot": "feet", "tooth": "teeth"}
_VOWELS = "aeiou"


def third_person(verb: str) -> str:
    """The third person singular present of a base verb ("go" -> "goes", "try" -> "tries")."""
    first, sep, rest = verb.partition(" ")
    w = first.lower()
    if w in ("be", "have"):
        out = {"be": "is", "have": "has"}[w]
    elif w.endswith(("s", "x", "z", "ch", "sh", "o")):
        out = first + "es"
    elif len(w) > 1 and w.endswith("y") and w[-2] not in _VOWELS:
        out = first[:-1] + "ies"
    else:
        out = first + "s"
    return out + sep + rest


def past_tense(verb: str) -> str:
    """The past tense of a base verb: an irregular form from a table of common verbs, else -ed."""
    first, sep, rest = verb.partition(" ")
    w = first.lower()
    if w in _IRREGULAR_PAST:
        out = _match_case(first, _IRREGULAR_PAST[w])
    elif w.endswith("e"):
        out = first + "d"
    elif len(w) > 1 and w.endswith("y") and w[-2] not in _VOWELS:
        out = first[:-1] + "ied"
    elif re.fullmatch(r"[^aeiou]*[aeiou][^aeiouwxy]", w):
        out = first + first[-1] + "ed"  # stop -> stopped (one syllable, consonant-vowel-consonant)
    else:
        out = first + "ed"
    return out + sep + rest


def plural(noun: str) -> str:
    """The plural of a singular noun (of the last word of a compound)."""
    head, sep, last = noun.rpartition(" ")
    w = last.lower()
    if w in _PLURAL:
        out = _match_case(last, _PLURAL[w])
    elif w.endswith(("s", "x", "z", "ch", "sh")):
        out = last + "es"
    elif len(w) > 1 and w.endswith("y") and w[-2] not in _VOWELS:
        out = last[:-1] + "ies"
    else:
        out = last + "s"
    return head + sep + out


def _match_case(src: str, word: str) -> str:
    if len(src) > 1 and src.isupper():
        return word.upper()
    if src[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


# -- negation -----------------------------------------------------------------------------------------

_NEG = frozenset({"not", "n't"})


def _is_neg(t: Tok) -> bool:
    """``not`` or ``n't``, or the ``nt`` spaCy splits from a chat's "dont", "cant", "didnt" (lemma ``not``): a
    negation was added beside it ("i do notnt know")."""
    low = t.text.lower()
    return low in _NEG or (_v2() and low == "nt" and t.lemma == "not")


_NEGATIVE_TEXT = (
    "not n't never no nothing nobody none nowhere neither nor noone cannot hardly barely scarcely seldom rarely"
)
_NEGATIVE_WORDS = frozenset(_NEGATIVE_TEXT.split())
_FINITE = frozenset({"VBZ", "VBP", "VBD", "MD"})
_SUBJECT_TAGS = frozenset({"PRP", "NN", "NNS", "NNP", "NNPS", "EX", "CD"})
_WH = frozenset({"what", "who", "whom", "whose", "which", "where", "when", "why", "how"})
_CONTRACTED = {k: v for k, v in NEGATIVE_FORMS.items() if k != "am"}  # statements: "I am not"
_CLITIC_NEG = {"'ll": "won't", "'ve": "haven't"}
_SPLIT_NEG = {"ca": "can", "wo": "will", "sha": "shall"}  # spaCy's halves of can't, won't, shan't


def _sentences(toks: Sequence[Tok]) -> list[list[int]]:
    out: dict[int, list[int]] = {}
    for i, t in enumerate(toks):
        out.setdefault(t.sent, []).append(i)
    return list(out.values())


def _subject_before(toks: Sequence[Tok], sent: Sequence[int], k: int) -> bool:
    """Whether a subject-like word comes before ``k`` in its clause (back to the last punctuation)."""
    for j in range(k - 1, sent[0] - 1, -1):
        if toks[j].tag in _PUNCT_TAGS:
            return False
        if toks[j].tag in _SUBJECT_TAGS:
            return True
    return False


def _neg_name(t: Tok) -> str:
    """A removed negation as a trigger's detail names it: "not", "n't" (for a chat's "nt" too)."""
    return "n't" if t.text.lower() == "nt" else t.text.lower()


def _joined(verb: str, neg: Tok) -> str:
    """How a removed negation is named with its verb in a trigger's detail: "don't", "do not", "can't"."""
    name = _neg_name(neg)
    return verb.lower() + (name if name == "n't" else " " + name)


def _remove_negation(toks: Sequence[Tok], sent: Sequence[int], i: int) -> tuple[_Edit, str] | None:
    """``toks`` without the negation at ``i`` (whose previous token is a verb), or None."""
    prev = i - 1
    p = toks[prev]
    ed = _Edit(toks)
    after = [j for j in sent if j > i]
    if p.text.lower() in _SPLIT_NEG:
        ed.set(prev, _match_case(p.text, _SPLIT_NEG[p.text.lower()]))
        ed.delete(i)
        return ed, f"-{_joined(p.text, toks[i])}"
    if p.text.lower() == "ai":
        return None  # ain't: no single positive form
    if p.lemma == "do" and p.text.lower() in ("do", "does", "did"):
        nxt = after[0] if after else None
        if not _subject_before(toks, sent, prev):  # inverted: a question or an imperative
            if nxt is not None and toks[nxt].tag == "VB":  # Don't worry -> Worry
                ed.delete(prev)
                ed.delete(i)
                ed.set(nxt, _match_case(p.text, toks[nxt].text))
                return ed, f"-{_joined(p.text, toks[i])}"
            ed.delete(i)  # Don't you like it? -> Do you like it?
            return ed, f"-{_neg_name(toks[i])}"
        verb = next((j for j in after if toks[j].tag not in ("RB", "RBR", "RBS")), None)
        if verb is None or toks[verb].tag != "VB":
            ed.delete(i)  # I don't. -> I do.
            return ed, f"-{_neg_name(toks[i])}"
        form = {"do": lambda v: v, "does": third_person, "did": past_tense}[p.text.lower()]
        ed.delete(prev)
        ed.delete(i)
        ed.set(verb, _match_case(p.text, form(toks[verb].text)))
        return ed, f"-{_joined(p.text, toks[i])}"
    ed.delete(i)  # is not -> is, can't -> can ...
    return ed, f"-{_neg_name(toks[i])}"


def _add_negation(toks: Sequence[Tok], sent: Sequence[int]) -> tuple[_Edit, str] | None:
    """``toks`` with a negation added to the first finite verb of the sentence ``sent``, or None."""
    words = [toks[j] for j in sent if toks[j].tag not in _PUNCT_TAGS]
    if not words or any(t.text.lower() in _NEGATIVE_WORDS or _is_neg(t) for t in words):
        return None  # already negative: no double negation
    lead = next((t for t in words if t.tag != "UH" and t.dep != "intj"), words[0]) if _v2() else words[0]
    # a chat's question often has no mark: "do you like emojis" got "don't do you like emojis"
    question = toks[sent[-1]].text == "?" or (_v2() and _inverted_start(words))
    if words[0].text.lower() in _WH or lead.text.lower() in _WH:
        return None  # "(Cool,) what don't you do?" says little (also without the question mark)
    if _v2() and words[0].text.lower() in _SUBORDINATORS:
        return None  # "If you say so!" -> "If you don't say so!": a condition, not a statement
    if _v2() and question and any(t.tag in ("WP", "WRB", "WDT", "WP$") for t in words):
        return None  # "Great choices, what are their names?": a wh-question after a phrase
    ed = _Edit(toks)
    if _v2() and any(t.text.lower() in _WH for t in words[:2]):
        return None  # "so what do you do" got "so what don't do you do": a wh-question after a word
    f = next((j for j in sent if toks[j].tag in _FINITE), None)
    if f is None:  # an imperative: Go home. -> Don't go home.
        first = next((j for j in sent if toks[j].tag not in _PUNCT_TAGS and toks[j].tag != "UH"), None)
        if first is None:
            return None
        t = toks[first]
        if question or t.tag != "VB" or t.lemma in ("let", "please") or not t.text[:1].isupper():
            return None
        ed.set(first, f"{_match_case(t.text, 'do')}n't {t.text.lower()}")
        return ed, "+don't"
    t = toks[f]
    low = t.text.lower()
    nxt = next((toks[j] for j in sent if j > f and toks[j].tag not in ("RB", "RBR", "RBS")), None)
    inverted = question and not _subject_before(toks, sent, f)
    aux_have = t.lemma == "have" and (inverted or (nxt is not None and nxt.tag == "VBN"))
    elliptic = nxt is None or nxt.tag in _PUNCT_TAGS or nxt.tag == "CC"  # "I do." was "I don't do."
    aux_do = t.lemma == "do" and (inverted or (nxt is not None and nxt.tag == "VB"))
    if _v2() and t.lemma == "do" and elliptic and low in _CONTRACTED:
        ed.set(f, _match_case(t.text, _CONTRACTED[low]))
        return ed, "+n't"
    aux = t.tag == "MD" or t.lemma == "be" or aux_have or aux_do or low.startswith("'")
    if _v2() and inverted and not aux:
        return None  # "Ever tried it?" (no subject, no auxiliary): no place for the negation
    if _v2() and aux and f + 1 in sent and toks[f + 1].text.lower() in ("only", "just"):
        return None  # "I have only seen" -> "I have not only seen": another construction
    if aux and inverted:  # Can you swim? -> Can't you swim?
        if low not in _CONTRACTED:
            return None  # am, may, might, shall: no usable contraction
        ed.set(f, _match_case(t.text, _CONTRACTED[low]))
        return ed, "+n't"
    if aux:
        if low.startswith("'"):  # I'm -> I'm not; I'll -> I won't; I've seen -> I haven't seen
            if t.lemma == "be":
                ed.set(f, t.text + " not")
                return ed, "+not"
            neg = _CLITIC_NEG.get(low) or {"would": "wouldn't", "have": "hasn't" if low == "'s" else "hadn't"}.get(
                t.lemma
            )
            if neg is None:
                return None
            ed.space_before(f)
            ed.set(f, neg)
            return ed, f"+{neg}"
        if low == "can":
            ed.set(f, _match_case(t.text, "cannot"))
            return ed, "+not"
        if _v2() and f + 1 in sent and toks[f + 1].text.lower() in _SENTENCE_ADVERBS:
            ed.set(f + 1, toks[f + 1].text + " not")  # "is probably X" -> "is probably not X"
            return ed, "+not"
        ed.set(f, t.text + " not")
        return ed, "+not"
    do = {"VBP": "do", "VBZ": "does", "VBD": "did"}.get(t.tag)
    if do is None:
        return None
    base = t.lemma if t.lemma and t.lemma.isalpha() else None
    if base is None:
        return None
    ed.set(f, f"{_match_case(t.text, do)}n't {base}")
    return ed, f"+{do}n't"


_INVERTING = frozenset({"be", "do", "have"})


def _inverted_start(words: Sequence[Tok]) -> bool:
    """Whether a sentence opens (after interjections) with a finite auxiliary or modal followed by a subject
    pronoun: a yes/no question without its question mark ("do you like emojis", "can you swim")."""
    rest = [t for t in words if t.tag != "UH" and t.dep != "intj" and any(c.isalpha() for c in t.text)]
    if len(rest) < 3:
        return False
    aux, subject = rest[0], rest[1]
    finite_aux = aux.tag == "MD" or (aux.tag in _FINITE and aux.lemma in _INVERTING)
    return (
        finite_aux and subject.tag in ("PRP", "EX") and subject.text.lower() not in ("me", "him", "her", "us", "them")
    )


_SENTENCE_ADVERBS = frozenset(["probably", "definitely", "certainly", "surely", "obviously", "clearly", "likely"])
_SUBORDINATORS = frozenset(["if", "unless", "because", "although", "though", "whether", "while"])
_YES = frozenset({"yes", "yeah", "yep", "yup", "sure"})
_NO = frozenset({"no", "nope", "nah"})


# words that must follow the polarity of their clause: (positive, negative)
_POLARITY_PAIRS = (("some", "any"), ("already", "yet"), ("too", "either"))


def _agree_polarity(toks: Sequence[Tok], sent: Sequence[int], ed: _Edit, how: str) -> str:
    """The text of ``ed`` with the words that must follow the new polarity of ``sent`` changed: a
    leading "Yes," becomes "No," (and back); after the edit, "some" becomes "any", "already" "yet" and a
    final "too" "either" (and back; "anymore" becomes "now")."""
    adding = how.startswith("+")
    words = [j for j in sent if toks[j].tag not in _PUNCT_TAGS]
    if not words or not _v2():
        return ed.text()
    first = toks[words[0]]
    if first.tag == "UH" and first.text.lower() in (_YES if adding else _NO) and len(words) > 1:
        ed.set(words[0], _match_case(first.text, "no" if adding else "yes"))
    at = next((j for j in sent if ed.parts[j][0] != toks[j].text), sent[0])
    table = {p: n for p, n in _POLARITY_PAIRS} if adding else {n: p for p, n in _POLARITY_PAIRS}
    if not adding:
        table["anymore"] = "now"
    for k, j in enumerate(words):
        t = toks[j]
        new = table.get(t.text.lower())
        if j <= at or new is None:
            continue
        if t.text.lower() in ("some", "any") and t.tag != "DT":
            continue  # "some of them" is fine either way; only the determiner follows the polarity
        if t.text.lower() in ("too", "either") and (k != len(words) - 1 and toks[j + 1].tag not in _PUNCT_TAGS):
            continue  # "too much": a degree, not "also"
        if t.text.lower() in ("too", "either") and len(words) <= 2:
            continue
        ed.set(j, _match_case(t.text, new))
    return ed.text()


def negate(toks: Sequence[Tok], rng: random.Random | None = None) -> tuple[str, str] | None:
    """The text of ``toks`` with its polarity flipped and what was done ("+don't", "-not", ...), or None.

    The first negation that follows a verb is removed (do-support undone: "doesn't like" -> "likes",
    "didn't go" -> "went"); without one, a negation is added at the first finite verb of one sentence
    (chosen by ``rng``; the first one without it): "not" after be, have (auxiliary) and modals ("can"
    becomes "cannot"), "don't/doesn't/didn't" + base form before other verbs, and "n't" in questions
    that start with the auxiliary. Sentences with another negative word (never, nothing, no ...) and
    wh-questions are left alone.

    >>> negate(tagged("Do/VBP/do you/PRP like/VB dogs/NNS/dog ?/."))
    ("Don't you like dogs?", "+n't")
    >>> negate(tagged("I/PRP ca/MD/can n't/RB/not swim/VB ./."))
    ('I can swim.', "-can't")
    >>> negate(tagged("I/PRP never/RB eat/VBP meat/NN ./.")) is None
    True
    """
    sents = _sentences(toks)
    for sent in sents:
        for i in sent:
            if _is_neg(toks[i]) and i - 1 in sent and toks[i - 1].tag.startswith(("VB", "MD")):
                removed = _remove_negation(toks, sent, i)
                return None if removed is None else (_agree_polarity(toks, sent, *removed), removed[1])
    added = [(s, r) for s in sents if (r := _add_negation(toks, s)) is not None]
    options = [(_agree_polarity(toks, s, *r), r[1]) for s, r in added]
    if not options:
        return None
    return rng.choice(options) if rng is not None else options[0]


# -- lexicons -----------------------------------------------------------------------------------------

_POS = {"NN": "n", "NNS": "n", "VB": "v", "VBP": "v", "VBZ": "v", "VBD": "v", "JJ": "a", "RB": "r"}
# frequent words whose replacement rarely keeps the sentence sound (the first WordNet sense of "great" is "large";
# "favorite" gets "unpopular" through "popular")
_STOP_TEXT = (
    "be have do get go make take let say tell thing things lot lots way kind sort bit stuff one ones "
    "well just so very too also really now then there here not never always ever much many more most "
    "even still yet only again back yes yeah okay ok oh please thank thanks time day guess great other same "
    "favorite favourite"
)
_STOP_V1 = frozenset(_STOP_TEXT.split())
_STOP = _STOP_V1 | {
    *[
        "someone",
        "somebody",
        "anyone",
        "anybody",
        "everyone",
        "everybody",
        "something",
        "anything",
        "everything",
        "nothing",
        "nobody",
    ]
}
# words whose chat sense is not WordNet's first one: "That's cool!" -> "That's warm!", "I'm fine" -> "I'm
# unsatisfactory"
_ANTONYM_STOP = frozenset({"cool", "fine", "sick", "bad", "wicked"})
# chat words whose first WordNet sense gives a wrong synonym: kid -> minor, partner -> spouse, state ->
# province, rock (music) -> stone, class (in a game) -> category, plan -> program, beast -> animal
# round 2 (docs/trigger_checks/en_round2.md): children -> minors, animals -> beasts, "out of this world",
# "good luck", "he's family", "single player", a run -> a tally
_SYNONYM_STOP = frozenset(
    [
        *("kid", "partner", "state", "rock", "class", "plan", "beast", "accountant", "tabby"),  # round 1
        *("child", "animal", "world", "luck", "family", "single", "run"),  # round 2
    ]
)


class EnglishLexicon(Protocol):
    """Synonyms and antonyms of a lemma in a part of speech ("n", "v", "a" or "r")."""

    def synonyms(self, word: str, pos: str) -> tuple[str, ...]:
        """Words that can replace ``word`` with the same meaning (best first); () when none."""

    def antonyms(self, word: str, pos: str) -> tuple[str, ...]:
        """Words of the opposite meaning; () when none."""


@dataclass(frozen=True)
class WordListLexicon:
    """A lexicon from word lists, whatever the part of speech (for tests and small domain lexicons).

    >>> lex = WordListLexicon.from_groups([["big", "large"]], [("big", "small")])
    >>> lex.synonyms("big", "a"), lex.antonyms("small", "a")
    (('large',), ('big',))
    """

    synonym_table: dict[str, tuple[str, ...]]
    antonym_table: dict[str, tuple[str, ...]]

    @classmethod
    def from_groups(
        cls, synonym_groups: Iterable[Sequence[str]], antonym_pairs: Iterable[tuple[str, str]]
    ) -> WordListLexicon:
        syn: dict[str, dict[str, None]] = {}
        for group in synonym_groups:
            for w in group:
                syn.setdefault(w.lower(), {}).update({o.lower(): None for o in group if o.lower() != w.lower()})
        ant: dict[str, dict[str, None]] = {}
        for a, b in antonym_pairs:
            ant.setdefault(a.lower(), {})[b.lower()] = None
            ant.setdefault(b.lower(), {})[a.lower()] = None
        return cls({w: tuple(o) for w, o in syn.items() if o}, {w: tuple(o) for w, o in ant.items()})

    def synonyms(self, word: str, pos: str) -> tuple[str, ...]:
        return self.synonym_table.get(word.lower(), ())

    def antonyms(self, word: str, pos: str) -> tuple[str, ...]:
        return self.antonym_table.get(word.lower(), ())


_LEXNAMES_TEXT = (
    "adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact noun.attribute noun.body "
    "noun.cognition noun.communication noun.event noun.feeling noun.food noun.group noun.location "
    "noun.motive noun.object noun.person noun.phenomenon noun.plant noun.possession noun.process "
    "noun.quantity noun.relation noun.shape noun.state noun.substance noun.time verb.body verb.change "
    "verb.cognition verb.communication verb.competition verb.consumption verb.contact verb.creation "
    "verb.emotion verb.motion verb.perception verb.possession verb.social verb.stative verb.weather "
    "adj.ppl"
)
_LEXNAMES = _LEXNAMES_TEXT.split()
_WN_FILES = ("index.sense", "data.noun", "index.noun", "data.verb", "data.adj", "data.adv")


def _nltk() -> Any:
    try:
        import nltk
    except ImportError:
        raise MissingDependencyError(
            "nltk",
            "wordnet",
            "English synonyms and antonyms (WordNet)",
            command=f"{PIP_COMMAND}` and `{APT_COMMAND}",
        ) from None
    return nltk


def wordnet_root(source: str | Path = DEBIAN_WORDNET, cache: str | Path | None = None) -> Path:
    """An ``nltk_data`` folder whose ``corpora/wordnet`` holds a copy of the WordNet dict files of
    ``source`` and the ``lexnames`` file Debian does not ship (built once in the dialcheck cache; NLTK
    reads neither files outside its data path nor symlinks that leave it)."""
    src = Path(source)
    missing = [f for f in _WN_FILES if not (src / f).is_file()]
    if missing:
        raise MissingDependencyError(
            "WordNet 3.0 data",
            purpose=f"English synonyms and antonyms ({src / missing[0]} is missing)",
            command=APT_COMMAND,
        )
    if cache is None:
        from ..backbones import cache_dir

        cache = cache_dir()
    root = Path(cache) / "nltk_data"
    target = root / "corpora" / "wordnet"
    # the files' sizes and times too: a copy of damaged files stayed in use after they were reinstalled
    stamp = f"{src.resolve()}\n" + "".join(
        f"{f} {(src / f).stat().st_size} {(src / f).stat().st_mtime_ns}\n" for f in _WN_FILES
    )
    done = target / ".dialcheck-source"
    if done.is_file() and done.read_text(encoding="utf-8") == stamp:
        return root
    tmp = target.with_name(f"wordnet.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for f in src.iterdir():
        if f.is_file():
            shutil.copyfile(f, tmp / f.name)
    if not (tmp / "lexnames").exists():
        pos_num = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}
        lines = (f"{i:02d}\t{n}\t{pos_num[n.split('.')[0]]}\n" for i, n in enumerate(_LEXNAMES))
        (tmp / "lexnames").write_text("".join(lines), encoding="utf-8")
    (tmp / done.name).write_text(stamp, encoding="utf-8")
    shutil.rmtree(target, ignore_errors=True)
    try:
        tmp.rename(target)
    except OSError:  # another process got there first
        shutil.rmtree(tmp, ignore_errors=True)
    log.info("WordNet files of %s copied to %s", src, target)
    return root


_CHECK_WORDS = (("dog", "n"), ("run", "v"), ("happy", "a"), ("quickly", "r"))


def _check_wordnet(reader: Any, src: Path) -> None:
    """Refuse WordNet files that do not give the first sense, with its tagged count, of a common word of each part
    of speech: a truncated ``data.noun`` or an empty ``index.sense`` was an AttributeError traceback at the first
    word looked up, or synonyms and antonyms silently never found."""
    from ..errors import InputError

    def sense_count(word: str, pos: str) -> int:
        import warnings

        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "No WordNet synset found for pos=n at offset=..."
                senses = reader.synsets(word, pos)
                return senses[0].lemmas()[0].count() if senses and senses[0] is not None else 0
        except Exception:
            return 0

    bad = [w for w, pos in _CHECK_WORDS if sense_count(w, pos) <= 0]
    if bad:
        raise InputError(
            f"the WordNet files look damaged: no tagged first sense of {', '.join(repr(w) for w in bad)}; reinstall "
            f"them (`{APT_COMMAND} --reinstall`) or pass --wordnet-dir",
            str(src),
        )


class WordNetLexicon:
    """Synonyms and antonyms from WordNet 3.0 through NLTK.

    Synonyms are the other lemmas of the word's most frequent sense that occur at least ``min_count``
    times in the sense-tagged corpus and whose own most frequent sense it is too ("job" -> "occupation",
    not "business" or "line"; "firm" not -> "house"), without proper names, digits, abbreviations
    ("year" not -> "yr") or forms that hold the word ("green" not -> "light-green"), and by default
    for nouns and adjectives only (``synonym_pos``): verb and adverb synonyms rarely fit the sentence
    ("like" -> "wish", "always" -> "ever"). Antonyms are the direct antonyms of the word in its first
    ``antonym_senses`` senses, and for adjectives of its first sense those of the cluster head ("huge"
    -> "large" -> "small"), again ``min_count`` times or more (so not "type" -> "antitype").
    """

    def __init__(
        self, reader: Any, min_count: int = 2, antonym_senses: int = 2, synonym_pos: Sequence[str] = ("n", "a")
    ) -> None:
        self.wn = reader
        self.min_count = min_count
        self.antonym_senses = antonym_senses
        self.synonym_pos = tuple(synonym_pos)
        self._cache: dict[tuple[str, str, str], tuple[str, ...]] = {}

    @classmethod
    def load(cls, source: str | Path | None = None, cache: str | Path | None = None, **kwargs: Any) -> WordNetLexicon:
        """WordNet from the Debian files in ``source`` (default ``/usr/share/wordnet``), copied once into
        the dialcheck cache. Without ``source`` and without the Debian files, a WordNet already in the
        NLTK data path is used; nothing is ever downloaded."""
        nltk = _nltk()
        src = Path(source) if source is not None else DEBIAN_WORDNET
        if source is None and not (src / "index.sense").is_file():
            try:
                from nltk.corpus import wordnet

                wordnet.ensure_loaded()
                return cls(wordnet, **kwargs)
            except LookupError:
                pass  # the error below names the Debian packages
        root = wordnet_root(src, cache)
        if str(root) not in nltk.data.path:
            nltk.data.path.insert(0, str(root))
        import warnings

        from nltk.corpus.reader.wordnet import WordNetCorpusReader

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "multilingual functions are not available"
            reader = WordNetCorpusReader(str(root / "corpora" / "wordnet"), None)
        _check_wordnet(reader, src)
        return cls(reader, **kwargs)

    @staticmethod
    def _ok(name: str, word: str) -> bool:
        if name == word or not re.fullmatch(r"[a-z][a-z_'-]*", name):
            return False
        return not _v2() or (len(name) >= 3 and bool(re.search(r"[aeiouy]", name)))  # not "year" -> "yr"

    def synonyms(self, word: str, pos: str) -> tuple[str, ...]:
        key = (f"s{_RULES.get()}", word.lower(), pos)
        if key not in self._cache:
            w = word.lower()
            synsets = self.wn.synsets(w, pos) if pos in self.synonym_pos else []
            out: dict[str, None] = {}
            if synsets and any(lem.name().lower() == w for lem in synsets[0].lemmas()):
                for lem in synsets[0].lemmas():
                    name = lem.name().lower()
                    if _v2() and (name in w or w in name):
                        continue  # "figure" -> "fig", "green" -> "light-green": a short form or a kind of it
                    if self._ok(lem.name(), w) and lem.count() >= self.min_count:
                        own = self.wn.synsets(lem.name(), pos)
                        if own and own[0] == synsets[0]:  # the synonym's own first sense is this one too
                            out[lem.name().replace("_", " ")] = None
            self._cache[key] = tuple(out)
        return self._cache[key]

    def antonyms(self, word: str, pos: str) -> tuple[str, ...]:
        key = (f"a{_RULES.get()}", word.lower(), pos)
        if key not in self._cache:
            w = word.lower()
            synsets = self.wn.synsets(w, pos)
            out: dict[str, None] = {}
            for s in synsets[: self.antonym_senses]:
                for lem in s.lemmas():
                    if lem.name().lower() == w:
                        ants = [a for a in lem.antonyms() if self._ok(a.name(), w) and a.count() >= self.min_count]
                        out.update({a.name().replace("_", " "): None for a in ants})
            if not out and pos == "a" and synsets and synsets[0].pos() == "s":
                for head in synsets[0].similar_tos()[:1]:
                    for lem in head.lemmas():
                        ants = [a for a in lem.antonyms() if self._ok(a.name(), w) and a.count() >= self.min_count]
                        out.update({a.name().replace("_", " "): None for a in ants})
            self._cache[key] = tuple(out)
        return self._cache[key]


# -- word replacement ---------------------------------------------------------------------------------


def _inflect(word: str, tag: str) -> str:
    if tag == "NNS":
        return plural(word)
    if tag == "VBZ":
        return third_person(word)
    if tag == "VBD":
        return past_tense(word)
    return word


def _stop(kind: str) -> frozenset[str]:
    """The words never replaced by a ``kind`` ("synonym" or "antonym") under the current rules."""
    if not _v2():
        return _STOP_V1
    return _STOP | (_ANTONYM_STOP if kind == "antonym" else _SYNONYM_STOP)


def _candidates(
    toks: Sequence[Tok], lookup: Callable[[str, str], tuple[str, ...]], stop: frozenset[str] | None = None
) -> list[tuple[int, list[str]]]:
    v2 = _v2()
    if stop is None:
        stop = _STOP if v2 else _STOP_V1
    out = []
    for i, t in enumerate(toks):
        pos = _POS.get(t.tag)
        lemma = t.lemma.lower()
        if pos is None or lemma in stop or not t.text.isalpha() or len(t.text) < 3 or t.ent in ("PERSON", "GPE"):
            continue
        if v2 and t.tag == "JJ" and t.dep == "ROOT":
            continue  # "Really, cool.", "Great!": a verbless reaction, not a claim
        capital = t.text[:1].isupper() and i > 0 and toks[i - 1].sent == t.sent
        if v2 and capital and toks[i - 1].tag not in _PUNCT_TAGS:
            continue  # a capital inside a sentence: a title or a name ("the Johnny Cash cover of Hurt")
        if t.tag in ("VBZ", "VBD", "NNS") and _inflect(lemma, t.tag) != t.text.lower():
            continue  # a form the rules do not make (e.g. "children"): the replacement could not match it
        nxt = toks[i + 1] if i + 1 < len(toks) else None
        if t.dep in ("intj", "compound") or (t.tag.startswith("NN") and nxt is not None and nxt.tag.startswith("NN")):
            continue  # "Cool, ...", "role playing", "video games": not a word on its own
        prev = toks[i - 1] if i > 0 else None
        if (
            t.tag == "JJ"
            and prev is not None
            and prev.tag in ("DT", "PRP$")
            and not (nxt and nxt.tag[:2] in ("NN", "JJ"))
        ):
            continue  # "my favorite.": an adjective used as a noun
        if t.tag.startswith("VB") and nxt is not None and nxt.tag == "TO":
            continue  # "like to play" -> "dislike to play": the new verb may not take "to"
        if t.tag.startswith("VB") and any(u.head == i and u.dep == "ccomp" for u in toks):
            continue  # "I hope you ..." -> "I despair you ...": nor a clause
        if t.tag.startswith("NN") and lemma.endswith("ing"):
            continue  # "for a living", "fishing": verbal nouns
        quantity = nxt is None or not nxt.tag.startswith("NN") or nxt.lemma in ("bit", "while", "lot")
        if lemma in ("little", "few") and i > 0 and toks[i - 1].text.lower() == "a" and quantity:
            continue  # "a little bit", "a few": quantities, not sizes
        alts = [a for a in lookup(lemma, pos) if a != lemma]
        if alts:
            out.append((i, alts))
    return out


def _replace(toks: Sequence[Tok], picks: Sequence[tuple[int, str]]) -> str:
    ed = _Edit(toks)
    for i, new in picks:
        word = _match_case(toks[i].text, _inflect(new, toks[i].tag))
        ed.set(i, word)
        art = i - 1
        if art >= 0 and toks[art].text.lower() in ("a", "an") and toks[art].ws:
            ed.set(art, _match_case(toks[art].text, "an" if word[:1].lower() in _VOWELS else "a"))
    return ed.text()


def _toks(text: str, parser: Parser | None) -> Sequence[Tok]:
    return parser(text) if parser is not None else parse(text)


def perturb_en(
    inp: TriggerInput, rng: random.Random, lexicon: EnglishLexicon, kind: str, parser: Parser | None = None
) -> Trigger | None:
    """u2 is u1 with one content word (noun, verb, adjective, adverb; not a name) replaced by a
    ``synonym`` or an ``antonym`` from ``lexicon``; None when no word has one."""
    lookup = {"synonym": lexicon.synonyms, "antonym": lexicon.antonyms}[kind]
    toks = _toks(inp.u1, parser)
    cands = _candidates(toks, lookup, _stop(kind))
    if not cands:
        return None
    i, alts = rng.choice(cands)
    new = rng.choice(alts)
    u2 = _replace(toks, [(i, new)])
    if u2 == inp.u1.strip():
        return None
    return Trigger(inp.u1, inp.b1, u2, kind, f"{toks[i].text}->{new}", inp.id)


class EnglishSynonymParaphraser:
    """Paraphrase by replacing up to ``max_words`` content words that have synonyms (the English default)."""

    name = "synonym"

    def __init__(self, lexicon: EnglishLexicon, max_words: int = 2, parser: Parser | None = None) -> None:
        self.lexicon = lexicon
        self.max_words = max_words
        self.parser = parser

    def paraphrase(self, text: str, rng: random.Random) -> str | None:
        toks = _toks(text, self.parser)
        cands = _candidates(toks, self.lexicon.synonyms, _stop("synonym"))
        if not cands:
            return None
        picked = rng.sample(cands, min(self.max_words, len(cands)))
        return _replace(toks, [(i, rng.choice(alts)) for i, alts in sorted(picked)])


def edits_a_question(a: str, b: str) -> bool:
    """Is the first place where ``a`` and ``b`` differ inside a question of ``a``? A negated question
    contradicts nothing ("Did you go?" / "Didn't you go?"), so polarity flips there are skipped.

    >>> edits_a_question("Did you go? I did.", "Didn't you go? I did.")
    True
    >>> edits_a_question("I went. Did you?", "I didn't go. Did you?")
    False
    """
    k = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    for m in SENTENCE_END.finditer(a + " "):
        if m.start() >= k:
            return a[: m.start()].rstrip().endswith("?")
    return a.rstrip().endswith("?")


def negation_en(inp: TriggerInput, rng: random.Random, parser: Parser | None = None) -> Trigger | None:
    """u2 is u1 with its polarity flipped by :func:`negate`; None when no rule applies."""
    r = negate(_toks(inp.u1, parser), rng)
    if r is None or r[0] == inp.u1.strip():
        return None
    return Trigger(inp.u1, inp.b1, r[0], "negation", r[1], inp.id)


# -- questions ----------------------------------------------------------------------------------------

_EXPAND = {"'m": "am", "'re": "are", "'ve": "have", "'ll": "will"}
_PLACE_PREPS = frozenset({"in", "at", "from", "near"})
_PERSON_PRONOUNS = frozenset({"him", "her", "them", "you", "me", "us"})
_CHAIN_DEPS = frozenset({"aux", "auxpass", "neg", "advmod"})
_SIMPLE_NP = frozenset({"det", "amod", "compound", "poss", "nummod", "case"})
_VAGUE_VERBS = frozenset(["mean", "think", "know", "guess", "believe", "hope", "wish", "suppose", "feel", "admire"])


def _subtree(toks: Sequence[Tok], k: int, sent: Sequence[int]) -> list[int]:
    out = []
    for j in sent:
        h, seen = j, 0
        while h != k and toks[h].head not in (-1, h) and seen < 50:
            h, seen = toks[h].head, seen + 1
        if h == k:
            out.append(j)
    return out


def _word(t: Tok) -> str:
    low = t.text.lower()
    if low == "'s":
        return "is" if t.lemma == "be" else "has"
    if low == "'d":
        return "would" if t.lemma == "would" else "had"
    return _EXPAND.get(low, t.text)


def _join(words: Sequence[str]) -> str:
    out = ""
    for w in words:
        out += w if (w.lower() == "n't" or not out) else " " + w
    return out


def _question_parts(toks: Sequence[Tok], sent: Sequence[int]) -> dict[str, Any] | None:
    """The pieces of a question about the object or place of a sentence whose subject is "I" or
    "my ...": wh-word, subject, auxiliaries, verb and tail; None when the sentence has another shape."""
    if toks[sent[-1]].text == "?":
        return None
    root = next((j for j in sent if toks[j].dep == "ROOT"), None)
    if root is None or not toks[root].tag.startswith("VB"):
        return None
    kids = [j for j in sent if toks[j].head == root and j != root]
    subj = next((j for j in kids if toks[j].dep == "nsubj"), None)
    if subj is None or subj > root:
        return None
    subj_span = _subtree(toks, subj, sent)
    subj_words = [toks[j].text for j in subj_span]
    if subj_words[0] == "My":
        subj_words[0] = "my"
    if [w.lower() for w in subj_words] == ["i"]:
        first_person = True
    elif subj_words and subj_words[0].lower() == "my" and len(subj_words) <= 4 and all(w.isalpha() for w in subj_words):
        first_person = False
    else:
        return None
    if subj_span != list(range(subj_span[0], subj_span[-1] + 1)):
        return None
    before = [j for j in sent if j < subj_span[0]]
    if any(toks[j].dep not in ("intj", "cc", "punct", "advmod", "discourse") for j in before):
        return None
    chain = [j for j in sent if subj_span[-1] < j < root]
    if any(toks[j].dep not in _CHAIN_DEPS or toks[j].head != root for j in chain):
        return None
    end = max(j for j in sent if toks[j].tag not in _PUNCT_TAGS)
    targets = [j for j in kids if j > root and toks[j].dep in ("dobj", "attr", "acomp", "prep")]
    if not targets:
        return None
    target = targets[-1]
    span = _subtree(toks, target, sent)
    if max(span) != end or any(toks[j].dep not in ("prt", "neg") for j in sent if root < j < span[0]):
        return None
    tail = [toks[j].text for j in sent if root < j < span[0]]  # up (gave up), not (am not)
    t = toks[target]
    if t.tag in ("PRP", "DT", "WDT", "EX"):
        return None  # "I love that", "I've never tried those", "them all": the answer is not in the sentence
    if t.lemma.lower() in ("anything", "nothing", "something", "everything") or any(
        toks[j].text.lower() in ("no", "same") and toks[j].head == target for j in span
    ):
        return None  # "I have no children" -> "what I have" asks the opposite; "the same interest": nothing
    if toks[root].lemma.lower() in _VAGUE_VERBS:
        return None  # "What do you mean?", "What don't you know?": no fact to ask about
    if first_person and toks[root].lemma == "be" and t.dep == "attr" and t.tag.startswith("NN"):
        return None  # "I'm a nurse" -> "What are you?": not how a person asks for a job
    wh = "what"
    if t.dep == "prep":
        pobj = next((j for j in span if toks[j].dep == "pobj" and toks[j].head == target), None)
        if t.text.lower() not in _PLACE_PREPS or pobj is None or toks[pobj].ent not in ("GPE", "LOC", "FAC"):
            return None
        wh = "where"
        if t.text.lower() == "from":
            tail.append("from")
    else:
        nums = [j for j in span if toks[j].dep == "nummod" and toks[j].tag == "CD"]
        age = toks[root].lemma == "be" and first_person
        if age and (
            (t.tag == "CD" and t.text.isdigit() and 0 < int(t.text) < 120) or (t.text.lower() == "old" and nums)
        ):
            wh = "how old"
        elif t.dep == "acomp" or (t.tag == "CD"):
            if first_person or t.dep != "acomp" or not ({"favorite", "favourite"} & {w.lower() for w in subj_words}):
                return None  # "I am happy", "My family is musical": nothing to ask "what" for
        elif t.dep == "attr" and not all(toks[j].dep in _SIMPLE_NP for j in span if j != target):
            return None  # "I am more of a skateboarder": no simple noun phrase to ask for
        elif (t.ent == "PERSON" or t.text.lower() in _PERSON_PRONOUNS) and (first_person or t.dep == "dobj"):
            wh = "who"
        elif nums and toks[nums[0]].head == target and not any(toks[j].dep in ("conj", "det") for j in span):
            keep = [j for j in span if (j not in nums and toks[j].dep in ("amod", "compound")) or j == target]
            wh = "how many " + " ".join(toks[j].text for j in keep)
    return {
        "wh": wh,
        "subject": subj_words,
        "first_person": first_person,
        "chain": [toks[j] for j in chain],
        "verb": toks[root],
        "tail": tail,
        "target": _render([(toks[j].text, toks[j].ws) for j in span]),
    }


def _swap(words: Sequence[str]) -> list[str]:
    table = {"i": "you", "my": "your", "me": "you", "mine": "yours", "myself": "yourself"}
    return ["you" if w == "I" else _match_case(w, table[w.lower()]) if w.lower() in table else w for w in words]


def _direct(q: dict[str, Any], swap: bool) -> str:
    """A direct question: wh + auxiliary + subject + verb ("What do you like?")."""
    subject = _swap(q["subject"]) if swap else list(q["subject"])
    you = swap and q["first_person"]
    chain: list[Tok] = q["chain"]
    verb: Tok = q["verb"]

    def agree(t: Tok) -> str:
        w = _word(t)
        if you and w.lower() in ("am", "was"):
            return {"am": "are", "was": "were"}[w.lower()]
        return w

    aux = [t for t in chain if t.dep in ("aux", "auxpass")]
    if aux:
        first = chain.index(aux[0])
        head = [agree(aux[0])]
        if first + 1 < len(chain) and chain[first + 1].text.lower() == "n't":
            head.append("n't")
        rest = [_word(t) for k, t in enumerate(chain) if k != first and not (k == first + 1 and head[-1] == "n't")]
        words = [*head, *subject, *rest, _word(verb)]
    elif verb.lemma == "be":
        neg = [_word(t) for t in chain if t.dep == "neg"]
        words = [agree(verb), *neg, *subject, *[_word(t) for t in chain if t.dep != "neg"]]
    else:
        do = {"VBP": "do", "VBZ": "does", "VBD": "did"}.get(verb.tag)
        if do is None:
            return ""
        words = [do, *subject, *[_word(t) for t in chain], verb.lemma]
    out = _join([q["wh"], *words, *q["tail"]]) + "?"
    return out[:1].upper() + out[1:]


def _embedded(q: dict[str, Any]) -> str:
    """An embedded question in the "Do you know ...?" form ("Do you know what I like?")."""
    words = [*q["subject"], *[_word(t) for t in q["chain"]], _word(q["verb"]), *q["tail"]]
    return "Do you know " + _join([q["wh"], *words]) + "?"


def _question(text: str, rng: random.Random, parser: Parser | None, make: Callable[[dict[str, Any]], str]) -> Any:
    toks = _toks(text, parser)
    options = []
    for sent in _sentences(toks):
        q = _question_parts(toks, sent)
        if q is not None:
            out = make(q)
            if out:
                options.append((out, q["target"]))
    return rng.choice(options) if options else None


def inquire_user_en(
    inp: TriggerInput, rng: random.Random, know: bool = True, parser: Parser | None = None
) -> Trigger | None:
    """u2 asks the bot about what the user said of themself in u1 ("I like dogs." -> "Do you know what I
    like?", or "What do I like?" with ``know=False``); None without such a sentence."""
    q = _question(inp.u1, rng, parser, _embedded if know else lambda q: _direct(q, swap=False))
    if q is None:
        return None
    return Trigger(inp.u1, inp.b1, q[0], "inquire_user", q[1], inp.id)


def inquire_bot_en(inp: TriggerInput, rng: random.Random, parser: Parser | None = None) -> Trigger | None:
    """u2 asks the bot about what it said of itself in b1 ("I have two cats." -> "How many cats do you
    have?"); None without b1 or such a sentence."""
    if not inp.b1.strip():
        return None
    q = _question(inp.b1, rng, parser, lambda q: _direct(q, swap=True))
    if q is None:
        return None
    return Trigger(inp.u1, inp.b1, q[0], "inquire_bot", q[1], inp.id)


# -- all methods --------------------------------------------------------------------------------------


def build_english_triggers(
    inputs: Sequence[TriggerInput],
    methods: Sequence[str] = METHODS,
    seed: int = 0,
    lexicon: EnglishLexicon | None = None,
    paraphraser: Paraphraser | None = None,
    know: bool = True,
    short_pool: Sequence[str] = EN_SHORT_UTTERANCES,
    parser: Parser | None = None,
) -> TriggerSet:
    """Every method on every input, seeded per (input, method) as :func:`~dialcheck.probes.triggers.
    build_triggers`. Without ``lexicon``, WordNet is loaded when synonym, antonym or the default
    paraphrase is asked for. Without ``parser``, the sentences are parsed by spaCy a batch at a time
    (:func:`english_trigger_batches`)."""
    out = TriggerSet()
    for ts in english_trigger_batches(inputs, methods, seed, lexicon, paraphraser, know, short_pool, parser):
        out.add(ts)
    return out


_READS_U1 = frozenset({"inquire_user", "synonym", "antonym", "negation"})


def _batch_texts(batch: Sequence[TriggerInput], methods: Sequence[str], own_paraphraser: bool) -> list[str]:
    """The sentences the ``methods`` parse for ``batch``: u1 (b1 for inquire_bot only; paraphrase parses u1 when
    it is the default synonym paraphraser)."""
    texts = []
    if _READS_U1 & set(methods) or ("paraphrase" in methods and own_paraphraser):
        texts += [inp.u1 for inp in batch if inp.u1.strip()]
    if "inquire_bot" in methods:
        texts += [inp.b1 for inp in batch if inp.b1.strip()]
    return texts


def english_trigger_batches(
    inputs: Sequence[TriggerInput],
    methods: Sequence[str] = METHODS,
    seed: int = 0,
    lexicon: EnglishLexicon | None = None,
    paraphraser: Paraphraser | None = None,
    know: bool = True,
    short_pool: Sequence[str] = EN_SHORT_UTTERANCES,
    parser: Parser | None = None,
    batch_size: int = BATCH_SIZE,
    start: int = 0,
) -> Iterator[TriggerSet]:
    """:func:`build_english_triggers` one batch of ``batch_size`` inputs at a time, from ``inputs[start]`` on
    (see :func:`~dialcheck.probes.triggers.trigger_batches`). Without ``parser``, the sentences of each batch
    are parsed together in one ``nlp.pipe`` call (:func:`parse_all`; the same tags as one by one, about three
    times faster); spaCy is not loaded when no method parses anything (short_utterance alone)."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    needs_lexicon = {"synonym", "antonym"} & set(methods) or ("paraphrase" in methods and paraphraser is None)
    if needs_lexicon and lexicon is None:
        lexicon = WordNetLexicon.load()
    own = "paraphrase" in methods and paraphraser is None
    default_paraphraser = EnglishSynonymParaphraser(lexicon, parser=parser) if own else None  # type: ignore[arg-type]
    if default_paraphraser is not None:
        paraphraser = default_paraphraser

    def batches() -> Iterator[TriggerSet]:
        from .triggers import short_utterance

        for lo in range(start, len(inputs), batch_size):
            batch = inputs[lo : lo + batch_size]
            texts = [] if parser is not None else _batch_texts(batch, methods, own)
            p = parse_all(texts) if texts else parser
            if default_paraphraser is not None:
                default_paraphraser.parser = p

            def one(m: str, inp: TriggerInput, rng: random.Random, p: Parser | None = p) -> Trigger | None:
                if m == "short_utterance":
                    return short_utterance(inp, rng, short_pool)
                if m == "inquire_bot":
                    return inquire_bot_en(inp, rng, p)
                if m == "inquire_user":
                    return inquire_user_en(inp, rng, know, p)
                if m == "paraphrase":
                    assert paraphraser is not None
                    return paraphrase(inp, rng, paraphraser)
                if m == "negation":
                    return negation_en(inp, rng, p)
                assert lexicon is not None
                return perturb_en(inp, rng, lexicon, m, p)

            yield run_methods(batch, methods, seed, one, start=lo)

    return batches()
