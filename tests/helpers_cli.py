"""Run the ``dialcheck`` command in-process and capture what it printed."""

from dialcheck.cli import main


def run_cli(capsys, *argv):
    """(exit status, stdout, stderr) of ``dialcheck *argv``."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err
