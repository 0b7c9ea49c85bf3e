"""N-best reply lists from any Hugging Face causal LM: beam, diverse beam, nucleus, top-k, greedy.

>>> cfg = DecodingConfig.parse("beam10")
>>> cfg.strategy, cfg.n, cfg.beams
('beam', 10, 10)
>>> DecodingConfig.parse("diverse10").groups, DecodingConfig.parse("nucleus20").top_p
(10, 0.9)

A context is a :class:`dialcheck.schema.Dialogue` (or a list of strings with alternating speakers);
the reply is spoken by ``speaker`` (default: :func:`~dialcheck.io.reply_speaker`, the speaker of the second-to-last
turn). With a chat template the replying speaker's turns become ``assistant`` messages and the others ``user``; without
one (base models such as Gemma-3-270m) a plain ``User:``/``Assistant:`` transcript is used and the reply
ends at the first newline.

Every candidate carries the generator's own score: the sum of its token log-probabilities under the
model (no sampling warpers, no diversity penalty) divided by ``length ** length_penalty`` -- the beam
search ranking score.

The prompt is run through the model once per batch and its key/value cache copied to every beam or
sample (``prefix_cache=True``); transformers' own ``generate`` would run the prompt once per beam, which
dominates the cost of wide beams on a CPU. The results are the same either way.

Diverse beam search (Vijayakumar et al. 2018) is no longer built into transformers (it moved to a hub
repository, which is out of reach offline). It is run here group by group: group ``g`` is an ordinary
beam search whose log-probabilities at step ``t`` are lowered by ``diversity_penalty`` times the number
of times each token was chosen at step ``t`` by groups ``1..g-1`` (Hamming diversity). Groups depend
only on earlier groups, so this equals the step-synchronous algorithm, except that tokens chosen at
the very last step of a group are not seen by later groups.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..errors import InputError
from ..io import reply_speaker
from ..schema import Dialogue, Turn

__all__ = ["STRATEGIES", "Candidate", "DecodingConfig", "NBestGenerator", "as_dialogue", "reply_speaker"]

log = logging.getLogger(__name__)

STRATEGIES = ("greedy", "beam", "diverse_beam", "nucleus", "top_k")
_SHORT = {"diverse": "diverse_beam", "dbs": "diverse_beam", "topk": "top_k", "top-k": "top_k", "sample": "nucleus"}


@dataclass(frozen=True)
class DecodingConfig:
    """How to decode an n-best list. ``n`` candidates are returned per context."""

    strategy: str = "beam"
    n: int = 10
    num_beams: int | None = None  # beam / diverse_beam: default n
    num_beam_groups: int | None = None  # diverse_beam: default = beams (one beam per group)
    diversity_penalty: float = 0.5
    length_penalty: float = 1.0
    top_p: float = 0.9
    top_k: int = 40
    temperature: float = 1.0
    max_new_tokens: int = 32
    no_repeat_ngram_size: int = 0
    repetition_penalty: float = 1.0
    seed: int = 0

    @property
    def beams(self) -> int:
        return int(self.num_beams or self.n) if self.strategy in ("beam", "diverse_beam") else 1

    @property
    def groups(self) -> int:
        return int(self.num_beam_groups or self.beams) if self.strategy == "diverse_beam" else 1

    @property
    def name(self) -> str:
        """Short label, e.g. ``beam10``, ``diverse10``, ``nucleus10``."""
        short = {"diverse_beam": "diverse", "top_k": "topk"}.get(self.strategy, self.strategy)
        return short if self.strategy == "greedy" else f"{short}{self.n}"

    def validate(self) -> DecodingConfig:
        if self.strategy not in STRATEGIES:
            raise InputError(f"unknown decoding strategy {self.strategy!r}; use one of {', '.join(STRATEGIES)}")
        if self.n < 1 or self.max_new_tokens < 1:
            raise InputError("n and max_new_tokens must be at least 1")
        if self.strategy == "greedy" and self.n != 1:
            raise InputError("greedy decoding returns one candidate: use n=1 (or beam / nucleus for n-best lists)")
        if self.strategy in ("beam", "diverse_beam") and self.beams < self.n:
            raise InputError(f"{self.beams} beams cannot return {self.n} candidates")
        if self.strategy == "diverse_beam" and self.beams % self.groups:
            raise InputError(f"{self.beams} beams cannot be split into {self.groups} equal groups")
        if not 0 < self.top_p <= 1 or self.top_k < 1 or self.temperature <= 0:
            raise InputError("top_p must lie in (0, 1], top_k >= 1 and temperature > 0")
        return self

    @classmethod
    def parse(cls, spec: str, **overrides: Any) -> DecodingConfig:
        """``beam10``, ``diverse10``, ``nucleus10``, ``topk10``, ``greedy`` (plus keyword overrides)."""
        m = re.fullmatch(r"([a-z_\-]+?)(\d+)?", spec.strip().lower())
        if not m:
            raise InputError(f"cannot read decoding spec {spec!r} (e.g. beam10, diverse10, nucleus10, topk10)")
        strategy = _SHORT.get(m.group(1), m.group(1))
        n = int(m.group(2)) if m.group(2) else (1 if strategy == "greedy" else 10)
        return replace(cls(strategy=strategy, n=n), **overrides).validate()


@dataclass(frozen=True)
class Candidate:
    """One generated reply with the generator's score (higher is better) and its length in tokens."""

    text: str
    score: float | None = None
    tokens: int = 0


