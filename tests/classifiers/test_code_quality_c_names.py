"""C/C++ definitions and their names: the statements, operators and attributes the C pattern reads as a name
before parentheses and a brace are no functions (``else if (…)⏎{``, ``if constexpr (…) {``, ``sizeof (…) {``,
``struct __attribute__((packed)) Foo {``, ``namespace std _GLIBCXX_VISIBILITY(default)⏎{``); a function named
``function`` is one in C++ (the keyword list is the family's, not JavaScript's); a definition after an
attribute (``static int __attribute__((unused)) f(void) {``) is found under its own name."""

from classifiers.code_quality_defs import definitions
from classifiers.code_quality_features import structural_features
from classifiers.code_quality_scan import scan


def names(text: str, family: str = "c") -> list[str]:
    return [d[0] for d in definitions(scan(text, family), family)]


def test_statements_and_operators_before_a_brace_are_no_functions():
    code = """/* Pick a mode. */
int pick(int x)
{
    if (x > 0)
    {
        return 1;
    }
    else if (x < 0)
    {
        return -1;
    }
    else if (sizeof (long) > 4)
    {
        return 2;
    }
    return 0;
}

struct __attribute__((packed)) header {
    char tag;
    int len;
};

#define PAD (sizeof(short) > 2 ? \\
             sizeof(short) : __alignof__(void *))
union {
    int a;
} u;
"""
    assert names(code) == ["pick"]
    f = structural_features(code, "C", "src/pick.c")
    assert f["n_functions"] == 1 and f["max_function_lines"] == 16 and f["documented_fraction"] == 1.0


def test_cxx_control_lines_namespaces_and_type_operators_are_no_functions():
    code = """namespace std _GLIBCXX_VISIBILITY(default)
{
template <typename T, typename U>
bool same(const T& a, const U& b) {
    if constexpr (std::is_same_v<T, U>) {
        return a == b;
    }
    return false;
}

template <typename T>
struct is_thing<T, decltype(probe(std::declval<T>()))>
    : true_type
{ };

struct UVC_FRAME(n) {
    int width;
};
}
"""
    assert names(code) == ["same"]
    assert structural_features(code, "C++", "include/same.h")["n_functions"] == 1


def test_a_function_named_function_is_a_cxx_function():
    code = """class context {
 public:
  func_decl function(symbol const& name, sort const& range) {
    return make(name, range);
  }
};

template <typename R>
class function {
 public:
  function(const function& other)
    : base_(other.base_)
  {
  }
  template <typename F>
  function(F&& f)
    noexcept(is_small<F>::value)
    : base_()
  {
    init(f);
  }
};
"""
    assert names(code) == ["function", "function", "function"]
    f = structural_features(code, "C++", "include/function.h")
    assert f["n_functions"] == 3
    # the word stays a statement in JavaScript
    assert names("function (x) {\n  return x;\n}\n", "javascript") == []


def test_a_definition_after_an_attribute_keeps_its_own_name():
    code = """/* Unused in release builds. */
static int __attribute__((unused)) probe(void) {
    return 0;
}

__declspec(dllexport) void exported(int n)
{
    use(n);
}

[[nodiscard]] static inline int twice(int n) {
    return 2 * n;
}
"""
    assert names(code) == ["probe", "exported", "twice"]
    f = structural_features(code, "C", "src/attr.c")
    assert f["n_functions"] == 3 and f["documented_fraction"] == 1 / 3
