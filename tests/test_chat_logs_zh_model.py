"""A Chinese chat log read by a Chinese (four-category) model named with ``--model`` is counted and refused as the
routed Chinese default counts and refuses it: ``score --every-turn`` checks its user's and assistant's messages from
the fourth turn read on, and ``evaluate --data`` names a record ending with a tool's result by file and line. A tiny
random-weight model stands in for a shipped one."""

from __future__ import annotations

import json

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
