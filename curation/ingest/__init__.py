"""Raw input to schema rows: JSONL/Parquet records, WARC/WET records, HTML extraction, URLs."""
