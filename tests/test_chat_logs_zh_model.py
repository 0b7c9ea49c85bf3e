"""A Chinese chat log read by a Chinese (four-category) model named with ``--model`` is counted and refused as the
routed Chinese default counts and refuses it: ``score --every-turn`` checks its user's and assistant's messages from
the fourth turn read on, and ``evaluate --data`` names a record ending with a tool's result by file and line. A tiny
random-weight model stands in for a shipped one."""

from __future__ import annotations

import json
from pathlib import Path

from helpers_cli import run_cli
from test_cdconv_language import tiny_hierarchical_dir  # noqa: F401  (a fixture: the tiny Chinese model)
from test_chat_logs_zh import CALL, RESULT, ZH_CHAT, ZH_SYSTEM, ZH_TOOLS


def test_score_every_turn_with_a_chinese_model_counts_turns_as_the_routed_default_does(
    tiny_hierarchical_dir,  # noqa: F811
    tmp_path,
    capsys,
):
    """With a Chinese --model every message from messages[1] on was a checked turn: the tool results were skipped
    turns ('the last turn is a tool message'), and turns before b2 were read with the missing ones empty. The log
    is now checked where the routed Chinese default checks it: the user's and assistant's messages from the fourth
    turn read on."""
    log = [ZH_SYSTEM, ZH_TOOLS[0], CALL, RESULT, *ZH_TOOLS[1:3], CALL, RESULT, ZH_TOOLS[5], ZH_CHAT[2], ZH_CHAT[3]]
    p, out = tmp_path / "log.jsonl", tmp_path / "out.jsonl"
    p.write_text(json.dumps({"id": "t", "messages": log}, ensure_ascii=False) + "\n", encoding="utf-8")
    argv = ["score", str(p), str(out), "--every-turn", "--no-progress", "--model", str(tiny_hierarchical_dir)]
    code, _, err = run_cli(capsys, *argv)
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert code == 0 and [r["turn"] for r in rows] == [8, 9, 10], err
    assert "skipped 0 bad lines" in err and "tool message" not in err


def _evaluate(capsys, f: Path, recs: list[dict], benchmark: str, model: Path) -> tuple[int, str, str]:
    """Write ``recs`` to ``f`` (JSON lines) and run ``evaluate --benchmark BENCHMARK --model MODEL --data f``."""
    f.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs), encoding="utf-8")
    ev = ["evaluate", "--benchmark", benchmark, "--model", str(model), "--no-progress", "--data"]
    return run_cli(capsys, *ev, str(f))


def test_evaluate_data_names_a_record_ending_with_a_tool_result_by_file_and_line(
    tiny_hierarchical_dir,  # noqa: F811
    tmp_path,
    capsys,
):
    """Such a record stopped the whole run with 'dialogues[1]: messages[4]: the last turn is a tool message',
    naming neither the file nor its line. It is now a bad record as the others are: skipped, named by file, line and
    field, the others evaluated; a file of none but such records is refused (exit 2)."""
    recs = [
        {"id": "ok", "messages": ZH_CHAT, "contradiction": True, "category": "history"},
        {"id": "tool", "messages": ZH_TOOLS[:5], "contradiction": False},
        {"id": "left", "messages": [*ZH_CHAT, {"role": "system", "content": "用户已离开。"}], "contradiction": False},
        {"id": "named", "messages": [*ZH_TOOLS, CALL, RESULT], "speaker": "assistant", "contradiction": True,
         "category": "history"},  # as the advice says: labelled at the assistant's last reply
    ]  # fmt: skip
    f = tmp_path / "mine.jsonl"
    code, out, err = _evaluate(capsys, f, recs, "cdconv", tiny_hierarchical_dir)
    assert code == 0 and "Traceback" not in err, err
    assert f"skipped {f}, line 2: messages[4]: the last turn is a tool message, a tool's result" in err
    assert f"skipped {f}, line 3: messages[4]: the last turn is a system message" in err
    assert f"{f}: skipped 2 of 4 records (each named above); split mine holds the other 2" in err
    code, out, err = _evaluate(capsys, f, recs[1:2], "cdconv", tiny_hierarchical_dir)
    assert code == 2 and out == "" and "Traceback" not in err
    assert f"{f}: no labelled dialogue to evaluate on (first: line 1: messages[4]: the last turn is a tool" in err
    assert '"speaker": "assistant" in the record (its label then about that reply)' in err and "--speaker" not in err


def test_evaluate_decode_data_with_a_chinese_model_skips_such_a_record_too(
    tiny_hierarchical_dir,  # noqa: F811
    tmp_path,
    capsys,
):
    """--benchmark decode with a Chinese --model reads its --data through the same detector: the record was the
    same error without file or line."""
    recs = [{"id": "ok", "messages": ZH_CHAT, "contradiction": True}, {"id": "t", "messages": ZH_TOOLS[:5],
            "contradiction": False}]  # fmt: skip
    f = tmp_path / "mine.jsonl"
    code, _, err = _evaluate(capsys, f, recs, "decode", tiny_hierarchical_dir)
    assert code == 0 and "Traceback" not in err, err
    assert f"skipped {f}, line 2: messages[4]: the last turn is a tool message, a tool's result" in err
