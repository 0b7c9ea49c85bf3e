"""Batch scoring on an existing engine: a callable class for Ray Data's ``map_batches`` (or any engine
that hands out batches of rows as columns).

``dialcheck score`` covers one machine. Beyond it, the rows of a chat-log table are scored where they
live: each worker builds one :class:`BatchScorer` (the detector is loaded once, in the constructor) and
calls it on batches. A row is a dialogue record as ``dialcheck score`` reads it (``turns`` or chat-completion
``messages``, optional ``knowledge`` and ``id``); the batch comes back with the verdict columns added. A bad row is
never dropped and never fails the batch: it keeps its place with its ``error`` set and empty verdict columns, so good
rows are not lost and bad ones can be selected afterwards (``ds.filter(lambda r: r["error"] is None)``).

>>> import ray  # doctest: +SKIP
>>> from dialcheck.batch import score_dataset
>>> ds = ray.data.read_json("logs.jsonl")  # doctest: +SKIP
>>> score_dataset(ds, concurrency=2).write_json("verdicts/")  # doctest: +SKIP

Without Ray, the same object scores a pandas DataFrame or a dict of columns:

>>> from dialcheck.batch import BatchScorer
>>> out = BatchScorer()({"turns": [["I have a dog.", "Nice.", "I have never had a pet."]]})  # doctest: +SKIP
>>> out["contradiction"], out["evidence"]  # doctest: +SKIP
([True], [[0]])
"""

from __future__ import annotations

import functools
import logging
import numbers
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .errors import DialcheckError, InputError
from .io import check_batch_size, check_speakers, json_type, parse_checked, refuse_thresholds, upto_speaker
from .schema import Dialogue, Verdict, _plain

__all__ = ["VERDICT_COLUMNS", "BatchScorer", "score_dataset"]

log = logging.getLogger(__name__)

# where the thresholds of a batch's verdicts are set, for the error of a row with a tau cell
BATCH_THRESHOLDS = "the thresholds are the model's (a detector folder's `tau` and `eta_e`)"

CHUNK = 1024  # rows scored at a time within one batch (an engine may hand out a whole table as one)

#: the columns :class:`BatchScorer` adds to each batch
VERDICT_COLUMNS = ("contradiction", "score", "evidence", "category", "labels", "error")


def _missing(value: Any) -> bool:
    if value is None:
        return True
    try:
        return bool(value != value)  # NaN, pandas' NA for an absent field
    except (TypeError, ValueError):
        return False


