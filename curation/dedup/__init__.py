"""Pure dedup logic: exact keys, MinHash signatures and LSH, connected components, SemDeDup."""
