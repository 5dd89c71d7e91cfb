"""The ε sweep in ``stats.json`` says what setting an ε removes: ``eps_sweep`` counts the pages whose
language follows ``eps``, ``eps_sweep_by_language`` those of each language with its own ε."""

from tests.helpers import assert_conservation, docs_frame, make_stage_dir, run_one
from tests.pipelines.test_semdedup_stage import CPU, ZH_REVIEWS, _bilingual_rows

SWEEP = (0.05, 0.12, 0.2, 0.3)


def test_each_sweep_count_is_what_setting_that_eps_removes_under_the_cpu_profile(tmp_path):
    rows = _bilingual_rows("zhr", ZH_REVIEWS)
    inp = make_stage_dir(tmp_path / "in", docs_frame(rows), nparts=2)
    mine = ("semdedup.eps=", "semdedup.eps_by_language=")  # each run sets them (a key given twice is refused)
    base = [o for o in CPU if not o.startswith(mine)] + [f"semdedup.eps_sweep=[{', '.join(map(str, SWEEP))}]"]
    res = run_one(
        "semdedup", inp, tmp_path / "base", [*base, "semdedup.eps=0.05", "semdedup.eps_by_language={zh: 0.12}"]
    )
    extra = res.stats["extra"]
    english, chinese = extra["eps_sweep"]["web"], extra["eps_sweep_by_language"]["zh"]["web"]
    assert english["documents"] == 4 + 10 and chinese["documents"] == 4 + len(ZH_REVIEWS)
    assert extra["pruned"] == english["documents"] + chinese["documents"]
    for eps in SWEEP:
        out = tmp_path / f"eps-{eps}"
        run_one("semdedup", inp, out, [*base, f"semdedup.eps={eps}", "semdedup.eps_by_language={zh: 0.12}"])
        _, ledger = assert_conservation(inp, out)
        assert (~ledger["doc_id"].str.startswith("zh")).sum() == english["removed"][f"{eps:g}"], eps
        out = tmp_path / f"zh-{eps}"
        run_one("semdedup", inp, out, [*base, "semdedup.eps=0.05", f"semdedup.eps_by_language={{zh: {eps}}}"])
        _, ledger = assert_conservation(inp, out)
        assert ledger["doc_id"].str.startswith("zh").sum() == chinese["removed"][f"{eps:g}"], eps
    # the English pages follow eps: at 0.3 the English template pages are within reach, reviews of one topic are not
    assert english["removed"]["0.3"] >= 3 and chinese["removed"]["0.3"] == chinese["removed"]["0.12"] == 3
