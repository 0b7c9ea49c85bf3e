"""Builders of stimulus sets that probe a detector or provoke a chatbot (checklists, triggers, questions)."""

from .checklist import add_two_turns, build_a2t, remove_contradicting_turns

__all__ = ["add_two_turns", "build_a2t", "remove_contradicting_turns"]
