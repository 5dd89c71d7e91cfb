"""A pre-training group's replay classes in a Megatron blend: one prefix per class, weighted by its own epochs.

The mixture gives the documents of one group different epochs where their repeat factors differ
(``mixture.language_repeat`` on the kinds of ``mixture.language_kinds``): in each shard, one class per
factor, whose epochs :func:`curation.mixture.doc_repeats.class_plans` spreads from the group's, each
class held at the cap over the pre-training phases (the per-document cap). Megatron draws the
documents of one prefix uniformly, so a prefix holding several classes would give each the group's
mean. The export writes one prefix per (shard, class) — ``part-NNNNN`` where the shard has one class,
``part-NNNNN-r<factor>`` per class where it has several — and weights each by its class's epochs
× its documents' tokens with their EODs (:func:`planned_sizes`): the blend replays each document's
planned epochs, and the group its planned tokens. ``export.json`` lists each prefix's epochs and,
per phase, each language's planned tokens in the blend beside the manifest's figure.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from curation.errors import read_json_file
from curation.export.fim_counts import own_counts
from curation.mixture.doc_repeats import DECIMALS, class_plans
from curation.mixture.fim import MODES, FimSentinels
from curation.mixture.groups import REPO_GROUP, THREADS_GROUP
from curation.mixture.policy import Policy, languages
from curation.mixture.replay import CopyPlan


@dataclasses.dataclass(frozen=True)
class Factors:
    """The mixture's language factors, as its ``stats.json`` records its config."""

    language_repeat: Mapping[str, float] = dataclasses.field(default_factory=dict)
    language_kinds: tuple[str, ...] = ()

    def of(self, group: str, table: pa.Table) -> np.ndarray | None:
        """Each row's factor within ``group`` (``None``: the group's documents share one)."""
        if (
            not self.language_repeat
            or group in (REPO_GROUP, THREADS_GROUP)
            or group.split("/")[0] not in self.language_kinds
        ):
            return None
        policy = Policy(language_repeat=dict(self.language_repeat), language_kinds=self.language_kinds)
        langs = (
            languages(table.select(["lang"]).to_pandas())
            if "lang" in table.column_names
            else np.full(table.num_rows, "und")
        )
        factor = {x: policy.language_factor(x) for x in set(langs.tolist())}
        return np.round(np.array([factor[x] for x in langs], dtype=np.float64), DECIMALS)


def run_factors(stage_dir: Path) -> Factors:
    """The factors the mixture in ``stage_dir`` gave its documents (none where its config says none)."""
    path = Path(stage_dir) / "stats.json"
    config = (read_json_file(path).get("config") or {}) if path.is_file() else {}
    return Factors(
        {str(k): float(v) for k, v in (config.get("language_repeat") or {}).items()},
        tuple(config.get("language_kinds") or ()),
    )


def full_caps(stage_dir: Path) -> dict[str, float]:
    """Each group's cap over the pre-training phases (the largest a pre-training manifest gives it: a
    later phase's is the cap less the earlier phases' epochs); a group without a cap is left out."""
    caps: dict[str, float] = {}
    for path in sorted((Path(stage_dir) / "manifests").glob("*.json")):
        m = read_json_file(path)
        if m.get("stage") != "pretrain":
            continue
        for g in m["groups"]:
            if g.get("cap") is not None:
                caps[g["name"]] = max(caps.get(g["name"], 0.0), float(g["cap"]))
    return caps


def class_epochs(
    group: Mapping[str, Any], phase: str, factors: list[float], tokens: list[int], cap: float | None
) -> list[float]:
    """The epochs of each class of a shard of ``group`` (a manifest entry) in ``phase``, as the mixture
    spread them: the group's epochs in this phase after those of the earlier pre-training phases (its
    ``cap`` over the phases less the manifest's ``cap``), each class in proportion to its factor, none past the cap."""
    epochs = float(group["epochs"])
    if group.get("cap") is None or cap is None:
        plan = CopyPlan(((phase, epochs),))
    else:
        before = max(cap - float(group["cap"]), 0.0)
        plan = CopyPlan(((("earlier", before),) if before > 0 else ()) + ((phase, epochs),), cap)
    cls, plans = class_plans(plan, np.asarray(factors, dtype=np.float64), np.asarray(tokens, dtype=np.int64))
    return [plans[c].epochs for c in cls.tolist()]


