"""benchmarks/cdconv_context_groups.py: metrics per group of official test conversations by where their context
also occurs."""

from __future__ import annotations


def test_groups_and_their_metrics_hand_computed(load_benchmark):
    mod = load_benchmark("cdconv_context_groups")
    groups = {"t1": "train only", "t2": "train only", "d1": "dev only", "n1": "neither"}
    rows = [
        # train only: a history contradiction caught as history, a consistent one flagged: 1 of 2 right
        {"id": "t1", "gold": 1, "gold_category": "history", "contradiction": True, "category": "history"},
        {"id": "t2", "gold": 0, "gold_category": None, "contradiction": True, "category": "intra_sentence"},
        # dev only: a role confusion caught, but named history: right on 2 classes, wrong on 4
        {"id": "d1", "gold": 1, "gold_category": "role_confusion", "contradiction": True, "category": "history"},
        {"id": "n1", "gold": 0, "gold_category": None, "contradiction": False, "category": None},
    ]
    m = mod.group_metrics(rows, groups)
    assert set(m) == {"train only", "dev only", "neither"}  # no row in "train and dev": left out
    assert m["train only"][:2] == (2, 50.0)
    # 4-class on train only: gold (3, 0), pred (3, 1): F1 history 1, none 0, intra 0, role absent -> 0
    assert m["train only"][2] == 25.0
    assert m["dev only"][:2] == (1, 100.0) and m["dev only"][2] == 0.0
    assert m["neither"][:2] == (1, 100.0)
    assert [mod.group_of(a, b) for a, b in ((True, True), (False, True))] == ["train and dev", "dev only"]


def test_every_official_test_conversation_falls_in_one_group(load_benchmark, data_root):
    mod = load_benchmark("cdconv_context_groups")
    groups = mod.test_groups(data_root)
    counts = {g: list(groups.values()).count(g) for g in mod.GROUPS}
    # the official split: 2,332 test conversations, most sharing their context with train
    assert sum(counts.values()) == len(groups) == 2332
    assert counts == {"train only": 1179, "dev only": 308, "train and dev": 306, "neither": 539}
