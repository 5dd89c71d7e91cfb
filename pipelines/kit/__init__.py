"""The stage kit: the shapes a stage is written with (:mod:`.shapes`; the plan and figures they
hand on: :mod:`.plan`), the context it runs in
(:mod:`.context`; the tasks that write its sliced steps: :mod:`.step_writes`), the one artifact
type for sub-step output (:mod:`.artifact`), how the runner resolves a stage's declarations
(:mod:`.stage`) and what it checks of a stage's own code (:mod:`.contract`, :mod:`.group_checks`)."""

from curation.files import atomic_path, part_name
from pipelines.kit.artifact import Artifact, link_tree, part_number
from pipelines.kit.context import StageContext
from pipelines.kit.contract import StageError, stage_fault
from pipelines.kit.plan import Plan, StageFigures
from pipelines.kit.shapes import GroupStage, RowFilter, RowStage, StageShape
from pipelines.kit.stage import check_produces, check_requires, resolve_artifacts, resolve_lineage, upstream_chain
from pipelines.kit.step_writes import SlicedStep, tree_merge

__all__ = [
    "Artifact",
    "GroupStage",
    "Plan",
    "RowFilter",
    "RowStage",
    "SlicedStep",
    "StageContext",
    "StageError",
    "StageFigures",
    "StageShape",
    "atomic_path",
    "check_produces",
    "check_requires",
    "link_tree",
    "part_name",
    "part_number",
    "resolve_artifacts",
    "resolve_lineage",
    "stage_fault",
    "tree_merge",
    "upstream_chain",
]
