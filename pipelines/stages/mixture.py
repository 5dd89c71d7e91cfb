"""``mixture``: token budgets, epochs, Parquet shards and manifests for the training phases.

Sub-steps, each a pure function of :mod:`curation.mixture` run on the kit:

1. **account** (``ctx.compute``): per-partition token sums per phase × group × language
   (:func:`~curation.mixture.accounting.account`), summed on the client;
2. **plan**: the paper's budgets × one scale, the policy's repeat factors, caps → epochs and weights
   (:mod:`curation.mixture.plan`);
3. **shards** (``ctx.compute``): one shuffle on the shard key; each shard is built, shuffled, FIM'd,
   packed and written by a worker (:mod:`.mixture_write`), which returns one record per shard;
4. **manifests**: re-planned from the shard records (so token sums are the shards' own), checked
   (top web level's epochs, groups of few documents) and written (:mod:`.mixture_manifests`);
   their figures go to ``stats.json``;
5. **annotate**: a document is kept if the replay shows it in at least one phase, otherwise the
   policy's exclusion reason with the scores and the rule, ``no_phase``, or ``not_drawn`` where, in
   every phase its group enters, the replay's fractional epochs draw other documents of the group
   (:func:`~curation.mixture.annotate.annotate`; the shards' writers route the documents they give
   no copy back to their input partition, a scratch file read by
   :func:`~.mixture_write.annotate_partition`).

Shards and manifests are the stage's output (``shards/``, ``packing/``, ``manifests/``), not
cached artifacts: they are written once into the stage folder the runner renames into place.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import json
from typing import Any

import dask.dataframe as dd

from classifiers.langid import code_problem
from curation.config import KEEP_NULL, ConfigError, StageConfig, check_choice, check_range
from curation.errors import check_names
from curation.mixture.accounting import (
    AGG_META,
    account,
    group_stats,
    live_groups,
    shard_counts,
    sum_accounts,
)
from curation.mixture.fim import FimSentinels
from curation.mixture.groups import LONG_GROUP, cap_scopes
from curation.mixture.phases import DEFAULT_PHASES, DEFAULT_REPEATS, PhaseSpec, merged_phases
from curation.mixture.plan import ON_CAP, plan_phases
from curation.mixture.policy import Policy
from curation.mixture.replay import copy_plans
from curation.mixture.repo_concat import RepoHeaders
from curation.mixture.scale import resolve_scale
from curation.mixture.shards import ShardOptions
from curation.schema import SOURCES, annotated_meta
from pipelines.kit import Artifact, StageContext
from pipelines.kit.context import SCRATCH
from pipelines.kit.shapes import StageFigures
from pipelines.recipe_schema import MAX_SEED
from pipelines.stages.mixture_headers import check_headers
from pipelines.stages.mixture_manifests import write_manifests
from pipelines.stages.mixture_write import annotate_partition, write_all_shards


@dataclasses.dataclass(frozen=True)
class MixtureConfig(StageConfig):
    seed: int | None = None
    tokenizer: str = "qwen"
    shard_target_mb: float = 256.0
    materialize_repeats: bool = False
    keep_meta: bool = False
    on_cap: str = "shortfall"
    max_shuffle_partitions: int = 4096
    fim_rate: float = 0.5
    fim_spm_rate: float = 0.5
    fim_sources: tuple[str, ...] = ("code",)
    fim_sentinels: dict[str, str] = dataclasses.field(default_factory=lambda: dataclasses.asdict(FimSentinels()))
    repo_header: str = "<|repo_name|>{repo}\n"
    file_header: str = "<|file_sep|>{path}\n"
    repeat: dict[str, float] = dataclasses.field(default_factory=lambda: dict(DEFAULT_REPEATS))
    web_sources: tuple[str, ...] = ("web",)
    web_edu_bands: tuple[str, ...] = ("high",)
    language_repeat: dict[str, float] = dataclasses.field(default_factory=dict)
    language_kinds: tuple[str, ...] = ("web", "web_edu")
    scale: float | str = "auto"
    scale_fit: tuple[str, ...] = ("pretrain",)
    top_group: str = "web/high"
    min_top_epochs: float = 3.2
    concentration_max_share: float = 0.25
    concentration_max_documents: int = 10
    on_concentration: str = "warn"
    max_epochs: dict[str, float] = dataclasses.field(default_factory=lambda: {"*": 4.0})
    phases: dict[str, Any] = dataclasses.field(default_factory=lambda: json.loads(json.dumps(DEFAULT_PHASES)),
                                               metadata={KEEP_NULL: True})  # a phase set to null is left out

    def validate(self) -> None:
        check_range(self, "shard_target_mb", 0.001, 1e6)
        check_range(self, "fim_rate", 0.0, 1.0)
        check_range(self, "fim_spm_rate", 0.0, 1.0)
        check_range(self, "max_shuffle_partitions", 1, 1 << 20)
        check_choice(self, "on_cap", ON_CAP)
        check_choice(self, "on_concentration", ("warn", "fail"))
        check_range(self, "concentration_max_share", 0.0, 1.0)
        check_range(self, "concentration_max_documents", 0, None)
        check_range(self, "min_top_epochs", 0.0, None)
        if self.scale != "auto":
            try:
                ok = float(self.scale) >= 0
            except (TypeError, ValueError):
                ok = False
            if not ok:
                raise ConfigError(f"MixtureConfig.scale = {self.scale!r}; give auto or a number ≥ 0 (budget = scale × each phase's tokens)")
        bad = sorted(set(self.scale_fit) - {"pretrain", "midtrain"})
        if bad:
            raise ConfigError(f"MixtureConfig.scale_fit has {bad}; list pretrain and/or midtrain")
        if set(self.fim_sentinels) != {"prefix", "middle", "suffix"}:
            raise ConfigError(f"MixtureConfig.fim_sentinels needs exactly the keys prefix, middle, suffix; got {sorted(self.fim_sentinels)}")
        for k, v in self.fim_sentinels.items():
            if not isinstance(v, str) or not v:  # an empty sentinel is "in" every text: FIM would skip all code
                raise ConfigError(f"mixture.fim_sentinels.{k} = {v!r}: give the tokenizer's FIM token as text (e.g. <|fim_{k}|>)")
        if self.phases is None:
            raise ConfigError("mixture.phases is null: the mixture stage needs phases (drop one with phases.NAME=null)")
        for key, field in (("repo_header", "repo"), ("file_header", "path")):
            try:
                getattr(self, key).format(**{field: "x"})
            except (KeyError, IndexError, ValueError) as exc:
                raise ConfigError(f"mixture.{key} = {getattr(self, key)!r}: its only placeholder is {{{field}}} "
                                  f"(write a literal brace as {{{{ or }}}}): {exc!r}") from None
        if self.seed is not None and not (isinstance(self.seed, int) and not isinstance(self.seed, bool) and 0 <= self.seed <= MAX_SEED):
            raise ConfigError(f"mixture.seed = {self.seed!r}: give a whole number from 0 to {MAX_SEED} (the range of the "
                              "recipe's seed), or null for the recipe's seed")
        if problem := code_problem("mixture.language_repeat", self.language_repeat, patterns=True):
            raise ConfigError(problem)
        for table in ("repeat", "max_epochs", "language_repeat"):
            for k, v in getattr(self, table).items():
                try:
                    number = float(v)
                except (TypeError, ValueError):
                    raise ConfigError(f"mixture.{table}.{k} = {v!r} is not a number (give e.g. {table}.{k}=2.0)") from None
                if number < 0:
                    raise ConfigError(f"MixtureConfig.{table}[{k!r}] = {v} must be ≥ 0")
        if "{path}" not in self.file_header:
            raise ConfigError("MixtureConfig.file_header must contain {path}")
        try:
            specs = self.phase_specs()
        except ValueError as exc:
            raise ConfigError(str(exc)) from exc
        if not specs:
            raise ConfigError("MixtureConfig.phases is empty; the mixture stage needs at least one phase")
        kinds = [*SOURCES, "web_edu", LONG_GROUP.split("/")[0]]
        for spec in specs:
            check_names(f"mixture.phases.{spec.name}.mix", spec.mix, kinds, "kinds")
        check_names("mixture.language_kinds", self.language_kinds, kinds, "kinds")
        check_names("mixture.top_group", [self.top_group.split("/", 1)[0]], kinds, "kinds")
        for table in ("repeat", "max_epochs"):  # group patterns: <kind>/<sub>, globs allowed
            patterns = [str(k).split("/", 1)[0] for k in getattr(self, table)]
            check_names(f"mixture.{table}", [p for p in patterns if not any(fnmatch.fnmatchcase(k, p) for k in kinds)], kinds, "kinds")

    def phase_specs(self) -> list[PhaseSpec]:
        """The enabled phases: the recipe's ``phases`` merged by name over the five default phases."""
        return merged_phases(self.phases)

    def policy(self) -> Policy:
        """The mixture policy: group precedence, the one repeat table (the recipe's over the defaults), languages."""
        return Policy(
            repeat={**DEFAULT_REPEATS, **{str(k): float(v) for k, v in self.repeat.items()}},
            web_sources=tuple(self.web_sources), web_edu_bands=tuple(self.web_edu_bands),
            language_repeat={str(k): float(v) for k, v in self.language_repeat.items()}, language_kinds=tuple(self.language_kinds),
        )

    def shard_options(self, seed: int) -> ShardOptions:
        return ShardOptions(
            seed=seed, fim_rate=self.fim_rate, fim_spm_rate=self.fim_spm_rate, fim_sources=tuple(self.fim_sources),
            sentinels=FimSentinels(**self.fim_sentinels), headers=RepoHeaders(self.repo_header, self.file_header),
            tokenizer=self.tokenizer, materialize_repeats=self.materialize_repeats, keep_meta=self.keep_meta,
        )


