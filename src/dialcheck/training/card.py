"""Model cards written next to trained detectors, from their saved config."""

from __future__ import annotations

import platform
from pathlib import Path
from typing import Any

from ..detectors.modeling import DetectorConfig

__all__ = ["write_model_card"]


# what a running train keeps in OUT until it ends (the card is written before they are removed): not the model
RUN_STATE = ("checkpoint", "resume")


def _size(folder: Path) -> str:
    """The model's size: sub-folders count (a hierarchical detector's stages, a cascade's second detector), the
    training state of the run that is writing the card does not (OUT/checkpoint and OUT/resume, removed as it ends).
    """
    total = sum(
        f.stat().st_size
        for f in folder.rglob("*")
        if f.is_file() and f.name != "MODEL_CARD.md" and f.relative_to(folder).parts[0] not in RUN_STATE
    )
    return f"{total / 1e6:.1f} MB"


def model_reference(folder: Path) -> str:
    """How a card names a model folder: a shipped model by its name (not this machine's install path)."""
    from ..detectors import default_model_path

    if folder.is_absolute() and folder.resolve().parent == default_model_path().parent.resolve():
        return folder.name
    return str(folder)


def init_record(folder: str | Path, config: DetectorConfig) -> dict[str, Any]:
    """What a continued run stores under ``training["init"]`` so its card can show the whole chain (a shipped
    model by its name, as :func:`model_reference` names it)."""
    return {"folder": model_reference(Path(folder)), **{k: config.training.get(k) for k in ("command", "date")}}


GENERATED = ("## Training", "## Evaluation")


def hand_written_sections(text: str) -> list[str]:
    r"""The ``## `` sections of a card that :func:`write_model_card` does not generate (written by people:
    what the model is for, how it compares), each with its heading, in order.

    >>> card = "# m\n\n- size\n\n## What it is\n\nA note.\n\n## Training\n\n- seed: 0\n"
    >>> hand_written_sections(card)
    ['## What it is\n\nA note.\n']
    """
    sections: list[str] = []
    current: list[str] | None = None
    for line in text.splitlines(keepends=True):
        if line.startswith("## "):
            if current is not None:
                sections.append("".join(current))
            current = None if line.startswith(GENERATED) else [line]
        elif current is not None:
            current.append(line)
    if current is not None:
        sections.append("".join(current))
    return [s.rstrip("\n") + "\n" for s in sections]


def _weights_line(config: DetectorConfig) -> str:
    if config.detector == "cascade.v1":
        return f"- stages: first `{config.options.get('first')}`, second `{config.options.get('second')}`"
    if config.detector == "cdconv.paircheck.v1":
        return f"- parts: main `{config.options.get('main')}`, pair check `{config.options.get('pairs')}`"
    if config.adapter:
        return f"- adapter: `{config.adapter}`"
    return "- full fine-tuning (complete weights in this folder)"


