"""What a stage's config names outside itself — model folders, a CUDA device — checked before
anything runs (``StageShape.preflight``, called by :func:`pipelines.recipe.check_configs`), so a
typo in a path fails the command at once rather than after the stages before it have run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from curation.config import ConfigError
from curation.errors import brief


def need_model_folder(key: str, value: str | None, files: tuple[str, ...] = ("model.json",), how: str = "") -> None:
    """``value`` (when set) is a folder holding ``files``; else a ConfigError naming ``key``."""
    if value is None:
        return
    path = Path(str(value)).expanduser()
    if not path.is_dir():
        what = "does not exist" if not path.exists() else "is not a folder"
    else:
        missing = [f for f in files if not (path / f).is_file()]
        if not missing:
            return
        what = f"holds no {' nor '.join(missing)} (not a model folder)"
    raise ConfigError(f"{key} = {brief(str(value))}: {path} {what}{'; ' + how if how else ''}")


def files_stamp(path: str | Path) -> list[list[Any]]:
    """Each file under ``path`` (or ``path`` itself) as [relative name, size, mtime in ns]: what a
    stage's config hash takes of a model the user names (no file is read; a retrained model has new
    times)."""
    root = Path(str(path)).expanduser()
    files = sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else [root] if root.exists() else []
    return [[f.relative_to(root).as_posix() if root.is_dir() else f.name, f.stat().st_size, f.stat().st_mtime_ns] for f in files]


def need_device(key: str, device: str) -> None:
    """A ``cuda`` device needs a CUDA build of torch and a GPU; ``auto`` and ``cpu`` always run."""
    if not str(device).startswith("cuda"):
        return
    import torch

    if not torch.cuda.is_available():
        raise ConfigError(f"{key} = {device!r}, but this machine has no CUDA device (or torch is a CPU build); "
                          "use auto (the GPU where there is one) or cpu")
