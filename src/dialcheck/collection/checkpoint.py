"""Work files that let a long collection step resume where it was interrupted.

A step (``collect contexts`` scoring FQness, ``collect responses`` generating replies) runs in *units*
(a batch of an LM, say) in a fixed order. After each unit its rows are appended to ``OUT.part`` and
``OUT.resume.json`` is replaced: the run's settings, how many units are finished, the length of the
part file that holds them, and the random number generators' states (torch, numpy, Python's
``random``) as the next unit would find them. A resumed run refuses other settings, cuts the part file
back to the recorded length (rows of a unit whose state was never recorded, or a torn line), restores
the generators and runs the remaining units; so its output is the one an uninterrupted run writes.
Both files are removed once the output is written.

The settings include the number of torch threads: a whole-tensor reduction such as ``torch.sum`` splits its
work by thread and adds the partial sums in another order (on a 2-core AMD EPYC, torch 2.13, the sum of
a million floats differs in the last bits between 1, 3 and 4 threads), and MKL promises bitwise equal results
only for one thread count; a score or a sampled token may follow such a bit. A setting that a record of an
earlier version lacks is not held against a resume (:attr:`Checkpoint.unrecorded` names it), so a run
interrupted before an upgrade can still be finished.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import random
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..errors import InputError

__all__ = ["Checkpoint", "fingerprint", "rng_states", "set_rng_states", "torch_rng_state"]

VERSION = 1


def fingerprint(rows: Iterable[Mapping[str, Any]]) -> str:
    """A sha256 of JSON rows (e.g. the records a step reads), to tell whether a resumed run reads the same."""
    h = hashlib.sha256()
    for row in rows:
        h.update(json.dumps(row, ensure_ascii=False, sort_keys=True).encode("utf-8") + b"\n")
    return h.hexdigest()


def rng_states() -> dict[str, Any]:
    """The states of torch's CPU generator, numpy's global one and Python's ``random`` (those installed)."""
    out: dict[str, Any] = {"python": _jsonable(random.getstate())}
    try:
        import numpy as np

        kind, keys, pos, has_gauss, gauss = np.random.get_state()
        out["numpy"] = [kind, [int(k) for k in keys], int(pos), int(has_gauss), float(gauss)]
    except ImportError:  # pragma: no cover - numpy comes with torch
        pass
    with contextlib.suppress(ImportError):  # the generators that sample need torch
        out["torch"] = torch_rng_state()
    return out


def torch_rng_state() -> str:
    """torch's CPU generator state, as text."""
    import torch

    return base64.b64encode(torch.get_rng_state().numpy().tobytes()).decode("ascii")


def set_rng_states(states: Mapping[str, Any]) -> None:
    """Restore what :func:`rng_states` returned."""
    if "python" in states:
        version, internal, gauss = states["python"]
        random.setstate((version, tuple(internal), gauss))
    if "numpy" in states:
        import numpy as np

        kind, keys, pos, has_gauss, gauss = states["numpy"]
        np.random.set_state((kind, np.array(keys, dtype=np.uint32), pos, has_gauss, gauss))
    if "torch" in states:
        import torch

        raw = bytearray(base64.b64decode(states["torch"]))
        torch.set_rng_state(torch.frombuffer(raw, dtype=torch.uint8).clone())


def _jsonable(v: Any) -> Any:
    return [_jsonable(x) for x in v] if isinstance(v, (tuple, list)) else v


def _flat(v: Any, key: str = "") -> dict[str, Any]:
    if isinstance(v, Mapping):
        return {k: x for name, sub in v.items() for k, x in _flat(sub, f"{key}.{name}" if key else str(name)).items()}
    if isinstance(v, list):
        return {k: x for i, sub in enumerate(v) for k, x in _flat(sub, f"{key}[{i}]").items()}
    return {key: v}


def _differences(before: Mapping[str, Any], now: Mapping[str, Any]) -> list[str]:
    """``key: old -> new`` for each setting that differs (a fingerprint is only said to differ)."""
    old, new = _flat(before), _flat(now)
    out = []
    for k in [*new, *(k for k in old if k not in new)]:
        if old.get(k, "(none)") != new.get(k, "(none)"):
            if k.endswith("sha256"):
                out.append(f"{k.removesuffix('_sha256').removesuffix('.sha256')} differ")
            else:
                out.append(f"{k} {json.dumps(old.get(k))} -> {json.dumps(new.get(k))}")
    return out


