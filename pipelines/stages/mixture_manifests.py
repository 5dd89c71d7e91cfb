"""The mixture's manifests step: re-plan from the written shards, check the plan, write one manifest per phase.

The plan is made again with each written group's unique tokens taken from its shard records, so
the manifests' sums are the shards' own; the groups built after planning (repository documents,
issue threads) keep the epochs their shards were written with. The figures returned go to
``stats.json``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

from curation.mixture.accounting import built_stats, language_table
from curation.mixture.checks import check_plans
from curation.mixture.groups import REPO_GROUP, THREADS_GROUP
from curation.mixture.manifest import build_manifest, group_entries, phase_summary
from curation.mixture.manifest_check import validate_schema
from curation.mixture.phases import PhaseSpec
from curation.mixture.plan import plan_phases, pretrain_epochs, with_epochs
from pipelines.io import write_json
from pipelines.kit import StageContext

if TYPE_CHECKING:
    from pipelines.stages.mixture import MixtureConfig

FIM_SPLIT = "character, two uniform points (Bavarian et al. 2022); SPM as prefix-suffix-middle variant of StarCoder"


def write_manifests(
    cfg: MixtureConfig, ctx: StageContext, specs: list[PhaseSpec], seed: int, agg: pd.DataFrame, records: pd.DataFrame,
    scale: float, epochs: dict[tuple[str, str], float], created_by: dict[str, Any],
) -> dict[str, Any]:
    """Write ``manifests/<phase>.json`` into the stage folder; return the figures for ``stats.json``."""
    plans = plan_phases(specs, built_stats(agg, records), cfg.max_epochs, cfg.on_cap, scale)
    for name, plan in plans.items():  # built groups: the epochs their shards were written with (see with_epochs)
        with_epochs(plan, {g: e for (p, g), e in epochs.items() if p == name and g in (REPO_GROUP, THREADS_GROUP)})
    warnings = check_plans(plans, specs, top_group=cfg.top_group, min_top_epochs=cfg.min_top_epochs,
                           max_share=cfg.concentration_max_share, max_documents=cfg.concentration_max_documents,
                           on_concentration=cfg.on_concentration)
    if not ctx.quiet:
        for w in warnings:
            print(f"WARNING (mixture plan) {w['message']}", flush=True)  # the console, besides the log and the manifests
    langs = language_table(agg)
    provenance = {
        "created_by": created_by, "config_hash": ctx.config_hash, "input_fingerprint": ctx.input_fingerprint,
        "upstream": ctx.lineage, "seed": seed,
    }
    fim_base = {
        "enabled": True, "rate": cfg.fim_rate, "spm_rate": cfg.fim_spm_rate, "sources": list(cfg.fim_sources),
        "sentinels": dict(cfg.fim_sentinels), "split": FIM_SPLIT,
    }
    summary: dict[str, Any] = {}
    for spec in specs:
        plan = plans[spec.name]
        entries, fim_total = group_entries(spec, plan, records[records["phase"] == spec.name])
        manifest = build_manifest(
            spec, plan, entries, provenance=provenance, fim={**fim_base, "documents": fim_total},
            repeats="materialized" if cfg.materialize_repeats else "weights",
            languages=langs.get(spec.name, {}), warnings=[w for w in warnings if w["phase"] in (None, spec.name)],
        )
        errors = validate_schema(manifest)
        if errors:
            raise RuntimeError(f"mixture: manifest {spec.name} does not match its schema (a bug): {errors[:3]}")
        write_json(ctx.work_dir / "manifests" / f"{spec.name}.json", manifest)
        summary[spec.name] = phase_summary(plan, manifest)
    return {
        "phases": summary,
        "scale": {"config": cfg.scale, "value": scale},
        "pretrain_epochs": {k: round(v, 6) for k, v in sorted(pretrain_epochs(plans, specs).items())},
        "warnings": warnings,
        "languages": langs,
    }

