"""benchmarks/zh_traditional.py: the Simplified-to-Traditional conversion and a run on a tiny model."""

from __future__ import annotations

import json
import sys

import pytest

from dialcheck.schema import Verdict


def test_the_map_converts_the_default_files_whole(load_benchmark):
    mod = load_benchmark("zh_traditional")
    assert mod.to_traditional("你周末养宠物吗？我去旅游，走了三公里，看了周杰伦。") == (
        "你週末養寵物嗎？我去旅遊，走了三公里，看了周杰倫。"
    )
    assert not set(mod.S2T) & set(mod.SAME)  # a character either changes or is kept, never both
    texts = [t for p in mod.DEFAULT_FILES for _, turns, _ in mod.read_conversations(p) for t in turns]
    chars = {c for t in texts for c in t if "\u4e00" <= c <= "\u9fff"}
    assert chars <= set(mod.S2T) | set(mod.SAME)  # every character of the default files is known


def test_compare_counts_agreement_and_score_changes(load_benchmark):
    mod = load_benchmark("zh_traditional")
    s = [Verdict(True, 0.8, category="history"), Verdict(False, 0.3), Verdict(True, 0.6, category="history")]
    t = [Verdict(True, 0.7, category="history"), Verdict(True, 0.55, category="history"), Verdict(True, 0.6)]
    got = mod.compare(s, t)
    assert (got["n"], got["same_verdict"], got["same_category"]) == (3, 2, 1)
    assert got["max_change"] == pytest.approx(0.25) and got["mean_change"] == pytest.approx(0.35 / 3)


def test_a_run_on_a_tiny_model_prints_the_agreement(load_benchmark, monkeypatch, capsys, tmp_path, tiny_detector_dir):
    import dialcheck

    mod = load_benchmark("zh_traditional")
    data = tmp_path / "c.jsonl"
    rows = [
        {"id": "a", "turns": ["你养猫吗？", "养了两只猫。", "真好。", "我没有猫。"], "contradiction": True},
        {"turns": ["早", "早", "好吗", "好"]},
    ]
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    monkeypatch.setattr(dialcheck, "load", lambda **kw: dialcheck.api.load(tiny_detector_dir))
    monkeypatch.setattr(sys, "argv", ["zh_traditional.py", str(data), "--show", "1"])
    mod.main()
    out = capsys.readouterr().out
    assert "2 conversations from c.jsonl" in out and "routed to the Chinese default: 2 of 2" in out
    assert "does not know (kept as they are): 0\n" in out
    assert "as labelled (contradiction or not): Simplified " in out and " of 1, Traditional " in out
    assert "same verdict: " in out and "largest score changes:\n  c.jsonl:a: " in out
