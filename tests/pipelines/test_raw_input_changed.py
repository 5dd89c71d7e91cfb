"""A raw input file that changes while ingest reads it: truncated, ingest read fewer records than it
planned and the run ended 0 with output that looked complete (no ledger row for the lost records);
grown, the appended records were lost the same way. The runner checks every raw file again once
ingest has read them, before the stage is marked done: exit 4, one line, no ``_SUCCESS``, and no
cached sub-step that a re-run on the completed file would reuse."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from curation.ingest.inputs import InputError
from pipelines.raw_inputs import check_raw_unchanged, raw_stamps

REPO = Path(__file__).resolve().parents[2]
#: Records of the end-to-end file: ~12 MB, a few seconds of parsing in one process, so the file
#: is changed while ingest is under way (its "computing parsed" line is waited for).
RECORDS = 5000


def _write(path: Path, n: int, first: int = 0) -> None:
    with path.open("a") as f:
        for i in range(first, first + n):
            words = " ".join(f"w{(i * 7919 + j) % 100003}" for j in range(400))
            f.write(json.dumps({"id": f"doc-{i}", "text": f"Record {i}. {words}"}) + "\n")


def test_a_file_cut_grown_or_removed_after_its_stamp_is_refused_and_its_steps_removed(tmp_path):
    for how in ("cut", "grown", "removed", "rewritten"):
        f = tmp_path / f"{how}.jsonl"
        f.write_bytes(b"x" * 100)
        stamps = raw_stamps([f])
        check_raw_unchanged("ingest", stamps, [])  # unchanged: nothing to say
        step = tmp_path / f"parsed-{how}"
        (step / "part").mkdir(parents=True)
        if how == "cut":
            os.truncate(f, 40)
        elif how == "grown":
            with f.open("ab") as out:
                out.write(b"y" * 20)
        elif how == "removed":
            f.unlink()
        else:  # the same size, other bytes, written later
            time.sleep(0.01)
            f.write_bytes(b"z" * 100)
        expected = {
            "cut": "size 100 → 40",
            "grown": "size 100 → 120",
            "removed": "size 100 → removed",
            "rewritten": "size 100 → 100, rewritten",
        }[how]
        with pytest.raises(InputError) as err:
            check_raw_unchanged("ingest", stamps, [step])
        assert str(err.value) == f"{f} changed while ingest read it ({expected}); re-run when it is complete"
        assert not step.exists()


def test_a_change_of_metadata_alone_is_no_change(tmp_path):
    """chmod, a hard link (``cp -al`` snapshots) or xattrs move the change time, not the bytes."""
    f = tmp_path / "in.jsonl"
    f.write_bytes(b"x" * 100)
    stamps = raw_stamps([f])
    time.sleep(0.01)
    os.chmod(f, 0o600)
    os.link(f, tmp_path / "snapshot.jsonl")
    assert os.stat(f).st_ctime_ns != stamps[f][2]
    check_raw_unchanged("ingest", stamps, [])


def test_a_folder_input_is_stamped_file_by_file(tmp_path):
    (tmp_path / "in" / "sub").mkdir(parents=True)
    (tmp_path / "in" / "a.jsonl").write_text("{}\n")
    (tmp_path / "in" / "sub" / "b.jsonl").write_text("{}\n")
    stamps = raw_stamps([tmp_path / "in"])
    assert sorted(stamps) == [tmp_path / "in" / "a.jsonl", tmp_path / "in" / "sub" / "b.jsonl"]
    (tmp_path / "in" / "sub" / "b.jsonl").write_text("{}\n{}\n")
    with pytest.raises(InputError, match=r"b\.jsonl changed while ingest read it \(size 3 → 6\)"):
        check_raw_unchanged("ingest", stamps, [])


def _ingest(inp: Path, out: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pipelines.cli",
            "ingest",
            "--input",
            str(inp),
            "--output",
            str(out),
            "--source",
            "web",
            "--scheduler",
            "synchronous",
            "--profile",
            "cpu",
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize("change", ["truncated", "appended"])
def test_an_input_changed_while_ingest_reads_it_ends_in_exit_4_and_leaves_nothing_complete(tmp_path, change):
    inp, out = tmp_path / "big.jsonl", tmp_path / "out"
    _write(inp, RECORDS)
    original = inp.read_bytes()
    run = _ingest(inp, out)
    seen: list[str] = []
    assert run.stderr is not None
    for line in run.stderr:  # planned, fingerprinted and now reading the file
        seen.append(line)
        if "ingest: computing parsed" in line:
            break
    else:
        pytest.fail("ingest never started its parsed step:\n" + "".join(seen))
    if change == "truncated":
        os.truncate(inp, len(original) // 2)
    else:
        _write(inp, 500, first=RECORDS)
    rest = run.communicate()[1]
    err = "".join(seen) + rest
    assert run.returncode == 4, err[-3000:]
    size = len(original) // 2 if change == "truncated" else inp.stat().st_size
    assert f"{inp} changed while ingest read it (size {len(original)} → {size}); re-run when it is complete" in err
    assert not (out / "_SUCCESS").exists() and not (out / "docs").exists()
    assert not list(tmp_path.rglob("_DONE")), "a sub-step of what was read is left for a re-run to reuse"

    # the file complete again, the very bytes that were planned: a re-run reads all of them
    inp.write_bytes(original)
    again = _ingest(inp, out)
    _, err = again.communicate()
    assert again.returncode == 0, err[-3000:]
    stats = json.loads((out / "stats.json").read_text())
    assert stats["in"]["documents"] == RECORDS
