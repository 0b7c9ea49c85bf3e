"""The committed teacher-scores files (benchmarks/data/teacher-scores): readable, with provenance, documented."""

from pathlib import Path

import numpy as np
import pytest

from dialcheck.training.distill import read_teacher_scores, teacher_scores_meta

FOLDER = Path(__file__).resolve().parent.parent / "benchmarks" / "data" / "teacher-scores"
FILES = sorted(FOLDER.glob("*.npz"))


def test_there_are_committed_scores():
    assert FILES, f"no .npz in {FOLDER}"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_scores_file_is_complete_and_documented(path):
    scores = read_teacher_scores(path)
    values = np.array(list(scores.values()), dtype=np.float32)
    assert len(scores) > 1000
    assert np.isfinite(values).all() and values.min() >= 0.0 and values.max() <= 1.0  # probabilities
    meta = teacher_scores_meta(path)
    assert {"teacher", "teacher_sha256", "command", "date"} <= set(meta)
    assert "--save-teacher-scores" in meta["command"] and path.name in meta["command"]
    readme = (FOLDER / "README.md").read_text(encoding="utf-8")
    assert f"## `{path.name}`" in readme, f"{path.name} has no section in {FOLDER / 'README.md'}"
