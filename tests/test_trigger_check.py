"""benchmarks/trigger_check.py: reading and tallying a hand-judged sheet of trigger outputs."""

import pytest

SHEET = """# Hand-checked trigger methods

| method | applied to | of contexts |
|---|---:|---:|
| negation | 3 | 100.0% |

| # | method | from | u2 | detail | grammatical? | as intended? | note |
|---:|---|---|---|---|---|---|---|
| 1 | negation | I like dogs. | I don't like dogs. | +don't | yes | yes | |
| 2 | negation | a \\| b | x | +not | no | yes | |
| 3 | synonym | I like films. | I like movies. | films->movie | yes | no | wrong sense |
"""


def test_score_tallies_per_method_and_overall(load_benchmark, tmp_path, capsys):
    tc = load_benchmark("trigger_check")
    path = tmp_path / "sheet.md"
    path.write_text(SHEET, encoding="utf-8")
    rows = tc.read_sheet(path)
    assert [r["#"] for r in rows] == ["1", "2", "3"] and rows[1]["from"] == "a | b"
    tc.score(type("A", (), {"sheet": str(path)})())
    out = capsys.readouterr().out
    assert "| negation | 2 | 1 (50%) | 2 (100%) | 1 (50%) |" in out
    assert "| synonym | 1 | 1 (100%) | 0 (0%) | 0 (0%) |" in out
    assert "| **all** | 3 | 2 (67%) | 2 (67%) | 1 (33%) |" in out


def test_an_unjudged_row_is_named_by_line(load_benchmark, tmp_path):
    tc = load_benchmark("trigger_check")
    path = tmp_path / "sheet.md"
    path.write_text(SHEET.replace("| yes | no | wrong sense |", "| ? | no | |"), encoding="utf-8")
    with pytest.raises(ValueError, match=r"sheet.md:11: field 'grammatical\?' is '\?'"):
        tc.read_sheet(path)


def test_the_committed_sheets_are_fully_judged(load_benchmark):
    from pathlib import Path

    tc = load_benchmark("trigger_check")
    sheets = sorted((Path(__file__).resolve().parents[1] / "docs" / "trigger_checks").glob("*.md"))
    assert len(sheets) >= 2
    for path in sheets:
        rows = tc.read_sheet(path)
        assert len(rows) == 120 and {r["method"] for r in rows} == set(tc.CHECKED), path