class MixtureStage:
    name = "mixture"
    version = "8"  # 8: a kept document's mixture_phases are the phases whose replay shows it; one shown in none is ledgered not_drawn; a repository file's imports in the file order leave out the package __init__ of a module the repository lacks (from pkg.sub import x, pkg/sub.py absent) and of submodules it names (from . import sub); the manifests warn of the input's kinds that no phase mixes (no_phase) and of a language_repeat entry whose language has no document of a kind in language_kinds (language_kinds); 7: a group of only long documents replays the subset nearest its plan; the manifests' warnings judge a replay by the group's planned documents (both repeat modes alike), advise a mid-training budget at least the current one, and name the setting that causes them (scale, scale_fit, a phase budget); 6: manifests list the upstream stages that finished incomplete (incomplete); 5: a group's documents are shown in proportion to their repeat factors (language_repeat), and a mid-training phase's replay warning names its own budget (phases.<phase>.budget), not mixture.scale; 4: a later pre-training phase gives its extra copies to the documents shown least (per-document caps); a long document's chunks pack into consecutive sequences; a group capped at 0 is ledgered epoch_cap
    config_cls = MixtureConfig
    requires = ("doc_id", "text", "source", "n_tokens")
    produces: dict[str, Any] = {"mixture_group": object, "mixture_phases": object}
    global_keys = ("seed",)

    def preflight(self, cfg: MixtureConfig) -> None:
        """The special tokens the stage writes must be single tokens of the run's tokenizer: another
        tokenizer (a ``tokenizer.json`` without Qwen's FIM or repository tokens) would hand the trainer
        FIM'd code whose sentinels, or repository documents whose headers, are plain text, with nothing
        said. FIM's sentinels are checked while FIM is on, the headers' markers while a phase builds
        repository documents (:mod:`.mixture_headers`)."""
        if cfg.tokenizer == "whitespace":
            return
        specs = cfg.phase_specs()
        if any(s.builder == "repo_code" for s in specs):
            check_headers(cfg)
        if cfg.fim_rate <= 0 or not any(s.fim for s in specs):
            return
        from curation.tokens import encode

        for key, text in sorted(cfg.fim_sentinels.items()):
            n = len(encode([text], cfg.tokenizer)[0])
            if n != 1:
                raise ConfigError(f"mixture.fim_sentinels.{key} = {text!r} is {n} tokens of tokenizer {cfg.tokenizer!r}, not one: "
                                  f"give its FIM tokens (mixture.fim_sentinels.{key}=...), or set mixture.fim_rate=0")

    def config_notes(self, cfg: MixtureConfig) -> list[str]:
        """FIM settings of the user's (changed from their defaults) while ``fim_rate`` is 0: no document is FIM'd."""
        if cfg.fim_rate > 0:
            return []

        def plain(value: Any) -> Any:  # a recipe gives lists where the defaults are tuples
            return list(value) if isinstance(value, (list, tuple)) else value

        base = MixtureConfig()
        unused = [k for k in ("fim_spm_rate", "fim_sources", "fim_sentinels") if plain(getattr(cfg, k)) != plain(getattr(base, k))]
        if not unused:
            return []
        return [f"{', '.join(f'mixture.{k}' for k in unused)} {'does' if len(unused) == 1 else 'do'} nothing: mixture.fim_rate "
                "is 0, so no document is rearranged for fill-in-the-middle; set mixture.fim_rate above 0 (0.5: Bavarian "
                "et al. 2022) or leave them out"]

    def input_notes(self, cfg: MixtureConfig, folder: Any) -> list[str]:
        """Group names the input's data does not have, said before any work (a single-stage run)."""
        from pipelines.stages.mixture_input import input_notes

        return input_notes(cfg, folder)

    def build(self, docs: dd.DataFrame, cfg: MixtureConfig, ctx: StageContext) -> dd.DataFrame:
        specs, policy = cfg.phase_specs(), cfg.policy()
        seed = int(cfg.seed if cfg.seed is not None else ctx.recipe.get("seed", 1234))
        # account
        parts = docs.map_partitions(account, specs, policy, RepoHeaders(cfg.repo_header, cfg.file_header), cfg.tokenizer, meta=AGG_META)
        agg = sum_accounts(ctx.compute(parts, "token accounting"))
        # plan
        stats = group_stats(agg)
        scale = resolve_scale(cfg.scale, specs, stats, cfg.max_epochs, tuple(cfg.scale_fit))
        plans = plan_phases(specs, stats, cfg.max_epochs, cfg.on_cap, scale)
        live, copies = live_groups(plans), copy_plans(plans, specs, cfg.max_epochs)
        # shards
        n_shards = shard_counts(agg, live, cfg.shard_target_mb * 1e6, cap_scopes(specs))
        undrawn = Artifact(ctx.work_dir / SCRATCH / "not_drawn")  # removed by the runner once the output is written
        records = write_all_shards(docs, ctx, specs, policy, live, n_shards, copies, cfg.shard_options(seed), cfg.max_shuffle_partitions,
                                   undrawn)
        # manifests
        created_by = {"stage": self.name, "stage_version": self.version, "versions": ctx.versions()}
        StageFigures(write_manifests(cfg, ctx, specs, seed, agg, records, plans, scale, created_by)).record(ctx)
        # annotate
        epochs = {(p, g.group): g.epochs for p, plan in plans.items() for g in plan.groups}
        return ctx.map_parts(docs, annotate_partition, undrawn, specs, policy, live, cfg.max_epochs, epochs,
                             meta=annotated_meta(docs._meta, self.produces))


STAGE = MixtureStage()
