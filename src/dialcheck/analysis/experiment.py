"""The n-best contradiction-awareness experiment: echo questions in, Certainty and Variety out.

For each decoding setting, every stimulus gets an n-best list from the generator; the answer classifier
judges each reply (yes / no / ambiguous); lists are written to ``nbest-<setting>.jsonl`` in the output
folder as they are made, so an interrupted run resumes where it stopped. :func:`summarize_folder` then
computes Certainty and Variety per setting and stimulus kind.

The stimuli are generated in chunks of ``max(chunk, batch size)`` in their order, each one generate call seeded
afresh (``DecodingConfig.seed``). A resumed run keeps those chunks: one an interruption left unfinished is
generated (and judged) again in whole and only its missing lists are written, so a resumed run writes the lists,
sampled ones included, of a run never interrupted (given the same stimuli and batch size).

While a run appends to a list file it holds ``nbest-<setting>.jsonl.lock`` (its process id):
:func:`judge_folder`, which rewrites the files in place, refuses to touch a file whose writer is alive,
since the lines written in between would be lost. A lock left by a process that no longer exists is ignored.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..generation.nbest import DecodingConfig
from ..io import write_jsonl
from ..probes.echo import EchoItem
from .nbest import summarize

__all__ = ["judge_folder", "run_nbest_experiment", "summarize_folder"]

log = logging.getLogger(__name__)


def _stored(path: Path, resuming: bool = False) -> list[dict[str, Any]]:
    """The n-best records of ``path``, each checked: the one reading of a list file, for a resumed run, for
    judging and for the summary, so they agree on what is stored.

    A last line without its newline that is not whole JSON (an interrupted run stopped while writing it) is
    not a stored list: it is left out, and a resumed run (``resuming``) cuts it off the file and makes that
    list again. A whole record without its newline is stored like any other (a resumed run ends it with its
    newline, so the next list starts a line of its own). Lines end at "\n" only: a reply may hold U+2028,
    which JSON writes as it is. Any other line that is not a record is an :class:`InputError` naming the
    file and line (a traceback before)."""
    from ..io import json_error, json_type

    raw = path.read_bytes()
    lines = raw.split(b"\n")  # the last one: empty after a newline, else the unended tail
    say = "cannot resume: " if resuming else ""
    recs: list[dict[str, Any]] = []
    offset, torn = 0, False
    for n, data in enumerate(lines, start=1):
        start, offset = offset, offset + len(data) + 1
        if not data.strip():
            continue
        try:
            rec = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            if n == len(lines):  # the last line, without its newline
                log.warning(
                    "%s, line %d: a torn last line (an interrupted run) is %s",
                    path,
                    n,
                    "cut, its list made again" if resuming else "left out",
                )
                if resuming:
                    with path.open("r+b") as f:
                        f.truncate(start)
                torn = True
                continue
            why = json_error(e) if isinstance(e, json.JSONDecodeError) else "not UTF-8 text"
            raise InputError(f"{say}not an n-best output line: {why}", str(path), n) from None
        problem = None
        if not isinstance(rec, dict):
            problem = f"expected a JSON object, got {json_type(rec)}"
        else:
            for key, ok, want in (
                ("id", lambda v: isinstance(v, str), "a string"),
                ("kind", lambda v: v in ("ENTQ", "CNTQ"), "ENTQ or CNTQ"),
                ("expected", lambda v: v in ("yes", "no"), "yes or no"),
                ("replies", lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v), "a list of strings"),
            ):
                if key not in rec:
                    problem = f"{key}: missing"
                elif not ok(rec[key]):
                    problem = f"{key}: expected {want}, got {json.dumps(rec[key], ensure_ascii=False)[:40]}"
                if problem:
                    break
            judged = rec.get("judgements") if problem is None else None
            if judged is not None and not (
                isinstance(judged, list)
                and len(judged) == len(rec["replies"])
                and all(j in ("yes", "no", "ambiguous") for j in judged)
            ):
                problem = f"judgements: expected null or one of yes, no, ambiguous per reply ({len(rec['replies'])})"
        if problem:
            raise InputError(f"{say}not an n-best output line: {problem}", str(path), n)
        recs.append(rec)
    if resuming and raw and not raw.endswith(b"\n") and not torn:
        with path.open("ab") as f:
            f.write(b"\n")
    return recs


def _lock_path(path: Path) -> Path:
    return path.with_name(path.name + ".lock")


def _other_writer(path: Path) -> int | None:
    """The id of another live process holding ``path``'s lock, if there is one."""
    try:
        pid = int(_lock_path(path).read_text().strip())
    except (OSError, ValueError):
        return None
    if pid == os.getpid():
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None  # a stale lock
    except PermissionError:
        pass  # the process exists, owned by another user
    return pid


def _no_other_writer(path: Path) -> None:
    pid = _other_writer(path)
    if pid is not None:
        raise InputError(f"{path} is being written by another run (process {pid}); wait for it or use another --out")


def _done_ids(path: Path) -> set[str]:
    """The ids of the lists ``path`` stores, read as :func:`_stored` reads them, a torn last line cut off the
    file; refused while another live run writes it (cutting then would lose what it writes meanwhile)."""
    if not path.exists():
        return set()
    _no_other_writer(path)
    return {rec["id"] for rec in _stored(path, resuming=True)}


@contextlib.contextmanager
def _writing(path: Path) -> Iterator[None]:
    _no_other_writer(path)
    lock = _lock_path(path)
    lock.write_text(f"{os.getpid()}\n", encoding="utf-8")
    try:
        yield
    finally:
        lock.unlink(missing_ok=True)


