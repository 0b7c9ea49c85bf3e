"""``dialcheck.load(model, language=...)``: an unknown ``language`` is an InputError whether or not a model is named."""

from __future__ import annotations

import pytest

import dialcheck
from dialcheck.errors import InputError


@pytest.mark.parametrize("language", ["fr", None, 3])
def test_an_unknown_language_is_refused_beside_a_named_model(tiny_detector_dir, language):
    # without a model it was refused; with one it was accepted and dropped, though the README lists an unknown
    # language among the bad arguments that raise
    with pytest.raises(InputError, match="language: expected one of en, tod, zh"):
        dialcheck.load(str(tiny_detector_dir), language=language)
    with pytest.raises(InputError, match="language: expected one of en, tod, zh"):
        dialcheck.load(language=language)


def test_a_known_language_beside_a_named_model_loads_that_model(tiny_detector_dir):
    det = dialcheck.load(str(tiny_detector_dir), language="zh")  # the commands pass the route's language
    assert det.config.detector == "decode.utterance.v1"
