"""A cascade's second stage re-reads a long pair (read in pieces) on only the first stage's top pairs of pieces."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dialcheck.detectors import CascadeDetector, load_detector
from dialcheck.detectors.cascade import REREAD_PIECES, _Ranking, not_ruled_out
from dialcheck.detectors.utterance import PIECE_PAIRS
from dialcheck.errors import InputError, ModelError
from helpers_calls import record_calls
from test_soup import _variant

# a long earlier reply and a long last reply of one speaker: every pair of the two is read in pieces
WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima")


def _reply(seed: int, sentences: int = 12) -> str:
    rng = np.random.default_rng(seed)
    return " ".join(" ".join(rng.choice(WORDS, 9)).capitalize() + "." for _ in range(sentences))


LONG = ["Can you write it?", _reply(1), "Thanks, and the tests?", _reply(2), "And the docs?", _reply(3)]
SHORT = ["I have a cat.", "Nice.", "I like dogs.", "Cool.", "I have no pets."]


def _cascade(tiny_detector_dir, tmp_path) -> CascadeDetector:
    """Two tiny utterance detectors with different weights; the band [0, 1]: the second re-reads every dialogue."""
    fast = _variant(tiny_detector_dir, tmp_path / "fast", 1)
    slow = _variant(tiny_detector_dir, tmp_path / "slow", 2)
    return CascadeDetector.build(load_detector(fast), load_detector(slow), 0.0, 1.0)


def _recording(monkeypatch, det):
    """The pairs the detector's classifier is asked to score, call by call."""
    return record_calls(monkeypatch, det.classifier, "score", lambda pairs, *a, **k: [tuple(p) for p in pairs])


def test_the_second_stage_reads_only_the_first_stages_top_pairs_of_pieces(monkeypatch, tiny_detector_dir, tmp_path):
    det = _cascade(tiny_detector_dir, tmp_path)
    assert det.reread_pieces == REREAD_PIECES == 4
    first_verdict, first_pieces = det.first.predict_pieces([LONG])
    owners, pairs, _, pieced = det.second._pairs(_as_dialogue(LONG))
    assert all(pieced) and set(owners) == {1, 3}  # both earlier replies are long pairs
    assert min(sum(o == i for o in owners) for i in (1, 3)) > 4 * REREAD_PIECES  # many pairs of pieces each
    calls = _recording(monkeypatch, det.second)
    got = det.predict([LONG])[0]
    read = [p for call in calls for p in call]
    for i in (1, 3):
        own = [p for o, p in zip(owners, pairs, strict=True) if o == i]
        want = sorted(dict.fromkeys(own), key=lambda p: -first_pieces[p])[:REREAD_PIECES]
        assert sorted(p for p in read if p in set(own)) == sorted(want)  # the first's top 4, each scored once
        slow = det.second.classifier.score(want)
        assert got.pair_scores[i] == pytest.approx(float(np.max(slow)), abs=1e-6)  # the turn: their maximum
    assert got.score == pytest.approx(max(got.pair_scores.values()))
    assert got.contradiction == (got.score >= det.tau)
    assert first_verdict[0].pair_scores.keys() == got.pair_scores.keys()

    det.reread_pieces = 0  # every pair of pieces: the second stage's own verdict, as before
    calls.clear()
    full = det.predict([LONG])[0]
    assert len({p for call in calls for p in call}) == len(set(pairs))
    alone = det.second.predict([LONG])[0]
    assert full.pair_scores == pytest.approx(alone.pair_scores, abs=1e-6) and full.score >= got.score - 1e-6


def _as_dialogue(turns):
    from dialcheck.io import as_dialogues

    return as_dialogues([turns])[0]


def test_short_pairs_are_read_whole_and_score_as_before(monkeypatch, tiny_detector_dir, tmp_path):
    det = _cascade(tiny_detector_dir, tmp_path)
    calls = _recording(monkeypatch, det.second)
    bounded = det.predict([SHORT])[0]
    bounded_read = calls[:]
    det.reread_pieces = 0
    calls.clear()
    every = det.predict([SHORT])[0]
    assert bounded_read == calls and bounded == every


def test_predict_turns_keeps_the_k_distinct_pairs_of_pieces_ranked_highest(monkeypatch, tiny_detector_dir):
    det = load_detector(tiny_detector_dir)
    owners, pairs, _, _ = det._pairs(_as_dialogue(LONG))
    rank_calls = []

    def rank(ps):  # a ranking of its own: the longest pairs first
        rank_calls.append(list(ps))
        return [len(a) + len(b) for a, b in ps]

    calls = _recording(monkeypatch, det)
    got = det.predict_turns([LONG], [[3]], top_pieces=2, rank=rank)[0]
    assert len(rank_calls) == 1 and set(rank_calls[0]) == {p for o, p in zip(owners, pairs, strict=True) if o == 3}
    want = sorted(set(rank_calls[0]), key=lambda p: -(len(p[0]) + len(p[1])))[:2]
    assert sorted(p for call in calls for p in call) == sorted(want)
    assert list(got.pair_scores) == [3]
    assert got.pair_scores[3] == pytest.approx(float(np.max(det.classifier.score(want))), abs=1e-6)
    # without a ranking, or with K 0, every pair of pieces is read
    calls.clear()
    assert det.predict_turns([LONG], None, top_pieces=2)[0] == det.predict([LONG])[0]
    assert det.score_turns([LONG], [[3]], top_pieces=0, rank=rank)[0] == det.predict_turns([LONG], [[3]])[0].pair_scores