def run_nbest_experiment(
    items: Sequence[EchoItem],
    generator: Any,
    classifier: Any,
    settings: Sequence[DecodingConfig],
    out_dir: str | Path,
    batch_size: int = 4,
    chunk: int = 16,
    show_progress_bar: bool = False,
    batch_rows: int = 0,
) -> list[dict[str, Any]]:
    """Generate, judge and store n-best lists for every setting; returns the summary rows.

    ``batch_rows`` (if set) sizes each generate call by sequences instead of inputs: a call holds
    ``batch_rows // rows`` inputs, where rows is the number of beams (per group) or samples per input.
    With ``classifier=None`` the lists are stored unjudged (see :func:`judge_folder`) and nothing is returned.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if not items:
        raise InputError("no stimuli: the echo set is empty")
    for cfg in settings:
        path = out / f"nbest-{cfg.name}.jsonl"
        rows = cfg.beams // cfg.groups if cfg.strategy in ("beam", "diverse_beam") else cfg.n
        bs = max(1, batch_rows // rows) if batch_rows else batch_size
        done = _done_ids(path)
        # the chunks of an uninterrupted run, each generated (and seeded) as a whole: a chunk an interrupted
        # run left unfinished is made again, and only its missing lists are written
        step = max(chunk, bs)
        chunks = [items[s : s + step] for s in range(0, len(items), step)]
        todo = [part for part in chunks if any(it.id not in done for it in part)]
        missing = sum(it.id not in done for part in todo for it in part)
        if not todo:
            continue
        bar = None
        if show_progress_bar:
            from tqdm.auto import tqdm

            bar = tqdm(total=missing, desc=f"n-best {cfg.name}", unit="input")
        t0 = time.time()
        with _writing(path), path.open("a", encoding="utf-8") as f:
            for part in todo:
                lists = generator.generate([it.dialogue() for it in part], cfg, batch_size=bs)
                questions = [it.question for it, cands in zip(part, lists, strict=True) for _ in cands]
                replies = [c.text for cands in lists for c in cands]
                judged = classifier.judge(questions, replies) if replies and classifier is not None else []
                pos, wrote = 0, 0
                for it, cands in zip(part, lists, strict=True):
                    start, pos = pos, pos + len(cands)
                    if it.id in done:  # stored by the interrupted run
                        continue
                    wrote += 1
                    rec = {
                        "id": it.id,
                        "kind": it.kind,
                        "expected": it.expected,
                        "setting": cfg.name,
                        "replies": [c.text for c in cands],
                        "scores": [None if c.score is None else round(c.score, 5) for c in cands],
                        "judgements": judged[start:pos] if judged else None,
                    }
                    f.write(json.dumps(rec, ensure_ascii=False) + "\n")
                f.flush()
                if bar is not None:
                    bar.update(wrote)
        if bar is not None:
            bar.close()
        log.info("%s: %d inputs in %.0f s", cfg.name, missing, time.time() - t0)
    if classifier is None:
        return []
    return summarize_folder(out, settings, {it.id for it in items})


def judge_folder(
    out_dir: str | Path, settings: Sequence[DecodingConfig], items: Sequence[EchoItem], classifier: Any
) -> int:
    """(Re)judge every stored n-best list with ``classifier`` (e.g. after generating without one, or to
    compare answer classifiers); rewrites the files in place and returns the number of lists judged."""
    questions = {it.id: it.question for it in items}
    total = 0
    for cfg in settings:
        path = Path(out_dir) / f"nbest-{cfg.name}.jsonl"
        if not path.exists():
            continue
        pid = _other_writer(path)
        if pid is not None:
            raise InputError(
                f"{path} is still being written by another run (process {pid}): judging it now would drop the "
                "lines written meanwhile; wait for that run, or copy the lists to another folder and judge them there "
                f"(if process {pid} is not a dialcheck run, delete {_lock_path(path).name})"
            )
        recs = [r for r in _stored(path) if r["id"] in questions]
        qs = [questions[r["id"]] for r in recs for _ in r["replies"]]
        replies = [x for r in recs for x in r["replies"]]
        judged = classifier.judge(qs, replies) if replies else []
        pos = 0
        for r in recs:
            r["judgements"] = judged[pos : pos + len(r["replies"])]
            pos += len(r["replies"])
        write_jsonl(path, recs)  # atomic: a run stopped here leaves the file as it was
        total += len(recs)
    return total


def summarize_folder(
    out_dir: str | Path, settings: Sequence[DecodingConfig], ids: set[str] | None = None
) -> list[dict[str, Any]]:
    """Certainty/Variety rows per (setting, kind) from the ``nbest-*.jsonl`` files of a run."""
    rows = []
    for cfg in settings:
        path = Path(out_dir) / f"nbest-{cfg.name}.jsonl"
        if not path.exists():
            continue
        recs = _stored(path)
        if ids is not None:
            recs = [r for r in recs if r["id"] in ids]
        if any(r.get("judgements") is None for r in recs):
            raise InputError(
                f"{path}: some lists are not judged yet (run the experiment with a classifier, or judge_folder)"
            )
        for kind in ("ENTQ", "CNTQ"):
            mine = [r for r in recs if r["kind"] == kind]
            if not mine:
                continue
            s = summarize((r["replies"], r["judgements"], r["expected"]) for r in mine)
            top1 = [r["judgements"][0] == r["expected"] for r in mine if r["judgements"]]
            rows.append(
                {
                    "setting": cfg.name,
                    "strategy": cfg.strategy,
                    "n": cfg.n,
                    "kind": kind,
                    **s,
                    "top1_correct": round(sum(top1) / len(top1), 4) if top1 else float("nan"),
                }
            )
    return rows
