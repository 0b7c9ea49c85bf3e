"""One detector shared by the threads of a web app: the same verdicts as calls made one at a time."""

import random
import threading

import pytest

import dialcheck
from dialcheck.detectors.core import PairClassifier
from dialcheck.io import parse_dialogue
from helpers_threads import Arrivals, random_turn

THREADS = 8


def _dialogues(n: int) -> list[list[str]]:
    """Short turns and turns too long for the tiny model's 128-token window (cut, chunked), 2 to 7 turns."""
    rng = random.Random(0)
    return [[random_turn(rng) for _ in range(rng.randint(2, 7))] for _ in range(n)]


def test_one_loaded_detector_checked_from_8_threads_gives_the_verdicts_of_sequential_calls(tiny_detector_dir):
    """A transformers tokenizer sets its truncation and padding on every call: from several threads one call encoded
    with another's settings, and a check failed ("Unable to create tensor ... activate truncation and/or padding")."""
    dialogues = _dialogues(24)
    model = str(tiny_detector_dir)
    det = dialcheck.load(model)
    alone = [det.predict([parse_dialogue(d)])[0] for d in dialogues]
    got: dict[tuple[int, int], dialcheck.Verdict] = {}
    errors: list[BaseException] = []
    start = threading.Barrier(THREADS)

    def work(k: int) -> None:
        try:
            start.wait(30)
            for rep in range(2):
                for i in range(k, len(dialogues), THREADS):
                    got[(i, rep)] = dialcheck.check(dialogues[i], model=model)
        except BaseException as e:  # handed to the test's thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads) and not errors, errors
    assert len(got) == 2 * len(dialogues)
    for (i, _), v in got.items():
        assert (v.contradiction, v.score, v.evidence) == (alone[i].contradiction, alone[i].score, alone[i].evidence)


class _Watched:
    """A tokenizer that records how many calls are in it at once; the first call waits until the other thread has
    come to the tokenizer's lock (one call at a time: it waits there) or into the tokenizer (no lock: both in)."""

    def __init__(self, tok, arrivals):
        self.__dict__.update(tok=tok, arrivals=arrivals, inside=0, most=0, first=True, lock=threading.Lock())

    def __getattr__(self, name):
        return getattr(self.tok, name)

    def __setattr__(self, name, value):
        setattr(self.tok, name, value)

    def __call__(self, *args, **kwargs):
        self.arrivals.arrive()
        with self.lock:
            self.__dict__["inside"] += 1
            self.__dict__["most"] = max(self.most, self.inside)
            first, self.__dict__["first"] = self.first, False
        if first:
            assert self.arrivals.wait_for_others()
        try:
            return self.tok(*args, **kwargs)
        finally:
            with self.lock:
                self.__dict__["inside"] -= 1


def test_a_transformers_tokenizer_is_called_one_call_at_a_time(tiny_detector_dir, monkeypatch):
    from dialcheck.detectors import core

    arrivals = Arrivals()
    lock_of = core.tokenizer_lock
    monkeypatch.setattr(core, "tokenizer_lock", lambda tok: arrivals.lock(lock_of(tok)))
    clf = dialcheck.detectors.load_detector(tiny_detector_dir).classifier
    watched = _Watched(clf.tokenizer, arrivals)
    assert not getattr(watched, "thread_safe", False)
    clf.tokenizer = watched
    pairs = [[("I have a dog.", "I never had pets.")], [("We live in Paris.", "I live in London.")]]
    threads = [threading.Thread(target=clf.score, args=(p,)) for p in pairs]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert watched.most == 1


@pytest.mark.parametrize("side", ["left", "right"])
def test_each_classifier_encodes_with_its_own_truncation_side(tiny_detector_dir, side):
    """The side is set with each call, under the same lock: a classifier sharing a tokenizer with another one (a
    hierarchical detector's stages) never encodes with the other's side."""
    tok = dialcheck.detectors.load_detector(tiny_detector_dir).classifier.tokenizer
    other = PairClassifier(None, tok, ["non_contradiction", "contradiction"], max_length=16, truncation_side="left")
    clf = PairClassifier(None, tok, ["non_contradiction", "contradiction"], max_length=16, truncation_side=side)
    long = " ".join(f"w{i}" for i in range(40))
    other.encode([(long, "ok")])
    ids = clf.encode([(long, "ok")])["input_ids"][0].tolist()
    text = tok.decode(ids, skip_special_tokens=True)
    assert text.startswith("w0") == (side == "right")


def test_a_thread_safe_tokenizer_is_told_the_side_with_each_call(tiny_base):
    """BackendTokenizer is called without a lock: the side was set on it, shared by every classifier reading it, so
    one classifier's call could encode with the side another had just set. It is given with the call now, and the
    tokenizer's own attribute is never touched."""
    from dialcheck.detectors.tokenizer import BackendTokenizer

    tok = BackendTokenizer(tiny_base)
    own = tok.truncation_side
    left = PairClassifier(None, tok, ["non_contradiction", "contradiction"], max_length=16, truncation_side="left")
    right = PairClassifier(None, tok, ["non_contradiction", "contradiction"], max_length=16, truncation_side="right")
    long = " ".join(f"w{i}" for i in range(40))
    assert own == "right"
    first = {"right": right.encode([(long, "ok")], tensors="np"), "left": left.encode([(long, "ok")], tensors="np")}
    assert tok.truncation_side == own  # was "left": the last classifier's side, read by every other's next call
    assert first["left"]["input_ids"][0].tolist() != first["right"]["input_ids"][0].tolist()


