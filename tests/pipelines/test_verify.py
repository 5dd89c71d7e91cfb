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


def test_verify_checks_the_tokens_stats_json_records(tmp_path, capsys):
    import json

    raw = _corpus(tmp_path)
    _run(raw, tmp_path / "run", FOUNDATION)
    stats_path = tmp_path / "run" / "10_exact_dedup" / "stats.json"
    stats = json.loads(stats_path.read_text())
    kept, came = stats["kept"]["tokens"], stats["in"]["tokens"]
    assert kept > 0 and came == kept + stats["dropped"]["tokens"]
    stats["kept"]["tokens"] = kept + 7  # a count that does not match the files
    stats["recounted"] = {"tokens": 3}  # and a re-count that does not add up
    stats_path.write_text(json.dumps(stats))
    capsys.readouterr()
    assert main(["verify", str(tmp_path / "run")]) == 1
    out = capsys.readouterr().out
    assert f"stats.json says {kept + 7:,} tokens kept, docs/ holds {kept:,}" in out
    assert f"stats.json says {came:,} tokens in and +3 re-counted, but docs/ and ledger/ hold {came:,}" in out


def test_verify_says_how_to_remake_a_damaged_stage_and_resume_then_does(tmp_path, capsys):
    """A resumed run checks names, sizes and rows, not contents: it kept a same-size edit, and verify
    gave no remedy. It now names the folder to delete; the same command then makes it again."""
    raw = _corpus(tmp_path)
    run = tmp_path / "run"
    _run(raw, run, FOUNDATION)
    part = sorted((run / "10_exact_dedup" / "docs").glob("part-*.parquet"))[0]
    data = bytearray(part.read_bytes())
    data[len(data) // 2] ^= 0xFF  # same size, another content
    part.write_bytes(bytes(data))
    capsys.readouterr()
    assert main(["verify", str(run)]) == 1
    out = capsys.readouterr().out
    assert f"delete the damaged stage folder(s) (rm -r {run / '10_exact_dedup'}) and re-run the same command" in out
    import shutil

    shutil.rmtree(run / "10_exact_dedup")
    _run(raw, run, FOUNDATION)
    assert main(["verify", str(run)]) == 0


def test_verify_checks_stages_run_one_by_one(tmp_path, capsys):
    """Stage folders written by single-stage commands have no run.json: verify said "run.json is
    missing: re-run it" and checked nothing. It checks each folder, and each against the folder it
    was made from, by fingerprint, whatever the folders are called."""
    raw = _corpus(tmp_path)
    steps = tmp_path / "steps"
    assert main(["ingest", "--input", str(raw), "--output", str(steps / "ingest"), "--scheduler", "synchronous", "--quiet"]) == 0
    assert main(["exact-dedup", "--input", str(steps / "ingest"), "--output", str(steps / "dedup"),
                 "--scheduler", "synchronous", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["verify", str(steps)]) == 0
    assert main(["verify", str(steps / "dedup")]) == 0  # one stage folder on its own
    assert "OK" in capsys.readouterr().out
    ledger = steps / "dedup" / "ledger" / "part-00000.parquet"
    df = pd.read_parquet(ledger)
    assert len(df) > 0
    df.iloc[1:].to_parquet(ledger)  # a lost ledger row shows against the ingest folder it was made from
    assert main(["verify", str(steps)]) == 1
    out = capsys.readouterr().out
    assert "dedup: 1 input documents are neither kept nor in the ledger" in out and "run.json" not in out


def test_verify_sees_a_stage_folder_re_run_under_the_ones_made_from_it(tmp_path, capsys):
    """Stages chained by hand, then an earlier one re-run with another setting: while its output comes
    out as before (restat), the later folders still read what they were made from; once it differs,
    they were made from an output that is gone, and verify said OK."""
    raw = _corpus(tmp_path)
    steps = tmp_path / "steps"
    common = ["--scheduler", "synchronous", "--quiet"]
    assert main(["ingest", "--input", str(raw), "--output", str(steps / "a"), *common]) == 0
    assert main(["exact-dedup", "--input", str(steps / "a"), "--output", str(steps / "b"), *common]) == 0
    assert main(["minhash-dedup", "--input", str(steps / "b"), "--output", str(steps / "c"), *common]) == 0
    assert main(["exact-dedup", "--input", str(steps / "a"), "--output", str(steps / "b"), "keep=longest", *common]) == 0
    capsys.readouterr()
    assert main(["verify", str(steps)]) == 0  # its copies are byte-identical: keep=longest keeps the same ones
    assert main(["ingest", "--input", str(raw), "--output", str(steps / "a"), "max_chars=20", *common]) == 0
    assert main(["exact-dedup", "--input", str(steps / "a"), "--output", str(steps / "b"), "keep=longest", *common]) == 0
    capsys.readouterr()
    assert main(["verify", str(steps)]) == 1
    assert f"c: made from {steps / 'b'}, which holds another output since" in capsys.readouterr().out
