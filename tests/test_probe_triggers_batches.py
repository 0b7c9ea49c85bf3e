"""`probe triggers` batch by batch: the English path parses a batch's sentences in one spaCy call, the
batches give what one run gives, and the command shows a progress bar. A stand-in for spaCy tags sentences
from hand-tagged specs (`triggers_en.tagged`), so these tests need neither spaCy's model nor WordNet."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from dialcheck.cli import main
from dialcheck.probes import triggers_en as en
from dialcheck.probes.triggers import TriggerInput, TriggerSet, build_triggers, trigger_batches

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


@pytest.fixture
def nlp(monkeypatch: pytest.MonkeyPatch) -> FakeNLP:
    fake = FakeNLP()
    monkeypatch.setattr(en, "_spacy", lambda: fake)
    en._parse_default.cache_clear()  # no tags of a real parse (or another test's) are reused
    yield fake
    en._parse_default.cache_clear()


INPUTS = [TriggerInput(u1, f"b{i}", f"c{i}") for i, u1 in enumerate(TAGS)]


def test_english_batches_parse_together_and_give_what_one_run_gives(nlp):
    methods = ["short_utterance", "negation", "inquire_bot"]
    whole = build_triggers(INPUTS, methods, seed=3, language="en")
    assert [t.u2 for t in whole.items if t.method == "negation"][:2] == ["I don't like dogs.", "She didn't go home."]
    nlp.called.clear()
    nlp.piped.clear()
    parts = list(trigger_batches(INPUTS, methods, seed=3, language="en", batch_size=2))
    # before: every u1 and b1 went through nlp() one by one (45 ms a context with en_core_web_sm)
    assert nlp.called == []
    assert nlp.piped == [
        ["I like dogs.", "She went home.", "b0", "b1"],
        ["I am happy.", "I don't like cats.", "b2", "b3"],
        ["He is tall.", "b4"],
    ]
    merged = TriggerSet()
    for p in parts:
        merged.add(p)
    assert merged.items == whole.items and merged.skipped == whole.skipped
    # from a later context on: the same triggers as the whole run gives those contexts (seeded by position)
    later = [t for p in trigger_batches(INPUTS, methods, seed=3, language="en", batch_size=2, start=2) for t in p.items]
    assert later == [t for t in whole.items if t.id not in ("c0", "c1")]


def test_english_short_utterance_alone_loads_no_spacy(monkeypatch):
    def no_spacy() -> None:
        raise AssertionError("spaCy loaded for short_utterance")

    monkeypatch.setattr(en, "_spacy", no_spacy)
    ts = build_triggers(INPUTS, ["short_utterance"], seed=0, language="en")
    assert len(ts.items) == len(INPUTS)


def test_chinese_batches_give_what_one_run_gives():
    inputs = [TriggerInput(f"我喜欢猫{i}。", "", f"z{i}") for i in range(5)]
    whole = build_triggers(inputs, ["short_utterance"], seed=1)
    parts = [t for p in trigger_batches(inputs, ["short_utterance"], seed=1, batch_size=2) for t in p.items]
    assert parts == whole.items


def _contexts(tmp_path: Path) -> Path:
    src = tmp_path / "ctx.jsonl"
    src.write_text("".join(json.dumps({"u1": u1, "b1": "Fine.", "id": f"c{i}"}) + "\n" for i, u1 in enumerate(TAGS)))
    return src


def test_cli_english_shows_progress_and_batches(nlp, tmp_path, capsys):
    src, out = _contexts(tmp_path), tmp_path / "t.jsonl"
    argv = ["probe", "triggers", "--language", "en", "--input", str(src), "--out", str(out)]
    argv += ["--methods", "short_utterance,negation", "--batch-size", "2"]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "building triggers" in err and "5/5" in err  # the bar (before: none, and no way to tell how far it was)
    assert len(nlp.piped) == 3 and not nlp.called
    rows = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert [r["u2"] for r in rows if r["method"] == "negation"][:2] == ["I don't like dogs.", "She didn't go home."]
    assert main([*argv, "--batch-size", "64", "--out", str(tmp_path / "u.jsonl"), "--no-progress"]) == 0
    assert "building triggers" not in capsys.readouterr().err
    assert (tmp_path / "u.jsonl").read_bytes() == out.read_bytes()  # the batch size changes nothing
    with pytest.raises(SystemExit):  # argparse's usage error
        main([*argv, "--batch-size", "0"])
    assert "--batch-size: must be at least 1" in capsys.readouterr().err
