"""Where the commands that are not stages may write: a run's or a stage's ``--output`` never lies in
a folder curate wrote for one stage (or an export), a trainer writes only a new, empty or model
folder, a report only a new file or its own earlier report (the rules of :mod:`pipelines.safety`,
for the other writers)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pipelines.marker import is_stage_output, read_marker
from pipelines.safety import OutputError, check_overlap


def written_folder(path: Path) -> Path | None:
    """The stage or export folder that ``path`` is or lies inside (its ``_SUCCESS`` lists each file), if any."""
    real = Path(os.path.realpath(path))
    return next((q for q in (real, *real.parents) if is_stage_output(read_marker(q))), None)


def check_destination(output: Path, whole_run: bool, option: str = "--output") -> None:
    """A run's ``--output`` is not, and a stage's does not lie inside, a folder curate wrote for one
    stage or an export: its marker lists each file, so anything written there would break it."""
    real = Path(os.path.realpath(output))
    owner = written_folder(real if whole_run else real.parent)
    if owner is not None:
        where = "is" if owner == real else f"is inside {owner},"
        raise OutputError(f"{option} {output} {where} a folder curate wrote for one stage (or an export) and checks "
                          "file by file; nothing was changed: choose a folder outside it")


def check_model_output(folder: Path, inputs: list[Any]) -> None:
    """A trainer's ``--output`` folder: new, empty or an earlier model (``model.json``); never a run's
    stage or export folder, nor one of the inputs."""
    if (owner := written_folder(folder)) is not None:
        raise OutputError(f"--output {folder} is inside {owner}, which curate wrote and checks file by file; "
                          "nothing was changed: choose a folder outside runs and exports")
    check_overlap(folder, inputs)
    here = Path(folder).resolve()
    for parent in here.parents:
        if (parent / "run.json").is_file() or (parent / "run.progress.json").is_file():
            raise OutputError(f"--output {folder} is inside the run folder {parent}; nothing was changed: choose a folder "
                              "outside runs (a run holds its stages, its cache and its record)")
    shipped = Path(__file__).resolve().parents[1] / "classifiers" / "models"
    if here.is_relative_to(shipped) and os.environ.get("CURATE_WRITE_SHIPPED_MODELS") != "1":  # the maintainers' rebuild scripts set it
        raise OutputError(f"--output {folder} is a model shipped with curate, which runs use by default; nothing was "
                          "changed: write the model elsewhere and name it in the recipe (the docs give the key)")
    if folder.exists() or folder.is_symlink():
        if not folder.is_dir():
            raise OutputError(f"--output {folder} exists and is not a folder; choose a model folder (it is made if missing)")
        if any(folder.iterdir()) and not (folder / "model.json").is_file():
            raise OutputError(f"--output {folder} holds files and no model.json (it is not a model folder); nothing was "
                              "changed: choose a new or empty folder")


def check_report_output(path: Path, title: str) -> None:
    """A report's ``--output`` file: new, or an earlier report (its HTML has ``title``); never inside a
    stage or export folder."""
    if (owner := written_folder(path.parent)) is not None:
        raise OutputError(f"--output {path} is inside {owner}, which curate wrote and checks file by file; "
                          "nothing was changed: write the report outside stage folders (the default is RUN_DIR/report.html)")
    if path.is_dir():
        raise OutputError(f"--output {path} is a folder; give a file name, e.g. {path / 'report.html'}")
    if path.exists():
        with path.open("rb") as f:
            head = f.read(4096)
        if title.encode() not in head:
            raise OutputError(f"--output {path} exists and is not a report curate wrote; nothing was changed: "
                              "choose another file name")


def run_recipe_note(output: Path, config: str | None) -> str | None:
    """What to say when a single stage writes into a run folder made with another recipe file than
    the one this command reads (``--config``, or the shipped one): the stage ran with the shipped
    settings, silently, where the run's own recipe changed them."""
    import json

    from pipelines.recipe_schema import default_recipe_path

    try:
        made = json.loads((Path(output).parent / "run.json").read_text())["recipe"]["recipe_path"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    mine = Path(config) if config else default_recipe_path()
    if not made or not Path(made).is_file() or Path(made).resolve() == mine.resolve():
        return None
    return (f"{Path(output).parent} was made with the recipe {made}; this command reads {mine}: its settings, not the "
            f"run's, go into {Path(output).name} (pass --config {made} to re-run it with the run's)")