def test_two_transformers_tokenizers_are_called_side_by_side(tiny_detector_dir):
    """One call at a time per tokenizer, not per process: another model's tokenizer is not held up. The first
    call waits inside its tokenizer until the other model's call has come into its own (one lock for every
    tokenizer would hold it out: the wait would time out)."""
    a = dialcheck.detectors.load_detector(tiny_detector_dir).classifier
    b = dialcheck.detectors.load_detector(tiny_detector_dir).classifier
    assert a.tokenizer is not b.tokenizer
    b_in, waited = threading.Event(), []
    tok_a, tok_b = a.tokenizer, b.tokenizer

    class Waits:
        def __init__(self, tok, then):
            self.__dict__.update(tok=tok, then=then)

        def __getattr__(self, name):
            return getattr(self.tok, name)

        def __setattr__(self, name, value):
            setattr(self.tok, name, value)

        def __call__(self, *args, **kwargs):
            self.then()
            return self.tok(*args, **kwargs)

    a.tokenizer = Waits(tok_a, lambda: waited.append(b_in.wait(30)))
    b.tokenizer = Waits(tok_b, b_in.set)
    threads = [threading.Thread(target=c.score, args=([("I have a dog.", "I never had pets.")],)) for c in (a, b)]
    threads[0].start()
    threads[1].start()
    for t in threads:
        t.join(60)
    assert waited and all(waited)


@pytest.mark.parametrize("loaded", [True, False])
def test_threads_accelerating_one_shared_detector_switch_it_once(tiny_detector_dir, loaded, monkeypatch):
    """Two threads (a BatchScorer(onnx=True)'s first batches) both exported the detector, and one quantized the
    float32 export the other had just deleted: the first switches it, the other waits and finds it switched."""
    from concurrent.futures import ThreadPoolExecutor

    from dialcheck import api
    from dialcheck.detectors import load_detector

    det = dialcheck.load(str(tiny_detector_dir)) if loaded else load_detector(tiny_detector_dir)
    if not loaded:
        det.path = None  # a detector made in memory (after training): no folder to lock on
    arrivals = Arrivals()
    lock_for = api._lock_for
    monkeypatch.setattr(api, "_lock_for", lambda path: arrivals.lock(lock_for(path)))
    monkeypatch.setattr(api, "_ACCELERATE_LOCK", arrivals.lock(api._ACCELERATE_LOCK))
    calls = []

    def slow_switch(int8=False):
        calls.append(int8)
        arrivals.arrive()
        assert arrivals.wait_for_others()  # the other thread waits at the lock (or switches too, without it)
        det.config.options.update(onnx=True, int8=int8)
        return det

    det.use_onnx = slow_switch
    start = threading.Barrier(2)

    def accelerate(_):
        start.wait(30)
        return api.accelerate(det, onnx=True, int8=True)

    with ThreadPoolExecutor(2) as ex:
        assert list(ex.map(accelerate, range(2))) == [det, det]
    assert calls == [True]
    assert api.accelerate(det, onnx=True, int8=True) is det and calls == [True]


def test_threads_checking_with_the_routed_default_for_the_first_time_load_it_once(tiny_detector_dir, monkeypatch):
    """dialcheck.check without a model, from 8 request threads as a web app starts: one load of the default, one
    detector for all, each thread's own verdicts."""
    from concurrent.futures import ThreadPoolExecutor

    from dialcheck import api
    from dialcheck.detectors import load_detector

    loads = []
    arrivals = Arrivals()
    lock_for = api._lock_for

    def slow_load(path):
        loads.append(path)
        arrivals.arrive()
        assert arrivals.wait_for_others(THREADS - 1)  # every other thread waits at the lock (or loads too)
        return load_detector(path)

    monkeypatch.setattr(api, "default_model_path", lambda language="en": tiny_detector_dir)
    monkeypatch.setattr(api, "load_detector", slow_load)
    monkeypatch.setattr(api, "_lock_for", lambda path: arrivals.lock(lock_for(path)))
    api._cached.cache_clear()
    dialogues = _dialogues(THREADS)
    start = threading.Barrier(THREADS)

    def check(i):
        start.wait(30)
        return dialcheck.check(dialogues[i])

    with ThreadPoolExecutor(THREADS) as ex:
        got = list(ex.map(check, range(THREADS)))
    assert loads == [str(tiny_detector_dir)]
    det = dialcheck.load()
    assert [(v.score, v.evidence) for v in got] == [
        (v.score, v.evidence) for v in (det.predict([parse_dialogue(d)])[0] for d in dialogues)
    ]


def test_one_batch_scorer_shared_by_threads_gives_each_batch_its_own_columns(tiny_detector_dir):
    from concurrent.futures import ThreadPoolExecutor

    from dialcheck.batch import BatchScorer

    scorer = BatchScorer(str(tiny_detector_dir))
    dialogues = _dialogues(4 * THREADS)
    batches = [{"turns": dialogues[i : i + 4], "id": list(range(i, i + 4))} for i in range(0, len(dialogues), 4)]
    alone = [scorer(b) for b in batches]
    start = threading.Barrier(THREADS)

    def score(b):
        start.wait(30)
        return scorer(b)

    with ThreadPoolExecutor(THREADS) as ex:
        assert list(ex.map(score, batches)) == alone
