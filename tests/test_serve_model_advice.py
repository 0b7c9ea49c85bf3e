"""The HTTP API's warnings of a model not trained on a dialogue's script advise what a server's user can do: start
the server with --model; a request chooses no model. The command line's say "set --model to", the library keeps
"pass a model"."""

from __future__ import annotations

import pytest

from test_cdconv_language import EN, KO, ZH, defaults, tiny_hierarchical_dir  # noqa: F401  (fixtures)


def test_serve_advises_starting_the_server_with_a_model(defaults, caplog, tiny_detector_dir):  # noqa: F811
    """A Korean dialogue routed to the English default was told 'pass a model trained on it', which no request can."""
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from dialcheck.detectors import load_detector
    from dialcheck.serve import create_app

    r = TestClient(create_app(None)).post("/check", json={"dialogues": [EN, KO]})
    (warning,) = r.json()["warnings"]
    assert warning.endswith(
        "No shipped detector reads Korean: start the server with --model set to a model trained on it"
    ), warning
    r = TestClient(create_app(load_detector(tiny_detector_dir))).post("/check", json={"dialogues": [EN, ZH]})
    (warning,) = r.json()["warnings"]
    assert warning.endswith(
        "Serve without --model to route Chinese conversations to the shipped Chinese default, or start the server "
        "with --model set to a Chinese (cdconv.*) model"
    ), warning


def test_the_library_still_says_pass_a_model(defaults):  # noqa: F811
    from dialcheck import api
    from dialcheck.schema import Dialogue

    ((_, text),) = api.routed_warnings([Dialogue.from_texts(KO)], ["en"])
    assert text.endswith("No shipped detector reads Korean: pass a model trained on it")


def test_the_command_line_says_set_model(defaults, tmp_path, capsys, tiny_detector_dir):  # noqa: F811
    """check's warnings said 'pass a model trained on it', the library's words, where the command line's way is
    --model: it now says 'set --model to ...' (routed, and an English --model given Chinese turns)."""
    import json

    from helpers_cli import run_cli

    p = tmp_path / "d.jsonl"
    p.write_text("".join(json.dumps({"turns": x}, ensure_ascii=False) + "\n" for x in (KO, ZH)), encoding="utf-8")
    code, _, err = run_cli(capsys, "check", str(p), "--json")
    assert code == 0 and "No shipped detector reads Korean: set --model to a model trained on it\n" in err, err
    p.write_text(json.dumps({"turns": ZH}, ensure_ascii=False) + "\n", encoding="utf-8")
    code, _, err = run_cli(capsys, "check", str(p), "--json", "--model", str(tiny_detector_dir))
    assert code == 0 and "or set --model to a Chinese (cdconv.*) model" in err and "pass a" not in err, err
