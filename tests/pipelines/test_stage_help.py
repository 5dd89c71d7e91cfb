"""Every stage's --help was the same list of options: it now says what the stage does, what it
reads and the keys it takes, each with its default."""

from pathlib import Path

import pytest

from pipelines.cli import main
from pipelines.stages import STAGES


@pytest.mark.parametrize("name", sorted(STAGES))
def test_a_stage_help_says_what_it_does_and_its_keys(name, capsys):
    with pytest.raises(SystemExit) as done:
        main([name.replace("_", "-"), "--help"])
    assert done.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    assert f"`{name}`" in out and "``" not in out  # the module's first paragraph, reST literals as plain `x`
    assert ("--source" in out) == (name == "ingest")  # the other stages refuse it
    assert f"recipe's stages.{name} section" in out
    page = f"docs/{name}.md"
    assert (page if (Path(__file__).resolve().parents[2] / page).is_file() else "README.md, Stages") in out
    if name == "minhash_dedup":
        assert "threshold=0.8" in out and "num_perm=128" in out
