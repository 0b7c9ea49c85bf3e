"""N-best generation on a tiny random LM, LM resolution, and the OpenAI-compatible adapter."""

from __future__ import annotations

import json
import math
import threading
import warnings
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from dialcheck.errors import InputError, ModelError
from dialcheck.generation import Candidate, DecodingConfig, NBestGenerator, OpenAIChatGenerator
from dialcheck.generation.lm import canonical_lm_name, load_lm, resolve_lm
from dialcheck.schema import Dialogue, Turn
from helpers_generation import build_tiny_lm

CTX = ["I have two dogs.", "What are their names?"]
CTX2 = ["hi", "hello", "how are you?"]


@pytest.fixture(scope="module")
def tiny_lm_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_lm(tmp_path_factory.mktemp("tiny-lm"))


@pytest.fixture(scope="module")
def gen(tiny_lm_dir: Path) -> NBestGenerator:
    model, tok = load_lm(str(tiny_lm_dir))
    return NBestGenerator(model, tok)


def _logprob_sum(gen: NBestGenerator, context, text_ids: list[int]) -> float:
    """Teacher-forced sum of log-probabilities of the generated ids after the prompt."""
    import torch

    p = gen.tokenizer(gen.prompt(context), add_special_tokens=False)["input_ids"]
    ids = torch.tensor([p + text_ids])
    with torch.no_grad():
        logp = torch.log_softmax(gen.model(input_ids=ids).logits.float(), -1)
    return float(sum(logp[0, len(p) - 1 + j, t] for j, t in enumerate(text_ids)))


def test_decoding_specs_parse_and_bad_ones_are_refused():
    assert DecodingConfig.parse("beam40").beams == 40
    d = DecodingConfig.parse("diverse10")
    assert (d.strategy, d.beams, d.groups) == ("diverse_beam", 10, 10)
    assert DecodingConfig.parse("topk5").strategy == "top_k"
    assert DecodingConfig.parse("nucleus10", top_p=0.5).top_p == 0.5
    for bad in ("wide10", "greedy3", "beam"):
        if bad == "beam":
            assert DecodingConfig.parse(bad).n == 10
            continue
        with pytest.raises(InputError):
            DecodingConfig.parse(bad)
    with pytest.raises(InputError, match="equal groups"):
        DecodingConfig.parse("diverse10", num_beam_groups=3)
    with pytest.raises(InputError, match="cannot return"):
        DecodingConfig(strategy="beam", n=10, num_beams=5).validate()


def test_chat_template_maps_the_replying_speaker_to_assistant(gen):
    p = gen.prompt(CTX)
    assert p.index("assistant I have two dogs.") < p.index("user What are their names?")
    assert p.rstrip().endswith("<|im_start|> assistant")
    d = Dialogue((Turn("bot", "I have two dogs."), Turn("user", "What are their names?")))
    assert gen.prompt(d) == p
    assert "user I have two dogs." in gen.prompt(d, speaker="user")


def test_prompt_without_template_is_a_transcript(tiny_lm_dir):
    model, tok = load_lm(str(tiny_lm_dir))
    tok.chat_template = None
    g = NBestGenerator(model, tok)
    assert g.prompt(CTX) == "Assistant: I have two dogs.\nUser: What are their names?\nAssistant:"


def test_long_contexts_lose_their_oldest_turns(tiny_lm_dir):
    model, tok = load_lm(str(tiny_lm_dir))
    g = NBestGenerator(model, tok, max_context_tokens=25)
    long_ctx = ["the dog went home ." * 3, "hi", "hello", "how are you?"]
    p = g.prompt(long_ctx)
    assert "the dog went home" not in p and "how are you?" in p
    assert len(tok(p, add_special_tokens=False)["input_ids"]) <= 25


def test_beam_lists_are_ranked_and_scores_are_length_normalised_logprobs(gen):
    cfg = DecodingConfig.parse("beam4", max_new_tokens=5)
    lists = gen.generate([CTX, CTX2], cfg, batch_size=2)
    assert [len(x) for x in lists] == [4, 4]
    for cands in lists:
        scores = [c.score for c in cands]
        assert scores == sorted(scores, reverse=True)
        assert all(isinstance(c, Candidate) and math.isfinite(c.score) for c in cands)
    # the best beam's score is its teacher-forced log-probability divided by its length
    best = gen.generate([CTX], DecodingConfig.parse("greedy", max_new_tokens=5))[0][0]
    ids = gen.tokenizer(best.text, add_special_tokens=False)["input_ids"]
    assert len(ids) == best.tokens  # the word-level tokenizer round-trips (no stop token was generated)
    assert best.score == pytest.approx(_logprob_sum(gen, CTX, ids) / best.tokens, abs=1e-4)


