"""N-best lists from an OpenAI-compatible chat endpoint (vLLM, llama.cpp server, Ollama, TGI, ...).

The endpoint samples ``n`` replies per request (``POST {base_url}/chat/completions``); beam search is
not part of the API, so only ``nucleus`` and ``top_k`` decoding are offered. Only the standard library
is used. With ``logprobs=True`` (if the server supports it) each candidate's score is the sum of its
token log-probabilities divided by its length; otherwise candidates have no score and keep the server's
order.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any

from ..errors import InputError, ModelError
from ..schema import Dialogue, Turn
from .nbest import Candidate, DecodingConfig, as_dialogue, reply_speaker

__all__ = ["OpenAIChatGenerator"]


class OpenAIChatGenerator:
    """Samples n replies per context from a chat-completions endpoint."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout: float = 60.0,
        system_prompt: str | None = None,
        logprobs: bool = False,
        max_requests_per_context: int = 8,
    ) -> None:
        from urllib.parse import urlsplit

        parts = urlsplit(str(base_url).strip())
        if parts.scheme not in ("http", "https") or not parts.netloc:  # urllib's ValueError traceback at the first call
            raise InputError(f"endpoint: expected an http:// or https:// URL, got {base_url!r}")
        self.base_url = str(base_url).strip().rstrip("/")
        self.model = model
        self.api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        self.timeout = timeout
        self.system_prompt = system_prompt
        self.logprobs = logprobs
        self.max_requests = max_requests_per_context

    def messages(self, context: Dialogue | Sequence[Turn | str], speaker: str | None = None) -> list[dict[str, str]]:
        d = as_dialogue(context)
        if not d.turns:
            raise InputError("the context has no turns")
        sp = speaker or reply_speaker(d)
        msgs = [{"role": "system", "content": self.system_prompt}] if self.system_prompt else []
        roles = {"system": "system", sp: "assistant"}  # the replying speaker wins; anyone else is the user
        return msgs + [{"role": roles.get(t.speaker, "user"), "content": t.text} for t in d.turns]

    def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        req = urllib.request.Request(
            f"{self.base_url}/chat/completions", json.dumps(body).encode("utf-8"), headers, method="POST"
        )
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                return json.loads(resp.read().decode("utf-8"))
        except urllib.error.HTTPError as e:
            detail = e.read().decode("utf-8", "replace")[:300]
            raise ModelError(f"{self.base_url}: the endpoint answered {e.code}: {detail}") from None
        except (urllib.error.URLError, TimeoutError, OSError) as e:
            raise ModelError(f"{self.base_url}: cannot reach the endpoint ({e})") from None
        except json.JSONDecodeError:
            raise ModelError(f"{self.base_url}: the endpoint did not answer with JSON") from None

    def _body(self, msgs: list[dict[str, str]], cfg: DecodingConfig, n: int) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": msgs,
            "n": n,
            "max_tokens": cfg.max_new_tokens,
            "temperature": cfg.temperature,
            "seed": cfg.seed,
        }
        if cfg.strategy == "nucleus":
            body["top_p"] = cfg.top_p
        else:
            body["top_k"] = cfg.top_k  # not in OpenAI's API; vLLM, llama.cpp and Ollama's compatible servers accept it
        if self.logprobs:
            body["logprobs"] = True
        return body

    def generate(
        self,
        contexts: Sequence[Dialogue | Sequence[Turn | str]],
        config: DecodingConfig | str = "nucleus10",
        speaker: str | None = None,
        **_: Any,
    ) -> list[list[Candidate]]:
        cfg = DecodingConfig.parse(config) if isinstance(config, str) else config.validate()
        if cfg.strategy not in ("nucleus", "top_k"):
            raise InputError(
                f"an OpenAI-compatible endpoint samples replies: use nucleus or top_k, not {cfg.strategy} "
                "(beam search needs a local model: dialcheck.generation.NBestGenerator)"
            )
        out = []
        for context in contexts:
            msgs = self.messages(context, speaker)
            cands: list[Candidate] = []
            for _attempt in range(self.max_requests):
                data = self._post(self._body(msgs, cfg, cfg.n - len(cands)))
                choices = data.get("choices")
                if not isinstance(choices, list) or not choices:
                    raise ModelError(f"{self.base_url}: the answer has no choices")
                for ch in choices:
                    cands.append(_candidate(ch))
                if len(cands) >= cfg.n:
                    break
            if self.logprobs:
                cands.sort(key=lambda c: -(c.score if c.score is not None else float("-inf")))
            out.append(cands[: cfg.n])
        return out


def _candidate(choice: dict[str, Any]) -> Candidate:
    msg = choice.get("message") or {}
    text = msg.get("content")
    if not isinstance(text, str):
        raise ModelError("a choice has no message content")
    score, n = None, 0
    lp = (choice.get("logprobs") or {}).get("content")
    if isinstance(lp, list) and lp:
        vals = [float(t["logprob"]) for t in lp if isinstance(t, dict) and "logprob" in t]
        if vals:
            score, n = sum(vals) / len(vals), len(vals)
    return Candidate(text.strip(), score, n)
