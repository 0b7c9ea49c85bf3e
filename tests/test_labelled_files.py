"""Reading labelled-dialogue files (``evaluate --data``, ``train --dialogues``) and dialogue files (``check``):
what a file holds, and how a bad record in it is named."""

from helpers_cli import run_cli


def test_an_empty_json_list_is_named_as_holding_no_dialogues(tmp_path, capsys, tiny_detector_dir):
    # evaluate said 'line 1: expected a dialogue object with a "contradiction" field, got list', check
    # 'line 1: turns: the dialogue is empty': the list was read as one dialogue
    empty = tmp_path / "e.json"
    empty.write_text("[]\n")
    for argv in (("evaluate", "--data", str(empty)), ("check", str(empty))):
        code, _, err = run_cli(capsys, argv[0], "--model", str(tiny_detector_dir), *argv[1:])
        assert code == 2 and err == f"dialcheck: error: {empty}: holds no dialogues: an empty JSON list []\n"
