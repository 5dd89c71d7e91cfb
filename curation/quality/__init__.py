"""Quality decisions: token-weighted buckets, code languages, rules and tiers, code in HTML."""
