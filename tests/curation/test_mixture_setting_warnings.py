"""Warnings that name the user's own setting when it, not the data, is the cause."""

from __future__ import annotations

import logging

from curation.mixture.phases import merged_phases
from curation.mixture.plan import plan_phases


def test_a_long_context_phase_without_pretraining_phases_says_the_recipe_left_its_long_documents_out(caplog) -> None:
    """Long documents are drawn from the kinds a pre-training phase mixes: with both pre-training
    phases left out none forms, though the data has them; "add data" would not help."""
    specs = merged_phases({"pretrain_phase1": None, "pretrain_phase2": None})
    assert not any(s.stage == "pretrain" for s in specs)
    with caplog.at_level(logging.WARNING, logger="curation.mixture.plan"):
        plan_phases(specs, {s.name: {} for s in specs}, {}, scale=1e-6)
    (said,) = [r.getMessage() for r in caplog.records if "midtrain_long_context_128k" in r.getMessage()]
    assert "no pre-training phase of this recipe mixes any" in said and "add data" not in said
