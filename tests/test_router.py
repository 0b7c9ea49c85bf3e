"""The router: a short reply goes to one detector, a long one to another, loaded only when needed."""

import json

import pytest

from dialcheck.detectors import RouterDetector, load_detector
from dialcheck.errors import InputError, ModelError
from dialcheck.schema import Dialogue
from helpers_cli import run_cli
from test_soup import _variant

SHORT_CHAT = ["I have a cat.", "Nice.", "I have no pets."]
LONG_CHAT = ["I have a cat.", "Nice.", "I have no pets at all and I never had one in my whole life, honestly."]


def _router(tmp_path, tiny_detector_dir, long_words=5, **extra):
    """A router folder over two tiny detectors with different weights (``short``, ``long`` sub-folders)."""
    folder = tmp_path / "router"
    _variant(tiny_detector_dir, folder / "short", 1)
    _variant(tiny_detector_dir, folder / "long", 2)
    options = {"short": "short", "long": "long", "long_words": long_words, **extra}
    (folder / "dialcheck.json").write_text(json.dumps({"detector": "router.v1", "options": options}))
    return folder


def test_each_dialogue_goes_by_the_length_of_its_last_turn(tmp_path, tiny_detector_dir):
    folder = _router(tmp_path, tiny_detector_dir)
    det = load_detector(folder)
    short, long = load_detector(folder / "short"), load_detector(folder / "long")
    got = det.predict([LONG_CHAT, SHORT_CHAT, LONG_CHAT[:2]])  # input order kept across the two groups
    want = [long.predict([LONG_CHAT])[0], short.predict([SHORT_CHAT])[0], short.predict([LONG_CHAT[:2]])[0]]
    assert [(v.score, v.evidence) for v in got] == [(v.score, v.evidence) for v in want]
    assert short.predict([LONG_CHAT])[0].score != want[0].score  # the two detectors do differ


def test_a_reply_is_long_from_long_words_whitespace_words_on():
    assert RouterDetector.is_long(Dialogue.from_texts(["Hi.", "one two three four five"]), 5)
    assert not RouterDetector.is_long(Dialogue.from_texts(["Hi.", "one two three four"]), 5)
    assert not RouterDetector.is_long(Dialogue.from_texts(["one two three four five", "Hi."]), 5)  # the last turn


def test_the_long_detector_loads_on_first_use_with_the_settings_given_before(tmp_path, tiny_detector_dir):
    det = load_detector(_router(tmp_path, tiny_detector_dir))
    det.tau, det.eta_e = 0.3, 0.2
    det.slots = "persona"
    det.predict([SHORT_CHAT])
    assert det.__dict__.get("_long") is None  # only short replies so far: the long detector was never read
    det.predict([LONG_CHAT])
    assert (det.long.tau, det.long.eta_e, det.long.slots) == (0.3, 0.2, "persona")
    assert (det.tau, det.slots) == (0.3, "persona")
    det.slots = "off"  # once loaded, a setting reaches both at once
    assert det.short.slots == det.long.slots == "off"
    with pytest.raises(ValueError):
        det.slots = "everything"
    with pytest.raises(AttributeError, match="no option 'evidence'"):
        det.evidence = "confirm"  # a cascade's option, and these are plain detectors


@pytest.mark.parametrize(
    "change, field",
    [
        ({"long_words": 0}, "options.long_words"),
        ({"long_words": "35"}, "options.long_words"),
        ({"long": "missing-folder"}, "options.long"),
        ({"short": None}, "options.short"),
    ],
)
def test_a_bad_router_config_names_the_field(tmp_path, tiny_detector_dir, change, field):
    folder = _router(tmp_path, tiny_detector_dir)
    cfg = json.loads((folder / "dialcheck.json").read_text())
    cfg["options"] |= change
    (folder / "dialcheck.json").write_text(json.dumps(cfg))
    with pytest.raises(ModelError, match=rf"dialcheck\.json: {field}"):
        load_detector(folder)


def test_check_with_a_router_on_the_command_line(capsys, tmp_path, tiny_detector_dir):
    folder = _router(tmp_path, tiny_detector_dir)
    logs = tmp_path / "d.jsonl"
    logs.write_text(json.dumps({"turns": SHORT_CHAT}) + "\n" + json.dumps({"turns": LONG_CHAT}) + "\n")
    code, out, err = run_cli(capsys, "check", "--model", str(folder), "--json", "--tau", "0.0", str(logs))
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["contradiction"] for r in rows] == [True, True]  # --tau reached the long detector as well
    code, _, err = run_cli(capsys, "check", "--model", str(folder), "--cascade-evidence", "confirm", str(logs))
    assert code == 2 and "--cascade-evidence applies to a cascade" in err


def _router_of_cascades(tmp_path, tiny_detector_dir):
    """A router whose short and long sides are cascades of two tiny detectors each."""
    from dialcheck.detectors import CascadeDetector

    folder = tmp_path / "router"
    for side, seeds in (("short", (1, 2)), ("long", (3, 4))):
        fast, slow = (load_detector(_variant(tiny_detector_dir, tmp_path / f"{side}-{s}", s)) for s in seeds)
        CascadeDetector.build(fast, slow, 0.0, 1.0).save(folder / side)
    options = {"short": "short", "long": "long", "long_words": 5}
    (folder / "dialcheck.json").write_text(json.dumps({"detector": "router.v1", "options": options}))
    det = load_detector(folder)
    return det


def test_reread_pieces_set_on_a_router_of_cascades_reaches_both_cascades(tmp_path, tiny_detector_dir):
    from dialcheck.detectors.cascade import REREAD_PIECES

    det = _router_of_cascades(tmp_path, tiny_detector_dir)
    assert det.reread_pieces == det.short.reread_pieces == REREAD_PIECES
    det.reread_pieces = 0  # was kept on the router alone: both cascades still re-read only the top 4 pairs
    assert "reread_pieces" not in det.__dict__
    assert det.reread_pieces == det.short.reread_pieces == 0
    assert det.long.reread_pieces == 0  # the long cascade, loaded on first use, is set up the same
    det.reread_pieces = 2
    assert det.short.reread_pieces == det.long.reread_pieces == 2
    with pytest.raises(InputError, match="reread_pieces"):
        det.reread_pieces = -1


def test_piece_pairs_set_on_a_router_reaches_every_stage_of_both_cascades(tmp_path, tiny_detector_dir):
    from dialcheck.detectors.utterance import PIECE_PAIRS

    det = _router_of_cascades(tmp_path, tiny_detector_dir)
    assert det.piece_pairs == PIECE_PAIRS
    det.piece_pairs = 0  # was kept on the cascade (or router) alone: every stage still scored at most 64 pairs
    assert "piece_pairs" not in det.__dict__
    stages = [d for c in (det.short, det.long) for d in (c.first, c.second)]  # the long one loads on first use
    assert [d.piece_pairs for d in stages] == [0, 0, 0, 0]


def test_piece_pairs_on_a_router_of_plain_detectors_reaches_both(tmp_path, tiny_detector_dir):
    det = load_detector(_router(tmp_path, tiny_detector_dir))
    det.piece_pairs = 0  # unlike reread_pieces, a reading of every utterance detector
    assert det.short.piece_pairs == det.long.piece_pairs == 0


def test_reread_pieces_on_a_router_of_plain_detectors_is_refused(tmp_path, tiny_detector_dir):
    det = load_detector(_router(tmp_path, tiny_detector_dir))
    with pytest.raises(AttributeError, match="no option 'reread_pieces'"):
        det.reread_pieces = 0  # they read every pair of pieces once: there is no second stage to bound
