"""The shards step's shuffle plan: every shard key gets an output partition, in key order."""

import pandas as pd
import pytest

from pipelines.stages.mixture_write import shard_destinations, shard_key, with_destination


def test_each_shard_gets_a_partition_of_its_own_up_to_the_limit():
    n_shards = {("p", "web/high"): 3, ("p", "code/high"): 1}
    dest, nparts = shard_destinations(n_shards, max_partitions=10)
    assert nparts == 4 and sorted(dest.values()) == [0, 1, 2, 3]
    assert dest[shard_key("p", "code/high", 0)] == 0  # keys in sorted order
    dest, nparts = shard_destinations(n_shards, max_partitions=2)
    assert nparts == 2 and sorted(dest.values()) == [0, 0, 1, 1]


def test_rows_outside_the_plan_are_a_bug_not_a_silent_drop():
    dest, _ = shard_destinations({("p", "web/high"): 1}, 4)
    rows = pd.DataFrame({"_key": [shard_key("p", "web/high", 0)]})
    assert with_destination(rows, dest)["_dest"].tolist() == [0]
    with pytest.raises(RuntimeError, match="outside the plan"):
        with_destination(pd.DataFrame({"_key": ["p|web/low|00000"]}), dest)


def test_the_writer_costs_are_routed_characters_times_epochs_above_one_per_output_partition():
    """The shards of an output partition cost what they will hold: the characters routed to their
    keys, summed over the input partitions, times their group's epochs where a shard holds copies;
    below one epoch every routed document is still read and written (a sample is marked, not cut)."""
    from curation.mixture.replay import CopyPlan
    from pipelines.stages.mixture_write import destination_costs

    web, code = shard_key("p", "web/high", 0), shard_key("p", "code/high", 0)
    web1 = shard_key("p", "web/high", 1)
    dest, nparts = shard_destinations({("p", "web/high"): 2, ("p", "code/high"): 1}, max_partitions=2)
    assert nparts == 2 and dest == {code: 0, web: 0, web1: 1}
    chars = pd.concat([pd.Series({code: 100, web: 10}), pd.Series({web: 5, web1: 40})])  # two input partitions
    costs = destination_costs(chars, dest, nparts, {("p", "web/high"): CopyPlan((("p", 3.0),)), ("p", "code/high"): CopyPlan((("p", 0.5),))})
    assert costs == [100 * 1 + 15 * 3, 40 * 3]
    assert destination_costs(pd.Series(dtype="int64"), dest, nparts, {}) == [0, 0]
