import itertools

import pytest

from dialcheck.errors import InputError
from dialcheck.probes.checklist import add_two_turns, build_a2t, remove_contradicting_turns
from dialcheck.schema import Dialogue, Example


def _ex(i, texts, evidence):
    return Example(Dialogue.from_texts(texts), True, evidence, id=f"d{i}")


def test_a2t_inserts_between_evidence_and_last_turn_and_keeps_alternation():
    exs = [_ex(i, [f"t{i}-{j}" for j in range(7)], (2,)) for i in range(5)]
    out = build_a2t(exs, seed=3)
    assert len(out) == 5
    for before, after in zip(exs, out, strict=True):
        b, a = before.dialogue.turns, after.dialogue.turns
        assert len(a) == len(b) + 2
        assert a[-1] == b[-1] and a[2] == b[2]  # last turn and evidence untouched
        assert after.evidence == (2,) and after.label
        assert all(x.speaker != y.speaker for x, y in itertools.pairwise(a))
        inserted = [t.text for t in a if t not in b]
        assert len(inserted) == 2 and not any(t.startswith(f"t{before.id[1:]}-") for t in inserted)


def test_a2t_is_deterministic_for_a_seed():
    exs = [_ex(i, [f"t{i}-{j}" for j in range(7)], (0,)) for i in range(5)]
    assert build_a2t(exs, seed=1) == build_a2t(exs, seed=1)
    assert build_a2t(exs, seed=1) != build_a2t(exs, seed=2)


def test_a2t_rejects_a_position_before_the_evidence():
    with pytest.raises(InputError):
        add_two_turns(_ex(0, ["a", "b", "c", "d", "e"], (2,)), ("x", "y"), position=1)


def test_rct_removes_evidence_and_its_reply():
    ex = _ex(0, ["a0", "b1", "a2", "b3", "a4"], (2,))
    rct = remove_contradicting_turns(ex)
    assert [t.text for t in rct.dialogue.turns] == ["a0", "b1", "a4"]
    assert rct.label is False and rct.evidence == ()
    loose = remove_contradicting_turns(ex, keep_alternation=False)
    assert [t.text for t in loose.dialogue.turns] == ["a0", "b1", "b3", "a4"]
