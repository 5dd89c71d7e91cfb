"""A row stage that rewrites ``text`` (and ``n_tokens``) of its sources: the other sources keep
theirs, and a recipe that would let code_web rebuild the rewritten pages from HTML is refused."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from curation.config import ConfigError
from pipelines.recipe import check_configs, load_recipe
from tests.helpers import assert_conservation, docs_frame, make_stage_dir, run_one

REDACT = '''
import dataclasses
import re
import pandas as pd
from curation.config import StageConfig
from pipelines.kit.shapes import RowStage


@dataclasses.dataclass(frozen=True)
class RedactConfig(StageConfig):
    enabled: bool = False
    sources: tuple = ("web",)


class RedactStage(RowStage):
    name = "redact"
    config_cls = RedactConfig
    requires = ("doc_id", "text", "source", "n_tokens")
    produces = {"text": object, "n_tokens": "Int64"}

    def score(self, rows, cfg):
        text = [re.sub(r"\\S+@\\S+", "<EMAIL>", t) for t in rows["text"]]
        return pd.DataFrame({"text": text, "n_tokens": [len(t.split()) for t in text]}, index=rows.index)


STAGE = RedactStage()
'''


@pytest.fixture
def redact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    from pipelines import stages

    (tmp_path / "redact_stage_mod.py").write_text(textwrap.dedent(REDACT))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(stages.STAGES, "redact", ("22", "redact_stage_mod"))
    yield "redact"
    sys.modules.pop("redact_stage_mod", None)


def test_the_rows_outside_the_sources_keep_their_text(tmp_path: Path, redact: str) -> None:
    rows = [{"doc_id": f"w{i}", "text": f"write to jane{i}@example.com today", "source": "web"} for i in range(4)]
    rows += [{"doc_id": f"c{i}", "text": f"# mail: dev{i}@example.com\nx = {i}\n", "source": "code"} for i in range(4)]
    inp = make_stage_dir(tmp_path / "in", docs_frame(rows), nparts=2)
    run_one(redact, inp, tmp_path / "out")
    kept, ledger = assert_conservation(inp, tmp_path / "out")
    web, code = kept[kept["source"] == "web"], kept[kept["source"] == "code"]
    assert len(ledger) == 0 and web["text"].str.contains("<EMAIL>").all() and not web["text"].str.contains("@").any()
    before = docs_frame(rows).set_index("doc_id")
    assert code.set_index("doc_id")["text"].to_dict() == before.loc[code["doc_id"], "text"].to_dict()  # not emptied
    assert code.set_index("doc_id")["n_tokens"].to_dict() == before.loc[code["doc_id"], "n_tokens"].to_dict()
    assert (web["n_tokens"] == 4).all()


def test_a_text_rewrite_before_code_web_is_refused_unless_code_web_keeps_the_text(redact: str) -> None:
    names = ["ingest", "redact", "code_web"]
    with pytest.raises(ConfigError, match=r"redact rewrites text before code_web.*code_web.reparse=false"):
        check_configs(load_recipe(None, ["redact.enabled=true"]), names)
    check_configs(load_recipe(None, ["redact.enabled=true", "code_web.reparse=false"]), names)
    check_configs(load_recipe(None, ["redact.enabled=true"]), ["ingest", "code_web", "redact"])  # after it: fine
