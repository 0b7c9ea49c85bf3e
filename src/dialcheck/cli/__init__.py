"""The ``dialcheck`` command. Each subcommand lives in its own module and owns the terminal output.

User errors (bad input, missing files, unknown models) print one line naming the file, line and field
and exit with status 2; they never print a traceback.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import warnings
from collections.abc import Sequence

from .. import __version__
from ..errors import DialcheckError

__all__ = ["main"]

COMMANDS = ("check", "score", "train", "evaluate", "data", "models", "serve", "rerank", "nbest", "probe", "collect")


def _quiet_libraries() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    warnings.filterwarnings("ignore", category=FutureWarning)
    warnings.filterwarnings("ignore", category=UserWarning, module="peft")
    hf_logging = sys.modules.get("transformers.utils.logging")
    if hf_logging is None:
        # read when transformers is first imported; importing it here took a second on every command, even those
        # that load no model (`dialcheck models`, `dialcheck data list`)
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    else:  # main() called again in a process that has imported it
        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()


class _Formatter(logging.Formatter):
    """A log record as the command's own messages are worded: ``dialcheck: warning: ...`` (logging's level names
    are capitals, so a library's warning read ``dialcheck: WARNING: ...`` beside the command's ``warning:``)."""

    def __init__(self) -> None:
        super().__init__("dialcheck: %(levelname)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        shown = logging.makeLogRecord(record.__dict__)  # a copy: other handlers (pytest's caplog) keep "WARNING"
        shown.levelname = record.levelname.lower()
        return super().format(shown)


def build_parser() -> argparse.ArgumentParser:
    from . import check, collect, data, evaluate, models, nbest, probe, rerank, score, serve, train

    parser = argparse.ArgumentParser(
        prog="dialcheck",
        description="Find where a chatbot contradicts what was said before, with the evidence turns.",
    )
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more log output (-vv for debug)")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in (check, score, train, evaluate, data, models, serve, rerank, nbest, probe, collect):
        module.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # as typed: what a trained model's card records
    level = logging.WARNING - 10 * min(args.verbose, 2)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_Formatter())
    logging.basicConfig(level=level, handlers=[handler])
    _quiet_libraries()
    try:
        return int(args.func(args) or 0)
    except DialcheckError as e:
        print(f"dialcheck: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("dialcheck: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except OSError as e:  # a file the user named: a folder that does not exist, a directory, no permission
        if e.filename is None:
            raise
        print(f"dialcheck: error: {e.filename}: {e.strerror or e}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
