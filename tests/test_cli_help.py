"""What ``dialcheck --help`` says a command does names everything it does."""

from __future__ import annotations

import argparse

from dialcheck.cli import build_parser


def _subparser(name: str):
    parser = build_parser()
    (sub,) = [a for a in parser._actions if a.dest == "command"]
    return sub, sub.choices[name]


def test_train_help_names_every_task():
    # the one-line summary said "a DECODE detector ... or the CI-ToD grounded detector" though --task also trains
    # CDConv and OCNLI models and builds cascades and pair checks
    sub, train = _subparser("train")
    (summary,) = [a.help for a in sub._choices_actions if a.dest == "train"]
    (task,) = [a for a in train._actions if a.dest == "task"]
    missing = [t for t in task.choices if t not in summary or t not in task.help]
    assert not missing, (missing, summary, task.help)


def test_score_errors_help_says_turns_are_written_too():
    # the help said "bad input lines" though a turn skipped with --every-turn or --speaker gets its own line, and
    # named the file ERRORS where the README says --errors FILE
    _, score = _subparser("score")
    (errors,) = [a for a in score._actions if a.dest == "errors"]
    assert errors.metavar == "FILE" and "per turn skipped" in errors.help


def test_every_serve_option_has_help_naming_its_default():
    # --host had no help text, so `dialcheck serve --help` showed neither what it is nor its default, 127.0.0.1
    _, serve = _subparser("serve")
    for action in serve._actions:
        if not action.option_strings or action.dest == "help":
            continue
        assert action.help, action.option_strings
        if action.default not in (None, False):
            assert (
                f"default {action.default:g}" in action.help
                if isinstance(action.default, float)
                else (f"default {action.default}" in action.help or "default:" in action.help)
            ), (action.option_strings, action.help)
    (host,) = [a for a in serve._actions if a.dest == "host"]
    assert "default 127.0.0.1" in host.help


def _parsers(parser):
    """Every parser under ``parser``, sub-subcommands (probe triggers, models --save) included."""
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                yield from _parsers(child)


def test_every_data_dir_help_names_the_lookup_in_its_order():
    # the help said "default ../shared/data or $DIALCHECK_DATA_DIR" (models: "default ../shared/data"), though
    # data_dir reads the variable first and ../shared/data only beside the current folder or a checkout
    helps = [a.help for p in _parsers(build_parser()) for a in p._actions if "--data-dir" in a.option_strings]
    assert len(helps) >= 6, helps
    for text in helps:
        assert text.index("$DIALCHECK_DATA_DIR") < text.index("../shared/data"), text
        assert "checkout" in text, text


def test_speaker_help_names_every_last_message_check_notes():
    # the help said a chat log's last message "may be the user's" though check and score also note a log ending
    # with a tool result or a system message (c279d32)
    for command in ("check", "score"):
        _, parser = _subparser(command)
        (speaker,) = [a for a in parser._actions if a.dest == "speaker"]
        assert all(word in speaker.help for word in ("user's", "tool", "system")), (command, speaker.help)
