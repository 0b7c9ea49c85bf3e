"""A tokenizer read straight from a ``tokenizer.json`` with the ``tokenizers`` library, for the pair core.

transformers' tokenizer classes import torch (about 1.2 s and 200 MB of a ``dialcheck check`` on the default
English model, whose pair classifiers run on ONNX Runtime from cached int8 exports and never call torch).
:class:`BackendTokenizer` gives :class:`~dialcheck.detectors.core.PairClassifier` what it asks of a tokenizer
(single texts with offsets, padded pair batches truncated ``only_first`` on either side, the count of special
tokens) from the same ``tokenizers`` backend that transformers' fast tokenizer drives, set up the way it sets
it up per call. It is used only for the bases whose ``tokenizer.json`` transformers reads without changes
(:data:`BACKEND_BASES`; checked equal to transformers' encodings in ``tests/test_tokenizer.py``); other bases
keep transformers' tokenizer.

>>> from dialcheck.backbones import resolve_base
>>> tok = BackendTokenizer(resolve_base("all-MiniLM-L6-v2"))
>>> tok("I have a dog.", add_special_tokens=False)["input_ids"]
[1045, 2031, 1037, 3899, 1012]
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ModelError

__all__ = ["BACKEND_BASES", "BackendTokenizer"]

# bases whose tokenizer.json encodes as transformers' tokenizer does (tests/test_tokenizer.py)
BACKEND_BASES = frozenset({"all-MiniLM-L6-v2", "all-mpnet-base-v2"})


class BackendTokenizer:
    """The ``tokenizer.json`` of ``folder`` with the pad token of its ``tokenizer_config.json``."""

    # each set-up is made once and never changed (see _set_up): threads may call it side by side
    # (:class:`~dialcheck.detectors.core.PairClassifier` calls other tokenizers one call at a time)
    thread_safe = True

    def __init__(self, folder: str | Path) -> None:
        from tokenizers import Tokenizer

        folder = Path(folder)
        try:
            self._tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
            config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
        except Exception as e:  # OSError, JSON errors, and the tokenizers library's own
            raise ModelError(f"{folder}: cannot read its tokenizer ({e})") from None
        self.pad_token = _token_text(config.get("pad_token"))
        self.pad_token_id = self._tok.token_to_id(self.pad_token) if self.pad_token else None
        if self.pad_token_id is None:
            raise ModelError(f"{folder}: tokenizer_config.json names no pad token in the vocabulary")
        self.padding_side = str(config.get("padding_side", "right"))
        self.truncation_side = str(config.get("truncation_side", "right"))
        self._set_ups: dict[tuple[Any, ...], Any] = {}

    def _set_up(self, truncation: str | None, max_length: int | None, side: str, padding: bool) -> Any:
        """A backend tokenizer set up once for this truncation and padding and never changed after: calls from
        several threads (``dialcheck serve --onnx``) cannot change each other's settings, as they would on one
        shared backend whose settings each call sets."""
        key = (truncation, max_length, side, padding)
        tok = self._set_ups.get(key)
        if tok is None:
            from tokenizers import Tokenizer

            tok = Tokenizer.from_str(self._tok.to_str())
            tok.no_truncation()
            tok.no_padding()
            if truncation:
                tok.enable_truncation(max_length, stride=0, strategy=truncation, direction=side)
            if padding:
                tok.enable_padding(
                    direction=self.padding_side, pad_id=self.pad_token_id, pad_type_id=0, pad_token=self.pad_token
                )
            tok = self._set_ups.setdefault(key, tok)
        return tok

    def num_special_tokens_to_add(self, pair: bool = False) -> int:
        """Special tokens an encoding of one text (or a pair) gets."""
        return int(self._tok.num_special_tokens_to_add(pair))

    def __call__(
        self,
        text: str | Sequence[str],
        text_pair: str | Sequence[str] | None = None,
        add_special_tokens: bool = True,
        truncation: str | None = None,
        max_length: int | None = None,
        padding: bool = False,
        return_tensors: str | None = None,
        return_offsets_mapping: bool = False,
        verbose: bool = True,
        truncation_side: str | None = None,
    ) -> dict[str, Any]:
        """Encode one text (or pair) into lists, or a batch into lists of lists (``return_tensors="np"``:
        int64 arrays). ``truncation`` is a strategy of the backend (``"only_first"``, ``"longest_first"``), cut on
        ``truncation_side`` (``"left"``, ``"right"``; default the ``truncation_side`` attribute): given per call,
        callers sharing this tokenizer never cut on each other's side."""
        if truncation and max_length is None:
            raise ValueError("truncation needs max_length")
        side = truncation_side or self.truncation_side
        tok = self._set_up(truncation or None, max_length if truncation else None, side, padding)
        if isinstance(text, str):
            if text_pair is not None and not isinstance(text_pair, str):
                raise TypeError("a single text takes a single text_pair")
            encodings = [tok.encode(text, text_pair, add_special_tokens=add_special_tokens)]
        else:
            inputs: list[Any] = list(text) if text_pair is None else list(zip(text, text_pair, strict=True))
            encodings = tok.encode_batch(inputs, add_special_tokens=add_special_tokens)
        out: dict[str, Any] = {
            "input_ids": [e.ids for e in encodings],
            "token_type_ids": [e.type_ids for e in encodings],
            "attention_mask": [e.attention_mask for e in encodings],
        }
        if return_offsets_mapping:
            out["offset_mapping"] = [e.offsets for e in encodings]
        if return_tensors == "np":
            return {k: np.asarray(v, dtype=np.int64) for k, v in out.items()}
        if return_tensors is not None:
            raise ValueError(f"BackendTokenizer returns lists or numpy arrays, not {return_tensors!r} tensors")
        return {k: v[0] for k, v in out.items()} if isinstance(text, str) else out


def _token_text(value: Any) -> str | None:
    """A special token as tokenizer_config.json writes it: a string or an AddedToken dict."""
    if isinstance(value, dict):
        value = value.get("content")
    return value if isinstance(value, str) else None
