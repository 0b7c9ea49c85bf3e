"""Tables and plots of Certainty and Variety per decoding setting (like Sato et al. 2022, Tables 2-3, Figure 2).

A result row is a dict with ``setting`` (e.g. ``beam10``), ``strategy``, ``n``, ``kind`` (ENTQ/CNTQ)
and the output of :func:`dialcheck.analysis.nbest.summarize`.

>>> rows = [
...     {"setting": "beam5", "strategy": "beam", "n": 5, "kind": "ENTQ", "inputs": 10, "kept": 8,
...      "dropped_ambiguous": 2, "certainty": 0.9, "variety": 0.5},
...     {"setting": "beam5", "strategy": "beam", "n": 5, "kind": "CNTQ", "inputs": 10, "kept": 9,
...      "dropped_ambiguous": 1, "certainty": 0.25, "variety": 0.2},
... ]
>>> print(markdown_table(rows))
| setting | ENTQ Certainty | ENTQ Variety | ENTQ kept / inputs | CNTQ Certainty | CNTQ Variety | CNTQ kept / inputs |
|---|---:|---:|---:|---:|---:|---:|
| beam5 | 0.900 | 0.500 | 8 / 10 | 0.250 | 0.200 | 9 / 10 |
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import MissingDependencyError

__all__ = ["json_rows", "markdown_table", "plot_certainty_variety"]

KINDS = ("ENTQ", "CNTQ")


def _settings(rows: Sequence[dict[str, Any]]) -> list[str]:
    seen: dict[str, None] = {}
    for r in rows:
        seen.setdefault(r["setting"], None)
    return list(seen)


def _nan(v: Any) -> bool:
    return isinstance(v, float) and v != v


def json_rows(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows as plain JSON: a Certainty, Variety or top-1 share with no list to average (every list of a kind held
    an ambiguous reply) is ``None``, not NaN, which ``json.dumps`` writes as ``NaN``, no JSON reader's value.

    >>> json_rows([{"setting": "beam5", "kept": 0, "certainty": float("nan")}])
    [{'setting': 'beam5', 'kept': 0, 'certainty': None}]
    """
    return [{k: None if _nan(v) else v for k, v in r.items()} for r in rows]


def _cell(v: Any) -> str:
    return "n/a" if v is None or _nan(v) else f"{v:.3f}"


def markdown_table(rows: Sequence[dict[str, Any]]) -> str:
    """One line per decoding setting; Certainty, Variety and kept/inputs for ENTQ and CNTQ."""
    by = {(r["setting"], r["kind"]): r for r in rows}
    head = ["setting"]
    for k in KINDS:
        head += [f"{k} Certainty", f"{k} Variety", f"{k} kept / inputs"]
    lines = ["| " + " | ".join(head) + " |", "|---" + "|---:" * (len(head) - 1) + "|"]
    for s in _settings(rows):
        cells = [s]
        for k in KINDS:
            r = by.get((s, k))
            if r is None:
                cells += ["", "", ""]
            else:
                cells += [_cell(r["certainty"]), _cell(r["variety"]), f"{r['kept']} / {r['inputs']}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot_certainty_variety(rows: Sequence[dict[str, Any]], path: str | Path, title: str = "") -> Path:
    """A PNG with two panels (Certainty, Variety) against the n-best size: beam search as lines,
    other strategies as single markers; ENTQ solid, CNTQ dashed. Needs the ``plot`` extra (matplotlib)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise MissingDependencyError("matplotlib", "plot", "the Certainty/Variety plot") from None
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6), sharex=True)
    markers = {"beam": "o", "diverse_beam": "s", "nucleus": "^", "top_k": "v", "greedy": "x"}
    colors = {"ENTQ": "tab:blue", "CNTQ": "tab:red"}
    for ax, metric in zip(axes, ("certainty", "variety"), strict=True):
        for kind in KINDS:
            style = "-" if kind == "ENTQ" else "--"
            for strategy in sorted({r["strategy"] for r in rows}):
                pts = sorted(
                    (r["n"], r[metric]) for r in rows if r["kind"] == kind and r["strategy"] == strategy and r["kept"]
                )
                if not pts:
                    continue
                xs, ys = zip(*pts, strict=True)
                ax.plot(
                    xs,
                    ys,
                    style if strategy == "beam" else "none",
                    marker=markers.get(strategy, "o"),
                    color=colors[kind],
                    label=f"{kind} {strategy.replace('_', ' ')}",
                    alpha=1.0 if strategy == "beam" else 0.8,
                )
        ax.set_title(metric.capitalize())
        ax.set_xlabel("n-best size")
        ax.set_xscale("log", base=2)
        ax.set_ylim(0, 1)
        ax.grid(alpha=0.3)
    ns = sorted({r["n"] for r in rows})
    for ax in axes:
        ax.set_xticks(ns)
        ax.set_xticklabels([str(n) for n in ns])
    axes[1].legend(fontsize=7, loc="upper right")
    if title:
        fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out
