"""Every paper number dialcheck prints or its docs quote, against the papers, metric by metric and split by split;
and the shipped defaults' numbers in README.md and docs/benchmarks.md ("At a glance") against their model cards.

A number under the wrong metric or split is as wrong as a wrong digit, so each is checked where it is shown:
``dialcheck evaluate``'s "paper" column, the README's DECODE table, the Chinese section, and the "At a glance"
table. Sources of the paper numbers:

- DECODE (Nie et al. 2021), RoBERTa-large trained on DECODE. Utterance-based: main test 93.19, strict 80.86,
  supporting-evidence F1 87.5, human-bot 84.69, A2T 91.5, RCT 78.4; raw human-bot (appendix F) P / R / F1 / AUC
  23.94 / 74.28 / 36.21 / 87.16. Unstructured: main test 96.85, human-bot 70.03, RCT 34.4. The main test split is
  not in ../shared/data; the rebuilt dev split stands beside it.
- CDConv (Zheng et al. 2022), Table 4, hierarchical RoBERTa on the official test split: 2-class accuracy / macro-F1
  80.4 / 78.1, 4-class 77.8 / 59.3, F1 none / intra / role / history 85.1 / 33.0 / 48.1 / 71.0; the majority class
  gets 63.6 accuracy.
- CI-ToD (Qin et al. 2021) Table 3 as the CI-ToD repository's README gives it (BART 0.744 / 0.510 / 0.761 / 0.513,
  human 0.962 / 0.805 / 0.920 / 0.932; yizhen20133868/CI-ToD a8664aa, the commit ../shared/data/ci_tod/MANIFEST.md
  names), CGIM and SGDCI as SGDCI's README gives them (overall 0.563; 0.791 / 0.635 / 0.783 / 0.601). MPFToD's
  0.610 has no source in this repository or ../shared, and is not checked here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from dialcheck.detectors import DEFAULT_MODELS
from dialcheck.evaluation import cdconv, citod, decode

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "src" / "dialcheck" / "models"

DECODE_UTTERANCE = {
    "dev/accuracy": 93.19,  # the paper's main test
    "dev/strict_accuracy": 80.86,
    "dev/evidence_f1": 87.5,
    "human_bot/accuracy": 84.69,
    "a2t/accuracy": 91.5,
    "rct/accuracy": 78.4,
    "human_bot_raw/precision": 23.94,
    "human_bot_raw/recall": 74.28,
    "human_bot_raw/f1": 36.21,
    "human_bot_raw/roc_auc": 87.16,
}
DECODE_UNSTRUCTURED = {"dev/accuracy": 96.85, "human_bot/accuracy": 70.03, "rct/accuracy": 34.4}
CDCONV = {
    "2class/accuracy": 80.4,
    "2class/macro_f1": 78.1,
    "4class/accuracy": 77.8,
    "4class/macro_f1": 59.3,
    "f1/non_contradiction": 85.1,
    "f1/intra_sentence": 33.0,
    "f1/role_confusion": 48.1,
    "f1/history": 71.0,
}
CDCONV_MAJORITY_ACCURACY = 63.6


def _metrics(name: str) -> dict[str, float]:
    return json.loads((MODELS / name / "dialcheck.json").read_text(encoding="utf-8"))["metrics"]


def _table(text: str, header_has: str) -> list[list[str]]:
    """The rows (cells, stripped of bold) of the first Markdown table whose header line holds ``header_has``."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|") and header_has in line)
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip().replace("**", "") for c in line.strip().strip("|").split("|")])
    return [rows[0], *rows[2:]]  # header, then the body without the |---| line


def _numbers(cell: str) -> list[float]:
    return [float(x) for x in re.findall(r"\d+(?:\.\d+)?", cell)]


def _paper_column(table: str) -> dict[str, str]:
    """Row label -> the "paper" cell of an ``evaluate`` Markdown table."""
    return {row[0]: row[2] for row in _table(table, "| metric |")[1:]}


