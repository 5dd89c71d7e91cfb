"""The phases of a mixture: what the recipe says of each (stage, builder, tokens, mix, packing).

>>> spec = PhaseSpec.parse("p1", {"tokens": 7000, "mix": {"web": 1.0}})
>>> spec.budget_tokens(scale=0.5), spec.builder
(3500, 'documents')
"""

from __future__ import annotations

import dataclasses
import json
import re
import typing
from collections.abc import Mapping
from typing import Any

from curation.config import coerce, merge_tables
from curation.errors import nearest

BUILDERS = ("documents", "repo_code", "long_context")
PACKINGS = ("none", "best_fit")
#: what a trainer does with a document longer than the sequence, recorded in the manifest (``curate export datasets --truncation``)
TRUNCATIONS = ("none", "random")
#: keys that one builder or packing alone reads: key → (the setting, its values that read the key, what the key does there)
ONLY_WITH: dict[str, tuple[str, tuple[str, ...], str]] = {
    "min_tokens": ("builder", ("long_context",), "the long_context builder's long documents (long_docs) are at least this long"),
    "max_doc_tokens": ("builder", ("repo_code",), "the repo_code builder cuts repository documents and thread contexts below it"),
    "truncation": ("packing", ("none",), "with packing none the trainer cuts a document longer than seq_length this way; "
                   "best_fit splits it into sequence-sized chunks itself"),
}

#: The GLM-4.5 phases (arXiv 2508.06471 §2.2–2.4); the recipe repeats these with their sources.
DEFAULT_PHASES: dict[str, dict[str, Any]] = {
    "pretrain_phase1": {
        "stage": "pretrain", "builder": "documents", "tokens": 15_000_000_000_000,
        "seq_length": 4096, "packing": "none", "truncation": "random", "fim": True,
        "mix": {"web": 0.75, "web_edu": 0.5, "code": 0.4, "code_web": 0.4, "math_science": 0.4, "long_context": 0.75,
                "books": 0.5, "papers": 0.4, "social": 0.75},
    },
    "pretrain_phase2": {
        "stage": "pretrain", "builder": "documents", "tokens": 7_000_000_000_000,
        "seq_length": 4096, "packing": "none", "truncation": "random", "fim": True,
        "mix": {"web": 0.25, "web_edu": 0.5, "code": 0.6, "code_web": 0.6, "math_science": 0.6, "long_context": 0.25,
                "books": 0.5, "papers": 0.6, "social": 0.25},
    },
    "midtrain_repo_code_32k": {
        "stage": "midtrain", "builder": "repo_code", "tokens": 500_000_000_000,
        "seq_length": 32768, "packing": "best_fit", "max_doc_tokens": 32768, "mix": {"code": 1.0, "issues_prs_commits": 1.0},
    },
    "midtrain_reasoning_32k": {
        "stage": "midtrain", "builder": "documents", "tokens": 500_000_000_000,
        "seq_length": 32768, "packing": "best_fit", "mix": {"reasoning": 1.0},
    },
    "midtrain_long_context_128k": {
        "stage": "midtrain", "builder": "long_context", "tokens": 100_000_000_000,
        "seq_length": 131072, "packing": "best_fit", "min_tokens": 16384, "mix": {"long_docs": 2.0, "agent": 1.0},
    },
}
DEFAULT_REPEATS: dict[str, float] = {
    "web/high": 4.0, "web/medium_high": 2.0, "web/medium": 1.0, "web/medium_low": 0.5, "web/low": 0.0,
    "web_edu/high": 2.0, "web_edu/medium": 1.0, "web_edu/low": 0.5,
    "code/high": 2.0, "code/medium": 1.0, "code/low": 0.0, "code_web/high": 2.0, "code_web/medium": 1.0, "code_web/low": 0.0,
    "math_science/high": 2.0, "math_science/medium": 1.0, "math_science/low": 0.5,
    "papers/high": 2.0, "papers/medium": 1.0, "papers/low": 0.5,
    "books/all": 1.0, "papers/all": 1.0, "math_science/all": 1.0, "social/all": 1.0, "*": 1.0,
}


@dataclasses.dataclass(frozen=True)
class Budget:
    """An absolute token budget that overrides ``scale × tokens`` for one phase (it leaves the paper's proportions)."""

    tokens: int

    @classmethod
    def parse(cls, value: Any, where: str) -> Budget | None:
        if value is None:
            return None
        if isinstance(value, Mapping) and "fraction" in value:
            raise ValueError(f"{where}.budget.fraction is gone: every phase's budget is its `tokens` × mixture.scale "
                             "(set mixture.scale, or give {{tokens: N}} to override one phase)")
        if not isinstance(value, Mapping) or set(value) != {"tokens"}:
            raise ValueError(f"{where}.budget must be null (tokens × mixture.scale) or {{tokens: N}}, got {value!r}")
        tokens = int(float(value["tokens"]))
        if tokens < 0:
            raise ValueError(f"{where}.budget.tokens must be ≥ 0")
        return cls(tokens=tokens)

    def to_dict(self) -> dict[str, Any]:
        return {"tokens": self.tokens}