def planned_sizes(
    manifest: dict[str, Any], records: list[dict[str, Any]], caps: Mapping[str, float]
) -> tuple[dict[str, float], dict[str, float]]:
    """Tokens (with their EODs) each pre-training prefix gives at the plan's epochs, and its epochs:
    its group's planned tokens shared by the group's shards in proportion to their unique tokens, and
    within a shard of several classes, by each class's epochs × its tokens. Megatron samples a
    fraction of an epoch as readily as a whole one, so the blend replays the plan itself, not the
    whole copies the Parquet shards round it to."""
    groups = {g["name"]: g for g in manifest["groups"]}
    unique: dict[str, int] = {}
    shards: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in records:
        unique[r["group"]] = unique.get(r["group"], 0) + r["unique_tokens"]
        shards.setdefault((r["group"], r["shard"]), []).append(r)
    sizes: dict[str, float] = {}
    epochs: dict[str, float] = {}
    for (name, _), recs in shards.items():
        g = groups.get(name)
        if g is None or not unique[name]:
            continue
        e_g = float(g["epochs"])
        ratio = [1.0] * len(recs)
        if len(recs) > 1 and e_g > 0:
            got = class_epochs(
                g, manifest["phase"], [r["factor"] for r in recs], [r["unique_tokens"] for r in recs], caps.get(name)
            )
            ratio = [e / e_g for e in got]
        for r, q in zip(recs, ratio, strict=True):
            sizes[r["prefix"]] = g["planned_tokens"] * q * (r["unique_tokens"] + r["unique_documents"]) / unique[name]
            epochs[r["prefix"]] = round(e_g * q, 9)
    return sizes, epochs


def fim_added(
    table: pa.Table,
    n_tokens: np.ndarray,
    tok: str,
    fim: Mapping[str, Any] | None,
    ids: Sequence[np.ndarray | None],
) -> np.ndarray:
    """Tokens FIM adds to each row of a shard: its ``n_tokens`` (the FIM'd text the shard holds) less its own
    text's (the FIM inverse, counted with ``tok``), which the mixture planned on; 0 for a row FIM left whole.
    ``ids``: each row's ids of its FIM'd text, already computed (:func:`curation.export.fim_counts.own_counts`
    counts the own text from them, tokenizing only the text around each cut again)."""
    added = np.zeros(table.num_rows, dtype=np.int64)
    if not fim or not fim.get("sentinels") or "fim" not in table.column_names:
        return added
    modes = np.asarray(table.column("fim").to_pylist(), dtype=object)
    rows = np.flatnonzero(np.isin(modes, list(MODES)))
    if len(rows):
        s = FimSentinels(**fim["sentinels"])
        texts = table.column("text").take(pa.array(rows)).to_pylist()
        own = own_counts(texts, modes[rows].tolist(), [ids[i] for i in rows.tolist()], s, tok)
        added[rows] = np.asarray(n_tokens)[rows] - own
    return added


def language_tokens(
    manifest: dict[str, Any], records: list[dict[str, Any]], epochs: Mapping[str, float], blended: set[str]
) -> dict[str, dict[str, int]]:
    """Each language's planned tokens in the blend (its documents' tokens × their prefix's epochs, EODs
    aside, over the ``blended`` prefixes) beside the manifest's ``languages.<lang>.planned_tokens``, and
    what tells them apart: ``fim_tokens``, what FIM's sentinels and re-split text add to its FIM'd documents
    (counted in the blend's figure: the mixture plans on the documents' own text), and ``left_out_tokens``,
    its planned tokens in groups left out of the blend (counted in the manifest's only). So
    ``planned_tokens`` ≈ ``manifest_planned_tokens`` − ``left_out_tokens`` + ``fim_tokens``: a trainer's
    check that the blend is the plan."""
    blend: dict[str, float] = {}
    fim: dict[str, float] = {}
    left: dict[str, float] = {}
    for r in records:
        e, added = epochs.get(r["prefix"], 0.0), r.get("fim_languages", {})
        for lang, n in r.get("languages", {}).items():
            if r["prefix"] in blended:
                blend[lang] = blend.get(lang, 0.0) + e * n
                fim[lang] = fim.get(lang, 0.0) + e * added.get(lang, 0)
            else:
                left[lang] = left.get(lang, 0.0) + e * (n - added.get(lang, 0))
    said = manifest.get("languages") or {}
    return {
        lang: {
            "planned_tokens": int(round(blend.get(lang, 0.0))),
            "manifest_planned_tokens": int(said.get(lang, {}).get("planned_tokens", 0)),
            "fim_tokens": int(round(fim.get(lang, 0.0))),
            "left_out_tokens": int(round(left.get(lang, 0.0))),
        }
        for lang in sorted(set(blend) | set(said) | set(left))
        if not math.isclose(blend.get(lang, 0.0), 0.0) or not math.isclose(left.get(lang, 0.0), 0.0) or lang in said
    }
