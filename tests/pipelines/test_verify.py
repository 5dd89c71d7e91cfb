import pandas as pd

from pipelines.cli import main
from tests.pipelines.test_runner import FOUNDATION, _corpus, _run


def test_verify_passes_on_a_run_and_fails_on_tampering(tmp_path, capsys):
    raw = _corpus(tmp_path)
    _run(raw, tmp_path / "run", FOUNDATION)
    assert main(["verify", str(tmp_path / "run")]) == 0
    ledger = tmp_path / "run" / "10_exact_dedup" / "ledger" / "part-00000.parquet"
    df = pd.read_parquet(ledger)
    assert len(df) > 0
    df.iloc[1:].to_parquet(ledger)  # an edited ledger loses a row
    capsys.readouterr()
    assert main(["verify", str(tmp_path / "run")]) == 1
    out = capsys.readouterr().out
    assert "neither kept nor in the ledger" in out and "stats.json says" in out