def test_the_paper_constants_are_the_papers_numbers():
    assert decode.PAPER == {"decode.utterance.v1": DECODE_UTTERANCE, "decode.unstructured.v1": DECODE_UNSTRUCTURED}
    assert cdconv.PAPER == CDCONV
    assert cdconv.PAPER_MAJORITY_ACCURACY == CDCONV_MAJORITY_ACCURACY
    published = {
        "BART (Qin et al. 2021)": {"QI_f1": 0.744, "HI_f1": 0.510, "KBI_f1": 0.761, "overall_accuracy": 0.513},
        "Human (Qin et al. 2021)": {"QI_f1": 0.962, "HI_f1": 0.805, "KBI_f1": 0.920, "overall_accuracy": 0.932},
        "CGIM": {"overall_accuracy": 0.563},
        "SGDCI": {"QI_f1": 0.791, "HI_f1": 0.635, "KBI_f1": 0.783, "overall_accuracy": 0.601},
    }
    assert {k: v for k, v in citod.PAPER.items() if k in published} == published


def test_evaluate_shows_each_decode_paper_number_beside_its_own_metric_and_split():
    results = {f"{split}/{metric}": 50.0 for split, metric, _ in decode._ROWS}
    utterance = _paper_column(decode.to_markdown(results, "decode.utterance.v1"))
    assert {label: cell for label, cell in utterance.items() if cell} == {
        "Dev (rebuilt) accuracy [paper: main test]": "93.19",
        "Dev strict accuracy [paper: main test]": "80.86",
        "Dev supporting-evidence F1 [paper: main test]": "87.50",
        "Human-bot accuracy": "84.69",
        "A2T accuracy": "91.50",
        "RCT accuracy": "78.40",
        "Raw human-bot precision": "23.94",
        "Raw human-bot recall": "74.28",
        "Raw human-bot F1": "36.21",
        "Raw human-bot ROC AUC": "87.16",
    }
    unstructured = _paper_column(decode.to_markdown(results, "decode.unstructured.v1"))
    assert {label: cell for label, cell in unstructured.items() if cell} == {
        "Dev (rebuilt) accuracy [paper: main test]": "96.85",
        "Human-bot accuracy": "70.03",
        "RCT accuracy": "34.40",
    }
    # a detector the paper has no numbers for gets an empty column, not the utterance-based one's
    assert not any(_paper_column(decode.to_markdown(results, "tiny.v1")).values())


def test_evaluate_shows_each_cdconv_paper_number_beside_its_own_metric_on_the_official_test_split_only():
    keys = [*CDCONV, "n", "2class/precision", "2class/recall"]
    test = _paper_column(cdconv.to_markdown({f"test/{k}": 50.0 for k in keys}, "test"))
    assert {label: cell for label, cell in test.items() if cell} == {
        "2-class accuracy": "80.40",
        "2-class macro-F1": "78.10",
        "4-class accuracy": "77.80",
        "4-class macro-F1": "59.30",
        "F1 none": "85.10",
        "F1 intra-sentence": "33.00",
        "F1 role confusion": "48.10",
        "F1 history": "71.00",
    }
    for split in ("dev", "disjoint_test"):  # the paper's numbers are of the official test split
        assert not any(_paper_column(cdconv.to_markdown({f"{split}/{k}": 50.0 for k in keys}, split)).values())


def test_readme_decode_table_quotes_the_paper_and_the_default_card():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    head, *rows = _table(readme, "paper: RoBERTa-large")
    assert "8-bit" in head[1] and "7-bit" in head[2] and head[3].startswith("paper")
    card = _metrics(DEFAULT_MODELS["en"])
    seven = _seven_bit(DEFAULT_MODELS["en"])
    expected = {  # row label starts with -> (the card's 8-bit keys, the card's 7-bit column keys, the paper's keys)
        "DECODE human-bot accuracy": (["human_bot/accuracy"], ["human_bot"], ["human_bot/accuracy"]),
        "RCT accuracy": (["rct/accuracy"], ["rct"], ["rct/accuracy"]),
        "rebuilt-dev accuracy": (["dev/accuracy"], ["dev"], ["dev/accuracy"]),
        "supporting-evidence F1": (["dev/evidence_f1"], ["evidence_f1"], ["dev/evidence_f1"]),
        "A2T accuracy": (["a2t/accuracy"], [], ["a2t/accuracy"]),
        "raw human-bot bot turns: precision / recall / ROC AUC": (
            ["human_bot_raw/precision", "human_bot_raw/recall", "human_bot_raw/roc_auc"],
            ["raw_precision", "raw_recall", "raw_roc_auc"],
            ["human_bot_raw/precision", "human_bot_raw/recall", "human_bot_raw/roc_auc"],
        ),
    }
    for start, (eight_keys, seven_keys, paper_keys) in expected.items():
        row = next(r for r in rows if r[0].startswith(start))
        assert _numbers(row[1]) == [card[k] for k in eight_keys], row
        if seven_keys:
            assert _numbers(row[2]) == [seven[k] for k in seven_keys], row
        assert _numbers(row[3]) == [DECODE_UTTERANCE[k] for k in paper_keys], row