def test_pieces_the_first_stage_did_not_read_are_ranked_by_it_then(monkeypatch, tiny_detector_dir):
    first = load_detector(tiny_detector_dir)
    ranking = _Ranking(first, {("a", "b"): 0.5}, batch_size=8)
    calls = _recording(monkeypatch, first)
    got = ranking([("a", "b"), ("c", "d"), ("c", "d")])
    assert calls == [[("c", "d")]]  # the known pair is not scored again, the new one once
    assert got[0] == 0.5 and got[1] == got[2] == pytest.approx(float(first.classifier.score([("c", "d")])[0]))


def test_reread_pieces_is_saved_and_checked(tiny_detector_dir, tmp_path):
    det = _cascade(tiny_detector_dir, tmp_path)
    out = det.save(tmp_path / "default")
    assert "reread_pieces" not in json.loads((out / "dialcheck.json").read_text())["options"]
    assert load_detector(out).reread_pieces == REREAD_PIECES
    det.reread_pieces = 0
    out = det.save(tmp_path / "every")
    assert load_detector(out).reread_pieces == 0
    for bad in (-1, 2.5, True, "4"):
        with pytest.raises(InputError, match=r"^reread_pieces: expected a whole number >= 0"):
            det.reread_pieces = bad
    cfg = json.loads((out / "dialcheck.json").read_text())
    cfg["options"]["reread_pieces"] = "many"
    (out / "dialcheck.json").write_text(json.dumps(cfg))
    with pytest.raises(ModelError, match=r"dialcheck\.json: options\.reread_pieces: expected a whole number"):
        load_detector(out)


def test_the_long_code_replies_benchmark_builds_seeded_chats_of_long_code_replies(load_benchmark, tiny_detector_dir):
    bench = load_benchmark("long_code_replies")
    chat = bench.coding_chat(1, 3)
    assert chat == bench.coding_chat(1, 3) and chat != bench.coding_chat(2, 3)
    assert [m["role"] for m in chat] == ["user", "assistant"] * 3
    replies = [m["content"] for m in chat if m["role"] == "assistant"]
    assert all("```python\n" in r and "\ndef " in r for r in replies)
    clf = load_detector(tiny_detector_dir).classifier  # the MiniLM tokenizer
    assert all(250 <= clf._token_len(r) <= 750 for r in replies)
    assert "Python 3.11" in replies[0] and "Python 3.6" in replies[-1]  # an odd seed: the last reply contradicts
    assert "Python 3.6" not in bench.coding_chat(2, 3)[-1]["content"]


def _bench_on_saved(load_benchmark, tiny_detector_dir, tmp_path, **options):
    """``long_code_replies`` and its argv (one chat of two replies) on a tiny cascade saved with ``options`` set."""
    bench = load_benchmark("long_code_replies")
    det = _cascade(tiny_detector_dir, tmp_path)
    for name, value in options.items():
        setattr(det, name, value)
    det.save(tmp_path / "saved")
    return bench, ["--model", str(tmp_path / "saved"), "--chats", "1", "--replies", "2", "--threads", "1"]


def test_the_long_code_replies_benchmark_on_a_cascade_saved_with_reread_pieces_0(
    load_benchmark, tiny_detector_dir, tmp_path, capsys
):
    bench, argv = _bench_on_saved(load_benchmark, tiny_detector_dir, tmp_path, reread_pieces=0)
    out = tmp_path / "runs" / "s89" / "x.json"  # a folder not made yet: was an error only after the whole run
    assert bench.main([*argv, "--json", str(out)]) == 0
    results = json.loads(out.read_text())
    assert results["top"] == REREAD_PIECES  # was 0: the full re-read timed against itself as "top 0"
    chat = results["chats"][0]
    assert chat["pairs_on"] < chat["pairs_off"]
    assert f"top {REREAD_PIECES} vs every pair" in capsys.readouterr().out
    with pytest.raises(SystemExit) as e:  # refused before the model loads
        bench.main([*argv, "--json", str(tmp_path)])
    assert e.value.code == 2 and "is a directory" in capsys.readouterr().err


