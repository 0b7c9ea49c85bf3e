"""Run the ``dialcheck`` command in-process and capture what it printed; feed it standard input."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from dialcheck.cli import main


def run_cli(capsys, *argv):
    """(exit status, stdout, stderr) of ``dialcheck *argv``."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def feed_stdin(monkeypatch: pytest.MonkeyPatch, data: str | bytes, *, buffer: bool = True) -> None:
    """Standard input holding ``data`` (a str is UTF-8 encoded), as a pipe gives it: a UTF-8 text stream over a
    binary buffer, which the readers take, so that bytes that are not UTF-8 reach them as they are.
    ``buffer=False``: a text stream with no buffer (``io.StringIO``, ``data`` a str), which the readers encode back.
    """
    if buffer:
        raw = data.encode("utf-8") if isinstance(data, str) else data
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8"))
    else:
        assert isinstance(data, str), "a text stream holds text"
        monkeypatch.setattr("sys.stdin", io.StringIO(data))


def run_summary(err: str, out: str | Path) -> list[str]:
    """The lines of ``err`` that sum a run up ("dialcheck: wrote ...", "dialcheck: skipped ..."), its output file
    ``out`` named OUT: the summaries of two runs that wrote to different files compare equal."""
    lines = [ln for ln in err.splitlines() if ln.startswith(("dialcheck: wrote", "dialcheck: skipped"))]
    return [ln.replace(str(out), "OUT") for ln in lines]