def test_one_beam_equals_greedy_and_batching_does_not_change_results(gen):
    greedy = gen.generate([CTX2], DecodingConfig.parse("greedy", max_new_tokens=6))[0]
    one_beam = gen.generate([CTX2], DecodingConfig(strategy="beam", n=1, num_beams=1, max_new_tokens=6))[0]
    assert [c.text for c in greedy] == [c.text for c in one_beam]
    cfg = DecodingConfig.parse("beam3", max_new_tokens=6)
    alone = gen.generate([CTX2], cfg)[0]
    batched = gen.generate([CTX, CTX2, ["hi"]], cfg, batch_size=3)[1]
    assert [c.text for c in alone] == [c.text for c in batched]
    assert [c.score for c in alone] == pytest.approx([c.score for c in batched], abs=1e-4)


def test_diverse_beam_groups_start_differently_under_a_large_penalty(gen):
    cfg = DecodingConfig.parse("diverse4", max_new_tokens=4, diversity_penalty=1e4)
    cands = gen.generate([CTX], cfg)[0]
    assert len(cands) == 4
    firsts = [gen.tokenizer(c.text, add_special_tokens=False)["input_ids"][:1] for c in cands]
    assert len({tuple(f) for f in firsts}) == 4
    # without a penalty every group is the same greedy search
    same = gen.generate([CTX], DecodingConfig.parse("diverse4", max_new_tokens=4, diversity_penalty=0.0))[0]
    assert len({c.text for c in same}) == 1


def test_sampling_is_seeded_and_a_tiny_top_p_is_greedy(gen):
    cfg = DecodingConfig.parse("nucleus5", max_new_tokens=5, seed=3)
    a = gen.generate([CTX], cfg)[0]
    b = gen.generate([CTX], cfg)[0]
    assert [c.text for c in a] == [c.text for c in b]
    greedy = gen.generate([CTX], DecodingConfig.parse("greedy", max_new_tokens=5))[0][0].text
    narrow = gen.generate([CTX], DecodingConfig.parse("nucleus3", max_new_tokens=5, top_p=1e-6))[0]
    assert {c.text for c in narrow} == {greedy}
    topk1 = gen.generate([CTX], DecodingConfig.parse("topk3", max_new_tokens=5, top_k=1))[0]
    assert {c.text for c in topk1} == {greedy}


def test_score_ranks_the_models_own_greedy_reply_above_noise(gen):
    greedy = gen.generate([CTX], DecodingConfig.parse("greedy", max_new_tokens=5))[0][0].text
    s_greedy, s_noise = gen.score(CTX, [greedy, "fido fido fido fido fido"])
    assert s_greedy > s_noise


def test_unknown_lm_names_are_refused_and_aliases_resolve(tmp_path):
    assert canonical_lm_name("SMOLLM2") == "SmolLM2-135M-Instruct"
    with pytest.raises(ModelError, match="unknown language model"):
        resolve_lm(str(tmp_path / "nothing-here"))


def test_known_lm_is_read_from_the_cache_once_converted(tmp_path, monkeypatch, tiny_lm_dir):
    import shutil

    monkeypatch.setenv("DIALCHECK_CACHE", str(tmp_path))
    shutil.copytree(tiny_lm_dir, tmp_path / "smollm2-135m-instruct")
    assert resolve_lm("smollm2") == tmp_path / "smollm2-135m-instruct"


@pytest.mark.slow
def test_real_smollm2_beam_search_gives_english_replies():
    g = NBestGenerator.load("SmolLM2-135M-Instruct")
    cands = g.generate([["I'm in North Carolina.", "Are you in North Carolina?"]], "beam5")[0]
    assert len(cands) == 5 and any("Carolina" in c.text for c in cands)


# -- OpenAI-compatible endpoint -------------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    requests: list = []  # noqa: RUF012

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
        if body["model"] == "broken":
            self.send_response(500)
            self.end_headers()
            self.wfile.write(b"boom")
            return
        n = min(body["n"], 2)  # serves at most two choices per request, like some servers
        last = body["messages"][-1]["content"]
        choices = [
            {
                "index": i,
                "message": {"role": "assistant", "content": f" reply {len(type(self).requests)}.{i} to {last} "},
                "logprobs": {"content": [{"logprob": -1.0 * (i + 1)}, {"logprob": -1.0}]},
            }
            for i in range(n)
        ]
        data = json.dumps({"choices": choices}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    _Handler.requests = []
    srv = HTTPServer(("127.0.0.1", 0), _Handler)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}/v1"
    srv.shutdown()
    srv.server_close()


