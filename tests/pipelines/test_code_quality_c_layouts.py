"""C implementation files against declaration-only headers: a C function whose body's brace sits on the next
line (K&R, Allman) or whose return type sits on the line above (GNU, BSD) is a function, with the comment above
its return type; a file without functions gets the neutral share of documented functions, so a header of
comments and declarations does not outscore the implementation files it declares."""

from classifiers.code_quality import NEUTRAL, StructuralScorer, components
from classifiers.code_quality_features import structural_features
from classifiers.scorer import Batch
from tests.helpers import assert_conservation, docs_frame, make_stage_dir, run_one

#: Linux/K&R layout: the function's brace on a line of its own
KR = """/*
 * ring.c - a fixed-size ring buffer of bytes.
 */
#include <stddef.h>
#include "ring.h"

/* Reset the buffer to empty. */
void ring_clear(struct ring *r)
{
\tr->head = 0;
\tr->tail = 0;
}

/* Number of bytes waiting to be read. */
size_t ring_used(const struct ring *r)
{
\treturn (r->head - r->tail) & (RING_SIZE - 1);
}

/* Append one byte; returns 0, or -1 when the buffer is full. */
int ring_put(struct ring *r, unsigned char byte)
{
\tif (ring_used(r) == RING_SIZE - 1)
\t\treturn -1;
\tr->data[r->head] = byte;
\tr->head = (r->head + 1) & (RING_SIZE - 1);
\treturn 0;
}

/* Take the oldest byte into *out; returns 0, or -1 when the buffer is empty. */
int ring_get(struct ring *r, unsigned char *out)
{
\tif (r->head == r->tail)
\t\treturn -1;
\t*out = r->data[r->tail];
\tr->tail = (r->tail + 1) & (RING_SIZE - 1);
\treturn 0;
}
"""

#: GNU layout: the return type on a line of its own, the brace indented on the next line
GNU = """/* strbuf.c -- growable strings.  */

#include <stdlib.h>
#include <string.h>
#include "strbuf.h"

/* Make sure SB can hold EXTRA more bytes; return false when memory runs out.  */
static bool
strbuf_reserve (struct strbuf *sb, size_t extra)
{
  if (sb->len + extra < sb->cap)
    return true;
  size_t cap = sb->cap ? sb->cap * 2 : 16;
  while (cap < sb->len + extra + 1)
    cap *= 2;
  char *grown = realloc (sb->buf, cap);
  if (grown == NULL)
    return false;
  sb->buf = grown;
  sb->cap = cap;
  return true;
}

/* Append the N bytes at S to SB.  */
bool
strbuf_append (struct strbuf *sb, const char *s, size_t n)
{
  if (!strbuf_reserve (sb, n))
    return false;
  memcpy (sb->buf + sb->len, s, n);
  sb->len += n;
  sb->buf[sb->len] = '\\0';
  return true;
}

/* Release the memory of SB and leave it empty.  */
void
strbuf_release (struct strbuf *sb)
{
  free (sb->buf);
  sb->buf = NULL;
  sb->len = sb->cap = 0;
}
"""


def header(name: str) -> str:
    """A declaration-only header: a guard, macros, a struct and prototypes, each commented."""
    up = name.upper()
    return f"""/*
 * {name}.h - public interface of the {name} module.
 */
#ifndef {up}_H
#define {up}_H

#include <stddef.h>

/* Largest number of entries one {name} table holds. */
#define {up}_MAX_ENTRIES 4096
/* Flags of an entry. */
#define {up}_FLAG_USED 0x1
#define {up}_FLAG_DIRTY 0x2

/* One entry of a {name} table. */
struct {name}_entry {{
\tunsigned long key;   /* lookup key */
\tunsigned int flags;  /* {up}_FLAG_* */
\tvoid *value;         /* caller's data */
}};

/* A table of entries, kept sorted by key. */
struct {name}_table {{
\tstruct {name}_entry *entries;
\tsize_t count;
\tsize_t capacity;
}};

/* Create an empty table; NULL when memory runs out. */
struct {name}_table *{name}_create(size_t capacity);
/* Free a table and its entries. */
void {name}_destroy(struct {name}_table *t);
/* Find the entry of a key; NULL when absent. */
struct {name}_entry *{name}_find(struct {name}_table *t, unsigned long key);

#endif /* {up}_H */
"""


def test_c_functions_are_found_in_k_and_r_and_gnu_layouts_with_the_comment_above_the_return_type():
    kr, gnu = structural_features(KR, "C", "src/ring.c"), structural_features(GNU, "C", "lib/strbuf.c")
    assert kr["n_functions"] == 4 and kr["documented_fraction"] == 1.0
    assert gnu["n_functions"] == 3 and gnu["documented_fraction"] == 1.0
    assert gnu["max_function_lines"] == 14  # strbuf_reserve: from its name to its closing brace
    # C++ in Allman layout, a method defined out of its class, a const qualifier before the brace
    cpp = "// Area of the shape.\ndouble\nCircle::area() const\n{\n    return 3.14159 * r * r;\n}\n"
    f = structural_features(cpp, "C++", "src/circle.cpp")
    assert f["n_functions"] == 1 and f["documented_fraction"] == 1.0
    # calls and control statements are no definitions
    body = "int main(void)\n{\n    if (ready())\n    {\n        run(1);\n    }\n    while (more())\n    {\n        step();\n    }\n}\n"
    assert structural_features(body, "C", "main.c")["n_functions"] == 1