def test_the_long_code_replies_benchmark_compares_the_bound_on_a_cascade_saved_with_piece_pairs_0(
    load_benchmark, tiny_detector_dir, tmp_path, capsys
):
    bench, argv = _bench_on_saved(load_benchmark, tiny_detector_dir, tmp_path, piece_pairs=0)
    out = tmp_path / "x.json"
    assert bench.main([*argv, "--compare", "bound", "--json", str(out)]) == 0
    results = json.loads(out.read_text())
    assert results["bound"] == PIECE_PAIRS  # was 0: every pair of pieces timed against itself
    chat = results["chats"][0]
    assert chat["first_pairs_on"] < chat["first_pairs_off"]
    captured = capsys.readouterr()
    assert f"piece_pairs {PIECE_PAIRS} vs every pair of pieces" in captured.out
    assert f"scores every pair of pieces (piece_pairs 0): comparing piece_pairs {PIECE_PAIRS}" in captured.err


def test_the_long_code_replies_benchmarks_re_read_comparison_keeps_each_stages_piece_pairs(
    load_benchmark, tiny_detector_dir, tmp_path
):
    import dialcheck

    bench = load_benchmark("long_code_replies")
    fast = _variant(tiny_detector_dir, tmp_path / "fast", 1)
    slow = _variant(tiny_detector_dir, tmp_path / "slow", 2)
    cfg = json.loads((slow / "dialcheck.json").read_text())
    cfg["options"]["piece_pairs"] = 6  # the stages' own bounds differ (a stage's folder is saved as it is)
    (slow / "dialcheck.json").write_text(json.dumps(cfg))
    CascadeDetector.build(load_detector(fast), load_detector(slow), 0.0, 1.0).save(tmp_path / "own")
    assert load_detector(tmp_path / "own").second.piece_pairs == 6
    argv = ["--model", str(tmp_path / "own"), "--chats", "1", "--replies", "2", "--threads", "1"]
    assert bench.main([*argv, "--json", str(tmp_path / "x.json")]) == 0
    used = dialcheck.load(str(tmp_path / "own"))  # the detector the script timed, as it left it
    assert (used.first.piece_pairs, used.second.piece_pairs) == (PIECE_PAIRS, 6)  # the second's was set to 64


def test_confirming_the_evidence_of_a_long_chat_reads_the_top_pairs_of_pieces_too(
    monkeypatch, tiny_detector_dir, tmp_path
):
    fast = _variant(tiny_detector_dir, tmp_path / "fast", 1)
    cfg = json.loads((fast / "dialcheck.json").read_text())
    cfg["thresholds"] |= {"tau": 0.0, "eta_e": 0.0}  # the first flags every dialogue and names every turn
    (fast / "dialcheck.json").write_text(json.dumps(cfg))
    slow = _variant(tiny_detector_dir, tmp_path / "slow", 2)
    det = CascadeDetector.build(load_detector(fast), load_detector(slow), 0.0, 0.0)
    det.tau, det.evidence = 0.0, "confirm"  # above the band [0, 0]: the first decides, the second confirms
    _, first_pieces = det.first.predict_pieces([LONG])
    calls = _recording(monkeypatch, det.second)
    got = det.predict([LONG])[0]
    assert got.contradiction and set(got.evidence) <= {1, 3}
    read = {p for call in calls for p in call}
    owners, pairs, _, _ = det.second._pairs(_as_dialogue(LONG))
    for i in (1, 3):
        own = dict.fromkeys(p for o, p in zip(owners, pairs, strict=True) if o == i)
        assert read & set(own) == set(sorted(own, key=lambda p: -first_pieces[p])[:REREAD_PIECES])


def test_with_a_recheck_floor_the_second_stage_reads_the_top_pairs_of_pieces_of_the_turns_not_ruled_out(
    monkeypatch, tiny_detector_dir, tmp_path
):
    det = _cascade(tiny_detector_dir, tmp_path)
    chat = [*LONG, "And the changelog?", _reply(4)]  # three long earlier replies
    first_verdict, first_pieces = det.first.predict_pieces([chat])
    first_scores = first_verdict[0].pair_scores
    assert set(first_scores) == {1, 3, 5}
    lowest, middle, _ = sorted(first_scores.values())
    floor = (lowest + middle) / 2  # rules out the turn the first scored lowest
    det.recheck_floor = floor
    wanted = {i for i, s in first_scores.items() if s >= floor}
    assert len(wanted) == 2 and wanted == not_ruled_out(first_scores, floor)
    owners, pairs, _, _ = det.second._pairs(_as_dialogue(chat))
    calls = _recording(monkeypatch, det.second)
    got = det.predict([chat])[0]
    read = {p for call in calls for p in call}
    for i in first_scores:
        own = dict.fromkeys(p for o, p in zip(owners, pairs, strict=True) if o == i)
        assert len(own) > REREAD_PIECES
        if i in wanted:  # re-read on the first's top 4 pairs of pieces, its score their maximum
            top = sorted(own, key=lambda p: -first_pieces[p])[:REREAD_PIECES]
            assert read & set(own) == set(top)
            slow = det.second.classifier.score(top)
            assert got.pair_scores[i] == pytest.approx(float(np.max(slow)), abs=1e-6)
        else:  # ruled out: not read, the first's score kept
            assert not read & set(own)
            assert got.pair_scores[i] == first_scores[i]
