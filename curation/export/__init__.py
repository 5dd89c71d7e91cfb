"""What a trainer loads: Megatron indexed datasets, Hugging Face ``datasets`` folders, packed sequences.

Pure functions and writers over one shard at a time; ``pipelines.exports`` runs them on the cluster.
"""
