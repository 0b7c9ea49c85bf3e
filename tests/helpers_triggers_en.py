"""A stand-in for spaCy's English pipeline in the trigger tests: it tags sentences from hand-tagged specs
(``triggers_en.tagged``) and records its calls, so the tests need neither spaCy's model nor WordNet."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from dialcheck.probes import triggers_en as en

# u1 -> hand tags; any other text is tagged word by word as XX (no rule applies to it)
TAGS = {
    "I like dogs.": "I/PRP like/VBP dogs/NNS/dog ./.",
    "She went home.": "She/PRP went/VBD/go home/RB ./.",
    "I am happy.": "I/PRP am/VBP/be happy/JJ ./.",
    "I don't like cats.": "I/PRP do/VBP/do n't/RB/not like/VB cats/NNS/cat ./.",
    "He is tall.": "He/PRP is/VBZ/be tall/JJ ./.",
}


class FakeDoc(list):
    """A spaCy Doc as ``triggers_en._from_doc`` reads it: its tokens, and ``sents``."""

    sents: list[list[Any]]


class FakeNLP:
    """spaCy's interface as the trigger rules use it (``nlp(text)``, ``nlp.pipe(texts)``), recording its calls."""

    def __init__(self) -> None:
        self.called: list[str] = []
        self.piped: list[list[str]] = []

    def _doc(self, text: str) -> Any:
        spec = TAGS.get(text) or " ".join(f"{w}/XX" for w in text.split())
        toks = [
            SimpleNamespace(text=t.text, tag_=t.tag, lemma_=t.lemma, whitespace_=t.ws, i=i, dep_="", ent_type_="")
            for i, t in enumerate(en.tagged(spec))
        ]
        for t in toks:
            t.head = t
        sents: dict[int, list[Any]] = {}
        for t, tok in zip(toks, en.tagged(spec), strict=True):
            sents.setdefault(tok.sent, []).append(t)
        doc = FakeDoc(toks)
        doc.sents = list(sents.values())
        return doc

    def __call__(self, text: str) -> Any:
        self.called.append(text)
        return self._doc(text)

    def pipe(self, texts: Any, batch_size: int = 256) -> Any:
        texts = list(texts)
        self.piped.append(texts)
        return (self._doc(t) for t in texts)


def fake_spacy(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeNLP]:
    """Install a :class:`FakeNLP` as the trigger rules' spaCy (for a fixture to yield)."""
    fake = FakeNLP()
    monkeypatch.setattr(en, "_spacy", lambda: fake)
    en._parse_default.cache_clear()  # no tags of a real parse (or another test's) are reused
    yield fake
    en._parse_default.cache_clear()