class Checkpoint:
    """The work files of a resumable step writing ``out``: ``OUT.part`` (finished rows, JSON Lines, in the
    order they were made) and ``OUT.resume.json`` (settings, finished units, RNG states).

    ``settings`` is whatever decides the rows (inputs' fingerprints, models, decoding, batch size): a run
    resumed with other settings is refused. Open it with :meth:`start` (a fresh run) or :meth:`resume`;
    then ``done`` units and their ``rows`` are finished, and each further unit is recorded with :meth:`commit`.
    """

    def __init__(self, out: str | Path, settings: Mapping[str, Any]) -> None:
        self.out = Path(out)
        self.part = self.out.with_name(self.out.name + ".part")
        self.state = self.out.with_name(self.out.name + ".resume.json")
        self.settings = json.loads(json.dumps(dict(settings)))  # as it reads back from the file
        self.done = 0
        self.rows: list[dict[str, Any]] = []
        self.rng: dict[str, Any] | None = None
        self.resumed = False
        self.unrecorded: list[str] = []  # settings the interrupted run's record lacks (an earlier version's)
        self._size = 0

    def exists(self) -> bool:
        """Whether an interrupted run left its work here."""
        return self.state.is_file()

    def finished_units(self) -> int:
        """How many units the interrupted run recorded: 0 without a record; an unreadable one counts as work,
        never to be replaced unasked."""
        try:
            return int(json.loads(self.state.read_text(encoding="utf-8"))["done"])
        except (OSError, ValueError, KeyError, TypeError):
            return 0 if not self.state.exists() else 1

    def start(self) -> Checkpoint:
        """Begin afresh: any earlier work files are replaced."""
        self.done, self.rows, self.rng, self._size = 0, [], None, 0
        self._write_state()  # first: a part file without a state is never taken for finished work
        self.part.write_bytes(b"")
        return self

    def resume(self) -> Checkpoint:
        """Take up the work of an interrupted run with the same settings (a fresh start if there is none)."""
        if not self.exists():
            return self.start()
        try:
            state = json.loads(self.state.read_text(encoding="utf-8"))
            done, size, rng, before = int(state["done"]), int(state["part_bytes"]), state["rng"], state["settings"]
            version = state.get("version")
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise InputError(
                f"cannot resume: not a record of an interrupted run ({e}); delete it (and {self.part.name}) to "
                "start anew",
                str(self.state),
            ) from None
        if version != VERSION:
            raise InputError(
                f"cannot resume: written by another version of dialcheck (format {version}, this one reads "
                f"{VERSION}); delete it and {self.part.name} to start anew",
                str(self.state),
            )
        if not isinstance(before, Mapping):
            raise InputError(
                f"cannot resume: not a record of an interrupted run (settings: {before!r}); delete it (and "
                f"{self.part.name}) to start anew",
                str(self.state),
            )
        self.unrecorded = [k for k in self.settings if k not in before]
        diff = _differences(before, {k: v for k, v in self.settings.items() if k in before})
        if diff:
            raise InputError(
                f"the interrupted run was made otherwise ({'; '.join(diff[:4])}{'; ...' if len(diff) > 4 else ''}):"
                " resuming would mix its records with these; give the options and inputs of that run, or delete "
                f"{self.state.name} and {self.part.name} to start anew",
                str(self.state),
            )
        raw = self.part.read_bytes() if self.part.is_file() else b""
        if len(raw) < size:
            raise InputError(
                f"cannot resume: it holds {len(raw)} bytes, less than the {size} the interrupted run recorded; "
                f"delete it and {self.state.name} to start anew",
                str(self.part),
            )
        if len(raw) > size:  # a unit written but not recorded, or a torn line: it is made again
            with self.part.open("r+b") as f:
                f.truncate(size)
        try:
            self.rows = [json.loads(line) for line in raw[:size].splitlines() if line.strip()]
        except ValueError as e:
            raise InputError(
                f"cannot resume: a finished record is damaged ({e}); delete it and {self.state.name} to start anew",
                str(self.part),
            ) from None
        self.done, self.rng, self._size = done, rng, size
        self.resumed = True
        return self

    def restore_rng(self) -> None:
        """Put the random number generators where the next unit of the interrupted run would have found them."""
        if self.rng is not None:
            set_rng_states(self.rng)

    def commit(self, rows: Iterable[Mapping[str, Any]], rng: Mapping[str, Any] | None = None) -> None:
        """Record one more finished unit: its rows, and the RNG states the next unit starts from (default: now)."""
        data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")
        with self.part.open("ab") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        self._size += len(data)
        self.done += 1
        self.rng = dict(rng) if rng is not None else rng_states()
        self._write_state()

    def _write_state(self) -> None:
        state = {
            "version": VERSION,
            "done": self.done,
            "part_bytes": self._size,
            "settings": self.settings,
            "rng": self.rng,
        }
        tmp = self.state.with_name(self.state.name + ".tmp")
        tmp.write_text(json.dumps(state) + "\n", encoding="utf-8")
        tmp.replace(self.state)

    def finish(self) -> None:
        """Remove the work files (the output is written)."""
        for p in (self.part, self.state, self.state.with_name(self.state.name + ".tmp")):
            p.unlink(missing_ok=True)