def write_model_card(folder: Path, config: DetectorConfig, name: str | None = None) -> Path:
    """Write ``MODEL_CARD.md``: what it is, how it was trained (command, data, time) and its metrics; titled
    ``name``, by default the folder's name (a card written in a folder that is renamed when whole is given the
    final one).

    Sections people added to an existing card (any ``## `` heading but Training and Evaluation) are kept,
    before Training, so re-running ``dialcheck evaluate --update-card`` refreshes only the numbers.
    """
    t = config.training
    path = folder / "MODEL_CARD.md"
    kept = hand_written_sections(path.read_text(encoding="utf-8")) if path.is_file() else []
    lines = [
        f"# {name or folder.name}",
        "",
        f"- detector: `{config.detector}`",
        f"- base encoder: `{config.base}`",
        _weights_line(config),
        f"- labels: {config.labels}; thresholds: tau={config.thresholds.get('tau')}, "
        f"eta_e={config.thresholds.get('eta_e')}; max_length={config.max_length}",
        # what the folder holds, not the runtime a card written by `evaluate --update-card` ran it on
        *([f"- options: `{saved}`"] if (saved := config.saved_options()) else []),
        f"- size on disk: {_size(folder)}"
        + (" (and the models it names)" if config.detector in ("cascade.v1", "cdconv.paircheck.v1") else ""),
        "",
        *[line for section in kept for line in (*section.rstrip("\n").split("\n"), "")],
        "## Training",
        "",
    ]
    derived = t.get("derived_from")
    if isinstance(derived, dict):
        how = f"; `{derived['command']}` makes it" if derived.get("command") else ""
        lines += [
            f"`{derived.get('model')}` read with {derived.get('change')} ({derived.get('date')}{how}); nothing was "
            f"retrained, and every other setting is `{derived.get('model')}`'s, whose training follows.",
            "",
        ]
        again = derived.get("recalibrated")
        if isinstance(again, dict):
            lines += [_recalibrated(again), ""]
    if isinstance(t.get("recalibrated"), dict):  # train --task cascade --recalibrate
        lines += [_recalibrated(t["recalibrated"]), ""]
    init = t.get("init")
    stages = t.get("stages")
    if isinstance(stages, dict):
        low, high = (float(config.thresholds.get(k, 0.0)) for k in ("recheck_low", "recheck_high"))
        lines += [
            "A cascade: the first detector reads every dialogue, the second re-reads those the first scores in "
            f"[{low:.4f}, {high:.4f}]. They were trained by:",
            "",
        ]
        for key, rec in stages.items():
            lines += [
                f"- {key}: `{rec.get('folder')}` ({rec.get('date')})",
                "",
                "  ```",
                f"  {rec.get('command')}",
                "  ```",
                "",
            ]
        lines += ["and the band was chosen by:", ""]
    parts = t.get("parts")
    if isinstance(parts, dict):
        lines += [
            "A four-category detector with a pair check: the main detector decides; where it says no contradiction, "
            f"the pair detector's score of the reply against each earlier turn of its speaker, from "
            f"{float(config.thresholds.get('tau_pairs', 1.01)):.2f} on, makes it a history contradiction"
            + (
                f"; a history contradiction it scores below {v:.2f} is cleared"
                if (v := float(config.thresholds.get("veto_below", 0.0))) > 0
                else ""
            )
            + ". They were trained by:",
            "",
        ]
        for key, rec in parts.items():
            lines += [f"- {key}: `{rec.get('folder')}` ({rec.get('date')})", "", "  ```", f"  {rec.get('command')}"]
            lines += ["  ```", ""]
        lines += ["and put together by:", ""]
    if isinstance(init, dict) and isinstance(init.get("soup"), list):
        cut = f", its LoRA adapter cut to rank {init['rank']} (truncated SVD)" if init.get("rank") else ""
        if len(init["soup"]) == 1:
            lines += [f"Starts from one detector{cut}:", ""]
        else:
            lines += [f"Starts from the weight average (a model soup){cut} of:", ""]
        for ing in init["soup"]:
            lines += [f"- `{ing.get('folder')}` (weight {ing.get('weight')}, {ing.get('date')}), trained by:", ""]
            lines += ["  ```", f"  {ing.get('command')}", "  ```", ""]
        lines += ["and then:", ""]
    elif isinstance(init, dict):
        lines += [f"Continues `{init.get('folder')}` ({init.get('date')}), which was trained by:", ""]
        lines += ["```", str(init.get("command")), "```", "", "and then:", ""]
    if t.get("command"):
        lines += ["```", str(t["command"]), "```", ""]
    if isinstance(stages, dict) and (isinstance(t.get("readings"), dict) or t.get("calibrated_on_runtime")):
        if isinstance(t.get("readings"), dict):
            readings = ", ".join(f"`{k}: {v}`" for k, v in t["readings"].items())
            lines.append(f"Both stages read dialogues with {readings}.")
        runtime = t.get("calibrated_on_runtime")
        if runtime:
            lines.append(f"Both stages read the validation dialogues on `{runtime}`, the runtime the cascade prefers.")
        again = t.get("second_recalibrated")
        if isinstance(again, dict):
            int8 = runtime == "onnx-int8"
            why = {(True, True): "that reading and runtime", (False, True): "that runtime's scores"}.get(
                (bool(t.get("readings")), int8), "that reading"
            )
            lines.append(
                f"The second's thresholds were chosen again for {why} on the validation dialogues: tau "
                f"{again.get('tau_before')} -> {again.get('tau')}, eta_e {again.get('eta_e_before')} -> "
                f"{again.get('eta_e')} (its validation balanced accuracy {again.get('val_balanced_accuracy', 0):.4f})."
            )
        lines.append("")
    if t.get("epochs") == 0 and t.get("steps") == 0:
        changed = "the cut adapter's" if isinstance(init, dict) and init.get("rank") else "unchanged"
        lines += [
            f"Calibration only: no training step (the weights are {changed}); tau and eta_e were set on the",
            "validation dialogues.",
            "",
        ]
    for key in (
        "augment",
        "counts",
        "data",
        "train_pairs",
        "train_examples",
        "train_labels",
        "dev_examples",
        "validation_dialogues",
        "window",
        "epochs",
        "batch_size",
        "lr",
        "seed",
        "steps",
        "best_step",
        "fits",
        "train_seconds",
        "threads",
        "machine",
        "date",
        "calibration",
    ):
        if key in t:
            lines.append(f"- {key}: {t[key]}")
    bands = t.get("other_bands")
    if isinstance(bands, dict) and bands:
        lines += [
            "",
            "Other bands on the same validation dialogues (`--max-disagreement`: the share allowed to differ from "
            "the second detector alone):",
            "",
            "| --max-disagreement | band | re-read | differ | balanced accuracy |",
            "|---:|---|---:|---:|---:|",
        ]
        for d, m in bands.items():
            lines.append(
                f"| {d} | [{float(m.get('recheck_low', 0)):.4f}, {float(m.get('recheck_high', 1)):.4f}] | "
                f"{m.get('val_rechecked')} | "
                f"{m.get('val_disagreement')} | {m.get('val_balanced_accuracy')} |"
            )
    lex = t.get("lexical")
    if isinstance(lex, dict):
        lines += [
            "",
            "### Lexical head",
            "",
            "A character n-gram logistic regression (`lexical.json`, `lexical.safetensors`; "
            "`dialcheck.detectors.lexical`) fitted on "
            + ("the train and dev splits (below)" if lex.get("refitted") else "the same train split")
            + f" and mixed into the encoder's probabilities with weight {lex.get('mix')}; tau {lex.get('tau_before')}"
            f" -> {lex.get('tau')}. Mix and tau were chosen together on dev (mean of 2-class accuracy and 4-class "
            "macro-F1) for the head first added by:",
            "",
            "```",
            str(lex.get("command")),
            "```",
            "",
            f"- n-grams: {lex.get('n_grams')}; C: {lex.get('C')}; date: {lex.get('date')}",
            f"- dev, best tau per mix: {lex.get('dev_best_per_mix')}",
        ]
        if lex.get("copied_from"):
            how = (
                f"the head of `{lex['copied_from']}` refitted on {lex.get('train_examples')} train and dev "
                "examples (its C and min_df; its mix and tau kept, nothing chosen; the n-grams above are the "
                "refitted head's)"
                if lex.get("refitted")
                else f"copied as it is (mix and tau too, nothing refitted or chosen) from `{lex['copied_from']}`"
            )
            lines += [
                f"- {how} by:",
                "",
                "```",
                str(lex.get("copy_command")),
                "```",
            ]
    val = [f"- {k}: {v}" for k, v in config.metrics.items() if k.startswith("val_") or k in ("tau", "eta_e")]
    if val:
        where = t.get("calibration_file")
        source = f"labelled dialogues of `{where}`" if where else "held-out train groups"
        lines += ["", f"Validation ({source}, used for early stopping and calibration):", "", *val]
        if isinstance(derived, dict):  # models --save: the numbers are NAME's, not this model's
            lines += ["", _derived_validation(derived, config, name or folder.name)]
    elif any(k.startswith("dev/") for k in config.metrics):
        lines += ["", "Model selection (early stopping) on the `dev/` split below; it is not a test set."]
    evals = {k: v for k, v in config.metrics.items() if "/" in k}
    if evals:
        lines += ["", "## Evaluation (`dialcheck evaluate`)", ""]
        if config.metrics.get("evaluate_command"):
            lines += ["```", str(config.metrics["evaluate_command"]), "```", ""]
        lines += ["| metric | value |", "|---|---:|"]
        lines += [f"| {k} | {v} |" for k, v in evals.items()]
    lines += ["", f"Card written on {platform.node() or 'this machine'} by dialcheck.", ""]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def _derived_validation(derived: dict[str, Any], config: Any, folder: str) -> str:
    """The card's note under the validation numbers of a model ``models NAME --save`` derived: they were measured
    on NAME with NAME's thresholds (and readings), not with this model's."""
    parent = derived.get("model")
    was = derived.get("metrics_measured_with")
    thresholds = (
        " (" + ", ".join(f"{k} {v:g}" for k, v in was.items() if isinstance(v, int | float)) + ")"
        if isinstance(was, dict)
        else ""
    )
    now = ", ".join(
        f"{k} {config.thresholds[k]:g}" for k in ("tau", "eta_e") if isinstance(config.thresholds.get(k), int | float)
    )
    again = isinstance(derived.get("recalibrated"), dict)
    which = "Apart from val_balanced_accuracy (measured again when tau was chosen again), these" if again else "These"
    return (
        f"{which} are `{parent}`'s validation numbers, measured with its thresholds{thresholds} and readings before "
        f"the change above, not with this model's ({now}); `dialcheck evaluate --model {folder} --update-card` "
        "measures this model."
    )


def _recalibrated(r: dict[str, Any]) -> str:
    """The card's line for ``models --save --recalibrate``: τ chosen again, on what, per int8 range."""
    ranges = r.get("by_int8_range") if isinstance(r.get("by_int8_range"), dict) else {"": r}
    parts = [
        (f"{name}-range int8 scores: " if name else "")
        + f"tau {x.get('tau_before')} -> {x.get('tau')} (validation balanced accuracy "
        f"{x.get('val_balanced_accuracy_before')} -> {x.get('val_balanced_accuracy')}; the best, "
        f"{x.get('best_balanced_accuracy')}, at {x.get('best_tau')})"
        for name, x in ranges.items()
    ]
    return (
        f"Its tau was chosen again (`--recalibrate`) on the verdicts it gives for {r.get('dialogues')} dialogues of "
        f"{r.get('on')}, by the training rule (the highest threshold within one standard error of the best balanced "
        f"accuracy): {'; '.join(parts)}."
    )
