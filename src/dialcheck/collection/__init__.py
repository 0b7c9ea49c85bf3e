"""Contradiction collections (Sato et al. 2024): pick follow-up-question contexts by FQness, collect
replies from several generators, annotate and aggregate, read the released format, evaluate
leave-one-generator-out and analyse which contexts provoke contradictions.

Importing this package does not import torch or transformers.
"""

from .analysis import FEATURES, FeatureTest, analyse_feature, contradictions_per_context, ttest_greater
from .annotation import (
    AggregatedItem,
    AnnotatorLabel,
    QuizResult,
    aggregate,
    aggregate_votes,
    apply_aggregation,
    export_tasks,
    fleiss_kappa,
    kappa_from_labels,
    read_labels,
    score_quiz,
)
from .fqness import DEFAULT_DISTANCES, FQnessScorer, candidate_contexts, select_random, select_top_k, split_question
from .jsonl import read_records, write_records
from .logo import LogoResult, LogoSplit, leave_one_generator_out, logo_splits, reply_pairs
from .records import CollectedReply, CollectionContext
from .released import ReleasedCollection, read_released
from .responses import GeneratorSpec, collect_responses, label_with_detector

__all__ = [
    "DEFAULT_DISTANCES",
    "FEATURES",
    "AggregatedItem",
    "AnnotatorLabel",
    "CollectedReply",
    "CollectionContext",
    "FQnessScorer",
    "FeatureTest",
    "GeneratorSpec",
    "LogoResult",
    "LogoSplit",
    "QuizResult",
    "ReleasedCollection",
    "aggregate",
    "aggregate_votes",
    "analyse_feature",
    "apply_aggregation",
    "candidate_contexts",
    "collect_responses",
    "contradictions_per_context",
    "export_tasks",
    "fleiss_kappa",
    "kappa_from_labels",
    "label_with_detector",
    "leave_one_generator_out",
    "logo_splits",
    "read_labels",
    "read_records",
    "read_released",
    "reply_pairs",
    "score_quiz",
    "select_random",
    "select_top_k",
    "split_question",
    "ttest_greater",
    "write_records",
]
