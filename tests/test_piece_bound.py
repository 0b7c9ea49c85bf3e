"""An utterance detector scores at most ``piece_pairs`` pairs of pieces of a very long pair (two long code replies),
those whose pieces share the rarest words."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dialcheck.detectors import load_detector
from dialcheck.detectors.utterance import PIECE_PAIRS, overlap_ranks
from dialcheck.errors import ModelError
from test_cascade_pieces import LONG, _as_dialogue, _cascade, _recording


def _own(det, turn: int) -> list[tuple[str, str]]:
    """The distinct pairs of pieces of earlier turn ``turn`` of LONG, in the order they are made."""
    owners, pairs, _, pieced = det._pairs(_as_dialogue(LONG))
    return list(dict.fromkeys(p for o, p, f in zip(owners, pairs, pieced, strict=True) if o == turn and f))


def _ranked(pairs: list[tuple[str, str]], k: int) -> list[tuple[str, str]]:
    """The ``k`` pairs the prefilter ranks highest (ties: the first made)."""
    r = overlap_ranks(pairs)
    return [pairs[j] for j in sorted(range(len(pairs)), key=lambda j: (-r[j], j))[:k]]


def test_a_turn_over_the_bound_is_scored_on_its_top_pairs_of_pieces_and_one_under_it_on_all(
    monkeypatch, tiny_detector_dir
):
    det = load_detector(tiny_detector_dir)
    assert det.piece_pairs == PIECE_PAIRS == 64
    own = {i: _own(det, i) for i in (1, 3)}
    assert all(16 < len(v) < PIECE_PAIRS for v in own.values())  # long pairs, under the default bound
    calls = _recording(monkeypatch, det)
    whole = det.predict([LONG])[0]
    assert {p for call in calls for p in call} == set(own[1]) | set(own[3])  # under the bound: every pair

    det.piece_pairs = 5
    calls.clear()
    got = det.predict([LONG])[0]
    read = [p for call in calls for p in call]
    for i in (1, 3):
        want = _ranked(own[i], 5)
        assert sorted(p for p in read if p in set(own[i])) == sorted(want)  # 5 pairs, each scored once
        assert got.pair_scores[i] == pytest.approx(float(np.max(det.classifier.score(want))), abs=1e-6)
        assert got.pair_scores[i] <= whole.pair_scores[i] + 1e-6  # the max of fewer pairs
    assert got.score == pytest.approx(max(got.pair_scores.values()))

    det.piece_pairs = len(own[3])  # exactly at the bound: turn 3 read whole, turn 1 (more pairs) bounded
    calls.clear()
    det.predict([LONG])
    read = {p for call in calls for p in call}
    assert set(own[3]) <= read and len(read & set(own[1])) == min(len(own[1]), len(own[3]))

    det.piece_pairs = 0  # every pair of pieces, as before
    calls.clear()
    assert det.predict([LONG])[0] == whole
    assert {p for call in calls for p in call} == set(own[1]) | set(own[3])


def test_a_cascade_bounds_its_first_stage_and_re_reads_among_what_it_read(monkeypatch, tiny_detector_dir, tmp_path):
    det = _cascade(tiny_detector_dir, tmp_path)
    det.first.piece_pairs = det.second.piece_pairs = 6
    first_calls, second_calls = _recording(monkeypatch, det.first), _recording(monkeypatch, det.second)
    det.predict([LONG])
    first_read = [p for call in first_calls for p in call]
    second_read = {p for call in second_calls for p in call}
    for i in (1, 3):
        own = _own(det.first, i)
        assert sorted(p for p in first_read if p in set(own)) == sorted(_ranked(own, 6))
        assert len(second_read & set(own)) == 4  # the first's top 4 of its 6: the ranking asks it for no other
    assert len(first_read) == 12


def test_the_prefilter_ranks_pairs_sharing_rare_words_first_and_ignores_code_punctuation():
    earlier = [
        "It needs Python 3.11, and the timeout is 30 seconds.",
        "def load(rows):\n    for row in rows:\n        log.debug(row)",
        "def save(rows):\n    for row in rows:\n        db.write(row)",
    ]
    last = ["It works on Python 3.6; the timeout is gone.", "def check(rows):\n    for row in rows:\n        test(row)"]
    pairs = [(a, b) for a in earlier for b in last]
    ranks = overlap_ranks(pairs)
    # the prose pieces share "python", "timeout", "it", "the", "is" (two pieces of five each); the code pieces share
    # "def", "rows", "for", "row", "in" (three of five each: less rare); prose and code share nothing
    prose, code = 5 * np.log(5 / 2), 5 * np.log(5 / 3)
    assert [ranks[0], ranks[3], ranks[5]] == pytest.approx([prose, code, code])
    assert max(ranks[1], ranks[2], ranks[4]) <= 0.0  # sharing nothing: below, spread round-robin
    assert _ranked(pairs, 3) == [pairs[0], pairs[3], pairs[5]]  # ties: the first made
    # a word in every piece weighs nothing; "3.11" and "3.6" are two numbers, not "3" shared
    assert overlap_ranks([("x = 3.11", "x = 3.6"), ("x = 1", "x = 2")]) == [0.0, 0.0]


def test_piece_pairs_is_saved_only_when_changed_and_checked(tiny_detector_dir, tmp_path):
    det = load_detector(tiny_detector_dir)
    assert "piece_pairs" not in det.config.options
    det.piece_pairs = 0
    assert det.config.options["piece_pairs"] == 0  # what a saved config then holds
    det.piece_pairs = PIECE_PAIRS
    assert "piece_pairs" not in det.config.options
    out = Path(shutil.copytree(tiny_detector_dir, tmp_path / "every"))
    cfg = json.loads((out / "dialcheck.json").read_text())
    cfg["options"]["piece_pairs"] = 0
    (out / "dialcheck.json").write_text(json.dumps(cfg))
    assert load_detector(out).piece_pairs == 0
    for bad in (-1, 2.5, True, "64"):
        with pytest.raises(ValueError, match=r"^piece_pairs must be a whole number >= 0"):
            det.piece_pairs = bad
    cfg = json.loads((out / "dialcheck.json").read_text())
    cfg["options"]["piece_pairs"] = "many"
    (out / "dialcheck.json").write_text(json.dumps(cfg))
    with pytest.raises(ModelError, match=r"every/dialcheck\.json: options\.piece_pairs must be a whole number"):
        load_detector(out)


def test_piece_pairs_set_on_a_cascade_reaches_both_stages_and_is_saved(tiny_detector_dir, tmp_path):
    det = _cascade(tiny_detector_dir, tmp_path)
    assert det.piece_pairs == PIECE_PAIRS
    det.piece_pairs = 0  # was kept on the cascade alone: both stages still scored at most 64 pairs per turn
    assert "piece_pairs" not in det.__dict__
    assert det.first.piece_pairs == det.second.piece_pairs == 0
    det.save(tmp_path / "saved")
    cfg = json.loads((tmp_path / "saved" / "dialcheck.json").read_text())
    assert cfg["options"]["readings"]["piece_pairs"] == 0
    back = load_detector(tmp_path / "saved")
    assert back.piece_pairs == back.first.piece_pairs == back.second.piece_pairs == 0
    with pytest.raises(ValueError, match=r"^piece_pairs must be a whole number >= 0"):
        det.piece_pairs = -1
    cfg["options"]["readings"]["piece_pairs"] = "many"
    (tmp_path / "saved" / "dialcheck.json").write_text(json.dumps(cfg))
    with pytest.raises(ModelError, match=r"saved/dialcheck\.json: options\.readings\.piece_pairs: piece_pairs must"):
        load_detector(tmp_path / "saved")


def test_piece_pairs_set_on_a_cascade_bounds_what_both_stages_read(monkeypatch, tiny_detector_dir, tmp_path):
    det = _cascade(tiny_detector_dir, tmp_path)
    det.piece_pairs = 6  # as det.first.piece_pairs = det.second.piece_pairs = 6 in the test above
    first_calls = _recording(monkeypatch, det.first)
    det.predict([LONG])
    assert len([p for call in first_calls for p in call]) == 12


_TIE = """
import string, sys
from dialcheck.detectors.utterance import overlap_ranks
L = string.ascii_lowercase
words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india"]
earlier = []
for i in range(80):
    if i % 15 == 0:  # pieces 0, 15, ..., 75 share all nine words with the last piece, in another order each
        k = i // 15
        earlier.append(" ".join(words[k:] + words[:k] + ["pad" + L[k] + L[j] for j in range(k * 4)]))
    else:
        earlier.append(f"zz{L[i % 26]}{L[i // 26]} " + " ".join(words[: i % 7]))
