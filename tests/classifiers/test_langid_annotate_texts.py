"""``annotate`` given the rows' texts as a list sets what it sets when it reads the column itself."""

from __future__ import annotations

import numpy as np
import pandas as pd

from classifiers.langid import annotate


def test_annotate_with_texts_matches_annotate_reading_the_column() -> None:
    texts = ["你好，世界，今天天气很好", "The index speeds up lookups.", None, "x = 1", "  ", "12345", "Bonjour tout le monde",
             "SocketChannel ch = ssc.accept(); // 服务器为每个新连接创建一个通道", "東京タワーに行きました", "", "¿Dónde está la biblioteca?"]
    sources = ["web", "web", "web", "code", "web", "math_science", "web", "code", "web", "web", "social"]
    df = pd.DataFrame({"text": pd.Series(texts, dtype="str"), "source": sources})
    rng = np.random.default_rng(0)
    for rows in [df["text"].notna().to_numpy(), *(df["text"].notna().to_numpy() & (rng.random(len(df)) < 0.6) for _ in range(5))]:
        want = annotate(df.copy(), rows)
        got = annotate(df.copy(), rows, df.loc[rows, "text"].tolist())
        pd.testing.assert_frame_equal(got, want)
