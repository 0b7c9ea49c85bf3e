"""``dialcheck data list|verify``: which corpora dialcheck reads, and whether the local copies are intact."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .common import DATA_DIR_HELP

HELP = "list the corpora and verify the local copies (presence, checksums, record counts)"


def add_parser(sub: Any) -> None:
    p = sub.add_parser("data", help=HELP, description=HELP)
    p.add_argument("action", choices=("list", "verify"))
    p.add_argument("--data-dir", default=None, help=DATA_DIR_HELP)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..datasets import data_dir, dataset_names, get_dataset_info
    from ..datasets.base import gz_note, sha256_file
    from ..errors import DialcheckError

    if args.action == "list":
        for name in dataset_names():
            info = get_dataset_info(name)
            count = f"{info.count:,}" if info.count else "?"
            print(f"{name:32s} {count:>8s}  {info.description}")
        return 0
    root = data_dir(args.data_dir)
    print(f"data directory: {root}")
    bad = 0
    for name in dataset_names():
        info = get_dataset_info(name)
        problems = []
        unreadable = False
        for i, f in enumerate(info.files):
            path = root / f
            if not path.exists():
                problems.append(f"missing {f}{gz_note(path)}")
                unreadable = True
                continue
            want = info.sha256[i] if i < len(info.sha256) else None
            try:
                if want and sha256_file(path) != want:
                    problems.append(f"checksum differs for {f}")
            except OSError as e:  # a folder in the file's place, no permission: this dataset only, not every one
                problems.append(f"cannot read {f} ({e.strerror or e})")
                unreadable = True
        if not unreadable:  # a file that differs is read too: where it breaks, or how many records it holds
            try:
                n = len(info.loader(root))
                if info.count is not None and n != info.count:
                    problems.append(f"{n:,} records, expected {info.count:,}")
            except DialcheckError as e:  # report every dataset, do not stop at the first
                problems.append(str(e))
            except Exception as e:
                problems.append(f"{type(e).__name__}: {e}")
        bad += bool(problems)
        print(f"{'ok ' if not problems else 'BAD'} {name}" + ("" if not problems else ": " + "; ".join(problems)))
    if bad:
        print(f"dialcheck: {bad} dataset(s) failed verification", file=sys.stderr)
    return 1 if bad else 0