class BatchScorer:
    """Scores batches of dialogue rows with one detector (loaded once per worker).

    ``model``: a detector folder or shipped name; None (or ``"default"``) routes each row to the shipped default
    for it, as :func:`dialcheck.predict` does (English, task-oriented with ``knowledge``, Chinese); a model named
    explicitly scores every row; either way a warning is logged per batch naming the rows in a language the model
    that scored them was not trained on (:func:`dialcheck.api.model_language`; a Korean row routed to the English
    default, say), which are scored all the same. ``column``: the turns
    column (by default ``turns``, or ``messages`` in a row without turns: a chat-completion log, as ``dialcheck score``
    reads it). ``threads``: torch CPU threads for this worker (None leaves torch's default). ``onnx`` /
    ``int8``: run the detectors on ONNX Runtime / in int8, as ``--onnx`` / ``--int8`` do. ``speaker`` (a name or
    a list): check each row's last turn with text by that speaker, as ``--speaker`` does (a ``turn`` column
    says which; e.g. ``"assistant"`` for chat-completion logs ending with the user's message or a tool
    call).

    A row is read as ``dialcheck score`` reads the same record written as a JSONL line
    (:func:`dialcheck.io.parse_checked`): a ``speaker`` cell that is not empty (a name or a list of names) is that
    row's speaker, over ``speaker=``; a ``tau``, ``eta_e`` or ``threshold`` cell that is not empty makes that row an
    error row whose ``error`` names it (the thresholds are the model's), never the whole batch. A batch with a
    ``speaker`` column, or any batch when ``speaker=`` is given, gets the ``turn`` column.

    The call takes a
    pandas DataFrame or a mapping of equal-length columns and returns the same kind with
    :data:`VERDICT_COLUMNS` added (``evidence``: earlier turn indices; ``labels``: the task-oriented labels
    that fired, e.g. ``["KBI"]``; ``error``: why a row was not scored, None for a row that was). In a DataFrame
    ``score`` is a float column (NaN for a bad row) and the other columns hold Python objects, None where empty,
    whatever the pandas version.
    """

    def __init__(
        self,
        model: str | Path | None = None,
        column: str = "turns",
        batch_size: int = 64,
        threads: int | None = None,
        onnx: bool = False,
        int8: bool = False,
        speaker: str | list[str] | None = None,
    ) -> None:
        from . import api

        batch_size = check_batch_size(batch_size)
        speakers = check_speakers(speaker)
        if not isinstance(column, str) or not column:
            shown = "an empty string" if isinstance(column, str) else json_type(column)
            raise InputError(f"column: expected the name of the column of turns, got {shown}")
        if threads is not None and (
            isinstance(threads, bool) or not isinstance(threads, numbers.Integral) or threads < 0
        ):
            shown = json_type(threads) if isinstance(threads, (str, bool, list, dict)) else repr(threads)
            raise InputError(
                f"threads: expected a whole number of at least 0 (0 or None: torch's default), got {shown}"
            )
        if api.names_default(model):  # "default": routed per row, as dialcheck.predict does
            model = None
        if threads:
            from .threads import set_threads

            set_threads(threads)
        self.model, self.column, self.batch_size = model, column, batch_size
        self.onnx, self.int8 = onnx, int8
        self.speakers = speakers
        if model is not None:  # fail at worker start, not at the first batch
            api.accelerate(api.load(model), onnx, int8)

    def _dialogue(self, row: dict[str, Any]) -> Dialogue:
        obj = {k: _plain(v) for k, v in row.items() if not _missing(v)}
        key = self.column
        if key == "turns" and key not in obj and "messages" in obj:
            key = "messages"  # a chat-completion log, as dialcheck score reads it (parse_dialogue takes "messages")
        elif key not in obj:
            refuse_thresholds(obj, BATCH_THRESHOLDS, "`score`")  # named first, as dialcheck score names it
            has = ", ".join(map(str, obj)) or "no cell that is not empty"
            raise DialcheckError(f"{key}: missing (the row has: {has}; column= names the column of turns)")
        else:
            obj["turns"] = obj.pop(key)
        d, speakers = parse_checked(obj, self.speakers, BATCH_THRESHOLDS, "`score`")  # its "speaker" over speaker=
        return d if speakers is None else upto_speaker(d, speakers)  # its error names the field: "speaker: ..."

    def score_rows(self, rows: list[dict[str, Any]]) -> list[Verdict | str]:
        """One verdict per row, or the message of the error that kept the row from being scored."""
        return self._score(rows)[0]

    def _score(self, rows: list[dict[str, Any]]) -> tuple[list[Verdict | str], list[int | None]]:
        """The verdicts (or error messages) and the index of each row's checked turn."""
        from . import api

        out: list[Verdict | str] = [""] * len(rows)
        turns: list[int | None] = [None] * len(rows)
        ok: list[int] = []
        dialogues: list[Dialogue] = []
        dets: list[Any] = []
        routes: list[str] = []
        loaded: dict[str, Any] = {}  # each detector looked up once a batch, not once a row
        for i, row in enumerate(rows):
            try:
                d = self._dialogue(row)
                key = "model" if self.model is not None else api.route(d)
                if key not in loaded:
                    loaded[key] = api.load(self.model) if self.model is not None else api.load(language=key)
                dets.append(loaded[key])
            except DialcheckError as e:
                out[i] = str(e)
                continue
            ok.append(i)
            dialogues.append(d)
            routes.append(key)
            turns[i] = len(d.turns) - 1
        if self.model is not None and dialogues:  # one detector for every row: say which rows it cannot read
            api.warn_language(dets[0], dialogues, [f"rows[{i}]" for i in ok], len(rows))
        elif dialogues:  # each row to its shipped default: say which rows that default cannot read
            api.warn_routed(dialogues, routes, [f"rows[{i}]" for i in ok], len(rows))
        fast = functools.partial(api.accelerate, onnx=self.onnx, int8=self.int8)
        for start in range(0, len(ok), CHUNK):  # a large batch's pairs are not all held at once
            end = start + CHUNK
            verdicts = api.predict_grouped(dialogues[start:end], dets[start:end], self.batch_size, fast)
            for i, v in zip(ok[start:end], verdicts, strict=True):
                out[i] = v
        bad = sum(isinstance(v, str) for v in out)
        if bad:
            log.warning("%d of %d rows not scored (see their error column)", bad, len(rows))
        return out, turns

    def __call__(self, batch: Any) -> Any:
        """Score a batch: a pandas DataFrame or a mapping of columns; the same kind comes back."""
        is_frame = hasattr(batch, "to_dict") and hasattr(batch, "columns")
        if is_frame:
            rows = batch.to_dict("records")
        elif isinstance(batch, Mapping):
            columns = {k: list(v) for k, v in batch.items()}
            n = {len(v) for v in columns.values()}
            if len(n) > 1:
                raise ValueError(f"columns of unequal length: {sorted(n)}")
            rows = [{k: v[i] for k, v in columns.items()} for i in range(n.pop() if n else 0)]
        else:
            raise TypeError(f"expected a pandas DataFrame or a mapping of columns, got {type(batch).__name__}")
        results, turns = self._score(rows)
        added: dict[str, list[Any]] = {c: [] for c in VERDICT_COLUMNS}
        if self.speakers is not None or any("speaker" in row for row in rows):  # which turn was checked
            added["turn"] = turns
        for r in results:
            ok = isinstance(r, Verdict)
            added["contradiction"].append(r.contradiction if ok else None)
            added["score"].append(float(r.score) if ok else None)
            added["evidence"].append(list(r.evidence) if ok else [])
            added["category"].append(r.category if ok else None)
            added["labels"].append([k for k, on in (r.labels or {}).items() if on] if ok else [])
            added["error"].append(None if ok else r)
        if is_frame:
            import pandas as pd

            out = batch.copy()
            for c, values in added.items():
                # object columns keep None: pandas 3 reads [None, "why"] as a string column and [3, None] as floats,
                # storing None as NaN, so a good row's error was NaN (``r["error"] is None`` kept no row)
                out[c] = values if c == "score" else pd.Series(values, index=out.index, dtype=object)
            return out
        return {**{k: list(v) for k, v in batch.items()}, **added}


def score_dataset(
    ds: Any,
    model: str | Path | None = None,
    *,
    concurrency: int = 1,
    batch_size: int = 256,
    threads: int | None = None,
    column: str = "turns",
    onnx: bool = False,
    int8: bool = False,
    speaker: str | list[str] | None = None,
    **map_batches_kwargs: Any,
) -> Any:
    """``ds`` (a Ray Dataset of dialogue rows) with the verdict columns added, scored by ``concurrency``
    workers that each hold one detector (on ONNX Runtime with ``onnx``, in int8 with ``int8``; ``speaker`` as
    in :class:`BatchScorer`). Extra keyword arguments go to ``map_batches`` (e.g. ``num_cpus``)."""
    return ds.map_batches(
        BatchScorer,
        fn_constructor_kwargs={
            "model": model,
            "column": column,
            "threads": threads,
            "onnx": onnx,
            "int8": int8,
            "speaker": speaker,
        },
        batch_size=batch_size,
        batch_format="pandas",
        concurrency=concurrency,
        **map_batches_kwargs,
    )
