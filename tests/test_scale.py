"""Scale: work per record that a batch of chat logs pays for each of its (up to millions of) records. Each test
checks the behaviour behind a measured cost (calls made, lines parsed, what is read before the first output),
never a time."""

from __future__ import annotations

import unicodedata

import pytest

from dialcheck import language
from dialcheck.schema import Dialogue


class _CountingUnicodedata:
    """``unicodedata`` with its per-character calls counted."""

    def __init__(self) -> None:
        self.calls = 0

    def __getattr__(self, name: str):
        fn = getattr(unicodedata, name)

        def counted(*args):
            self.calls += 1
            return fn(*args)

        return counted


def test_english_turns_are_read_for_their_script_without_a_unicode_lookup_per_character(monkeypatch):
    # score --model calls foreign_turns on every record: per character it cost 11 s of CPU per 100,000 dialogues
    # of 6 short turns (a quarter of a tiny model's run); an ASCII turn is Latin letters or none
    counting = _CountingUnicodedata()
    monkeypatch.setattr(language, "unicodedata", counting)
    d = Dialogue.from_texts(["Do you have a dog?", "Yes, two dogs: Rex & Fido (3 years old)!", "I never had pets."])
    assert language.foreign_turns(d, "en") == []
    assert language.foreign_turns(d, "zh") == [0, 1, 2]
    assert language.dialogue_language(d) == "other"
    assert counting.calls == 0


@pytest.mark.parametrize(
    "text, script",
    [
        ("I had a café crème in Zürich 😀", None),
        ("I met Сергей there.", None),
        ("Привет, как дела? ok", "Cyrillic"),
        ("我养了一只狗 ok ok", "Chinese"),
        ("犬を飼っています dog", "Japanese"),
        ("I'm ʼokʼ", None),
        ("ab 안녕하세요", "Korean"),
        ("a\u00a0b", None),
    ],
)
def test_the_script_of_a_turn_mixing_ascii_and_other_letters_counts_each_ascii_letter_as_latin(text, script):
    assert language.turn_script(text) == script
