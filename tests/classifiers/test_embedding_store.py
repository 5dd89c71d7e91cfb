import numpy as np
import pyarrow.parquet as pq
import pytest

from classifiers.embedding import (
    embedded_ids,
    embedder_name,
    embedding_card,
    load_embeddings,
    mask_digits,
    normalize_rows,
    prepare_texts,
    read_embedding_part,
    resolve_device,
    resolve_model_path,
    write_embedding_part,
)
from classifiers.embedding_store import write_card


def test_normalize_rows_gives_unit_float32_and_keeps_zero_rows():
    out = normalize_rows(np.array([[3.0, 4.0], [0.0, 0.0], [1e-3, 0.0]]))
    assert out.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), [1.0, 0.0, 1.0], atol=1e-6)


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_parts_roundtrip_keyed_by_doc_id_and_renormalised(tmp_path, dtype):
    rng = np.random.default_rng(0)
    vecs = normalize_rows(rng.standard_normal((5, 384)))
    write_embedding_part(tmp_path / "part-00001.parquet", [f"b{i}" for i in range(2)], vecs[:2], dtype)
    write_embedding_part(tmp_path / "part-00000.parquet", [f"a{i}" for i in range(3)], vecs[2:], dtype)
    write_embedding_part(tmp_path / "part-00002.parquet", [], np.zeros((0, 384), np.float32), dtype)
    write_card(tmp_path, {"dim": 384, "embedder": {"model": "x"}})
    ids, got = load_embeddings(tmp_path)
    assert ids.tolist() == ["a0", "a1", "a2", "b0", "b1"]  # part order, then row order
    assert got.dtype == np.float32 and got.shape == (5, 384)
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-6)
    np.testing.assert_allclose(got, np.concatenate([vecs[2:], vecs[:2]]), atol=2e-3 if dtype == "float16" else 1e-7)
    schema = pq.read_schema(tmp_path / "part-00000.parquet")
    assert str(schema.field("embedding").type.value_type) == ("halffloat" if dtype == "float16" else "float")
    assert embedded_ids(tmp_path).tolist() == ids.tolist()
    assert embedding_card(tmp_path)["embedder"] == {"model": "x"}
    empty_ids, empty = read_embedding_part(tmp_path / "part-00002.parquet")
    assert empty.shape == (0, 384) and len(empty_ids) == 0


def test_write_rejects_mismatched_rows(tmp_path):
    with pytest.raises(ValueError, match="expected"):
        write_embedding_part(tmp_path / "p.parquet", ["a"], np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match="store dtype"):
        write_embedding_part(tmp_path / "p.parquet", ["a"], np.zeros((1, 3), np.float32), "int8")
    with pytest.raises(FileNotFoundError):
        load_embeddings(tmp_path)


def test_text_preparation_masks_digits_and_cuts_to_the_window():
    assert mask_digits("Order 12345 costs $9.99 (2024)") == "Order 0 costs $0.0 (0)"
    long = "word " * 10_000
    cut = prepare_texts([long, None, "a1"], max_seq_length=10, digits_masked=True)
    assert len(cut[0]) == 10 * 12 and cut[1] == "" and cut[2] == "a0"
    assert embedder_name("m", 128, False) == "m@seq128"


def test_models_resolve_offline_and_unknown_names_fail():
    assert (resolve_model_path("all-MiniLM-L6-v2") / "config.json").exists()
    assert (resolve_model_path("minilm-static") / "static.json").exists()
    with pytest.raises(FileNotFoundError, match="offline"):
        resolve_model_path("no-such/model")
    assert resolve_device("cpu") == "cpu"
    assert resolve_device("auto") in ("cpu", "cuda")
