"""How a benchmark script hands over its results: the Markdown table on stdout, optional copies on disk."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def emit(table: str, results: Any, markdown: Path | None = None, json_path: Path | None = None) -> None:
    """Print ``table``; write it to ``markdown`` and ``results`` (as JSON) to ``json_path`` when given."""
    print(table)
    if markdown:
        markdown.write_text(table + "\n", encoding="utf-8")
    if json_path:
        json_path.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
