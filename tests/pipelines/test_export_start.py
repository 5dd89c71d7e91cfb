"""What `curate export megatron --scheduler synchronous` imports: its start is part of its cost against one
tokenizer pass (benchmarks/export), and it read no Dask dataframe yet imported dask.dataframe (with dask.array
and scipy, ~0.6 CPU-s) and every trainer's module for the parser."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
UNUSED = ("dask.dataframe", "distributed", "pipelines.commands.train_edu", "pipelines.commands.train_classifier")


def test_a_one_process_megatron_export_imports_no_dataframe_cluster_or_trainer(finished_run, tmp_path):
    code = (
        "import json, sys\n"
        "from pipelines.cli import main\n"
        f"code = main(['export', 'megatron', {str(finished_run)!r}, '--output', {str(tmp_path / 'e')!r}, "
        "'--phase', 'pretrain_phase1', '--scheduler', 'synchronous', '--quiet'])\n"
        f"print(json.dumps([code, [m for m in {UNUSED!r} if m in sys.modules]]))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [0, []]
