"""Atomic writes never bring back a temporary folder a stopped stage removed."""

from pathlib import Path

import pytest

from curation.files import atomic_path


def test_a_late_task_does_not_recreate_a_removed_step_folder(tmp_path: Path) -> None:
    """A task still running on a cluster's worker when its stage stopped (Ctrl-C, a lost scheduler)
    writes after the driver removed the step's temporary folder: the write fails instead of leaving a
    half-filled ``.NAME.tmp`` behind (or, on a worker without the driver's file system, one the
    driver never sees)."""
    gone = tmp_path / ".cache" / "ingest" / ".parsed-0123.tmp"
    with (pytest.raises(FileNotFoundError, match="does not exist here: the stage that made it stopped, or this Dask worker"),
          atomic_path(gone / "part-00000.parquet") as tmp):
        tmp.write_text("x")
    assert not gone.exists()
    with pytest.raises(FileNotFoundError), atomic_path(tmp_path / ".00_ingest.inprogress" / "docs" / "part-00000.parquet"):
        pass
    # inside a temporary folder that exists, and anywhere else, folders are made as needed
    (tmp_path / ".00_ingest.inprogress").mkdir()
    for target in (tmp_path / ".00_ingest.inprogress" / "docs" / "part-00000.parquet", tmp_path / "new" / "deep" / "f.json"):
        with atomic_path(target) as tmp:
            tmp.write_text("x")
        assert target.read_text() == "x"
