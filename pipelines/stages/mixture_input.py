"""What a single ``curate mixture`` says before any work, from the stage folder it reads (a run or
``--dry-run``): a key of ``mixture.repeat`` or ``mixture.max_epochs``, or ``mixture.top_group``,
that names no group of this data while its kind has groups there (``web/hgh`` beside
``web/high``). The manifests say the same of the plan's groups at the end
(:func:`curation.mixture.checks.unknown_groups`, the same text); a run from raw input refuses such a
name before anything runs (:mod:`pipelines.recipe_groups`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from curation.mixture.checks import unknown_groups
from curation.mixture.groups import LONG_GROUP, REPO_GROUP, THREADS_GROUP, UNPLACED_GROUP
from curation.mixture.phases import DEFAULT_REPEATS
from curation.mixture.policy import SUB_COLUMN, doc_groups
from pipelines.io import docs_dir

#: Groups the mixture builds itself: a name of the data's kinds, though no document carries it.
BUILT_GROUPS = (REPO_GROUP, UNPLACED_GROUP, THREADS_GROUP, LONG_GROUP)


def data_groups(folder: Path, cfg: Any) -> set[str]:
    """The groups of the documents in stage folder ``folder`` by ``cfg``'s policy (reads the
    columns that decide a group, nothing else), with the built groups of their kinds."""
    columns = ["source", "code_web_recall", *dict.fromkeys(SUB_COLUMN.values())]
    policy, groups = cfg.policy(), set()
    for part in sorted(docs_dir(folder).glob("part-*.parquet")):
        names = set(pq.read_schema(part).names)
        frame = pq.read_table(part, columns=[c for c in columns if c in names]).to_pandas()
        if "source" in frame.columns and len(frame):
            groups |= set(doc_groups(frame.drop_duplicates(), policy)["group"])
    kinds = {g.split("/", 1)[0] for g in groups}
    return groups | {g for g in BUILT_GROUPS if g.split("/", 1)[0] in kinds}


def input_notes(cfg: Any, folder: Path) -> list[str]:
    """The warnings about the group names of ``cfg`` that ``folder``'s data does not have."""
    patterns = {k: v for k, v in cfg.repeat.items() if k not in DEFAULT_REPEATS}  # as the manifests check them
    return [w["message"] for w in unknown_groups(data_groups(folder, cfg), patterns, cfg.max_epochs, cfg.top_group)]
