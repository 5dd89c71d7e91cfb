"""No curate command removes a user's file; runs lock their folder; resume checks what it skips.

Each test reproduces one finding of the issue through the CLI (real runs on a synchronous scheduler,
real Parquet) and fails on the code before the fix.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from pipelines.cli import main
from pipelines.recipe_schema import default_recipe_path
from tests.helpers import read_parts, slow_exact_dedup_run
from tests.pipelines.test_runner import FOUNDATION, _corpus

REPO = Path(__file__).resolve().parents[2]


def _cli_run(raw: Path | str, out: Path, *extra: str) -> int:
    return main(["run", str(default_recipe_path()), "--input", str(raw), "--output", str(out),
                 "--scheduler", "synchronous", "--quiet", *FOUNDATION, *extra])


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# 1. a stage's --output never deletes what curate did not write


def test_stage_output_over_a_user_folder_is_refused_and_nothing_is_removed(tmp_path, caplog):
    raw = _corpus(tmp_path)
    d = tmp_path / "d"
    d.mkdir()
    (d / "data.jsonl").write_bytes((raw / "a.jsonl").read_bytes())
    (d / "notes.txt").write_text("n\n")
    before = _tree(d)
    # the output contains the input: refused before anything runs
    assert main(["ingest", "--input", str(d / "data.jsonl"), "--output", str(d), "--scheduler", "synchronous",
                 "tokenizer=whitespace"]) == 5
    assert _tree(d) == before and "contains the input" in caplog.text
    # a stage folder of a run, written into a user's folder that holds other files: refused
    assert _cli_run(raw, tmp_path / "run") == 0
    mine = tmp_path / "somefolder"
    mine.mkdir()
    (mine / "thesis.tex").write_text("years of work")
    rc = main(["exact-dedup", "--input", str(tmp_path / "run" / "00_ingest"), "--output", str(mine), "--scheduler", "synchronous"])
    assert rc == 5 and (mine / "thesis.tex").read_text() == "years of work"
    assert "is not a stage output of curate" in caplog.text
    assert not list(tmp_path.glob(".*.inprogress"))


def test_a_stage_folder_holding_a_user_file_is_not_replaced(tmp_path, caplog):
    raw = _corpus(tmp_path)
    assert _cli_run(raw, tmp_path / "run") == 0
    note = tmp_path / "run" / "10_exact_dedup" / "docs" / "my-notes.txt"
    note.write_text("keep me")
    # a changed key would replace the stage folder: refused, the note stays
    assert _cli_run(raw, tmp_path / "run", "exact_dedup.keep=longest") == 5
    assert note.read_text() == "keep me" and "curate did not write (docs/my-notes.txt)" in caplog.text
    # a run.json that is not a run record is not overwritten either
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "run.json").write_text('{"my": "data"}')
    assert _cli_run(raw, tmp_path / "mine") == 5 and (tmp_path / "mine" / "run.json").read_text() == '{"my": "data"}'
    # an empty folder, or one curate wrote, is fine
    assert _cli_run(raw, tmp_path / "other") == 0
    assert _cli_run(raw, tmp_path / "other", "exact_dedup.keep=longest") == 0


# 2. a run folder is locked while a run writes into it


def test_a_second_run_into_a_locked_folder_fails_and_a_dead_holder_does_not_block(tmp_path, caplog):
    raw = _corpus(tmp_path)
    out = tmp_path / "run"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom pipelines.safety import folder_lock\n"
         f"with folder_lock({str(out)!r}):\n    print('locked', flush=True)\n    time.sleep(120)\n"],
        stdout=subprocess.PIPE, text=True, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        assert _cli_run(raw, out) == 6
        assert f"pid {holder.pid}" in caplog.text and "another curate process" in caplog.text
        assert not (out / "00_ingest").exists() and not list(out.glob(".*.inprogress"))
    finally:
        holder.kill()
        holder.wait()
    # the holder died without cleaning up: its lock file is left, its lock is not
    assert (out / ".curate.lock").exists()
    assert _cli_run(raw, out) == 0
    assert not (out / ".curate.lock").exists()


# 3. resume and verify check what they trust


def test_resume_reruns_a_stage_whose_files_were_damaged(tmp_path, caplog):
    raw = _corpus(tmp_path)
    out = tmp_path / "run"
    assert _cli_run(raw, out) == 0
    ref = read_parts(out / "10_exact_dedup" / "docs").sort_values("doc_id").reset_index(drop=True)
    part = sorted((out / "00_ingest" / "docs").glob("part-*.parquet"))[0]
    part.write_bytes(part.read_bytes()[: part.stat().st_size // 2])  # truncated
    caplog.clear()
    assert _cli_run(raw, out) == 0
    assert "ingest: re-running" in caplog.text and "bytes, its marker recorded" in caplog.text
    again = read_parts(out / "10_exact_dedup" / "docs").sort_values("doc_id").reset_index(drop=True)
    assert again.equals(ref)
    part.unlink()  # deleted
    caplog.clear()
    assert _cli_run(raw, out, "exact_dedup.keep=longest") == 0
    assert f"{part} is missing" in caplog.text
    assert main(["verify", str(out)]) == 0


def test_one_stage_names_the_damaged_file_of_its_input(tmp_path, caplog):
    raw = _corpus(tmp_path)
    out = tmp_path / "run"
    assert _cli_run(raw, out) == 0
    part = sorted((out / "00_ingest" / "docs").glob("part-*.parquet"))[0]
    part.write_bytes(b"PAR1 not parquet")
    rc = main(["exact-dedup", "--input", str(out / "00_ingest"), "--output", str(tmp_path / "x"), "--scheduler", "synchronous"])
    assert rc == 4 and str(part) in caplog.text and "re-run the stage" in caplog.text


def test_verify_lists_every_problem_sees_edited_text_and_unfinished_runs(tmp_path, capsys):
    raw = _corpus(tmp_path)
    out = tmp_path / "run"
    assert _cli_run(raw, out) == 0
    capsys.readouterr()
    assert main(["verify", str(out)]) == 0
    # edited document text of the same length: same size and rows, other content
    part = sorted((out / "10_exact_dedup" / "docs").glob("part-*.parquet"))[0]
    df = pd.read_parquet(part)
    df.loc[0, "text"] = df.loc[0, "text"].swapcase()
    df.to_parquet(part)
    # and an unreadable ledger part in the first stage
    ledger = sorted((out / "00_ingest" / "ledger").glob("part-*.parquet"))[0]
    ledger.write_bytes(b"garbage")
    assert main(["verify", str(out)]) == 1
    text = capsys.readouterr().out
    assert f"{part}: content differs" in text or f"{part} has" in text
    assert f"{ledger}: cannot read" in text  # the read error names its file, and checking went on
    # a byte changed in place (same size, same footer): only the checksum sees it
    other = sorted((out / "00_ingest" / "docs").glob("part-*.parquet"))[0]
    data = bytearray(other.read_bytes())
    data[64] ^= 0xFF  # in the first column chunk, well before the footer (which is most of a small file)
    other.write_bytes(bytes(data))
    assert main(["verify", str(out)]) == 1
    assert f"{other}: content differs from what was written (checksum)" in capsys.readouterr().out
    # a run that never finished (its progress record, no run.json) is not OK
    import json

    record = json.loads((out / "run.json").read_text())
    (out / "run.json").unlink()
    (out / "run.progress.json").write_text(json.dumps({**record, "status": "running"}))
    assert main(["verify", str(out)]) == 1
    assert "the run did not finish" in capsys.readouterr().out


# 4. typos are errors naming the closest key (or, with none near, every key)


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        ("minhsh_dedup.threshold=0.5", "did you mean 'minhash_dedup'"),
        ("minhash.threshold=0.7", "did you mean 'minhash_dedup'"),
        ("mixture.phases.pretrain_phse1.budget={tokens: 1000}", "did you mean 'pretrain_phase1'"),
        ("exact_dedup.kep=longest", "did you mean 'keep'"),
        ("web_quality.levels.hgh=[19, 19]", "did you mean 'high'"),
        ("exact_dedup.upsample_high=2", "unknown key 'upsample_high' of stage exact_dedup; valid: "),  # no near key: all of them
        ("exact_dedup=5", "stages.exact_dedup must be a mapping"),
        ("phases.pretrain_phase1.budget={tokens: 1000}", "unknown key 'phases'; phases is a key of stage mixture: write mixture.phases"),
        ("exact_dedup.keep=!!python/object:os.system echo", "not valid YAML"),
        ("mixture.phases.pretrain_phase1.mix={web: 1", "not valid YAML (column 8: expected ',' or '}', but got '<stream end>')"),
    ],
)
def test_override_typos_and_bad_values_fail_in_one_line(tmp_path, caplog, override, expected):
    raw = _corpus(tmp_path)
    rc = main(["run", str(default_recipe_path()), "--input", str(raw), "--output", str(tmp_path / "run"), "--dry-run", override])
    assert rc == 2 and expected in caplog.text
    assert "Traceback" not in caplog.text and not (tmp_path / "run").exists()


def test_recipe_files_empty_or_with_unknown_keys_or_new_phases_without_flag(tmp_path, caplog, capsys):
    raw = _corpus(tmp_path)
    cases = {
        "empty.yaml": ("", "is empty"),
        "shape.yaml": ("stages: {exact_dedup: 5}\n", "stages.exact_dedup must be a mapping"),
        "top.yaml": ("stagse: {}\n", "did you mean 'stages'"),
        "tab.yaml": ("stages:\n  exact_dedup:\n\tkeep: longest\n", "not valid YAML (line 3, column 1: found character '\\t'"),
        "phase.yaml": ("stages: {mixture: {phases: {pretrain_phse1: {budget: {tokens: 5}}}}}\n", "give it 'new: true'"),
    }
    for name, (body, expected) in cases.items():
        path = tmp_path / name
        path.write_text(body)
        caplog.clear()
        assert main(["run", str(path), "--input", str(raw), "--output", str(tmp_path / "run"), "--dry-run"]) == 2, name
        assert expected in caplog.text, (name, caplog.text)
    ok = tmp_path / "ok.yaml"
    ok.write_text("stages: {mixture: {phases: {extra: {new: true, stage: midtrain, tokens: 1000000, mix: {web: 1.0}}}}}\n")
    capsys.readouterr()
    assert main(["run", str(ok), "--input", str(raw), "--output", str(tmp_path / "run"), "--dry-run"]) == 0
    plan = {p["stage"]: p["config"] for p in json.loads(capsys.readouterr().out)["plan"]}
    assert plan["mixture"]["phases"]["extra"] == {"stage": "midtrain", "tokens": 1000000, "mix": {"web": 1.0}}


def test_single_stage_dotted_override_reaches_the_stage(tmp_path, capsys):
    raw = _corpus(tmp_path)
    assert _cli_run(raw, tmp_path / "run") == 0
    capsys.readouterr()
    rc = main(["mixture", "--input", str(tmp_path / "run" / "10_exact_dedup"), "--output", str(tmp_path / "mix"),
               "--dry-run", "phases.pretrain_phase1.budget={tokens: 1234}", "+phases.extra={stage: midtrain, tokens: 1000, mix: {web: 1.0}}",
               "phases.midtrain_long_context_128k.fim=true"])  # a phase key its recipe entry does not spell out
    assert rc == 0
    cfg = json.loads(capsys.readouterr().out)["plan"][0]["config"]
    assert cfg["phases"]["pretrain_phase1"]["budget"] == {"tokens": 1234} and "extra" in cfg["phases"]
    assert cfg["phases"]["midtrain_long_context_128k"]["fim"] is True


def test_dry_run_checks_required_columns_against_earlier_stages(tmp_path, caplog):
    raw = _corpus(tmp_path)
    assert _cli_run(raw, tmp_path / "run") == 0
    part = sorted((tmp_path / "run" / "10_exact_dedup" / "docs").glob("part-*.parquet"))
    bare = tmp_path / "bare" / "docs"
    bare.mkdir(parents=True)
    for p in part:
        pd.read_parquet(p).drop(columns=["n_tokens"]).to_parquet(bare / p.name)
    # the input folder is what is wrong (exit 4), not a recipe: said before any cluster or plan, dry run or not
    rc = main(["mixture", "--input", str(bare.parent), "--output", str(tmp_path / "mix"), "--dry-run"])
    assert rc == 4 and "requires columns ['n_tokens']" in caplog.text
    caplog.clear()
    rc = main(["mixture", "--input", str(bare.parent), "--output", str(tmp_path / "mix"), "--scheduler", "synchronous", "--quiet"])
    assert rc == 4 and "requires columns ['n_tokens']" in caplog.text and not (tmp_path / "mix").exists()


# 5. options are validated


@pytest.mark.parametrize("value", ["-2", "0", "two", "1.5"])
def test_bad_workers_fail_at_once(tmp_path, value, capsys):
    started = time.time()
    with pytest.raises(SystemExit) as exc:
        main(["run", str(default_recipe_path()), "--input", str(tmp_path), "--output", str(tmp_path / "o"), "--workers", value])
    assert exc.value.code == 2 and time.time() - started < 10
    assert "--workers" in capsys.readouterr().err


def test_recipe_cluster_workers_is_checked(tmp_path, caplog):
    raw = _corpus(tmp_path)
    assert _cli_run(raw, tmp_path / "run", "cluster.workers=-2", "--dry-run") == 2
    assert "cluster.workers = -2" in caplog.text


# 6. @list paths never leave the list's folder, symlinks included


def test_symlink_inside_a_listed_folder_cannot_escape_the_list_root(tmp_path, caplog):
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.jsonl").write_text(json.dumps({"id": "s", "text": "secret"}) + "\n")
    (root / "sub" / "ok.jsonl").write_text(json.dumps({"id": "o", "text": "fine"}) + "\n")
    (root / "sub" / "sneaky.jsonl").symlink_to("../../outside/secret.jsonl")
    (root / "list.txt").write_text("sub\n")
    rc = main(["ingest", "--input", f"@{root / 'list.txt'}", "--output", str(tmp_path / "out"), "--scheduler", "synchronous",
               "tokenizer=whitespace", "source=web"])
    assert rc == 4 and "outside the input list's root" in caplog.text and "sneaky.jsonl" in caplog.text
    assert not (tmp_path / "out").exists()


# 7. output equal to or inside an input is refused before anything runs


@pytest.mark.parametrize("where", ["inside", "equal"])
def test_output_inside_or_equal_to_the_input_is_refused(tmp_path, caplog, where):
    raw = _corpus(tmp_path)
    out = raw / "run" if where == "inside" else raw
    before = _tree(raw)
    assert _cli_run(raw, out) == 5
    assert ("is inside the input" if where == "inside" else "is the input") in caplog.text
    assert _tree(raw) == before


# 8. one line and a distinct exit code per failure class, no .inprogress left


def test_unreachable_scheduler_is_one_line(tmp_path, caplog, monkeypatch):
    import socket

    import pipelines.cluster

    monkeypatch.setattr(pipelines.cluster, "CONNECT_TIMEOUT_S", 2)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    raw = _corpus(tmp_path)
    rc = main(["run", str(default_recipe_path()), "--input", str(raw), "--output", str(tmp_path / "run"),
               "--scheduler", f"tcp://127.0.0.1:{port}", *FOUNDATION])
    assert rc == 9 and "no Dask scheduler answered" in caplog.text
    rc = main(["run", str(default_recipe_path()), "--input", str(raw), "--output", str(tmp_path / "run"), "--scheduler", "bogus", *FOUNDATION])
    assert rc == 2 and "--scheduler bogus: not a Dask scheduler address" in caplog.text  # a typo, not an outage
    rc = main(["run", str(default_recipe_path()), "--input", str(raw), "--output", str(tmp_path / "run"), "--profile", "bogus"])
    assert rc == 2 and "choose one of auto, cpu, gpu" in caplog.text


def _mount_tmpfs(path: Path, options: str) -> None:
    path.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    res = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)], capture_output=True)
    if res.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {res.stderr.decode().strip()}")


@pytest.mark.parametrize(("options", "code", "message"), [("size=24k", 8, "disk full"), ("ro,size=1m", 7, "cannot write")])
def test_full_or_read_only_disk_is_one_line_and_leaves_no_inprogress(tmp_path, caplog, options, code, message):
    raw = _corpus(tmp_path, n=2000)
    mnt = tmp_path / "mnt"
    _mount_tmpfs(mnt, options)
    try:
        assert _cli_run(raw, mnt / "run") == code
        assert message in caplog.text and "Traceback" not in caplog.text
        assert not list(mnt.rglob("*.inprogress"))
    finally:
        import gc

        gc.collect()  # a writer that hit ENOSPC may hold its file until collected
        if subprocess.run(["umount", str(mnt)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(mnt)], check=False)


@pytest.mark.slow
def test_ctrl_c_is_one_line_exit_130_and_leaves_no_inprogress(tmp_path):
    raw = _corpus(tmp_path)
    out = tmp_path / "run"
    # a terminal's Ctrl-C: Python's handler even when the tests run as a background job, whose
    # processes inherit SIGINT ignored (and a run started that way rightly ignores Ctrl-C)
    preamble = "import signal; signal.signal(signal.SIGINT, signal.default_int_handler)\n"
    proc = slow_exact_dedup_run(str(default_recipe_path()), raw, out, FOUNDATION, preamble)
    deadline = time.time() + 120
    while not (out / ".10_exact_dedup.inprogress").exists() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.2)
    assert (out / ".10_exact_dedup.inprogress").exists(), "the run never reached exact_dedup"
    time.sleep(1)
    os.killpg(proc.pid, 2)  # Ctrl-C goes to the whole foreground process group
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert "interrupted" in err and not (out / ".10_exact_dedup.inprogress").exists()
    assert (out / "00_ingest" / "_SUCCESS").exists()


def test_report_escapes_document_text_and_ids(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    hostile = "<img src=x onerror=alert(1)>"
    rows = [{"id": f"{hostile}{i}", "text": "<script>alert('x')</script> same", "source": "web"} for i in range(3)]
    (raw / "a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert _cli_run(raw, tmp_path / "run") == 0
    assert main(["report", str(tmp_path / "run"), "--output", str(tmp_path / "r.html")]) == 0
    page = (tmp_path / "r.html").read_text()
    assert "<script" not in page and "<img src=x" not in page
    assert "&lt;script&gt;" in page and "&lt;img src=x onerror=alert(1)&gt;" in page


@pytest.mark.parametrize("where", ["file", "file/run"])
def test_an_output_where_a_file_stands_is_a_clear_error(tmp_path, caplog, where):
    raw = _corpus(tmp_path)
    (tmp_path / "file").write_text("not a folder")
    rc = main(["run", str(default_recipe_path()), "--input", str(raw), "--output", str(tmp_path / where), "--quiet"])
    assert rc == 5 and f"{tmp_path / 'file'} is a file, not a folder" in caplog.text
    assert (tmp_path / "file").read_text() == "not a folder" and "Traceback" not in caplog.text


def test_a_plus_override_may_carry_new_true_as_a_recipe_file_does(tmp_path):
    from pipelines.recipe import load_recipe

    phase = "{new: true, stage: midtrain, builder: documents, tokens: 1000, seq_length: 8192, packing: best_fit, mix: {math_science: 1.0}}"
    with_flag = load_recipe(None, [f"+mixture.phases.annealing_8k={phase}"])
    without = load_recipe(None, [f"+mixture.phases.annealing_8k={phase.replace('new: true, ', '')}"])
    assert with_flag["stages"]["mixture"]["phases"]["annealing_8k"] == without["stages"]["mixture"]["phases"]["annealing_8k"]
    assert "new" not in with_flag["stages"]["mixture"]["phases"]["annealing_8k"]


@pytest.mark.parametrize(("command", "expected"), [
    ("minhash_dedup", "unknown command 'minhash_dedup'; did you mean 'minhash-dedup'? (stages are commands with dashes); see: curate minhash-dedup --help"),
    ("exprt", "unknown command 'exprt'; did you mean 'export'?; see: curate export --help"),
])
def test_a_misspelt_command_names_the_nearest(command, expected, capsys):
    """argparse listed every choice and suggested none; the recipe spells stages with underscores."""
    with pytest.raises(SystemExit) as err:
        main([command, "--input", "x", "--output", "y"])
    assert err.value.code == 2 and expected in capsys.readouterr().err


def test_a_profile_given_as_the_recipe_says_how_profiles_are_applied(tmp_path, caplog):
    profile = Path(default_recipe_path()).parent / "profiles" / "cpu.yaml"
    assert main(["run", str(profile), "--input", str(_corpus(tmp_path)), "--output", str(tmp_path / "run"), "--dry-run"]) == 2
    assert "a dotted key is a setting (key=value on the command line), not a recipe key: apply a profile with --profile cpu|gpu" in caplog.text


def test_a_stage_section_at_the_top_of_a_recipe_file_says_to_put_it_under_stages(tmp_path, caplog):
    """The stage pages speak of the "recipe section code_quality"; written at the top of a file it said
    "unknown top-level key 'code_quality'; did you mean 'code_quality'?"."""
    recipe = tmp_path / "mine.yaml"
    recipe.write_text("code_quality:\n  tier_high: 85\n")
    assert main(["run", str(recipe), "--input", str(_corpus(tmp_path)), "--output", str(tmp_path / "run"), "--dry-run"]) == 2
    assert "code_quality is a stage: put its section under stages:" in caplog.text and "did you mean" not in caplog.text