@dataclasses.dataclass(frozen=True)
class PhaseSpec:
    """One phase of the recipe."""

    name: str
    stage: str = "pretrain"  #: pretrain (caps hold over all pre-training phases) | midtrain
    builder: str = "documents"  #: documents | repo_code | long_context
    tokens: int | None = None  #: the phase's GLM-4.5 token count; its budget is scale × tokens
    budget: Budget | None = None  #: an absolute override of scale × tokens
    seq_length: int = 4096
    packing: str = "none"
    truncation: str = "random"  #: packing none: how the trainer cuts a document longer than seq_length
    mix: Mapping[str, float] = dataclasses.field(default_factory=dict)
    fim: bool = False
    min_tokens: int = 0  #: long_context: documents at least this long
    max_doc_tokens: int = 32768  #: repo_code: documents cut at file/record boundaries below this

    def with_budget(self, budget: Budget | None) -> PhaseSpec:
        return dataclasses.replace(self, budget=budget)

    def budget_tokens(self, scale: float) -> int:
        """The phase's budget at ``scale``: the override, else ``scale × tokens``."""
        if self.budget is not None:
            return self.budget.tokens
        return int(round(scale * (self.tokens or 0)))

    @classmethod
    def parse(cls, name: str, data: Mapping[str, Any]) -> PhaseSpec:
        where = f"mixture.phases.{name}"
        fields = {f.name for f in dataclasses.fields(cls)} - {"name"}
        unknown = sorted(set(data) - fields)
        if unknown:
            near = nearest(unknown[0], fields)
            raise ValueError(f"unknown key {unknown[0]!r} in {where}{f' (did you mean {near!r}?)' if near else ''}; "
                             f"valid keys: {', '.join(sorted(fields))}")
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
            raise ValueError(f"phase name {name!r}: use letters, digits, '_', '.', '-' (it names folders and files)")
        hints = typing.get_type_hints(cls)
        kw: dict[str, Any] = {k: coerce(where, k, v, hints[k]) for k, v in data.items() if k not in ("budget", "mix", "tokens")}
        kw["budget"] = Budget.parse(data.get("budget"), where)
        if not isinstance(data.get("mix") or {}, Mapping):
            raise ValueError(f"{where}.mix = {data.get('mix')!r}: give a mapping of kind: factor, e.g. {{web: 1.0}}")
        kw["mix"] = {str(k): coerce(f"{where}.mix", str(k), v, float) for k, v in (data.get("mix") or {}).items()}
        if data.get("tokens") is not None:
            tokens = coerce(where, "tokens", data["tokens"], float)  # 1.5e13 and 15000000000000 alike
            if not tokens.is_integer() or tokens < 0:
                raise ValueError(f"{where}.tokens = {data['tokens']!r}: give a whole number of tokens ≥ 0")
            kw["tokens"] = int(tokens)
        if kw.get("tokens") is None and kw["budget"] is None:
            raise ValueError(f"{where} needs tokens (the phase's full-scale size, scaled by mixture.scale) or budget: {{tokens: N}}")
        spec = cls(name=name, **kw)
        if spec.stage not in ("pretrain", "midtrain"):
            raise ValueError(f"{where}.stage must be pretrain or midtrain, not {spec.stage!r}")
        if spec.builder not in BUILDERS:
            raise ValueError(f"{where}.builder must be one of {BUILDERS}, not {spec.builder!r}")
        if spec.packing not in PACKINGS:
            raise ValueError(f"{where}.packing must be one of {PACKINGS}, not {spec.packing!r}")
        if spec.truncation not in TRUNCATIONS:
            raise ValueError(f"{where}.truncation must be one of {TRUNCATIONS}, not {spec.truncation!r}")
        if spec.seq_length < 1:
            raise ValueError(f"{where}.seq_length must be ≥ 1")
        for key, (setting, values, what) in ONLY_WITH.items():
            if key in data and getattr(spec, setting) not in values:
                raise ValueError(
                    f"{where}.{key} = {data[key]!r} does nothing here: only {setting} {' or '.join(values)} reads it "
                    f"({what}), and this phase has {setting} {getattr(spec, setting)!r}: drop it ({where}.{key}=null), "
                    f"or set {where}.{setting}={values[0]}")
        if any(v < 0 for v in spec.mix.values()):
            raise ValueError(f"{where}.mix values must be ≥ 0")
        if not any(v > 0 for v in spec.mix.values()):
            raise ValueError(f"{where}.mix gives no kind a factor above 0, so the phase would take no document: name its kinds "
                             f"(e.g. {{web: 1.0}}), or drop the phase ({where}: null)")
        return spec


def merged_phases(overrides: Mapping[str, Any] | None) -> list[PhaseSpec]:
    """The enabled phases: the recipe's ``phases`` merged by name over :data:`DEFAULT_PHASES`.

    A recipe entry is merged over the phase of that name (its ``mix`` by kind, as every table of a
    recipe: :func:`curation.config.merge_tables`); a phase set to null or
    with ``enabled: false`` is left out; a new name adds a phase.

    >>> [s.name for s in merged_phases({"pretrain_phase2": None, "midtrain_reasoning_32k": {"enabled": False}})]
    ['pretrain_phase1', 'midtrain_repo_code_32k', 'midtrain_long_context_128k']
    """
    merged: dict[str, Any] = json.loads(json.dumps(DEFAULT_PHASES))
    for name, data in (overrides or {}).items():
        base = merged.get(str(name))
        if data is not None and not isinstance(data, Mapping):
            raise ValueError(f"mixture.phases.{name} = {data!r}: give the phase's keys (stage, tokens, mix, …), or null to drop it")
        if base is None and data is not None and "stage" not in data:
            raise ValueError(f"mixture.phases.{name} is a new phase: say whether it is pre-training or mid-training "
                             "(stage: pretrain shares the pre-training phases' epoch caps; stage: midtrain has its own)")
        merged[str(name)] = None if data is None else merge_tables(base or {}, dict(data))
    out = []
    for name, data in merged.items():
        if data is None:
            continue
        data = dict(data)
        if not data.pop("enabled", True):
            continue
        out.append(PhaseSpec.parse(name, data))
    return out
