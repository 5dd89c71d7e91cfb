"""The exports a trainer starts from (``curate export megatron|datasets RUN --output DIR``)."""
