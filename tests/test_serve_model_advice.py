"""The HTTP API's warnings of a model not trained on a dialogue's script advise what a server's user can do: start
the server with --model; a request chooses no model. The library and the command line keep "pass a model"."""

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