def test_old_style_template_operator_and_constructor_definitions_are_found_with_their_comments():
    # K&R old-style parameters: names in the list, their types declared before the brace
    kr = ("/* Add two numbers. */\nint\nadd(a, b)\nint a; int b;\n{\n    return a + b;\n}\n\n"
          "/* Multiply. */\nstatic long\nmul(x, y)\n    long x, y;\n    char **argv;\n{\n    return x * y;\n}\n")
    f = structural_features(kr, "C", "src/arith.c")
    assert f["n_functions"] == 2 and f["documented_fraction"] == 1.0 and f["max_function_lines"] == 6
    # an out-of-class template member, a one-line operator, a constructor with an initializer list
    cpp = ("/// First element.\ntemplate <typename T>\nT Foo<std::vector<T>>::bar(const std::vector<T>& v) const\n{\n"
           "    return v[0];\n}\n/// Equal when x is.\nbool operator==(const A& a, const A& b) { return a.x == b.x; }\n"
           "/// C\nA::A(int x)\n    : x_(x),\n      y_(0)\n{\n}\n")
    f = structural_features(cpp, "C++", "src/foo.cpp")
    assert f["n_functions"] == 3 and f["documented_fraction"] == 1.0
    # a constructor in its class's body (indented, no return type) is found, not its first initializer
    cls = ("class A {\n public:\n  /// Copy.\n  A(const A& rhs)\n    : b_(rhs.b_),\n      c_(rhs.c_)\n  {\n  }\n"
           "  int f(int x) const\n  {\n    list_for_each(x, y) {\n    }\n    return x;\n  }\n};\n")
    f = structural_features(cls, "C++", "include/a.h")
    assert f["n_functions"] == 2 and f["documented_fraction"] == 0.5  # A documented, f not; the macro loop no function
    # a macro call over statements and a block is no old-style definition (a statement ends the list's line)
    body = "int main(void)\n{\n    FOR_EACH(x)\n    x = 1;\n    {\n        run(x);\n    }\n}\n"
    assert structural_features(body, "C", "main.c")["n_functions"] == 1

def test_a_header_without_functions_gets_the_neutral_share_of_documented_functions():
    h = structural_features(header("cache"), "C", "include/cache.h")
    assert h["n_functions"] == 0 and h["documented_fraction"] == -1.0
    comp = components(h)
    # well commented (comment part 1.0), functions neither documented nor undocumented: half of each
    assert comp["documentation"] == 0.5 * 1.0 + 0.5 * NEUTRAL
    s_header, s_kr, s_gnu = StructuralScorer().score(Batch([header("cache"), KR, GNU], ["C"] * 3,
                                                            ["include/cache.h", "src/ring.c", "lib/strbuf.c"]))
    assert s_kr > s_header and s_gnu > s_header


def test_stage_puts_c_implementation_files_high_and_declaration_headers_below_them(tmp_path):
    from distributed import Client, LocalCluster

    names = ["cache", "queue", "token", "graph", "index", "store", "route", "timer", "event", "frame", "shard", "parse", "alloc", "trace", "codec", "watch"]
    rows = [{"doc_id": f"h_{n}", "text": header(n), "path": f"include/{n}.h"} for n in names]
    rows += [{"doc_id": "ring", "text": KR, "path": "src/ring.c"}, {"doc_id": "strbuf", "text": GNU, "path": "lib/strbuf.c"}]
    # two more implementation files of the same layouts (renamed functions): 4 of 20 files, the top 20 % to take
    rows += [{"doc_id": "ring2", "text": KR.replace("ring_", "fifo_"), "path": "src/fifo.c"},
             {"doc_id": "strbuf2", "text": GNU.replace("strbuf_", "sbuf_"), "path": "lib/sbuf.c"}]
    for r in rows:
        r["source"], r["language"] = "code", "C"
    inp = make_stage_dir(tmp_path / "in", docs_frame(rows), nparts=2)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster, Client(cluster) as client:
        run_one("code_quality", inp, tmp_path / "out", ["code_quality.tier_min_files=5"], client=client)
    kept, _ledger = assert_conservation(inp, tmp_path / "out")
    tier = dict(zip(kept["doc_id"], kept["code_tier"], strict=True))
    assert all(tier[d] == "high" for d in ("ring", "strbuf", "ring2", "strbuf2"))
    assert all(tier[f"h_{n}"] != "high" for n in names)
