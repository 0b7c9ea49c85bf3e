"""A CDConv data folder for CLI training tests: the same rows written as the train and dev jsonl splits."""

from __future__ import annotations

import json
from pathlib import Path


def write_cdconv_splits(root: Path, rows: list[dict], splits: tuple[str, ...] = ("train", "dev")) -> Path:
    """Write ``rows`` (u1, b1, u2, b2, label) as ``root/cdconv/splits_jsonl/cdconv_<split>.jsonl``; returns root."""
    folder = root / "cdconv" / "splits_jsonl"
    folder.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    for split in splits:
        (folder / f"cdconv_{split}.jsonl").write_text(text, encoding="utf-8")
    return root