def _as_turn(t: Turn | str, i: int) -> Turn:
    return t if isinstance(t, Turn) else Turn("AB"[i % 2], str(t))


def as_dialogue(context: Dialogue | Sequence[Turn | str]) -> Dialogue:
    """A :class:`Dialogue` from a dialogue or a list of turns/strings (alternating speakers A/B)."""
    if isinstance(context, Dialogue):
        return context
    if isinstance(context, str):
        raise InputError("a context is a list of turns, not a single string")
    return Dialogue(tuple(_as_turn(t, i) for i, t in enumerate(context)))


class _Recorder:
    """Logits processor that remembers, per input and step, the tokens a beam group chose."""

    def __init__(self, prompt_len: int, beams: int, store: list[dict[int, list[int]]]) -> None:
        self.prompt_len, self.beams, self.store = prompt_len, beams, store

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        step = input_ids.shape[1] - self.prompt_len - 1  # the step whose tokens are the last column
        if step >= 0:
            last = input_ids[:, -1].tolist()
            for b in range(len(self.store)):
                self.store[b].setdefault(step, []).extend(last[b * self.beams : (b + 1) * self.beams])
        return scores


class _HammingDiversity:
    """Lowers the scores of tokens that earlier beam groups chose at the same step."""

    def __init__(self, prompt_len: int, beams: int, store: list[dict[int, list[int]]], penalty: float) -> None:
        self.prompt_len, self.beams, self.store, self.penalty = prompt_len, beams, store, penalty

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import torch

        step = input_ids.shape[1] - self.prompt_len
        for b in range(len(self.store)):
            chosen = self.store[b].get(step)
            if not chosen:
                continue
            counts = torch.bincount(torch.tensor(chosen), minlength=scores.shape[1]).to(scores.dtype)
            scores[b * self.beams : (b + 1) * self.beams] -= self.penalty * counts
        return scores


def _cache_key(model: Any) -> str:
    """The keyword that passes a KV cache to ``model`` and its ``generate``: ``cache`` where its forward takes one
    (transformers 5.2x, where ``past_key_values`` is deprecated, to be removed in 5.40), else ``past_key_values``."""
    import inspect

    return "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"


def _expanded(prefix: Any, times: int, key: str = "past_key_values") -> dict[str, Any]:
    """``{key: copy of the prefix cache with each row repeated}`` (empty without a prefix); ``key``:
    :func:`_cache_key`."""
    if prefix is None:
        return {}
    import copy

    cache = copy.deepcopy(prefix)
    if times > 1:
        cache.batch_repeat_interleave(times)
    return {key: cache}