last = [" ".join(words + ["last" + L[j] for j in range(20)])]
pairs = [(a, b) for a in earlier for b in last]
r = overlap_ranks(pairs)
print(sorted(range(len(pairs)), key=lambda j: (-r[j], j))[:5], len(set(r[j] for j in range(0, 80, 15))))
"""


def test_pairs_sharing_the_same_words_tie_whatever_the_hash_seed():
    # a sum in set order differed by an ulp with the set's order: on CPython 3.11 hash seeds 28 and 49 kept
    # [45, 60, 75, 0, 15] and [30, 45, 60, 0, 15]; seed 0 the first made
    got = {}
    for seed in ("0", "28", "49"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        run = subprocess.run([sys.executable, "-c", _TIE], env=env, capture_output=True, text=True, check=True)
        got[seed] = run.stdout.strip()
    assert set(got.values()) == {"[0, 15, 30, 45, 60] 1"}, got  # six equal ranks; the first five made kept


def test_han_kana_and_hangul_are_read_in_bigrams():
    # a run of Han characters (or kana, or Hangul written without spaces) was one word: no two pieces shared one,
    # every pair ranked 0 (spaced Korean shared its words, but "서버는" and "서버가" were two)
    earlier = ["这个函数需要三十秒的超时。", "我们用的是东京的服务器。", "日志写在数据库里。"]
    last = ["超时其实是六十秒。", "服务器在大阪。"]
    pairs = [(a, b) for a in earlier for b in last]
    ranks = overlap_ranks(pairs)
    best = sorted(range(len(pairs)), key=lambda j: (-ranks[j], j))[:2]
    assert [pairs[j] for j in best] == [(earlier[0], last[0]), (earlier[1], last[1])]  # "超时", "十秒"; "服务", ...
    assert max(ranks[4:]) <= 0.0  # the log line shares nothing: below every pair that shares a bigram
    japanese = overlap_ranks(
        [("タイムアウトは三十秒です", "タイムアウトは六十秒です"), ("ログはここ", "サーバーは大阪")]
    )
    korean = overlap_ranks([("타임아웃은삼십초", "타임아웃은육십초"), ("로그", "서버")])
    assert japanese[0] > japanese[1] == 0.0 and korean[0] > korean[1] == 0.0
    spaced = overlap_ranks([("서버는 도쿄에 있습니다", "서버가 오사카에 있어요"), ("로그 파일", "시간 초과")])
    assert spaced[0] > spaced[1] == 0.0  # "서버" shared


def test_thai_bigrams_rank_a_shared_phrase_the_vowel_marks_cut_differently():
    # Thai was already cut at its vowel and tone marks (not letters to \w), so pieces shared fragments ("ฟเวอร",
    # "นาท"); but "ระยะหมดเวลา" (timeout) ran on into the next word, "ระยะหมดเวลาค" against "ระยะหมดเวลาจร", and before
    # 467eeed the timeout pair (1.83) ranked below the server pair (4.58). In bigrams (467eeed) the shared phrase
    # counts: the timeout pair ranks above the server pair, higher than before 467eeed
    earlier = ["ระยะหมดเวลาคือสามสิบวินาที", "เซิร์ฟเวอร์อยู่ที่โตเกียว", "บันทึกเก็บในฐานข้อมูล"]
    last = ["ระยะหมดเวลาจริงๆคือหกสิบวินาที", "เซิร์ฟเวอร์อยู่ที่โอซาก้า"]
    pairs = [(a, b) for a in earlier for b in last]
    ranks = overlap_ranks(pairs)
    assert ranks[0] > ranks[3] > max(ranks[1], ranks[2])  # timeout pair, then server pair, then the crossed ones
    assert max(ranks[4:]) <= 0.0  # the log line shares nothing


def test_a_turn_sharing_no_word_keeps_pairs_spread_over_its_pieces_not_its_head():
    earlier = [f"piece{chr(97 + i)} says {chr(97 + i) * 3}" for i in range(10)]  # "says" in every piece: weighs 0
    last = [f"other{chr(97 + j)} says {chr(107 + j) * 3}" for j in range(10)]
    pairs = [(a, b) for a in earlier for b in last]
    ranks = overlap_ranks(pairs)
    kept = [pairs[j] for j in sorted(range(len(pairs)), key=lambda j: (-ranks[j], j))[:20]]
    # the first 20 made were the first two earlier pieces against all ten of the last turn
    assert {a for a, _ in kept} == set(earlier) and {b for _, b in kept} == set(last)
    assert all(sum(a == e for a, _ in kept) == 2 for e in earlier)
    assert kept[:3] == [(earlier[0], last[0]), (earlier[1], last[1]), (earlier[2], last[2])]


def test_the_probe_script_reports_what_the_bound_keeps(load_benchmark, tiny_detector_dir, tmp_path, capsys):
    probe = load_benchmark("piece_bound_probe")
    out = tmp_path / "runs" / "kept.json"
    argv = ["kept", "--model", str(tiny_detector_dir), "--chats", "2", "--replies", "2", "--bound", "8"]
    assert probe.main([*argv, "--threads", "1", "--json", str(out)]) == 0
    rows = json.loads(out.read_text())["turns"]
    assert rows and all(r["pairs"] > 8 and 1 <= r["best_place"] <= r["pairs"] for r in rows)
    assert all(r["held"] == (r["best_place"] <= 8) for r in rows)  # the 8 kept are the prefilter's first 8
    assert all(r["max_kept"] <= r["max_every"] for r in rows)
    assert all(r["max_kept"] == r["max_every"] for r in rows if r["held"])
    held = sum(r["held"] for r in rows)
    assert f"held the turn's highest-scoring pair in {held} of {len(rows)} turns" in capsys.readouterr().out


def test_the_probe_script_counts_pairs_of_pieces_per_turn(load_benchmark, tiny_detector_dir, tmp_path, capsys):
    probe = load_benchmark("piece_bound_probe")
    from _cli import run

    det = load_detector(tiny_detector_dir)
    data = tmp_path / "set.jsonl"
    records = [{"id": "long", "turns": LONG, "contradiction": False}, {"id": "short", "turns": SHORT_TURNS}]
    data.write_text("\n".join(json.dumps(r | {"contradiction": False}) for r in records) + "\n")
    out = tmp_path / "count.json"
    argv = ["count", "--model", str(tiny_detector_dir), "--data", str(data), "--verdicts", "--threads", "1"]
    assert probe.main([*argv, "--json", str(out)]) == 0
    got = json.loads(out.read_text())["sets"][str(data)]
    row = got["stages"][0]  # the table's rows and the verdicts under their own keys (were one list)
    assert [v["id"] for v in got["verdicts"]] == ["long"]
    assert row["in_pieces"] == ["long"] and row["most_per_turn"] == max(len(_own(det, i)) for i in (1, 3))
    text = capsys.readouterr().out
    assert f"| {data} | model | 2 | 1 (long) | {row['most_per_turn']} |" in text
    line = next(x for x in text.splitlines() if x.startswith(f"{data} long: "))
    on, off = line.removeprefix(f"{data} long: ").removesuffix(" (every)").split(" (bound 64) / ")
    assert on == off == probe._verdict(det.predict([LONG])[0])  # under the bound: the same either way
    data.write_text('{"turns": ["Hi", "Hello"]}\n')
    with pytest.raises(SystemExit) as e:  # refused before the model loads, named by file and line
        run(probe.main, argv)
    assert e.value.code == 2 and f"{data}, line 1: contradiction: missing" in capsys.readouterr().err


SHORT_TURNS = ["I have a cat.", "Nice.", "I like dogs.", "Cool.", "I have no pets."]


def test_pairs_sharing_nothing_spread_over_the_pieces_even_when_a_few_pairs_share_a_word():
    # the spread applied only when every rank was 0: one pair sharing a rare word and the 0-ranked rest filled the
    # bound from the head, earlier piece 0 against all ten last pieces, piece 1 against nine
    earlier = [f"piece{chr(97 + i)} says {chr(97 + i) * 3}" for i in range(10)]  # "says" in every piece: weighs 0
    last = [f"other{chr(97 + j)} says {chr(107 + j) * 3}" for j in range(10)]
    earlier[3] += " zebra"
    last[5] += " zebra"  # the one pair sharing a rare word
    pairs = [(a, b) for a in earlier for b in last]
    ranks = overlap_ranks(pairs)
    assert ranks[35] > 0 and sorted(ranks, reverse=True)[1] <= 0.0  # positive ranks unchanged, the rest below
    kept = _ranked(pairs, 20)
    assert kept[0] == (earlier[3], last[5])
    assert {a for a, _ in kept} == set(earlier) and {b for _, b in kept} == set(last)
    per_piece = [sum(a == e for a, _ in kept) for e in earlier]  # was [10, 9, 0, 1, 0, ...]
    assert per_piece == [2, 2, 2, 3, 2, 2, 2, 2, 2, 1]  # 19 left: ten at 0, nine of the ten at -1 (the first made)


def test_the_probe_script_on_a_model_saved_with_piece_pairs_0_bounds_at_piece_pairs(
    load_benchmark, tiny_detector_dir, tmp_path, capsys
):
    probe = load_benchmark("piece_bound_probe")
    every = Path(shutil.copytree(tiny_detector_dir, tmp_path / "every"))
    cfg = json.loads((every / "dialcheck.json").read_text())
    cfg["options"]["piece_pairs"] = 0
    (every / "dialcheck.json").write_text(json.dumps(cfg))
    out = tmp_path / "kept.json"
    argv = ["kept", "--model", str(tmp_path / "every"), "--chats", "1", "--replies", "2", "--threads", "1"]
    assert probe.main([*argv, "--json", str(out)]) == 0  # was a KeyError: a bound of 0 kept nothing
    got = json.loads(out.read_text())
    assert got["bound"] == PIECE_PAIRS and got["turns"] and all(r["pairs"] > PIECE_PAIRS for r in got["turns"])
    assert f"scores every pair of pieces (piece_pairs 0): bound {PIECE_PAIRS}" in capsys.readouterr().err


def test_the_probe_script_reads_a_routers_sides(load_benchmark, tiny_detector_dir, tmp_path, capsys):
    from test_router import _router

    probe = load_benchmark("piece_bound_probe")
    folder = _router(tmp_path, tiny_detector_dir)
    data = tmp_path / "set.jsonl"
    data.write_text(json.dumps({"id": "long", "turns": LONG, "contradiction": False}) + "\n")
    out = tmp_path / "count.json"
    # was an AttributeError: the router was taken for one utterance detector
    assert probe.main(["count", "--model", str(folder), "--data", str(data), "--threads", "1", "--json", str(out)]) == 0
    stages = json.loads(out.read_text())["sets"][str(data)]["stages"]
    assert [r["stage"] for r in stages] == ["short", "long"] and all(r["in_pieces"] == ["long"] for r in stages)
    out = tmp_path / "kept.json"
    argv = ["kept", "--model", str(folder), "--chats", "1", "--replies", "2", "--bound", "8", "--threads", "1"]
    assert probe.main([*argv, "--json", str(out)]) == 0
    rows = json.loads(out.read_text())["turns"]
    assert rows and {r["stage"] for r in rows} == {"long"}  # a long code reply goes to the long side
    assert "long stage, piece_pairs 8" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["kept", "--data", "x.jsonl"], "kept: --data belong to count"),
        (["kept", "--split", "dev", "--verdicts"], "kept: --split, --verdicts belong to count"),
        (["count", "--data", "x.jsonl", "--chats", "2", "--bound", "8"], "count: --chats, --bound belong to kept"),
    ],
)
def test_the_probe_script_refuses_the_other_modes_options(load_benchmark, capsys, argv, named):
    # they were ignored without a word (and kept loaded the --split datasets for nothing)
    probe = load_benchmark("piece_bound_probe")
    with pytest.raises(SystemExit) as e:
        probe.main([*argv, "--model", "no-such-model"])  # refused before any file or model is read
    assert e.value.code == 2 and named in capsys.readouterr().err


def test_the_probe_scripts_verdicts_compare_the_top_re_read_with_every_pair_on_a_cascade(
    load_benchmark, tiny_detector_dir, tmp_path, capsys
):
    probe = load_benchmark("piece_bound_probe")
    det = _cascade(tiny_detector_dir, tmp_path)
    det.save(tmp_path / "cascade")
    data = tmp_path / "set.jsonl"
    data.write_text(json.dumps({"id": "long", "turns": LONG, "contradiction": False}) + "\n")
    out = tmp_path / "count.json"
    argv = ["count", "--model", str(tmp_path / "cascade"), "--data", str(data), "--verdicts", "--threads", "1"]
    assert probe.main([*argv, "--json", str(out)]) == 0
    (got,) = json.loads(out.read_text())["sets"][str(data)]["verdicts"]
    every = det.reread_pieces
    det.reread_pieces = 0
    assert got["reread_every"] == probe._verdict(det.predict([LONG])[0]) and got["reread_pieces"] == every
    assert "(bound 64, reread_pieces 0, not 4)" in capsys.readouterr().out


def test_the_probe_script_refuses_a_model_that_reads_no_pairs_of_pieces(
    load_benchmark, tiny_detector_dir, tmp_path, capsys
):
    from _cli import run

    from test_chat_logs_zh import _every_speaker

    probe = load_benchmark("piece_bound_probe")
    folder = _every_speaker(tiny_detector_dir, tmp_path / "unstructured", "decode.unstructured.v1")
    with pytest.raises(SystemExit) as e:  # refused before any chat is read
        run(probe.main, ["kept", "--model", str(folder), "--chats", "1", "--replies", "2", "--threads", "1"])
    err = capsys.readouterr().err
    assert e.value.code == 2 and "Traceback" not in err
    assert "--model: it is an UnstructuredDetector, which reads no pairs of pieces; expected an utterance" in err


def test_the_probe_scripts_kept_notes_each_stage_scoring_every_pair_and_gives_each_stages_bound(
    load_benchmark, monkeypatch, tiny_detector_dir, capsys
):
    # the note and the bound came from the first chat alone: a router's short side bounded at 8 and its long side
    # at 0 (every pair) gave no note for the long side's chats and a header "piece_pairs 8"
    probe = load_benchmark("piece_bound_probe")
    short, long = load_detector(tiny_detector_dir), load_detector(tiny_detector_dir)
    short.piece_pairs, long.piece_pairs = 8, 0
    sides = iter([("short", short), ("long", long), ("long", long)])
    monkeypatch.setattr(probe, "_first_stage", lambda det, dialogue: next(sides))
    rows, bounds = probe.kept(None, 3, 2, 0, None)
    assert bounds == {"short": 8, "long": PIECE_PAIRS}
    assert {(r["stage"], r["bound"]) for r in rows} == {("short", 8), ("long", PIECE_PAIRS)}
    err = capsys.readouterr().err
    assert err.count("the long stage scores every pair of pieces (piece_pairs 0): bound 64") == 1  # once per stage
    assert "short stage scores every pair" not in err
    assert probe._shown(probe._one_or_each(bounds)) == "8 (short), 64 (long)"
    assert probe._one_or_each({"short": 64, "long": 64}) == 64


def test_the_probe_scripts_verdicts_leave_each_side_of_a_router_as_it_was(load_benchmark, tiny_detector_dir, tmp_path):
    # piece_pairs and reread_pieces were saved from the short side and restored on both: a router whose sides
    # differed was left with the long side's changed to the short's
    from types import SimpleNamespace

    from test_router import _router, _router_of_cascades

    probe = load_benchmark("piece_bound_probe")
    examples = [SimpleNamespace(id="long", dialogue=_as_dialogue(LONG))]
    det = load_detector(_router(tmp_path / "plain", tiny_detector_dir))
    det.short.piece_pairs = 8
    (got,) = probe.verdicts(det, examples)
    assert (det.short.piece_pairs, det.long.piece_pairs) == (8, PIECE_PAIRS)  # the long side was left at 8
    assert got["bound"] == {"short": 8, "long": PIECE_PAIRS} and "reread_every" not in got
    det = _router_of_cascades(tmp_path / "cascades", tiny_detector_dir)
    det.short.reread_pieces, det.long.first.piece_pairs = 2, 0
    (got,) = probe.verdicts(det, examples)
    assert (det.short.reread_pieces, det.long.reread_pieces) == (2, 4)
    pairs = {name: stage.piece_pairs for name, stage in probe._stages(det)}
    assert pairs == {"short first": 64, "short second": 64, "long first": 0, "long second": 64}
    assert got["reread_pieces"] == {"short": 2, "long": 4}
    assert got["bound"] == PIECE_PAIRS  # each stage's own, PIECE_PAIRS where it is 0
