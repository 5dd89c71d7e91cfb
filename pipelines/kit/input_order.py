"""What a single stage (``curate <stage> --input DIR``) says about where its input stands in the recipe's
order, beside :func:`pipelines.kit.stage.skipped_warning` (an input that skipped stages before it): a run
folder given for one of its stage folders is refused with the folder to give (:func:`check_stage_input`,
before the input's own checks), and an input that has
already been through this stage or later ones runs, with a warning.

>>> # refuse_run_folder("web_quality", recipe, Path("runs/x"))  # InputError: … --input runs/x/30_semdedup
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from curation.ingest.inputs import InputError


def check_stage_input(name: str, recipe: dict[str, Any], input_dir: Path) -> None:
    """The checks of stage ``name``'s ``--input`` folder before anything is computed: not a run folder
    (:func:`refuse_run_folder`), and a stage folder as its marker recorded (:func:`pipelines.marker.check_input`)."""
    from pipelines.marker import check_input

    refuse_run_folder(name, recipe, input_dir)
    check_input(input_dir)


def refuse_run_folder(name: str, recipe: dict[str, Any], input_dir: Path) -> None:
    """Refuse a run folder (``run.json``, or stage folders of curate in it) given as ``--input`` of
    stage ``name``, naming its folder of the stage the recipe runs before ``name`` (else its latest
    stage folder before ``name``). A stage's own folder, or a folder of parts, is left to
    :func:`pipelines.marker.check_input`."""
    from pipelines.marker import is_stage_output, read_marker
    from pipelines.stages import STAGES, enabled_stages, folder_name

    folder = Path(input_dir)
    if not folder.is_dir() or (folder / "docs").is_dir() or read_marker(folder) is not None or any(folder.glob("part-*.parquet")):
        return
    held = sorted(p.name for p in folder.iterdir() if p.is_dir() and is_stage_output(read_marker(p)))
    if not held and not any((folder / f).is_file() for f in ("run.json", "run.progress.json")):
        return
    order = list(STAGES)
    before = [n for n in enabled_stages(recipe) if order.index(n) < order.index(name)]
    there = [n for n in order[:order.index(name)] if folder_name(n) in held]
    if before and folder_name(before[-1]) in held:
        hint = f"the recipe runs {before[-1]} before {name}: --input {folder / folder_name(before[-1])}"
    elif there:
        hint = f"its latest stage folder before {name}: --input {folder / folder_name(there[-1])}"
    else:
        hint = f"it has no stage folder before {name} yet: run the recipe's stages before it first"
    raise InputError(f"{folder} is a run folder (stage folders: {', '.join(held) or 'none finished'}), not a stage's "
                     f"output: give one of its stage folders as --input; {hint}")


def past_warning(name: str, input_dir: Path, chain: Sequence[Path]) -> str | None:
    """The warning for stage ``name`` fed a folder that has already been through it or stages the
    recipe runs after it (theirs are on its input's chain: ``curate semdedup --input RUN/80_mixture``):
    it runs (you iterate), but says which, and the folder on the chain to give instead; None otherwise."""
    from pipelines.kit.stage import chain_stages
    from pipelines.stages import STAGES

    order = list(STAGES)
    stages = chain_stages(chain)
    past = [s for s in stages if s in order and order.index(s) >= order.index(name)]
    if not past:
        return None
    made = [f for f, s in zip(chain, stages, strict=True) if s in order and order.index(s) < order.index(name)]
    instead = f"give {made[-1]} (on the same chain, made before them)" if made else "give a folder made before them"
    return (f"{name}: its input {input_dir} has already been through {', '.join(dict.fromkeys(past))} ({name} or stages "
            f"the recipe runs after it; their folders are on the chain its input was made from): {name} runs on what they "
            f"kept, as they left it; to run {name} in the recipe's order, {instead}")


def chain_warning(name: str, recipe: dict[str, Any], input_dir: Path, chain: list[Path]) -> str | None:
    """The warning for a single stage's input that skipped stages before this one
    (:func:`~pipelines.kit.stage.skipped_warning`) or has been through this stage already (:func:`past_warning`)."""
    from pipelines.kit.stage import skipped_warning

    return skipped_warning(name, recipe, input_dir, chain) or past_warning(name, input_dir, chain)
