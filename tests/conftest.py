import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture(autouse=True, scope="session")
def _tokenizer_cache_in_tmp(tmp_path_factory):
    """Converted tokenizers (curation.tokenizer_cache) go to the session's tmp folder, not the user's home;
    CLI runs started by tests inherit the variable."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CURATION_TOKENIZER_CACHE", str(tmp_path_factory.mktemp("tokenizer-cache")))
        yield
