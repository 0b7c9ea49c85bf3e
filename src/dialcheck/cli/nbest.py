"""``dialcheck nbest``: how contradiction-aware are a generator's n-best lists? (Sato et al. 2022)

Builds polar echo questions (or reads them with ``--stimuli``), generates an n-best list per question
for every decoding setting, judges each reply yes / no / ambiguous with the Circa answer classifier, and
reports Certainty and Variety per setting for ENTQ and CNTQ inputs (inputs whose list holds an
ambiguous reply are dropped and counted)::

    dialcheck nbest --source mnli_snli --per-kind 100 --settings beam5,beam10,diverse10,nucleus10 --out runs/nbest

The output folder gets ``stimuli.jsonl``, one ``nbest-<setting>.jsonl`` per setting (the run resumes
from them; ``generation.json`` records the LM and decoding each was made with, and a run with others is
refused; resumed with the same stimuli and ``--batch-size``/``--batch-rows``, its lists, sampled ones included,
are those of an uninterrupted run), ``results.json``, ``table.md`` and ``certainty_variety.png`` (needs the
``plot`` extra).
Settings: ``beamN``, ``diverseN`` (N groups of one beam), ``nucleusN`` (top-p 0.9), ``topkN`` (k 40).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..io import counted
from .common import (
    DATA_DIR_HELP,
    add_threads_option,
    http_url,
    nonnegative_float,
    nonnegative_int,
    positive_int,
    raise_every,
    seed_number,
    set_threads,
)
from .probe import SOURCES, build_echo_items, echo_kinds

HELP = "n-best analysis: Certainty and Variety of replies to polar echo questions"


def add_parser(sub: Any) -> None:
    p = sub.add_parser("nbest", help=HELP, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", "-o", required=True, help="output folder (an existing run is resumed)")
    s = p.add_argument_group("stimuli")
    s.add_argument("--stimuli", default=None, help="echo questions from `dialcheck probe echo` (JSONL)")
    s.add_argument("--source", default="mnli_snli", help=f"corpora to build them from: {', '.join(SOURCES)}")
    s.add_argument("--input", default=None, help="your own NLI pairs (JSONL: premise, hypothesis, label)")
    s.add_argument("--kinds", type=echo_kinds, default="ENTQ,CNTQ", help="ENTQ and/or CNTQ (default both)")
    s.add_argument("--per-kind", type=nonnegative_int, default=100, help="random N of each kind (0 = all; default 100)")
    s.add_argument("--seed", type=seed_number, default=0)
    s.add_argument(
        "--max-premise-words", type=positive_int, default=30, help="longer premises are skipped (default 30)"
    )
    s.add_argument("--data-dir", default=None, help=DATA_DIR_HELP)
    g = p.add_argument_group("generation")
    g.add_argument("--settings", default="beam5,beam10,beam20,beam40,diverse10,nucleus10")
    g.add_argument("--lm", default=None, help="causal LM name or local folder (default SmolLM2-135M-Instruct)")
    g.add_argument(
        "--endpoint", type=http_url, default=None, help="OpenAI-compatible base URL (sampling settings only)"
    )
    g.add_argument("--endpoint-model", default=None)
    g.add_argument("--max-new-tokens", type=positive_int, default=16)
    g.add_argument(
        "--diversity-penalty",
        type=nonnegative_float,
        default=0.5,
        help="diverseN: how much a group avoids the tokens earlier groups chose (default 0.5; 0: not at all)",
    )
    g.add_argument("--batch-size", type=positive_int, default=4, help="inputs per generate call")
    g.add_argument(
        "--batch-rows",
        type=nonnegative_int,
        default=0,
        help="size generate calls by sequences instead (beams x inputs; default 0: by --batch-size)",
    )
    add_threads_option(g)
    p.add_argument(
        "--classifier", default=None, help="answer classifier folder or shipped name (default: the shipped default)"
    )
    p.add_argument(
        "--onnx",
        action="store_true",
        help='judge with ONNX Runtime (pip install "dialcheck[onnx]"; exported once into the cache)',
    )
    p.add_argument(
        "--int8",
        action="store_true",
        help="judge in int8; use it with --onnx (ONNX Runtime's per-channel int8: 0.890 relaxed accuracy against "
        "0.913 for the default classifier); alone it is torch's int8, which drops that classifier to 0.703",
    )
    p.add_argument("--generate-only", action="store_true", help="store the n-best lists unjudged (judge later)")
    p.add_argument(
        "--rejudge",
        action="store_true",
        help="judge the stored lists again (e.g. with --classifier) and summarise them; generates nothing: "
        "stimuli without a stored list are left out and counted; a list another run is still writing is "
        "refused (copy it to another folder to judge it now)",
    )
    p.add_argument("--no-plot", action="store_true")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..analysis.answers import load_answer_classifier
    from ..analysis.experiment import judge_folder, run_nbest_experiment, summarize_folder
    from ..analysis.report import json_rows, markdown_table, plot_certainty_variety
    from ..probes.echo import EchoSet

    out = Path(args.out)
    stimuli_path = out / "stimuli.jsonl"
    settings = _settings(args)  # read with the command line: a typo is refused before any folder or file is made
    up = next((a for a in (out, *out.parents) if a.exists()), None)
    if up is not None and not up.is_dir():  # 'File exists' / 'Not a directory' from mkdir before
        where = "is a file" if up == out else f"is under {up}, a file"
        raise InputError(f"--out: {where}; nbest writes a folder of lists and results: give a folder", str(out))
    if args.endpoint and not args.rejudge:  # refused by the endpoint's first request, once the folder was made
        if not args.endpoint_model:
            raise InputError("--endpoint needs --endpoint-model")
        beams = [cfg.name for cfg in settings if cfg.strategy not in ("nucleus", "top_k")]
        if beams:
            raise InputError(
                f"--settings {','.join(beams)}: an OpenAI-compatible endpoint samples replies: use nucleusN or topkN "
                "settings with --endpoint (beam search needs a local model, --lm)"
            )
    if args.rejudge and args.generate_only:
        raise InputError("--rejudge judges stored lists and --generate-only judges nothing: use one of them")
    if args.rejudge and not any(_has_lists(out, cfg.name) for cfg in settings):  # before any stimulus is built
        raise InputError(f"--rejudge: {out} holds no n-best list for {args.settings} (generate them first)")
    if args.stimuli:
        es = load_stimuli(args.stimuli)
        if stimuli_path.exists():
            _check_same_stimuli(es.items, stimuli_path, out)
    elif stimuli_path.exists():
        es = EchoSet.load(stimuli_path)  # resuming: keep the stimuli of the first run
        print(f"dialcheck: resuming with the stimuli in {stimuli_path}", file=sys.stderr)
    else:
        es, _ = build_echo_items(args)
        if es.skipped:
            reasons = ", ".join(f"{k} {v}" for k, v in es.skipped.most_common())
            print(f"dialcheck: skipped {counted(sum(es.skipped.values()), 'NLI pair')}: {reasons}", file=sys.stderr)
    if not es.items:
        raise InputError("no echo questions to ask (every pair was skipped)")
    generation = None if args.rejudge else _generation(out, settings, args)  # --rejudge generates nothing
    out.mkdir(parents=True, exist_ok=True)
    if not stimuli_path.exists() or args.stimuli:
        es.save(stimuli_path)
    if generation is not None:
        (out / GENERATION_FILE).write_text(json.dumps(generation, indent=2) + "\n", encoding="utf-8")
    counts = es.counts()
    print(f"dialcheck: {counts['ENTQ']} ENTQ and {counts['CNTQ']} CNTQ stimuli", file=sys.stderr)

    set_threads(args.threads)
    if args.endpoint:
        from ..generation.openai import OpenAIChatGenerator

        if not args.endpoint_model:
            raise InputError("--endpoint needs --endpoint-model")
        generator: Any = OpenAIChatGenerator(args.endpoint, args.endpoint_model)
    else:
        generator = _LazyGenerator(args.lm)  # loaded only if some list is still missing (not for a pure --rejudge)
    classifier = None if args.generate_only else load_answer_classifier(args.classifier)
    if classifier is not None:
        from ..api import accelerate

        accelerate(classifier, onnx=args.onnx, int8=args.int8)
    if args.rejudge:
        n = judge_folder(out, settings, es.items, classifier)
        print(f"dialcheck: judged {counted(n, 'stored list')} again", file=sys.stderr)
        rows = summarize_folder(out, settings, {it.id for it in es.items})
        _report_missing(rows, settings, len(es.items))
        if not rows:
            raise InputError(f"--rejudge: {out} holds no n-best list for {args.settings} (generate them first)")
    else:
        rows = run_nbest_experiment(
            es.items,
            generator,
            classifier,
            settings,
            out,
            args.batch_size,
            show_progress_bar=not args.no_progress,
            batch_rows=args.batch_rows,
        )
    if classifier is None:
        print(f"dialcheck: n-best lists stored unjudged in {out}; judge them with --rejudge", file=sys.stderr)
        return 0
    (out / "results.json").write_text(json.dumps(json_rows(rows), indent=2) + "\n", encoding="utf-8")
    table = markdown_table(rows)
    (out / "table.md").write_text(table + "\n", encoding="utf-8")
    print(table)
    if not args.no_plot:
        png = plot_certainty_variety(rows, out / "certainty_variety.png", title=f"{args.lm or 'SmolLM2-135M-Instruct'}")
        print(f"dialcheck: plot written to {png}", file=sys.stderr)
    return 0


STIMULUS_KINDS = {"ENTQ": "yes", "CNTQ": "no"}  # kind -> the expected answer
GENERATION_FILE = "generation.json"  # per setting: the generator and decoding its stored lists were made with


def _settings(args: argparse.Namespace) -> list[Any]:
    """The decoding settings of ``--settings``; none at all (``--settings ,``: an empty table and exit 0 before) or
    one setting twice (``beam5,beam5``, ``nucleus10,sample10``: its rows twice in results.json) is refused."""
    from ..generation.nbest import DecodingConfig

    settings, given = [], {}
    for spec in args.settings.split(","):
        if not spec.strip():
            continue
        cfg = DecodingConfig.parse(spec, max_new_tokens=args.max_new_tokens, diversity_penalty=args.diversity_penalty)
        if cfg.name in given:
            raise InputError(f"--settings: {spec.strip()} is {given[cfg.name]} again (give each setting once)")
        given[cfg.name] = spec.strip()
        settings.append(cfg)
    if not settings:
        raise InputError(f"--settings: no decoding setting in {args.settings!r} (e.g. beam5,beam10,nucleus10)")
    return settings


def _has_lists(out: Path, name: str) -> bool:
    path = out / f"nbest-{name}.jsonl"
    return path.is_file() and path.stat().st_size > 0


def _generation(out: Path, settings: list[Any], args: argparse.Namespace) -> dict[str, Any]:
    """What makes each setting's lists (the generator and every decoding parameter), merged into what
    ``OUT/generation.json`` records, after refusing a setting whose stored lists a run resuming them would
    otherwise mix with, or silently report in place of, lists made another way (another ``--lm``,
    ``--max-new-tokens``, ``--diversity-penalty`` or endpoint). A folder of an older version, with lists but
    no record, is taken as it is."""
    from dataclasses import asdict

    if args.endpoint:
        generator = f"endpoint {args.endpoint} model {args.endpoint_model}"
    else:
        lm = args.lm or "SmolLM2-135M-Instruct"
        generator = f"lm {Path(lm).resolve() if Path(lm).exists() else lm}"
    path = out / GENERATION_FILE
    try:
        recorded = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, ValueError) as e:
        raise InputError(f"cannot read the record of how the stored lists were made ({e})", str(path)) from None
    record = dict(recorded) if isinstance(recorded, dict) else {}
    for cfg in settings:
        now = {"generator": generator, "decoding": _decoding(asdict(cfg))}
        before = record.get(cfg.name)
        if isinstance(before, dict) and before != now and _has_lists(out, cfg.name):
            old_dec, new_dec = before.get("decoding") or {}, now["decoding"]
            diff = [f"{before.get('generator')} -> {generator}"] if before.get("generator") != generator else []
            diff += [f"{k} {old_dec.get(k)} -> {v}" for k, v in new_dec.items() if old_dec.get(k) != v]
            raise InputError(
                f"{cfg.name}: the lists stored in {out} were made otherwise ({'; '.join(diff)}): resuming would "
                "mix them with these, or report them as these; give another --out (or the options of that run)",
                str(out / f"nbest-{cfg.name}.jsonl"),
            )
        if not isinstance(before, dict) or not _has_lists(out, cfg.name):
            record[cfg.name] = now
    return record


def _decoding(cfg: dict[str, Any]) -> dict[str, Any]:
    """The decoding parameters that shape a setting's lists (a beam setting is not changed by the diversity
    penalty, nor a sampling one by the beams)."""
    unused = {
        "greedy": (
            "num_beams",
            "num_beam_groups",
            "diversity_penalty",
            "length_penalty",
            "top_p",
            "top_k",
            "temperature",
        ),
        "beam": ("num_beam_groups", "diversity_penalty", "top_p", "top_k", "temperature"),
        "diverse_beam": ("top_p", "top_k", "temperature"),
        "nucleus": ("num_beams", "num_beam_groups", "diversity_penalty", "length_penalty", "top_k"),
        "top_k": ("num_beams", "num_beam_groups", "diversity_penalty", "length_penalty", "top_p"),
    }.get(cfg["strategy"], ())
    return {k: v for k, v in cfg.items() if k not in unused}


def _check_same_stimuli(items: list[Any], stored: Path, out: Path) -> None:
    """Refuse ``--stimuli`` that give an id of ``OUT/stimuli.jsonl`` to another question (an echo file built
    again after its NLI pairs changed, say) while lists are stored: a resumed run keeps a stored list by its
    id, so the old question's replies would be counted for the new one."""
    from ..probes.echo import EchoSet

    if not any(p.stat().st_size for p in out.glob("nbest-*.jsonl")):
        return
    before = {it.id: it for it in EchoSet.load(stored).items}
    for it in items:
        old = before.get(it.id)
        if old is not None and (old.kind, old.history, old.question) != (it.kind, it.history, it.question):
            what = (
                f"now {it.question!r}, there {old.question!r}"
                if old.question != it.question
                else f"{it.question!r} now follows another statement"
                if old.history != it.history
                else f"now {it.kind}, there {old.kind}"
            )
            raise InputError(
                f"stimulus {it.id} is not the one of that id the lists stored in {out} answer ({what}): give "
                "another --out for these stimuli",
                str(stored),
            )