def _seven_bit(name: str) -> dict[str, float]:
    """The 7-bit column of the English default's card (its measured table: "vN, 7-bit")."""
    text = (MODELS / name / "MODEL_CARD.md").read_text(encoding="utf-8")
    column = f"v{name.rsplit('-v', 1)[1]}, 7-bit"
    head, *rows = _table(text, column)
    j = head.index(column)
    cells = {r[0]: _numbers(r[j]) for r in rows}
    # the card's 8-bit column is its evaluate table's (dialcheck.json), so the card agrees with itself
    eight = {r[0]: _numbers(r[head.index(column.replace("7-bit", "8-bit"))]) for r in rows}
    card = _metrics(name)
    assert eight["human-bot accuracy"] == [card["human_bot/accuracy"]]
    assert eight["rebuilt dev accuracy / SE F1"] == [card["dev/accuracy"], card["dev/evidence_f1"]]
    dev, f1 = cells["rebuilt dev accuracy / SE F1"]
    p, r, auc = cells["raw human-bot precision / recall / ROC AUC"]
    return {
        "human_bot": cells["human-bot accuracy"][0],
        "rct": cells["RCT accuracy"][0],
        "dev": dev,
        "evidence_f1": f1,
        "raw_precision": p,
        "raw_recall": r,
        "raw_roc_auc": auc,
    }


def _avx2_default() -> dict[str, float]:
    """The English default's numbers in ``decode-router-v1``'s card (its "default" column, 7-bit on an AVX2 EPYC)."""
    head, *rows = _table((MODELS / "decode-router-v1" / "MODEL_CARD.md").read_text(encoding="utf-8"), "| default (")
    assert f"`{DEFAULT_MODELS['en']}`" in head[1]
    cells = {r[0]: _numbers(r[1]) for r in rows}
    (hb, rct), (dev, f1, a2t) = cells["DECODE human-bot / RCT"], cells["DECODE rebuilt dev / SE F1 / A2T"]
    return {"human_bot": hb, "rct": rct, "dev": dev, "evidence_f1": f1, "a2t": a2t}


def test_readme_quotes_the_defaults_7_bit_numbers_of_an_avx2_cpu_as_measured():
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    said = re.search(
        r"the 7-bit weights gave human-bot ([\d.]+), RCT ([\d.]+), rebuilt dev ([\d.]+) and SE F1 ([\d.]+)", readme
    )
    avx2 = _avx2_default()
    assert [float(x) for x in said.groups()] == [avx2[k] for k in ("human_bot", "rct", "dev", "evidence_f1")]
    said = re.search(r"forced to 7-bit: ([\d.]+) / ([\d.]+) / ([\d.]+) / ([\d.]+), the model card's", readme)
    seven = _seven_bit(DEFAULT_MODELS["en"])
    assert [float(x) for x in said.groups()] == [seven[k] for k in ("human_bot", "rct", "dev", "evidence_f1")]


def _glance_row(task: str) -> list[str]:
    text = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    glance = text.split("## At a glance", 1)[1].split("\n## ", 1)[0]
    head, *rows = _table(glance, "| task (issue) |")
    assert head[2:4] == ["ours", "paper"]
    return next(r for r in rows if r[0] == task)


