"""The stage kit: the shapes a stage is written with (:mod:`.shapes`), the context it runs in
(:mod:`.context`), the one artifact type for sub-step output (:mod:`.artifact`) and how the runner
resolves a stage's declarations (:mod:`.stage`)."""

from curation.files import atomic_path, part_name
from pipelines.kit.artifact import Artifact, part_number
from pipelines.kit.context import SlicedStep, StageContext, link_tree, tree_merge
from pipelines.kit.shapes import GroupStage, Plan, RowFilter, RowStage, StageFigures, StageShape
from pipelines.kit.stage import check_produces, resolve_artifacts, resolve_lineage

__all__ = ["Artifact", "GroupStage", "Plan", "RowFilter", "RowStage", "SlicedStep", "StageContext", "StageFigures", "StageShape",
           "atomic_path", "check_produces", "link_tree", "part_name", "part_number", "resolve_artifacts", "resolve_lineage",
           "tree_merge"]
