"""Corpus adapters. Each registers versioned dataset names; load them with :func:`load_dataset`."""

from . import cdconv, circa, citod, decode, nli, nli3, ocnli  # noqa: F401  (registration)
from .base import DatasetInfo, data_dir, dataset_names, get_dataset_info, load_dataset

__all__ = ["DatasetInfo", "data_dir", "dataset_names", "get_dataset_info", "load_dataset"]
