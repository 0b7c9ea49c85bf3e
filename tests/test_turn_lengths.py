"""benchmarks/turn_lengths.py: the length cut Rule CB's router uses, on a hand-made set of last turns."""

import json


def test_the_cut_is_the_smallest_length_few_enough_turns_reach(load_benchmark, tmp_path, monkeypatch, capsys):
    root = tmp_path / "decode" / "partial_from_formatted"
    root.mkdir(parents=True)
    rows = []
    for i, n in enumerate([2, 2, 3, 3, 4, 4, 5, 5, 6, 10]):  # one in ten reaches 7 words, two reach 6
        row = {"line": i, "last_turn_agent_id": 0, "last_turn_text": " ".join(["w"] * n), "is_contradiction": False}
        rows.append(json.dumps(row))
    (root / "train_last_turns.jsonl").write_text("\n".join(rows) + "\n")
    script = load_benchmark("turn_lengths")
    monkeypatch.setattr("sys.argv", ["turn_lengths.py", "--data-dir", str(tmp_path), "--share", "0.1"])
    script.main()
    out = capsys.readouterr().out
    assert "10 checked turns: median 4 words" in out
    assert "at L words or more: 7 (10.00%)" in out
