"""``dialcheck models``: the models shipped with dialcheck, what each is the default for, whether its base
encoder is installed, and its headline numbers; ``dialcheck models NAME`` prints that model's card."""

from __future__ import annotations

import argparse
import json
from typing import Any

HELP = "list the shipped models (defaults first, base installed?, headline metrics); NAME prints its model card"


def add_parser(sub: Any) -> None:
    p = sub.add_parser("models", help=HELP, description=HELP)
    p.add_argument("name", nargs="?", default=None, help="a shipped model: print its model card")
    p.add_argument("--json", action="store_true", help="one JSON object per model, every recorded metric")
    p.set_defaults(func=run)


def _number(v: float) -> str:
    return f"{v:.4f}" if abs(v) <= 1 else f"{v:.2f}"


def run(args: argparse.Namespace) -> int:
    from ..catalog import shipped_model, shipped_models

    if args.name is not None:
        m = shipped_model(args.name)
        if args.json:
            print(json.dumps(m.to_dict(), ensure_ascii=False))
            return 0
        card = m.path / "MODEL_CARD.md"
        print(card.read_text(encoding="utf-8") if card.exists() else f"{m.name}: no model card in {m.path}")
        if not m.base_installed:
            print(f"\nbase {m.base} is not installed: {m.install}")
        return 0
    models = shipped_models()
    if args.json:
        for m in models:
            print(json.dumps(m.to_dict(), ensure_ascii=False))
        return 0
    missing = {}
    for m in models:
        base = m.base + ("" if m.base_installed else " (not installed)")
        if not m.base_installed and m.install:
            missing[m.base] = m.install
        size = f"{m.size_bytes / 1e6:.1f} MB" + (f" with {' and '.join(m.stages)}" if m.stages else "")
        print(f"{m.name}  [{m.detector}, base {base}, {size}, trained {m.trained or '?'}]")
        if m.roles:
            print(f"    {'; '.join(m.roles)}")
        numbers = ", ".join(f"{k} {_number(v)}" for k, v in m.headline().items())
        if numbers:
            print(f"    {numbers}")
    for base, command in missing.items():
        print(f"\nto use the models on {base}: {command}")
    print(
        "\ndetectors load by name (dialcheck check FILE --model NAME, dialcheck.load(NAME)), answer classifiers "
        "with dialcheck nbest --classifier NAME; a model's card: dialcheck models NAME"
    )
    return 0
