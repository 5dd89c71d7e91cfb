"""The mixture's manifests step: check the plan and what the shards replay, write one manifest per phase.

A manifest holds the plan the shards were written with (epochs, planned tokens, weights) and the
shards' own sums next to it (unique and replayed tokens), so a trainer reads both side by side.
The figures returned go to ``stats.json``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

from curation.mixture.accounting import language_table
from curation.mixture.checks import check_edu_bands, check_plans, check_values
from curation.mixture.doc_repeats import language_epochs
from curation.mixture.groups import REPO_GROUP, THREADS_GROUP, UNPLACED_GROUP, unplaced_warnings
from curation.mixture.language_kinds import language_kind_warnings
from curation.mixture.manifest import build_manifest, group_entries, phase_summary, with_replay_caps
from curation.mixture.manifest_check import validate_schema
from curation.mixture.phases import DEFAULT_REPEATS, PhaseSpec
from curation.mixture.plan import PhasePlan, pretrain_epochs, with_built_tokens
from curation.mixture.policy import group_exclusion_reason
from curation.mixture.replay import copy_plans
from curation.mixture.replay_check import check_replay
from curation.mixture.shards import EOD_TOKENS
from curation.mixture.unphased import no_phase_warnings
from pipelines.io import write_json
from pipelines.kit import StageContext

if TYPE_CHECKING:
    from pipelines.stages.mixture import MixtureConfig

FIM_SPLIT = "character, two uniform points (Bavarian et al. 2022); SPM as prefix-suffix-middle variant of StarCoder"


def write_manifests(
    cfg: MixtureConfig,
    ctx: StageContext,
    specs: list[PhaseSpec],
    seed: int,
    agg: pd.DataFrame,
    records: pd.DataFrame,
    plans: dict[str, PhasePlan],
    scale: float,
    created_by: dict[str, Any],
) -> dict[str, Any]:
    """Write ``manifests/<phase>.json`` into the stage folder; return the figures for ``stats.json``."""
    # built groups: planned on their documents' own tokens, every one once (shown or not)
    for name, plan in plans.items():
        built = records[(records["phase"] == name) & records["group"].isin([REPO_GROUP, THREADS_GROUP])]
        with_built_tokens(plan, {g: int(t) for g, t in built.groupby("group")["text_unique_tokens"].sum().items()})
    entries = {s.name: group_entries(s, plans[s.name], records[records["phase"] == s.name]) for s in specs}
    with_replay_caps(entries, specs, cfg.max_epochs)
    warnings = check_plans(
        plans,
        specs,
        top_group=cfg.top_group,
        min_top_epochs=cfg.min_top_epochs,
        max_share=cfg.concentration_max_share,
        max_documents=cfg.concentration_max_documents,
        on_concentration=cfg.on_concentration,
        replayed={(s.name, g["name"]): g["replay_tokens"] for s in specs for g in entries[s.name][0]},
        patterns={k: v for k, v in cfg.repeat.items() if k not in DEFAULT_REPEATS},
        cap_patterns=cfg.max_epochs,
        scale=cfg.scale,
        scale_fit=tuple(cfg.scale_fit),
    )
    bands = {g.split("/", 1)[1] for g in agg["group"].unique() if g.split("/", 1)[0] in ("web_edu", "math_science")}
    warnings += check_edu_bands(cfg.web_edu_bands, bands)
    warnings += unplaced_warnings(agg) + no_phase_warnings(agg, specs)
    warnings += check_values(
        "mixture.language_repeat", cfg.language_repeat, {str(x) for x in agg["lang"].unique()}, "language"
    )
    warnings += language_kind_warnings(agg, cfg.language_repeat, cfg.language_kinds)
    for s in specs:
        warnings += check_replay(
            s.name,
            [g for g in entries[s.name][0] if g["shards"]],
            plans[s.name].planned_tokens,
            stage=s.stage,
            sizes={g.group: (g.documents, g.tokens) for g in plans[s.name].groups},
            budget=plans[s.name].budget_tokens,
            own_budget=s.budget is not None,
        )
    langs = language_table(agg)
    lang_epochs = language_epochs(agg, copy_plans(plans, specs, cfg.max_epochs))
    policy = cfg.policy()
    provenance = {
        "created_by": created_by,
        "config_hash": ctx.config_hash,
        "input_fingerprint": ctx.input_fingerprint,
        "upstream": ctx.lineage,
        "seed": seed,
        # what a trainer's tooling checks: the stages before it that finished without every answer they asked for
        "incomplete": [
            {"stage": u["stage"], "folder": u["folder"], "reason": u["incomplete"]}
            for u in ctx.lineage
            if u.get("incomplete")
        ],
        "profile": (ctx.recipe.get("profile") or {}).get("name"),
    }
    fim_base = {
        "enabled": True,
        "rate": cfg.fim_rate,
        "spm_rate": cfg.fim_spm_rate,
        "sources": list(cfg.fim_sources),
        "sentinels": dict(cfg.fim_sentinels),
        "split": FIM_SPLIT,
    }
    summary: dict[str, Any] = {}
    for spec in specs:
        plan = plans[spec.name]
        groups, fim_total = entries[spec.name]
        manifest = build_manifest(
            spec,
            plan,
            groups,
            provenance=provenance,
            fim={**fim_base, "documents": fim_total},
            repeats="materialized" if cfg.materialize_repeats else "weights",
            tokenizer=cfg.tokenizer,
            exclusion_reasons={
                g.group: "no_repo" if g.group == UNPLACED_GROUP else group_exclusion_reason(g.group, policy)
                for g in plan.groups
                if g.weight <= 0
            },
            languages=langs.get(spec.name, {}),
            warnings=[
                w
                for w in warnings
                if w["phase"] in (None, spec.name) and (w["check"] != "top_level_epochs" or spec.stage == "pretrain")
            ],
            eod_tokens=EOD_TOKENS,
            language_epochs=lang_epochs.get(spec.name),
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
