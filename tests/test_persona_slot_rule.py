"""The persona-slot rule of benchmarks/persona_slot_rule.py, on a stand-in WordNet."""

from types import SimpleNamespace

from dialcheck.io import parse_dialogue


class _WordNet:
    """Occupation nouns sit under worker.n.01; everything else under person.n.01."""

    JOBS = frozenset({"nurse", "teacher", "cashier", "paralegal"})

    def synsets(self, noun, pos):
        root = "worker.n.01" if noun in self.JOBS else "person.n.01"
        path = [SimpleNamespace(name=lambda: "entity.n.01"), SimpleNamespace(name=lambda r=root: r)]
        return [SimpleNamespace(hypernym_paths=lambda p=path: [p])]


def _fires(load_benchmark, turns, rule="jobs"):
    psr = load_benchmark("persona_slot_rule")
    rules = psr.SlotRules(_WordNet())
    return rules.fires(parse_dialogue(turns), getattr(rules, rule))


def test_a_changed_job_of_the_same_speaker_fires(load_benchmark):
    filler = ["What do you do?", "I work as a nurse.", "Nice.", "Thanks.", "And weekends?"]
    assert _fires(load_benchmark, [*filler, "I'm a teacher at a high school."])
    assert not _fires(load_benchmark, [*filler, "I'm a nurse at the children's hospital."])  # a word shared
    assert not _fires(load_benchmark, [*filler, "I'm a big fan of weekends."])  # no occupation noun


def test_the_other_speakers_job_and_other_slots_do_not_fire(load_benchmark):
    turns = ["I work as a cashier.", "I'm a paralegal.", "Cool.", "I live in Ohio."]
    assert not _fires(load_benchmark, turns)  # the paralegal is the other speaker
    moved = ["Where are you from?", "I live in Texas.", "Nice!", "I live in Ohio."]
    assert _fires(load_benchmark, moved, "facts") and not _fires(load_benchmark, moved, "jobs")
    assert not _fires(load_benchmark, [*moved[:3], "I live in Texas, near Austin."], "facts")
