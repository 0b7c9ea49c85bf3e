"""Loading a detector folder reads its dialcheck.json once: for the detector's type and for the detector."""

from __future__ import annotations

from dialcheck.detectors import load_detector
from dialcheck.detectors.modeling import DetectorConfig


def test_loading_reads_the_detector_config_once(tiny_detector_dir, monkeypatch):
    read = []
    from_file = DetectorConfig.from_file

    def counted(path):
        read.append(path)
        return from_file(path)

    monkeypatch.setattr(DetectorConfig, "from_file", counted)
    det = load_detector(tiny_detector_dir)
    assert read == [tiny_detector_dir / "dialcheck.json"] and det.path == tiny_detector_dir
