"""`probe triggers` batch by batch: the English path parses a batch's sentences in one spaCy call, the
batches give what one run gives, and the command shows a progress bar. spaCy is a stand-in (helpers_triggers_en):
these tests need neither spaCy's model nor WordNet."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from dialcheck.cli import main
from dialcheck.probes import triggers_en as en
from dialcheck.probes.triggers import TriggerInput, TriggerSet, build_triggers, trigger_batches
from helpers_triggers_en import TAGS, FakeNLP, fake_spacy


@pytest.fixture
def nlp(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeNLP]:
    yield from fake_spacy(monkeypatch)


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
