"""io.write_jsonl and cli.common.writable_output on outputs that are not plain files: a named pipe (as /dev/null
is a device) and a symbolic link."""

from __future__ import annotations

import json
import os
import stat
import threading

import pytest

from dialcheck.cli import main
from dialcheck.cli.common import writable_output
from dialcheck.io import write_jsonl

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")


def test_write_jsonl_writes_a_named_pipe_in_place(tmp_path):
    # `--out /dev/null` renamed FILE.tmp over the device: as root, /dev/null became a regular file (and, as any
    # other user, /dev is not writable, so the output was refused); a named pipe stands in for the device here
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text(encoding="utf-8")), daemon=True)
    reader.start()
    assert write_jsonl(fifo, [{"n": 1}, {"t": "狗"}]) == 2
    reader.join(timeout=10)
    assert got == ['{"n": 1}\n{"t": "狗"}\n']
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and not (tmp_path / "pipe.tmp").exists()


def test_write_jsonl_keeps_a_symbolic_link_and_writes_its_target(tmp_path):
    target, link = tmp_path / "real.jsonl", tmp_path / "link.jsonl"
    target.write_text("old\n")
    link.symlink_to(target)
    write_jsonl(link, [{"n": 1}])
    assert link.is_symlink() and target.read_text() == '{"n": 1}\n'


def test_writable_output_takes_a_writable_device_without_its_folder(tmp_path, monkeypatch):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: False if str(p) == str(tmp_path) else real_access(p, mode))
    writable_output(fifo, "--out")  # /dev is not writable, /dev/null is


def test_probe_triggers_out_to_a_named_pipe(tmp_path, capsys):
    src, fifo = tmp_path / "ctx.jsonl", tmp_path / "pipe"
    src.write_text(json.dumps({"u1": "你喜欢狗吗？"}, ensure_ascii=False) + "\n", encoding="utf-8")
    os.mkfifo(fifo)
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text(encoding="utf-8")), daemon=True)
    reader.start()
    args = ["probe", "triggers", "--input", str(src), "--out", str(fifo), "--methods", "short_utterance"]
    assert main(args) == 0, capsys.readouterr().err
    reader.join(timeout=10)
    assert len(got) == 1 and json.loads(got[0])["u1"] == "你喜欢狗吗？"
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