def test_at_a_glance_quotes_the_paper_and_the_default_cards():
    row = _glance_row("DECODE, English (2)")
    assert row[1].startswith(f"`{DEFAULT_MODELS['en']}`")
    card, seven = _metrics(DEFAULT_MODELS["en"]), _seven_bit(DEFAULT_MODELS["en"])
    found = re.findall(r"dev ([\d.]+), human-bot ([\d.]+), RCT ([\d.]+), SE F1 ([\d.]+), A2T ([\d.]+)", row[2])
    eight_bit, seven_bit = ([float(x) for x in group] for group in found[:2])
    assert eight_bit == [card[k] for k in ("dev/accuracy", "human_bot/accuracy", "rct/accuracy", "dev/evidence_f1")] + [
        card["a2t/accuracy"]
    ]
    assert seven_bit[:4] == [seven[k] for k in ("dev", "human_bot", "rct", "evidence_f1")]
    # and what the default gave where 7-bit is what the CPU runs (an AVX2 EPYC): the router's card measured it
    avx2 = [float(x) for x in found[2]]
    assert avx2 == [_avx2_default()[k] for k in ("dev", "human_bot", "rct", "evidence_f1", "a2t")]
    assert row[3] == "RoBERTa-large: main test 93.19, human-bot 84.69, RCT 78.4, SE F1 87.5"

    row = _glance_row("CDConv, Chinese (3)")
    assert row[1].startswith(f"`{DEFAULT_MODELS['zh']}`")
    zh = _metrics(DEFAULT_MODELS["zh"])
    assert re.match(r"official test 2-class accuracy ([\d.]+), 4-class macro-F1 ([\d.]+)", row[2]).groups() == (
        f"{zh['test/2class/accuracy']:.2f}",
        f"{zh['test/4class/macro_f1']:.2f}",
    )
    assert row[3] == "RoBERTa hierarchical 80.4 / 59.3 (majority class 63.6)"
    assert _numbers(row[3]) == [CDCONV["2class/accuracy"], CDCONV["4class/macro_f1"], CDCONV_MAJORITY_ACCURACY]

    row = _glance_row("CI-ToD (4)")
    tod = _metrics(DEFAULT_MODELS["tod"])
    assert row[2].startswith(f"overall accuracy {tod['all/overall_accuracy']:.3f}, KBI F1 {tod['all/KBI_f1']:.3f}")
    assert row[3] == (
        f"best published we know, MPFToD {citod.PAPER['MPFToD']['overall_accuracy']:.3f}; "
        f"BART {citod.PAPER['BART (Qin et al. 2021)']['overall_accuracy']:.3f}"
    )


def test_readme_chinese_numbers_are_the_default_card_and_the_paper():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    zh = _metrics(DEFAULT_MODELS["zh"])
    _, *rows = _table(readme, "| model | what it is | official test |")
    row = next(r for r in rows if r[0] == f"`{DEFAULT_MODELS['zh']}`")
    assert _numbers(row[2]) == [zh["test/2class/accuracy"], zh["test/4class/macro_f1"]]
    expect = re.search(r"official test split: 2-class accuracy (.*?) The\s+category", readme, re.S)
    assert expect, "the README's 'What to expect' sentence moved: check its numbers against the card and the paper"
    quoted = [float(x) for x in re.findall(r"\d+\.\d+", expect.group(1))]  # one decimal place: 65.25 is "65.3"
    assert quoted == pytest.approx(
        [
            zh["test/2class/accuracy"],
            CDCONV_MAJORITY_ACCURACY,
            CDCONV["2class/accuracy"],
            zh["test/4class/macro_f1"],
            CDCONV["4class/macro_f1"],
            zh["test/f1/history"],
            zh["test/f1/intra_sentence"],
        ],
        abs=0.0501,
    )


@pytest.mark.parametrize("language", ["en", "zh"])
def test_models_listing_shows_the_default_cards_numbers(capsys, language):
    from dialcheck.cli import main

    assert main(["models"]) in (0, None)
    out = capsys.readouterr().out
    name = DEFAULT_MODELS[language]
    block = out.split(f"{name}  [", 1)[1].split("\n", 3)[:3]
    shown = dict(re.findall(r"([\w/]+) ([\d.]+)", block[2]))
    card = _metrics(name)
    assert shown and all(float(v) == pytest.approx(card[k], abs=0.005) for k, v in shown.items()), block
