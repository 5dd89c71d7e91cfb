"""The stage kit: the contract (:mod:`.stage`), the context a stage is written with
(:mod:`.context`) and the one artifact type for sub-step output (:mod:`.artifact`)."""

from curation.files import atomic_path, part_name
from pipelines.kit.artifact import Artifact, part_number
from pipelines.kit.context import SlicedStep, StageContext, link_tree
from pipelines.kit.stage import Stage, check_produces, resolve_artifacts, resolve_lineage

__all__ = ["Artifact", "SlicedStep", "Stage", "StageContext", "atomic_path", "check_produces", "link_tree", "part_name", "part_number", "resolve_artifacts", "resolve_lineage"]
