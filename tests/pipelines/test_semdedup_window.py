"""SemDeDup's window check: unrelated pages that open with one long banner are kept, real copies longer
than the window are still removed, and ``window_check: false`` is the pass without it."""

import json
import random
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from curation.config import ConfigError
from curation.dedup.semantic import similarity_pass
from curation.dedup.vectors import word_sketches
from pipelines.stages.semdedup import SemDedupConfig
from tests.helpers import assert_conservation, docs_frame, make_stage_dir, run_one

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data" / "web" / "web.jsonl.gz"
#: A cookie banner and a menu as raw crawl text (WET) keeps them: ~250 WordPiece tokens, the whole window.
BANNER = (
    "Skip to main content. Menu: Home, News, Sport, Business, Culture, Travel, Food, Opinion, Events, Contact us, "
    "Subscribe, Sign in, Search. We value your privacy. This website uses cookies and similar technologies to store "
    "and access information on your device. Strictly necessary cookies make the site work: they remember your session, "
    "your language and the items in your basket. Analytics cookies help us understand how visitors use the pages so we "
    "can measure and improve their performance. Advertising cookies are set by our partners to build a profile of your "
    "interests and show you relevant adverts on other websites. Social media cookies let you share our content with "
    "your friends and networks. You can accept all cookies, reject the optional ones or choose which categories to allow "
    "in the settings, and you can change your mind at any time from the link at the bottom of every page. Your choice "
    "is stored for twelve months. For more information about the cookies we use, the partners we work with and your "
    "rights under the data protection law, read our cookie policy and our privacy notice. Accept all. Reject optional. "
    "Manage preferences. Continue without accepting.\n\n"
)


#: Topics whose generated articles share half their words with another topic's (the generator's common
#: sentence banks; word Jaccard 0.54 with the banner): a real overlap of text that the check accepts.
SHARED_BANK_TOPICS = {"running_club", "election_turnout"}


def articles(n: int) -> list[str]:
    """One generated article (~800 words) of each of ``n`` topics of the project's sample data."""
    df = pd.read_json(SAMPLE, lines=True)
    meta = df["meta"].map(lambda m: m if isinstance(m, dict) else json.loads(m) if isinstance(m, str) else {})
    art = df[meta.map(lambda m: m.get("kind")) == "article"].assign(topic=meta.map(lambda m: m.get("topic")))
    art = art[~art["topic"].isin(SHARED_BANK_TOPICS)]
    return art.drop_duplicates("topic")["text"].head(n).tolist()


def twin(text: str, seed: int) -> str:
    """A real copy of a page as a template makes it: every number changed."""
    rng = random.Random(seed)
    return "".join(rng.choice("123456789") if c.isdigit() else c for c in text)


def banner_corpus() -> pd.DataFrame:
    pages = articles(12)
    rows = [{"doc_id": f"page-{i}", "text": BANNER + t, "source": "web", "lang": "en"} for i, t in enumerate(pages)]
    rows += [{"doc_id": f"page-{i}-copy", "text": BANNER + twin(pages[i], i), "source": "web", "lang": "en"} for i in (0, 1)]
    return docs_frame(rows)


@pytest.fixture(scope="module")
def banner_runs(tmp_path_factory) -> dict[str, set[str]]:
    """Removed ids of the banner corpus with the window check on (the default) and off (one cache)."""
    if not SAMPLE.exists():
        pytest.skip(f"no sample data in {SAMPLE}")
    root = tmp_path_factory.mktemp("window")
    inp = make_stage_dir(root / "in", banner_corpus(), nparts=2)
    out = {}
    for name, overrides in (("on", []), ("off", ["semdedup.window_check=false"])):
        run_one("semdedup", inp, root / name, ["semdedup.static_weight=0.4", *overrides])  # the recipe's defaults: MiniLM + static
        _, ledger = assert_conservation(inp, root / name)
        out[name] = set(ledger["doc_id"])
        out[name + "_columns"] = set(pd.read_parquet(next((root / name / "artifacts" / "clusters").glob("*.parquet"))).columns)
    return out


def test_unrelated_pages_that_open_with_one_banner_are_kept(banner_runs):
    assert not {d for d in banner_runs["on"] if not d.endswith("-copy")}, banner_runs["on"]


def test_copies_longer_than_the_window_are_still_removed(banner_runs):
    # one of each copy pair goes (either member: the keep rule decides which)
    for i in (0, 1):
        assert len({f"page-{i}", f"page-{i}-copy"} & banner_runs["on"]) == 1


def test_without_the_check_the_banner_makes_unrelated_pages_copies(banner_runs):
    unrelated = {d for d in banner_runs["off"] if not d.endswith("-copy") and d not in {"page-0", "page-1"}}
    assert len(unrelated) >= 3, banner_runs["off"]
    # the check off writes the clusters artifact without sketches, as the stage did without the check
    assert not {"sketch", "cut"} & banner_runs["off_columns"] and {"sketch", "cut"} <= banner_runs["on_columns"]


def test_the_check_is_per_pair_and_off_it_is_the_plain_pass():
    texts = ["alpha beta gamma delta " * 3, "epsilon zeta eta theta " * 3, "alpha beta gamma delta " * 3 + "iota"]
    vecs = np.array([[1.0, 0.0], [0.999, 0.0447], [0.998, 0.0632]], dtype=np.float32)
    members = pd.DataFrame({"doc_id": ["a", "b", "c"], "_part": 0, "source": "web", "cluster": 0, "keep_key": [0.0, 1.0, 2.0]})
    sk = word_sketches(texts)
    args = {"bars": np.full(3, 0.9), "sketches": sk, "min_jaccard": np.full(3, 0.3), "always": np.zeros(3, bool)}
    plain = similarity_pass(members, vecs)
    # no page cut: the cosine alone, exactly the plain pass
    none_cut = similarity_pass(members, vecs, cut=np.zeros(3, bool), **args)
    pd.testing.assert_frame_equal(none_cut, plain)
    # "a" cut: every pair with "a" is checked. "b" shares no word with it: no earlier copy is left;
    # "c" passes with "a", but its pair with "b" (neither cut) is taken on the cosine and is closer
    a_cut = similarity_pass(members, vecs, cut=np.array([True, False, False]), **args).set_index("doc_id")
    assert a_cut.loc["b", "nearest"] is None and a_cut.loc["c", "nearest"] == "b"
    # "b" cut: "b" against "a" and "c" against "b" fail; "c" against "a" (neither cut) stands on its cosine
    b_cut = similarity_pass(members, vecs, cut=np.array([False, True, False]), **args).set_index("doc_id")
    assert b_cut.loc["b", "nearest"] is None and b_cut.loc["c", "nearest"] == "a"
    assert b_cut.loc["c", "max_sim"] == pytest.approx(float(vecs[2] @ vecs[0]))


def test_window_config_is_validated_with_the_key_named():
    with pytest.raises(ConfigError, match="window_check_jaccard"):
        SemDedupConfig.from_dict({"window_check_jaccard": 1.5})
    with pytest.raises(ConfigError, match="window_check"):
        SemDedupConfig.from_dict({"window_check": "sometimes"})
    cfg = SemDedupConfig.from_dict({"window_check": "false"})
    assert cfg.window_check is False and not cfg.text_check().window
    assert SemDedupConfig().sketches().key()["window"] == {"sources": ["social", "web"], "languages": [], "max_seq_length": 256}