class NBestGenerator:
    """Generates n-best reply lists with a causal LM (batched, chat template when the model has one)."""

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        chat_template: bool | None = None,
        system_prompt: str | None = None,
        max_context_tokens: int = 512,
        prefix_cache: bool = True,
    ) -> None:
        from .lm import prepare_tokenizer

        self.model = model
        self.tokenizer = prepare_tokenizer(tokenizer, model)
        has_template = bool(getattr(tokenizer, "chat_template", None))
        if chat_template and not has_template:
            raise InputError("the tokenizer has no chat template")
        self.chat_template = has_template if chat_template is None else chat_template
        self.system_prompt = system_prompt
        self.max_context_tokens = max_context_tokens
        self.prefix_cache = prefix_cache

    @classmethod
    def load(cls, lm: str | None = None, **kw: Any) -> NBestGenerator:
        """A generator on a known LM name (default SmolLM2-135M-Instruct) or a local HF folder."""
        from .lm import load_lm

        model, tok = load_lm(lm)
        return cls(model, tok, **kw)

    # -- prompts ----------------------------------------------------------------------------------
    def _render(self, turns: Sequence[Turn], speaker: str) -> str:
        if self.chat_template:
            msgs = [{"role": "system", "content": self.system_prompt}] if self.system_prompt else []
            msgs += [{"role": "assistant" if t.speaker == speaker else "user", "content": t.text} for t in turns]
            return str(self.tokenizer.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True))
        lines = [self.system_prompt] if self.system_prompt else []
        lines += [f"{'Assistant' if t.speaker == speaker else 'User'}: {t.text}" for t in turns]
        return "\n".join([*lines, "Assistant:"])

    def prompt(self, context: Dialogue | Sequence[Turn | str], speaker: str | None = None) -> str:
        """The prompt text for ``context``; the oldest turns are dropped to fit ``max_context_tokens``."""
        d = as_dialogue(context)
        if not d.turns:
            raise InputError("the context has no turns")
        speaker = speaker or reply_speaker(d)
        turns = list(d.turns)
        for start in range(len(turns)):
            text = self._render(turns[start:], speaker)
            if start == len(turns) - 1 or len(self.tokenizer(text, add_special_tokens=False)["input_ids"]) <= (
                self.max_context_tokens
            ):
                return text
        return text  # pragma: no cover

    # -- generation -------------------------------------------------------------------------------
    def generate(
        self,
        contexts: Sequence[Dialogue | Sequence[Turn | str]],
        config: DecodingConfig | str = "beam10",
        batch_size: int = 4,
        speaker: str | None = None,
        show_progress_bar: bool = False,
    ) -> list[list[Candidate]]:
        """One n-best list (best first) per context, in input order."""
        import torch

        cfg, prompts, batches = self.batch_plan(contexts, config, batch_size, speaker)
        out: list[list[Candidate]] = [[] for _ in prompts]
        if show_progress_bar:
            from tqdm.auto import tqdm

            batches = tqdm(batches, desc=f"generating ({cfg.name})", unit="batch")
        torch.manual_seed(cfg.seed)
        for idx in batches:
            for i, cands in zip(idx, self.generate_batch([prompts[i] for i in idx], cfg), strict=True):
                out[i] = cands
        return out

    def batch_plan(
        self,
        contexts: Sequence[Dialogue | Sequence[Turn | str]],
        config: DecodingConfig | str = "beam10",
        batch_size: int = 4,
        speaker: str | None = None,
    ) -> tuple[DecodingConfig, list[str], list[list[int]]]:
        """The decoding config, the prompts and the batches (context indices, shortest prompts first) that
        :meth:`generate` runs. Running ``torch.manual_seed(cfg.seed)`` and then :meth:`generate_batch` on each batch
        in order gives :meth:`generate`'s lists; ``dialcheck collect responses`` does so to save each batch as it
        goes (and to resume after an interruption)."""
        cfg = DecodingConfig.parse(config) if isinstance(config, str) else config.validate()
        prompts = [self.prompt(c, speaker) for c in contexts]
        order = sorted(range(len(prompts)), key=lambda i: len(prompts[i]))
        return cfg, prompts, [order[s : s + batch_size] for s in range(0, len(order), batch_size)]

    def _stop_ids(self) -> list[int]:
        ids = [self.tokenizer.eos_token_id] if self.tokenizer.eos_token_id is not None else []
        if not self.chat_template:
            nl = self.tokenizer("\n", add_special_tokens=False)["input_ids"]
            ids += nl[-1:]
        return ids

    def generate_batch(self, prompts: list[str], cfg: DecodingConfig) -> list[list[Candidate]]:
        """One n-best list per prompt of one batch, drawing on torch's RNG where ``cfg`` samples (see
        :meth:`batch_plan`)."""
        import torch

        tok = self.tokenizer
        enc = tok(prompts, return_tensors="pt", padding=True, add_special_tokens=not self.chat_template)
        prompt_len = enc["input_ids"].shape[1]
        common: dict[str, Any] = {
            "max_new_tokens": cfg.max_new_tokens,
            "pad_token_id": tok.pad_token_id,
            "eos_token_id": self._stop_ids(),
            "return_dict_in_generate": True,
            "output_logits": True,
        }
        if cfg.no_repeat_ngram_size:
            common["no_repeat_ngram_size"] = cfg.no_repeat_ngram_size
        if cfg.repetition_penalty != 1.0:
            common["repetition_penalty"] = cfg.repetition_penalty
        runs: list[tuple[Any, int]] = []  # (generate output, candidates per input)
        with torch.inference_mode():
            prefix = self._prefill(enc) if self.prefix_cache else None
            if cfg.strategy in ("greedy", "beam"):
                kw = {"num_beams": cfg.beams, "num_return_sequences": cfg.n, "do_sample": False}
                if cfg.beams > 1:
                    kw.update(length_penalty=cfg.length_penalty, early_stopping=True)
                cache = _expanded(prefix, cfg.beams, _cache_key(self.model))
                runs.append((self.model.generate(**enc, **common, **kw, **cache), cfg.n))
            elif cfg.strategy in ("nucleus", "top_k"):
                kw = {"do_sample": True, "num_return_sequences": cfg.n, "temperature": cfg.temperature}
                if cfg.strategy == "nucleus":
                    kw.update(top_p=cfg.top_p, top_k=0)
                else:
                    kw.update(top_k=cfg.top_k, top_p=1.0)
                cache = _expanded(prefix, cfg.n, _cache_key(self.model))
                runs.append((self.model.generate(**enc, **common, **kw, **cache), cfg.n))
            else:
                runs.extend(self._diverse(enc, prompt_len, cfg, common, prefix))
        lists: list[list[Candidate]] = [[] for _ in prompts]
        for gen, per in runs:
            cands = self._candidates(gen, prompt_len, cfg)
            for b in range(len(prompts)):
                lists[b].extend(cands[b * per : (b + 1) * per])
        for b in range(len(prompts)):
            if cfg.strategy != "beam":  # beam search returns its list in rank order already
                lists[b].sort(key=lambda c: -(c.score if c.score is not None else -math.inf))
            lists[b] = lists[b][: cfg.n]
        return lists

    def _prefill(self, enc: Any) -> Any:
        """The KV cache of every prompt but its last token, computed once (not once per beam)."""
        from transformers import DynamicCache

        ids, mask = enc["input_ids"], enc["attention_mask"]
        if ids.shape[1] < 2:
            return None
        pos = (mask.long().cumsum(-1) - 1).masked_fill(mask == 0, 0)
        cache = DynamicCache(config=self.model.config)
        kw = {_cache_key(self.model): cache}
        self.model(input_ids=ids[:, :-1], attention_mask=mask[:, :-1], position_ids=pos[:, :-1], **kw)
        return cache

    def _diverse(
        self, enc: Any, prompt_len: int, cfg: DecodingConfig, common: dict[str, Any], prefix: Any = None
    ) -> list[Any]:
        from transformers import LogitsProcessorList

        per_group = cfg.beams // cfg.groups
        store: list[dict[int, list[int]]] = [{} for _ in range(enc["input_ids"].shape[0])]
        runs = []
        for g in range(cfg.groups):
            procs = LogitsProcessorList([_Recorder(prompt_len, per_group, store)])
            if g > 0:
                procs.insert(0, _HammingDiversity(prompt_len, per_group, store, cfg.diversity_penalty))
            kw: dict[str, Any] = {"num_beams": per_group, "num_return_sequences": per_group, "do_sample": False}
            if per_group > 1:
                kw.update(length_penalty=cfg.length_penalty, early_stopping=True)
            cache = _expanded(prefix, per_group, _cache_key(self.model))
            runs.append((self.model.generate(**enc, **common, **kw, **cache, logits_processor=procs), per_group))
        return runs

    def _candidates(self, gen: Any, prompt_len: int, cfg: DecodingConfig) -> list[Candidate]:

        seqs = gen.sequences[:, prompt_len:]
        # log-probabilities of the chosen tokens under the raw model logits (no warpers, no penalties)
        beam_indices = getattr(gen, "beam_indices", None)
        logp = self.model.compute_transition_scores(gen.sequences, gen.logits, beam_indices, normalize_logits=True)
        stop = set(self._stop_ids())
        out = []
        lp = cfg.length_penalty if cfg.beams > 1 else 1.0
        for r in range(seqs.shape[0]):
            ids = seqs[r].tolist()
            n = len(ids)
            for j, t in enumerate(ids):
                if t in stop:
                    n = j + 1  # the stop token counts, as in beam search scores
                    break
            total = float(logp[r, :n].sum()) if n else 0.0
            text = self.tokenizer.decode([t for t in ids[:n] if t not in stop], skip_special_tokens=True)
            text = text.split("\n")[0].strip() if not self.chat_template else text.strip()
            out.append(Candidate(text, total / max(n, 1) ** lp, n))
        return out

    # -- scoring ----------------------------------------------------------------------------------
    def score(
        self,
        context: Dialogue | Sequence[Turn | str],
        candidates: Sequence[str],
        speaker: str | None = None,
        batch_size: int = 16,
    ) -> list[float]:
        """Mean token log-probability of each candidate as the reply to ``context`` (for ranking
        candidates that came from somewhere else)."""
        import torch

        prompt = self.prompt(context, speaker)
        tok = self.tokenizer
        p_ids = tok(prompt, add_special_tokens=not self.chat_template)["input_ids"]
        end = [tok.eos_token_id] if self.chat_template and tok.eos_token_id is not None else []
        scores = []
        for s in range(0, len(candidates), batch_size):
            chunk = candidates[s : s + batch_size]
            rows = [p_ids + tok(c, add_special_tokens=False)["input_ids"] + end for c in chunk]
            width = max(len(r) for r in rows)
            ids = torch.full((len(rows), width), tok.pad_token_id, dtype=torch.long)
            mask = torch.zeros_like(ids)
            for i, r in enumerate(rows):
                ids[i, : len(r)] = torch.tensor(r)
                mask[i, : len(r)] = 1
            with torch.inference_mode():
                logits = self.model(input_ids=ids, attention_mask=mask).logits.float()
            logp = torch.log_softmax(logits[:, :-1], dim=-1).gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze(-1)
            for i, r in enumerate(rows):
                span = logp[i, len(p_ids) - 1 : len(r) - 1]
                scores.append(float(span.mean()) if len(span) else 0.0)
        return scores
