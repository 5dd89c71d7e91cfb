"""``curate report``: a self-contained HTML file whose tables equal the run's files, rendered in Chromium."""

from __future__ import annotations

import base64
import io
import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from curation.stats.report import SECTION_IDS
from pipelines.cli import main
from tests.curation.test_stats_fixture import shared_run
from tests.helpers import read_parts

pytestmark = pytest.mark.slow  # builds synthetic runs through the runner and renders in Chromium

CHROMIUM = next((p for p in (shutil.which("chromium"), "/usr/bin/chromium", shutil.which("chromium-browser")) if p and Path(p).exists()), None)
IMG = re.compile(r'<img alt="([^"]*)" src="data:image/png;base64,([A-Za-z0-9+/=]+)">')


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    run = shared_run(tmp_path_factory)
    out = tmp_path_factory.mktemp("report") / "report.html"
    assert main(["report", str(run), "--output", str(out)]) == 0
    return run, out


def _chromium(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess:
    if CHROMIUM is None:
        pytest.skip("Chromium is not installed (apt-get install chromium; .ci/run installs it)")
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run",
           f"--user-data-dir={tmp_path / 'chromium-profile'}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True)


def test_report_is_self_contained_with_every_section_and_image(report):
    _run, out = report
    page = out.read_text()
    for sid in SECTION_IDS:
        assert f'<section id="{sid}">' in page, sid
    images = IMG.findall(page)
    assert len(images) >= 12
    for _alt, data in images:
        assert base64.b64decode(data)[:8] == b"\x89PNG\r\n\x1a\n"
    assert not re.search(r'(src|href)="(https?:)?//', page), "the report must not load anything from outside"
    assert "<script" not in page.replace("&lt;script", "")  # previews are escaped, the page has no scripts
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page
    assert "<summary>web_quality config</summary>" in page and "&quot;low_max_bucket&quot;: 6" in page


def test_report_tables_equal_the_run_files(report):
    run, out = report
    tables = pd.read_html(io.StringIO(out.read_text()))
    funnel = next(t for t in tables if "docs_in" in t.columns and "seconds" in t.columns).set_index("stage")
    for folder in sorted(p for p in run.iterdir() if p.name[:2].isdigit()):
        stage = folder.name[3:]
        assert funnel.at[stage, "docs_kept"] == len(read_parts(folder / "docs"))
        assert funnel.at[stage, "docs_dropped"] == len(read_parts(folder / "ledger"))
    reasons = next(t for t in tables if list(t.columns) == ["stage", "reason", "documents", "tokens"])
    ledgers = pd.concat([read_parts(p / "ledger") for p in run.iterdir() if p.name[:2].isdigit()])
    expected = ledgers.groupby(["stage", "reason"])["n_tokens"].agg(["size", "sum"]).reset_index()
    assert sorted(map(tuple, reasons.values.tolist())) == sorted(map(tuple, expected.values.tolist()))
    phases = next(t for t in tables if "budget_tokens" in t.columns).set_index("phase")
    import json

    for p in (run / "80_mixture" / "manifests").glob("*.json"):
        m = json.loads(p.read_text())
        assert phases.at[m["phase"], "tokens"] == m["totals"]["tokens"]
        assert f"{m['phase']} {m['budget']['tokens']:,}" in out.read_text()  # the run's budgets, not the paper's ratio


def test_report_renders_in_headless_chromium(report, tmp_path):
    _run, out = report
    dom = _chromium(["--dump-dom", out.as_uri()], tmp_path).stdout
    for sid in SECTION_IDS:
        assert f'id="{sid}"' in dom, sid
    assert dom.count("<img") == len(IMG.findall(out.read_text()))
    assert "Funnel" in dom and "Mixture composition per phase" in dom
    shot = tmp_path / "shot.png"
    _chromium([f"--screenshot={shot}", "--window-size=1200,3000", out.as_uri()], tmp_path)
    from PIL import Image

    with Image.open(shot) as im:
        colours = im.convert("RGB").getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 50, "the rendered page is blank"


def test_report_of_a_run_without_later_stages_says_so(tmp_path_factory, tmp_path):
    run = shared_run(tmp_path_factory, "foundation", stages=())
    out = tmp_path / "r.html"
    assert main(["report", str(run), "--output", str(out), "--compare", str(shared_run(tmp_path_factory))]) == 0
    page = out.read_text()
    for sid in (*SECTION_IDS, "compare"):
        assert f'<section id="{sid}">' in page, sid
    assert "web_quality did not run in run" in page and "edu_score did not run" in page
    assert "mixture did not run in run" in page
    assert main(["report", str(tmp_path / "missing")]) == 4  # input missing
