"""``web_quality.n_buckets`` changed without ``levels`` (which partition the old buckets) is refused with what to give
together with it, and the example the message gives is a valid partition."""

from __future__ import annotations

import re

import pytest

from curation.config import ConfigError
from pipelines.stages.web_quality import WebQualityConfig
from tests.pipelines.test_web_quality_stage import run


@pytest.mark.parametrize("n", [10, 30, 3])
def test_n_buckets_alone_says_to_give_levels_with_an_example(n):
    with pytest.raises(ConfigError, match=rf"n_buckets = {n} but web_quality.levels partitions 20 buckets") as err:
        WebQualityConfig.from_dict({"n_buckets": n})
    assert f"give levels together with n_buckets, a whole partition of 0 … {n - 1}" in str(err.value)
    example = re.search(r"levels='(\{.*\})'", str(err.value)).group(1)
    levels = {k: [int(a), int(b)] for k, a, b in re.findall(r"(\w+): \[(\d+), (\d+)\]", example)}
    assert WebQualityConfig.from_dict({"n_buckets": n, "levels": levels}).levels == levels


def test_the_recipe_keys_on_the_command_line(tmp_path):
    with pytest.raises(ConfigError, match="give levels together with n_buckets"):
        run(tmp_path, "alone", ["web_quality.n_buckets=10"])
