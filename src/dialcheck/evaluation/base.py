"""What every benchmark evaluator shares: the splits asked for, the data folder, a limit, a batch size."""

from __future__ import annotations

import json
import logging
from collections.abc import Collection, Sequence
from functools import partial
from pathlib import Path
from typing import Any, ClassVar, NoReturn

from ..errors import InputError
from ..io import input_name, read_examples
from ..schema import Example, Verdict

log = logging.getLogger(__name__)

__all__ = ["SplitEvaluator"]


class SplitEvaluator:
    """Base of the evaluators: checks the split names against ``known_splits`` and keeps predictions.

    >>> class E(SplitEvaluator):
    ...     known_splits = ("dev", "test")
    >>> E(["dev"]).splits
    ['dev']
    >>> E(["train"])
    Traceback (most recent call last):
    ...
    ValueError: unknown split(s) ['train']; known: dev, test
    >>> E([])
    Traceback (most recent call last):
    ...
    ValueError: no split to evaluate: name at least one of dev, test
    """

    known_splits: ClassVar[Collection[str]] = ()
    default_splits: ClassVar[Sequence[str]] = ()
    default_batch_size: ClassVar[int] = 64
    primary_metric: ClassVar[str] = ""

    # evaluators that read the user's own labelled files (``files``); with it, contradictions need a category
    file_category: ClassVar[bool | None] = None
    # evaluators whose detector is always a four-category (Chinese) one: ``chinese`` is then always set
    reads_chinese: ClassVar[bool] = False

    def __init__(
        self,
        splits: Sequence[str] | None = None,
        data_dir: str | Path | None = None,
        limit: int | None = None,
        batch_size: int | None = None,
        files: Sequence[str | Path] = (),
        english: bool = False,
        chinese: bool = False,
    ) -> None:
        """``splits`` and ``batch_size`` default to the class's ``default_splits`` / ``default_batch_size``.

        ``files``: JSON/JSONL files of labelled dialogues (:func:`dialcheck.io.parse_example`), each reported
        as a split named after the file (evaluators with ``file_category`` set only); their bad records are
        skipped and kept in ``skipped``. With files and no ``splits``, only the files are evaluated. ``english``:
        the files' Chinese and mixed-language dialogues are skipped too (for the English default, which cannot read
        them). ``chinese`` (a four-category, Chinese detector; always with ``reads_chinese``): a chat log ending with a
        turn it does not read (a tool's result, a system message:
        :func:`~dialcheck.language.check_chinese_last_turn`) is a bad record too, named by file and line, not an
        error of the whole run once the detector reads it."""
        if files and self.file_category is None:
            raise ValueError(f"{type(self).__name__} does not evaluate files of your own")
        if files and splits is None:
            splits = ()
        splits = self.default_splits if splits is None else splits
        batch_size = self.default_batch_size if batch_size is None else batch_size
        if not splits and not files:  # it evaluated nothing and returned no metric, without a word
            raise ValueError(f"no split to evaluate: name at least one of {', '.join(self.known_splits)}")
        unknown = set(splits) - set(self.known_splits)
        if unknown:
            raise ValueError(f"unknown split(s) {sorted(unknown)}; known: {', '.join(self.known_splits)}")
        self.splits = list(splits)
        self.data_dir = data_dir
        self.limit = limit
        self.batch_size = batch_size
        self.predictions: dict[str, list[tuple[Example, Verdict]]] = {}
        self.files: dict[str, list[Example]] = {}
        self.skipped: dict[str, list[InputError]] = {}
        self.notes: dict[str, list[str]] = {}  # warnings about a file's good records (the command line prints them)
        self._read_files(files, bool(self.file_category), english, chinese or self.reads_chinese)

    def _read_files(
        self, files: Sequence[str | Path], require_category: bool, english: bool = False, chinese: bool = False
    ) -> None:
        """Each file named after itself (never after a known split); a file with no good record is an error."""
        from ..language import CHOOSE_LABELLED, check_chinese_last_turn

        refuse = partial(check_chinese_last_turn, choose=CHOOSE_LABELLED) if chinese else None
        for f in files:
            path = Path(f)
            plain = path.with_suffix("") if path.suffix.lower() == ".gz" else path  # logs.jsonl.gz reads as logs
            name = "stdin" if str(f) == "-" else plain.stem or "data"  # --data -: not a split named "-"
            while name in self.files or name in self.known_splits:
                name += "_"
            notes: list[str] = []  # a four-category (CDConv) file's evidence is not scored: no note about it
            examples, errors = read_examples(
                path, require_category=require_category, english=english, limit=self.limit,
                notes=None if require_category else notes, refuse=refuse,
            )  # fmt: skip
            if not examples:
                _refuse(input_name(path), errors)  # as read_examples names it
            self.files[name] = examples
            self.skipped[name] = errors
            self.notes[name] = notes
            for e in errors:  # kept in ``skipped``; the caller reports them (the command line names each once)
                log.debug("skipped: %s", e)

    def primary_of(self, results: dict[str, Any]) -> str:
        """``primary_metric``, or, when its split was not evaluated (``--splits dev``, or only files), the same
        metric of the first split or file evaluated that has it, so that the key names a value of ``results``.

        >>> class E(SplitEvaluator):
        ...     known_splits = ("dev", "test")
        ...     primary_metric = "test/accuracy"
        >>> E(["dev"]).primary_of({"dev/n": 5.0, "dev/accuracy": 80.0})
        'dev/accuracy'
        """
        metric = self.primary_metric.split("/", 1)[1]
        keys = [self.primary_metric, *(f"{s}/{metric}" for s in [*self.splits, *self.files])]
        return next((k for k in keys if k in results), self.primary_metric)

    def split_datasets(self, split: str) -> tuple[str, ...]:
        """The registered datasets (:func:`dialcheck.datasets.load_dataset` names) that ``split`` reads."""
        return ()

    def require_split_files(self) -> None:
        """Refuse, before any split runs, when a corpus file of a split asked for is missing or empty: a copy of the
        data folder without rct.jsonl ran dev and human-bot (an hour with a large model) and then stopped at rct,
        every number lost. Each such file is named with the splits that need it."""
        from ..datasets.base import data_dir, get_dataset_info, gz_note

        needed: dict[Path, list[str]] = {}
        for split in self.splits:
            for name in self.split_datasets(split):
                for f in get_dataset_info(name).files:
                    needed.setdefault(Path(f), [])
                    if split not in needed[Path(f)]:
                        needed[Path(f)].append(split)
        if not needed:
            return
        root = data_dir(self.data_dir)

        def state(path: Path) -> str:  # "" when the file is there with something in it
            return "missing" if not path.exists() else "empty" if path.is_file() and not path.stat().st_size else ""

        missing = {root / f: splits for f, splits in needed.items() if state(root / f)}
        if not missing:
            return
        which = "the split" if len(missing) == 1 else "those splits"
        see = f"see `dialcheck data verify`, or leave {which} out with --splits"

        def what(path: Path, splits: list[str]) -> str:
            return f"needed by split{'s' if len(splits) > 1 else ''} {', '.join(splits)}{gz_note(path)}"

        if len(missing) == 1:
            ((path, splits),) = missing.items()
            raise InputError(f"corpus file is {state(path)}, {what(path, splits)} ({see})", str(path))
        each = "".join(f"\n  {path}: {state(path)}, {what(path, splits)}" for path, splits in missing.items())
        raise InputError(f"{len(missing)} corpus files are missing or empty ({see}):{each}")

    def require_examples(self, split: str, examples: list[Any]) -> list[Any]:
        """``examples``, or an :class:`InputError` naming the corpus files of ``split`` when there is none: an empty
        split file gave a traceback (CDConv) or an accuracy of 0.00 over 0 dialogues (DECODE, CI-ToD)."""
        if examples or split in self.files:  # a --data file with no good record is refused when it is read
            return examples
        from ..datasets.base import data_dir, get_dataset_info

        root = data_dir(self.data_dir)
        files = ", ".join(str(root / f) for name in self.split_datasets(split) for f in get_dataset_info(name).files)
        what = "no KBI probe dialogue could be made from" if split == "kbi_probe" else "no example to evaluate on in"
        raise InputError(f"split {split}: {what} {files} (see `dialcheck data verify`)")

    def gold(self, example: Example) -> dict[str, Any]:
        """The gold fields written beside each verdict by :meth:`write_predictions`."""
        return {"gold": example.label}

    def write_predictions(self, path: Path) -> None:
        """One JSON line per example kept by the last run: split, id, gold fields and the verdict. A row of one of
        ``files`` also has ``turn``: the 0-based index, in the record's turns, of the turn checked (its last, or
        with a ``"speaker"`` that speaker's last turn with text, where the dialogue was cut), as ``check --json``
        and ``score`` write it."""
        with path.open("w", encoding="utf-8") as f:
            for split, rows in self.predictions.items():
                own = split in self.files
                for e, v in rows:
                    rec: dict[str, Any] = {"split": split, "id": e.id}
                    if own:  # the cut dialogue keeps the record's turn indices: its last turn is the one checked
                        rec["turn"] = len(e.dialogue.turns) - 1
                    rec.update(self.gold(e))
                    rec.update(v.to_dict())
                    f.write(json.dumps(rec, ensure_ascii=False) + "\n")


def _refuse(path: Path | str, errors: list[InputError]) -> NoReturn:
    """Stop on a file with no good record. One bad record is named in the error (the file named once, in its
    prefix); several are each named on a line of their own in the one error, so one run shows everything to fix
    (a library raises; the command line prints it)."""
    if len(errors) <= 1:
        first = f" (first: {InputError(errors[0].message, None, errors[0].line)})" if errors else ""
        raise InputError(f"no labelled dialogue to evaluate on{first}", str(path))
    each = "".join(f"\n  {InputError(e.message, None, e.line)}" for e in errors)
    raise InputError(f"no labelled dialogue to evaluate on: all {len(errors)} records are bad:{each}", str(path))
