"""Bug fixes and small features on the sample repositories, shared by the issue/PR/commit generator
and the agent trajectories so that both describe the same changes to the same files.

Each task edits real files from ``_gen_code.repo_files`` (``old`` must occur exactly once) and adds
a test; :func:`apply` returns the changed files and :func:`diff` their unified diffs.
"""

from __future__ import annotations

import difflib

TASKS = [
    dict(number=41, repo="acme-labs/pyinventory", title="chunked() error message does not say which size was passed",
         body="`chunked(items, 0)` raises `ValueError: size must be positive`. When this comes from a config value it is hard to see what was passed. Please include the value in the message.",
         edits=[("inventory/utils.py", '        raise ValueError("size must be positive")',
                 '        raise ValueError(f"size must be positive, got {size!r}")')],
         test=("tests/test_utils.py", '\n\ndef test_chunked_rejects_zero_size_with_value():\n    with pytest.raises(ValueError, match="got 0"):\n        list(chunked([1, 2], 0))\n'),
         symbol="chunked", failing="test_chunked_rejects_zero_size_with_value",
         error="AssertionError: Regex pattern did not match.\n Regex: 'got 0'\n Input: 'size must be positive'"),
    dict(number=44, repo="acme-labs/pyinventory", title="list-products prints at most 100 rows with no way to change it",
         body="We have ~2,500 products and `inventory list-products` silently stops at 100. Could we get a `--limit` option?",
         edits=[("inventory/cli.py", '    sub.add_parser("list-products", help="list products")',
                 '    listing = sub.add_parser("list-products", help="list products")\n    listing.add_argument("--limit", type=int, default=100, help="maximum number of rows to print")'),
                ("inventory/cli.py", "        for p in list_products(store):", "        for p in list_products(store, limit=args.limit):")],
         test=("tests/test_utils.py", '\n\ndef test_cli_accepts_limit():\n    from inventory.cli import build_parser\n\n    args = build_parser().parse_args(["list-products", "--limit", "5"])\n    assert args.limit == 5\n'),
         symbol="list_products", failing="test_cli_accepts_limit",
         error="SystemExit: 2\nusage: inventory [-h] [--db DB] {add-product,list-products} ...\ninventory: error: unrecognized arguments: --limit 5"),
    dict(number=17, repo="acme-labs/mlkit", title="KNeighborsClassifier fails with labels -1/+1",
         body="Fitting on labels `[-1, 1]` and calling `predict` raises `ValueError: 'list' argument must have no negative elements` from `np.bincount`. Labels should not have to be 0..k-1.",
         edits=[("mlkit/models/knn.py", "        votes = self.y_[nearest]\n        return np.array([np.bincount(row).argmax() for row in votes])",
                 "        classes, codes = np.unique(self.y_, return_inverse=True)\n        votes = codes[nearest]\n"
                 "        return classes[[np.bincount(row, minlength=len(classes)).argmax() for row in votes]]")],
         test=("tests/test_knn.py", "\n\ndef test_knn_accepts_signed_labels():\n    x, y = _two_blobs()\n    model = KNeighborsClassifier(k=3).fit(x, 2 * y - 1)\n    assert set(model.predict(x).tolist()) == {-1, 1}\n"),
         symbol="bincount", failing="test_knn_accepts_signed_labels",
         error="ValueError: 'list' argument must have no negative elements"),
    dict(number=63, repo="northwind/webdash", title="formatNumber(999999) renders as 1000.0k",
         body="Values just below one million are shown as `1000.0k` in the Counter widget; they should read `1.0M`.",
         edits=[("src/utils/format.js", "  if (abs >= 1e6) return (value / 1e6).toFixed(digits) + 'M';",
                 "  // round first so that 999,999 becomes 1.0M rather than 1000.0k\n  if (abs >= 1e6 - 5 * 10 ** (2 - digits)) return (value / 1e6).toFixed(digits) + 'M';")],
         test=("test/format.test.js", "\ntest('rounds up to millions', () => {\n  expect(formatNumber(999999)).toBe('1.0M');\n});\n"),
         symbol="formatNumber", failing="rounds up to millions",
         error="Expected: \"1.0M\"\nReceived: \"1000.0k\""),
    dict(number=29, repo="gopher-co/gosvc", title="strutil.Truncate panics on negative length",
         body="`Truncate(\"abc\", -1)` panics with `slice bounds out of range [:-1]`. A computed width can go negative on narrow terminals.",
         edits=[("internal/strutil/strutil.go", "\tif n <= 1 {\n\t\treturn string(runes[:n])\n\t}",
                 "\tif n <= 0 {\n\t\treturn \"\"\n\t}\n\tif n == 1 {\n\t\treturn string(runes[:1])\n\t}")],
         test=("internal/strutil/strutil_test.go", '\nfunc TestTruncateNegative(t *testing.T) {\n\tif got := Truncate("abc", -1); got != "" {\n\t\tt.Fatalf("got %q", got)\n\t}\n}\n'),
         symbol="Truncate", failing="TestTruncateNegative",
         error="panic: runtime error: slice bounds out of range [:-1] [recovered]"),
    dict(number=12, repo="ferrous/rustkv", title="EXPIRE key 0 should delete the key immediately",
         body="Redis deletes a key when EXPIRE is called with a non-positive timeout. rustkv keeps it until the next access, so `KEYS` still lists it within the same millisecond.",
         edits=[("src/commands/expire.rs", "    match engine.entry_mut(&args[0]) {",
                 "    if secs == 0 {\n        return Ok(if engine.delete(&args[0]) { \"1\" } else { \"0\" }.into());\n    }\n    match engine.entry_mut(&args[0]) {")],
         test=("tests/integration.rs", '\n#[test]\nfn expire_zero_deletes() {\n    let mut e = Engine::new();\n    run(&mut e, "SET k v");\n    assert_eq!(run(&mut e, "EXPIRE k 0"), "1");\n    assert_eq!(run(&mut e, "KEYS"), "");\n}\n'),
         symbol="expires_at", failing="expire_zero_deletes",
         error="assertion `left == right` failed\n  left: \"k\"\n right: \"\""),
    dict(number=8, repo="pixelworks/cimg", title="cimg_clone(NULL) segfaults",
         body="`cimg_load_ppm` returns NULL for a missing file, and passing that straight to `cimg_clone` crashes. Other functions accept NULL.",
         edits=[("src/image.c", "cimg_image *cimg_clone(const cimg_image *img) {\n",
                 "cimg_image *cimg_clone(const cimg_image *img) {\n    if (img == NULL) {\n        return NULL;\n    }\n")],
         test=("tests/test_filters.c", "\n/* regression: cloning NULL must not crash */\nint test_clone_null(void) {\n    return cimg_clone(NULL) == NULL ? 0 : 1;\n}\n"),
         symbol="cimg_clone", failing="test_clone_null", error="Segmentation fault (core dumped)"),
    dict(number=5, repo="pixelworks/geom", title="Add division by a scalar to Vec2",
         body="We keep writing `v * (1.0 / s)`; an `operator/` would read better and is what users expect.",
         edits=[("include/geom/vec2.hpp", "    constexpr Vec2 operator*(double s) const { return {x * s, y * s}; }",
                 "    constexpr Vec2 operator*(double s) const { return {x * s, y * s}; }\n    constexpr Vec2 operator/(double s) const { return {x / s, y / s}; }")],
         test=("tests/test_vec2.cpp", "\n// operator/ (added with issue #NUM)\nstatic_assert((geom::Vec2{4, 2} / 2.0) == geom::Vec2{2, 1});\n"),
         symbol="operator*", failing="test_vec2", error="error: no match for 'operator/' (operand types are 'geom::Vec2' and 'double')"),
    dict(number=33, repo="acme-labs/ledger", title="Money.toString() drops the sign for amounts between -1 and 0",
         body="`Money.of(-50, \"EUR\").toString()` prints `EUR 0.50`. Anything from -99 to -1 cents loses its sign because `cents / 100` is 0.",
         edits=[("src/main/java/com/acme/ledger/Money.java", '        return String.format("%s %d.%02d", currency, cents / 100, Math.abs(cents % 100));',
                 '        String sign = cents < 0 ? "-" : "";\n        return String.format("%s %s%d.%02d", currency, sign, Math.abs(cents / 100), Math.abs(cents % 100));')],
         test=("src/test/java/com/acme/ledger/MoneyTest.java", None),
         symbol="toString", failing="formatsSmallNegative", error="expected: <EUR -0.50> but was: <EUR 0.50>"),
    dict(number=19, repo="acme-labs/shtools", title="backup.sh deletes the wrong files when the destination contains spaces",
         body="With `-d \"/mnt/My Backups\"` the pruning step splits the path on spaces and tries to remove `/mnt/My`. It should handle any file name.",
         edits=[("bin/backup.sh", 'ls -1t "$dest"/*.tar.gz | tail -n +"$(( ${keep:-7} + 1 ))" | xargs -r rm --',
                 "find \"$dest\" -maxdepth 1 -name '*.tar.gz' -printf '%T@ %p\\0' | sort -zrn | tail -zn +\"$(( ${keep:-7} + 1 ))\" | cut -zd' ' -f2- | xargs -0r rm --")],
         test=("test/backup.bats", '\n@test "backup keeps files in a path with spaces" {\n  dest="$BATS_TEST_TMPDIR/my backups"\n  mkdir -p "$dest"\n  run "$SCRIPT" -d "$dest" -k 1 "$BATS_TEST_DIRNAME"\n  [ "$status" -eq 0 ]\n}\n'),
         symbol="xargs", failing="backup keeps files in a path with spaces", error="rm: cannot remove '/tmp/bats/my': No such file or directory"),
]

MONEY_TEST = ('    @Test\n    void formatsSmallNegative() {\n        assertEquals("EUR -0.50", Money.of(-50, "EUR").toString());\n    }\n\n'
              '    @Test\n    void formats() {')


def apply(task: dict, files: dict[str, str]) -> dict[str, tuple[str, str]]:
    """``{path: (before, after)}`` for every file the task changes (fix and test)."""
    changed: dict[str, tuple[str, str]] = {}
    for path, old, new in task["edits"]:
        before = changed.get(path, (files[path], files[path]))[1]
        if before.count(old) != 1:
            raise ValueError(f"{task['repo']}:{path}: edit anchor found {before.count(old)} times")
        changed[path] = (changed.get(path, (files[path],))[0], before.replace(old, new))
    test_path, addition = task["test"]
    before = files[test_path]
    if addition is None:  # insert a JUnit method before an existing one
        after = before.replace("    @Test\n    void formats() {", MONEY_TEST)
    else:
        after = before + addition.replace("NUM", str(task["number"]))
    changed[test_path] = (before, after)
    return changed


def diff(path: str, before: str, after: str) -> str:
    return "".join(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                        fromfile=f"a/{path}", tofile=f"b/{path}"))