def load_stimuli(path: str) -> Any:
    """The echo questions of a ``--stimuli`` file (as ``dialcheck probe echo`` writes them), every bad record
    named by file, line and field before any is used."""
    from ..datasets.base import read_jsonl
    from ..io import FirstLines, json_type, require_file
    from ..probes.echo import EchoItem, EchoSet

    p = require_file(path)
    fields = list(EchoItem.__dataclass_fields__)  # all strings; only source may be left out
    items: list[Any] = []
    errors: list[InputError] = []
    total = 0
    once = FirstLines("give each stimulus its own id")
    for n, obj in read_jsonl(p):
        total += 1
        missing = [k for k in fields if k not in obj and k != "source"]
        wrong = [k for k in fields if k in obj and not isinstance(obj[k], str)]
        problem = None
        if missing:
            problem = f"{missing[0]}: missing"
        elif wrong:
            problem = f"{wrong[0]}: expected a string, got {json_type(obj[wrong[0]])}"
        if problem is None and obj["kind"] not in STIMULUS_KINDS:
            problem = f"kind: expected ENTQ or CNTQ, got {obj['kind']!r}"
        if problem is None and obj["expected"] != STIMULUS_KINDS[obj["kind"]]:
            problem = (
                f"expected: a {obj['kind']} question expects {STIMULUS_KINDS[obj['kind']]!r}, got {obj['expected']!r}"
            )
        if problem is None:  # lists are stored, resumed and judged by id
            problem = once.problem(obj["id"], n)
        if problem:
            errors.append(InputError(problem, str(p), n))
        else:
            items.append(EchoItem.from_dict(obj))
    if not total:
        raise InputError("no stimuli: the file is empty", str(p))
    raise_every(errors, total, "stimuli", str(p), "generated")
    return EchoSet(items)


