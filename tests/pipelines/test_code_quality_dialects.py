"""Cython is not scored as broken Python, and a rare data format is not tiered on another format's cuts."""

from classifiers.code_quality import structural_score
from classifiers.code_quality_features import structural_features
from tests.helpers import assert_conservation, docs_frame, make_stage_dir, run_one

PYX = '''"""Bounded random integers."""
from libc.stdint cimport uint64_t
cimport numpy as cnp


cdef inline uint64_t gen_mask(uint64_t max_val) noexcept nogil:
    """Smallest bit mask covering max_val."""
    cdef uint64_t mask = max_val
    mask |= mask >> 1
    return mask


cdef class Sampler:
    """Draws bounded integers."""

    cpdef int draw(self, int high):
        """One draw below high."""
        if high <= 0:
            return 0
        return high - 1
'''
PXD = '''# Declarations of the bounded samplers.
from libc.stdint cimport uint64_t

cdef extern from "distributions.h":
    # the C generator state
    ctypedef struct bitgen_t:
        void *state

cdef uint64_t random_bounded(bitgen_t *state, uint64_t rng) nogil
cdef int random_interval(bitgen_t *state, int max_value) nogil
'''
#: PYX without its Cython syntax (``cimport``, ``cdef`` types, ``noexcept nogil``)
PY = PYX.replace("from libc.stdint cimport uint64_t\ncimport numpy as cnp", "import math\nimport numpy as np").replace(
    "cdef inline uint64_t gen_mask(uint64_t max_val) noexcept nogil:", "def gen_mask(max_val):").replace(
    "    cdef uint64_t mask = max_val", "    mask = max_val").replace("cdef class", "class").replace("cpdef int draw(self, int high)", "def draw(self, high)")


def test_cython_is_read_by_its_indentation_not_as_broken_python():
    f = structural_features(PYX, "Cython", "pkg/_bounded.pyx")
    assert f["parse_error"] == 0
    assert f["n_functions"] == 3 and f["documented_fraction"] == 1.0  # gen_mask, Sampler, draw: all with docstrings
    assert f["max_nesting"] == 1
    # the same file without its Cython syntax, which the Python parser reads, scores alike
    assert structural_features(PY, "Python", "m.py")["parse_error"] == 0
    assert abs(structural_score(f) - structural_score(structural_features(PY, "Python", "m.py"))) < 0.3
    # a .pxd of prototypes has no definitions with a body: nothing to document, nothing broken
    d = structural_features(PXD, "Cython", "pkg/_bounded.pxd")
    assert d["parse_error"] == 0 and d["n_functions"] == 0 and d["documented_fraction"] == -1.0
    # Python that does not parse is still a parse error
    assert structural_features("def broken(:\n    pass\n", "Python", "m.py")["parse_error"] == 1


def _json(i: int) -> str:
    """package.json-like files of 1 to 6 entries (their scores differ)."""
    return "{\n" + ",\n".join(f'  "entry{k}": "value of the helper number {k}"' for k in range(1 + i % 6)) + f',\n  "name": "package{i}"\n}}\n'



def test_rare_formats_are_medium_whatever_else_shares_their_kind(tmp_path):
    good = '"""Stats."""\n\n\ndef mean(values):\n    """Arithmetic mean."""\n    return sum(values) / len(values)\n'
    rows = []
    for i in range(24):  # Python of varying quality: the family's cuts for the rare Cython files
        bad = "x = 1\n" * (i + 1) + "def F(a):\n" + "".join("    " * (k + 1) + f"if a > {k}:\n" for k in range(i % 6)) + "    " * (i % 6 + 1) + "pass\n"
        rows.append({"doc_id": f"py{i}", "text": good.replace("mean", f"mean{i}") if i % 2 else bad, "path": f"pkg/m{i}.py"})
    rows += [{"doc_id": f"pyx{i}", "text": PYX.replace("Sampler", f"Sampler{i}"), "path": f"pkg/_b{i}.pyx", "language": "Cython"} for i in range(3)]
    rows += [{"doc_id": f"json{i}", "text": _json(i), "path": f"conf/p{i}.json"} for i in range(30)]
    # Cargo.toml manifests score above every JSON file: on the data group's cuts all would be high
    rows += [{"doc_id": f"toml{i}", "text": f'[package]\nname = "listing-{i}"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n',
              "path": f"listing-{i}/Cargo.toml"} for i in range(4)]
    for r in rows:
        r["source"] = "code"
    inp = make_stage_dir(tmp_path / "in", docs_frame(rows), nparts=2)
    # the data formats' entries set to null: JSON and TOML on percentiles (the recipe's table keeps them medium whatever their count)
    run_one("code_quality", inp, tmp_path / "out", ["code_quality.tier_min_files=10",
                                                    "code_quality.tier_overrides={JSON: null, YAML: null, TOML: null}"])
    kept, _ledger = assert_conservation(inp, tmp_path / "out")
    tier = dict(zip(kept["doc_id"], kept["code_tier"], strict=True))
    lang = dict(zip(kept["doc_id"], kept["language"], strict=True))
    assert [lang[f"toml{i}"] for i in range(4)] == ["TOML"] * 4 and lang["pyx0"] == "Cython"
    assert [tier[f"pyx{i}"] for i in range(3)] == ["high"] * 3  # documented, shallow: above the Python family's top cut
    assert [tier[f"toml{i}"] for i in range(4)] == ["medium"] * 4
    assert {tier[f"json{i}"] for i in range(30)} >= {"high", "medium"}  # JSON has enough files for its own cuts
