"""The mixture: policy, plan, groups, shards, packing, FIM, repository documents, manifests."""