def _report_missing(rows: list[dict[str, Any]], settings: list[Any], total: int) -> None:
    """Say which settings lack stored lists for some stimuli (a --rejudge run leaves those out); the
    stored count is the summary rows' inputs, summed over the two stimulus kinds."""
    for cfg in settings:
        n = sum(r["inputs"] for r in rows if r["setting"] == cfg.name)
        if n < total:
            print(f"dialcheck: {cfg.name}: {_missing_lists(n, total)}", file=sys.stderr)


def _missing_lists(n: int, total: int) -> str:
    """What ``_report_missing`` says of a setting with stored lists for ``n`` of ``total`` stimuli (``n < total``).

    >>> _missing_lists(0, 1)
    'the stimulus has no stored list; it is left out (generate it with the same command without --rejudge)'
    >>> print(_missing_lists(0, 3))
    none of the 3 stimuli has a stored list; all 3 are left out (generate them with the same command without --rejudge)
    >>> print(_missing_lists(2, 5))
    2 of 5 stimuli have a stored list; the other 3 are left out (generate them with the same command without --rejudge)
    """
    left = total - n
    generate = f"generate {'it' if left == 1 else 'them'} with the same command without --rejudge"
    if total == 1:  # was "0 of 1 stimuli have a stored list; the other is left out"
        return f"the stimulus has no stored list; it is left out ({generate})"
    if not n:  # was "0 of 3 stimuli have a stored list; the other 3 are left out"
        every = "both" if total == 2 else f"all {total}"
        return f"none of the {total} stimuli has a stored list; {every} are left out ({generate})"
    rest = "the other is" if left == 1 else f"the other {left} are"
    return f"{n} of {total} stimuli have a stored list; {rest} left out ({generate})"


class _LazyGenerator:
    """Loads the local LM on the first ``generate`` call: a resumed or ``--rejudge`` run with every list
    already stored never pays for it."""

    def __init__(self, lm: str | None) -> None:
        self.lm = lm
        self._gen: Any = None

    def generate(self, *args: Any, **kwargs: Any) -> Any:
        if self._gen is None:
            from ..generation.nbest import NBestGenerator

            self._gen = NBestGenerator.load(self.lm)
        return self._gen.generate(*args, **kwargs)
