"""``dependency_order`` pinned to the form it replaces (kept here as the reference) on generated repositories."""

from __future__ import annotations

import heapq
import random
from collections.abc import Sequence

from curation.mixture.repo_deps import dependency_order, file_deps, is_readme


def reference_dependency_order(paths: Sequence[str], texts: Sequence[str]) -> list[str]:
    deps = file_deps(paths, texts)
    readmes = sorted((p for p in paths if is_readme(p) and "/" not in p), key=lambda p: (len(p), p))
    readme = readmes[:1]
    rest = [p for p in paths if p not in readme]
    pending = {p: set(deps[p]) & set(rest) for p in rest}
    users: dict[str, list[str]] = {p: [] for p in rest}
    for p, ds in pending.items():
        for d in ds:
            users[d].append(p)
    ready = [p for p, ds in pending.items() if not ds]
    heapq.heapify(ready)
    remaining = sorted(rest)
    done: set[str] = set()
    order: list[str] = []
    while len(order) < len(rest):
        if not ready:
            while remaining[0] in done:
                remaining.pop(0)
            heapq.heappush(ready, remaining[0])
        p = heapq.heappop(ready)
        if p in done:
            continue
        done.add(p)
        order.append(p)
        for u in users[p]:
            if u in done:
                continue
            pending[u].discard(p)
            if not pending[u]:
                heapq.heappush(ready, u)
    return readme + order


def repository(n: int, seed: int) -> tuple[list[str], list[str]]:
    rng = random.Random(seed)
    dirs = ["", "src/", "src/pkg/", "lib/", "include/"]
    exts = [".py", ".js", ".ts", ".go", ".c", ".h", ".rs", ".md", ".txt"]
    paths = sorted({f"{rng.choice(dirs)}m{rng.randint(0, n)}{rng.choice(exts)}" for _ in range(n)} | {"README.md"})
    texts = []
    for _ in paths:
        others = [rng.choice(paths) for _ in range(rng.randint(0, 4))]
        stems = [o.rsplit(".", 1)[0] for o in others]
        lines = [f"import {s.replace('/', '.')}" for s in stems]
        lines += [f"from . import {s.rsplit('/', 1)[-1]}" for s in stems]
        lines += [f"import x from './{s.rsplit('/', 1)[-1]}'" for s in stems]
        lines += [f'#include "{o.rsplit("/", 1)[-1]}"' for o in others]
        lines += [f"mod {s.rsplit('/', 1)[-1]};" for s in stems]
        lines += [f'import "example.com/{o.rsplit("/", 1)[0] if "/" in o else ""}"' for o in others]
        rng.shuffle(lines)
        texts.append("\n".join(lines) + "\n")
    return paths, texts


def test_dependency_order_matches_the_reference() -> None:
    for seed in range(40):
        paths, texts = repository(random.Random(seed).choice([1, 3, 10, 40, 150]), seed)
        assert dependency_order(paths, texts) == reference_dependency_order(paths, texts)
        back = list(reversed(paths))
        assert dependency_order(back, texts[::-1]) == reference_dependency_order(back, texts[::-1])


def test_js_file_is_the_first_candidate_that_is_a_path() -> None:
    from curation.mixture.repo_deps import JS_EXTS, _js_file

    rng = random.Random(5)
    names = ["a", "a.js", "a.ts", "a.d.ts", "a/index.tsx", "a/index.js", "b/index.mts", "c.cjs", "src/a.jsx"]
    for _ in range(300):
        paths = set(rng.sample(names, rng.randint(0, len(names))))
        for stem in ("a", "b", "c", "src/a", "d"):
            cands = [stem, *(stem + e for e in JS_EXTS), *(f"{stem}/index{e}" for e in JS_EXTS)]
            assert _js_file(stem, paths) == next((c for c in cands if c in paths), None)
