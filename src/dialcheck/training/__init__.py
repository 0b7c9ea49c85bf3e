"""Training of every pair-based detector (see :mod:`dialcheck.training.trainer`)."""

from .data import DecodeTrainingData, build_decode_training_data
from .trainer import TrainConfig, calibrate, train_detector

__all__ = ["DecodeTrainingData", "TrainConfig", "build_decode_training_data", "calibrate", "train_detector"]