def test_openai_adapter_collects_n_samples_with_roles_and_scores(server):
    g = OpenAIChatGenerator(server, "tiny", api_key="k", logprobs=True)
    out = g.generate([CTX], DecodingConfig.parse("nucleus3", max_new_tokens=7, top_p=0.8))
    assert len(out) == 1 and len(out[0]) == 3
    reqs = _Handler.requests
    assert len(reqs) == 2 and reqs[0]["path"] == "/v1/chat/completions" and reqs[0]["auth"] == "Bearer k"
    body = reqs[0]["body"]
    assert body["n"] == 3 and reqs[1]["body"]["n"] == 1
    assert body["max_tokens"] == 7 and body["top_p"] == 0.8 and body["logprobs"] is True
    assert [m["role"] for m in body["messages"]] == ["assistant", "user"]
    assert out[0][0].text.startswith("reply") and out[0][0].text.endswith("What are their names?")
    scores = [c.score for c in out[0]]
    assert scores == sorted(scores, reverse=True) and scores[0] == pytest.approx(-1.0)


def test_openai_adapter_refuses_beam_search_and_reports_server_errors(server):
    with pytest.raises(InputError, match="nucleus or top_k"):
        OpenAIChatGenerator(server, "tiny").generate([CTX], "beam4")
    with pytest.raises(ModelError, match="500"):
        OpenAIChatGenerator(server, "broken").generate([CTX], "nucleus2")
    with pytest.raises(ModelError, match="cannot reach"):
        OpenAIChatGenerator("http://127.0.0.1:9/v1", "x", timeout=2).generate([CTX], "nucleus2")


@pytest.mark.parametrize("spec", ["greedy", "beam4", "diverse4", "nucleus4", "topk3"])
def test_prompt_prefilled_once_gives_the_same_lists_as_plain_generate(tiny_lm_dir, spec):
    model, tok = load_lm(str(tiny_lm_dir))
    fast, plain = NBestGenerator(model, tok, prefix_cache=True), NBestGenerator(model, tok, prefix_cache=False)
    ctxs = [CTX, ["hi"], ["hello how are you", "good", "what did you do today?"]]
    cfg = DecodingConfig.parse(spec, max_new_tokens=6, seed=1)
    with warnings.catch_warnings(record=True) as seen:  # the cache goes under the keyword forward takes
        warnings.simplefilter("always")
        a, b = fast.generate(ctxs, cfg, batch_size=3), plain.generate(ctxs, cfg, batch_size=3)
    assert not [w for w in seen if "past_key_values" in str(w.message)]
    assert [[c.text for c in x] for x in a] == [[c.text for c in x] for x in b]
    assert [c.score for x in a for c in x] == pytest.approx([c.score for x in b for c in x], abs=1e-4)


def test_every_beam_candidate_score_is_its_own_logprob_over_length(gen):
    cands = gen.generate([CTX], DecodingConfig.parse("beam3", max_new_tokens=4, length_penalty=1.0))[0]
    for c in cands:
        ids = gen.tokenizer(c.text, add_special_tokens=False)["input_ids"]
        if len(ids) != c.tokens:  # a stop token ended this beam: it counts in the score but not in the text
            ids = [*ids, gen.tokenizer.eos_token_id]
        assert len(ids) == c.tokens
        assert c.score == pytest.approx(_logprob_sum(gen, CTX, ids) / c.tokens, abs=1e-4)


@pytest.mark.parametrize("url", ["notaurl", "ftp://host/v1", "localhost:8000/v1"])
def test_an_openai_endpoint_that_is_not_an_http_url_is_refused_when_made(url):
    # rerank --endpoint notaurl ended in urllib's "ValueError: unknown url type" traceback at the first request
    from dialcheck.errors import InputError
    from dialcheck.generation.openai import OpenAIChatGenerator

    with pytest.raises(InputError, match="endpoint: expected an http:// or https:// URL"):
        OpenAIChatGenerator(url, "m")
    assert OpenAIChatGenerator(" http://localhost:8000/v1/ ", "m").base_url == "http://localhost:8000/v1"
