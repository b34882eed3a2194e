"""The preprocessor model (cuda2hip/lang/cxx/preprocessor): conditions evaluated three-valued in
each build of the macro table, the branches around a place, the arms of function definitions,
and the include guard of the text scanner. fixtures/preproc/conditions.yaml pins its answers on
the conditions of the real-world corpus."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from cuda2hip.api.tables import written_by_migration
from cuda2hip.lang import parse
from cuda2hip.lang.cxx.functions import exclusive, functions
from cuda2hip.lang.cxx.preprocessor import conditions, directives, macros
from cuda2hip.lang.cxx.preprocessor.layout import _guard_name

pytestmark = pytest.mark.unit

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "preproc" / "conditions.yaml"
AMD = macros.amd(None)
ROCM_52 = macros.amd("5.2")
CUDA = macros.cuda(written_by_migration)


def _value(text: str, build=lambda name: conditions.UNKNOWN):
    return conditions.value(conditions.parse(text), build)


@pytest.mark.parametrize("text, value", [
    ("1 + 2 * 3 == 7", 1), ("(1 + 2) * 3", 9), ("7 / -2", -3), ("-7 % 3", -1), ("1 / 0", None),
    ("010 == 8", 1), ("0x1F == 31", 1), ("0b101 == 5", 1), ("1'000 == 1000", 1), ("10UL == 10", 1),
    ("~0uLL == 18446744073709551615ULL", 1), ("-1 < 0u", 0), ("-1 < 0", 1), ("~0 == -1", 1),
    ("1 << 4 | 1", 17), ("6 & 3 ^ 1", 3), ("!0 + !5", 1), ("1 ? 2 : 3", 2), ("X ? 4 : 4", 4), ("X ? 1 : 2", None),
    ("true && !false", 1), ("X && 0", 0), ("X || 1", 1), ("0 && X", 0), ("X || 0", None),
    ("defined X", None), ("defined(X) || 1", 1), ("FOO(1, (2)) || 1", 1), ("FOO(1)", None),
    ("__has_include(<cuda_fp16.h>) && 0", 0), ("__has_include(<cuda_fp16.h>)", None),
    ("1 /* a comment */ && /* another */ 1 // trailing", 1), ("1 && \\\n  0", 0),
    ("'a' == 97", None), ("1.5 > 0", None), ('"text"', None), ("1 +", None), ("(1", None), ("", None),
])
def test_expressions(text, value):
    assert _value(text) == value


@pytest.mark.parametrize("cond, build, truth", [
    ("defined(__CUDA_ARCH__) && (__CUDA_ARCH__ < 600)", AMD, False),
    ("!defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 600", AMD, True),
    ("defined(__HIP_PLATFORM_AMD__)", AMD, True),
    ("defined(__CUDACC__)", AMD, True),  # renamed to __HIPCC__, which hipcc defines
    ("!defined(__HIPCC__) || HIP_VERSION < 40400000", AMD, None),  # the version is not known
    ("!defined(__HIPCC__) || HIP_VERSION < 40400000", ROCM_52, False),
    ("HIP_VERSION_MAJOR > 5 || (HIP_VERSION_MAJOR == 5 && HIP_VERSION_MINOR >= 2)", ROCM_52, True),
    ("HIP_VERSION >= 60200000", ROCM_52, False),
    ("HIP_VERSION >= 60200000", macros.amd("7.2"), True),
    ("HIP_VERSION_MAJOR >= 7", macros.amd("7.2"), True),
    ("__CUDACC_VER_MAJOR__ >= 11", AMD, False),  # nvcc's: undefined, 0
    ("defined(USE_DRIVER)", AMD, None),
    ("defined(USE_DRIVER) && 0", AMD, False),
    ("defined(USE_DRIVER) || 1", AMD, True),
    ("0", AMD, False),
    ("FOO(1)", AMD, None),
    ("defined(GGML_USE_HIP)", CUDA, False),
    ("defined(__HIPCC__)", CUDA, None),  # written by the migration: no HIP switch
    ("defined(__NVCC__)", macros.HIP_CLANG, False),
    ("defined(__HIP_PLATFORM_AMD__)", macros.HIP_CLANG, None),  # hip-clang alone does not decide the platform
])
def test_builds(cond, build, truth):
    assert conditions.truth(cond, build) is truth


@pytest.mark.parametrize("expr, arch, want", [
    ("defined(__CUDA_ARCH__) && (__CUDA_ARCH__ < 600)", 500, True),
    ("defined(__CUDA_ARCH__) && (__CUDA_ARCH__ < 600)", None, False),
    ("!defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 200", None, True),
    ("!defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 200", 750, True),
    ("__CUDA_ARCH__ >= 0x2BC", 700, True),
    ("__CUDA_ARCH__ == 010", 8, True),  # octal
    ("defined(__NVCC__) && !defined(__CUDA_ARCH__)", None, False),  # hip-clang: no __NVCC__
    ("__CUDACC_VER_MAJOR__ > 9 && __CUDA_ARCH__ >= 530", 900, False),
    ("__CUDACC_VER_MAJOR__ < 11", None, True),  # undefined is 0
    ("__CUDA_ARCH__ >= GGML_CUDA_CC_VOLTA", 700, None),  # a project macro: cannot tell
    ("PROJECT_FLAG || defined(__HIP__)", None, True),
    ("PROJECT_FLAG && !defined(__HIP__)", None, False),
    ("__has_include(<cuda_fp16.h>)", None, None),
])
def test_directive_truth_under_hip_clang(expr, arch, want):
    data = f"#if {expr}\nint x;\n#endif\n".encode()
    directive = parse.parse("cuda", data).root_node.named_children[0]
    assert directives.truth(directive, data, macros.with_cuda_arch(macros.HIP_CLANG, arch)) is want


@pytest.mark.parametrize("text", ["#ifndef X\n#endif\n", "#  ifndef X\n#endif\n", "#if !defined X\n#endif\n"])
def test_negated_tests_however_spelled(text):
    data = text.encode()
    directive = parse.parse("cuda", data).root_node.named_children[0]
    assert directives.test_text(directive, data).replace(" ", "") in ("!defined(X)", "!definedX")
    assert directives.truth(directive, data, macros.table({}, {"X"})) is True


@pytest.mark.parametrize("name, want", [
    ("__HIP_PLATFORM_AMD__", True), ("__HIP__", True), ("HIP_VERSION", True), ("__gfx90a__", True),
    ("GGML_USE_HIP", True), ("USE_ROCM", True), ("AMD_MFMA_AVAILABLE", True),
    # what the migration writes stays CUDA code: __CUDACC__ -> __HIPCC__, CUDART_INF -> HIP_INF,
    # __CUDA_ARCH__ presence tests -> __HIP_DEVICE_COMPILE__
    ("__HIPCC__", False), ("HIP_INF", False), ("__HIP_DEVICE_COMPILE__", False),
    ("RDNA3", False), ("GGML_CUDA_CC_VOLTA", False), ("SHIPPING", False),
])
def test_hip_switches(name, want):
    assert macros.is_hip_switch(name, written_by_migration) is want


SOURCE = b"""\
#if defined(GGML_USE_HIP) && defined(CDNA)
int amd_only;
#elif defined(__NVCC__)
int nvcc_only;
#else
int cuda_code;
#endif
#ifndef __HIP_PLATFORM_AMD__
int not_amd;
#endif
void f() {
#ifdef __HIPCC__
  int migrated;
#endif
}
"""


@pytest.mark.parametrize("word, kinds", [
    (b"amd_only", {"hip-only"}), (b"nvcc_only", {"nvcc-only"}), (b"cuda_code", set()), (b"not_amd", set()),
    (b"migrated", set()),
])
def test_branch_kinds(word, kinds):
    tree = parse.parse("cuda", SOURCE)
    assert directives.branch_kinds(tree, SOURCE, SOURCE.index(word), macros.HIP_CLANG, CUDA) == kinds


def test_a_condition_is_not_under_its_own_branch():
    tree = parse.parse("cuda", SOURCE)
    assert directives.branch_tests(tree, SOURCE.index(b"GGML_USE_HIP")) == []
    (node, wanted), = directives.branch_tests(tree, SOURCE.index(b"__NVCC__"))
    assert node.type == "preproc_if" and wanted is False  # an #elif is reached when the #if was false


def _truths(source: str, undefined: set[str]) -> list[bool | None]:
    """Each directive's test with `undefined` undefined and the file's own numbers known (HIP211's build)."""
    data = source.encode()
    tree = parse.parse("cuda", data)
    numbers = macros.numeric_macros(tree.root_node, data)

    def build(name):
        return conditions.UNDEFINED if name in undefined else (None, numbers.get(name))

    out = []

    def walk(node):
        if node.type in directives.BRANCH_KINDS:
            out.append(directives.truth(node, data, build))
        for c in node.children:
            walk(c)

    walk(tree.root_node)
    return out


@pytest.mark.parametrize("source,expected", [
    ("#if CUDART_VERSION < 11020\n#endif\n", [True]),
    ("#if CUDART_VERSION >= 11000\n#endif\n", [False]),
    ("#ifndef CUDART_VERSION\n#endif\n#ifdef CUDART_VERSION\n#endif\n", [True, False]),
    ("#if CUDART_VERSION >= 11000 || defined(USE_HIP)\n#endif\n", [None]),
    ("#if defined(USE_HIP) && CUDART_VERSION >= 11000\n#endif\n", [False]),
    ("#if !defined(USE_HIP) && CUDART_VERSION < 11000\n#endif\n", [None]),
    ("#define HMASK 12000 // CUDA 12.0\n#if CUDART_VERSION < HMASK\n#endif\n", [True]),
    ("#if (CUDART_VERSION / 1000) * 10 + CUDART_VERSION % 100 == 0x0\n#endif\n", [True]),
    ("#if F(CUDART_VERSION)\n#endif\n", [None]),
    ("#if CUDART_VERSION >= 1'000\n#endif\n", [False]),
    ("#if 0\n#elif CUDART_VERSION < 9000\n#endif\n", [False, True]),
    ("#if CUDART_VERSION >= 9000 && \\\n    defined(USE_HIP)\n#endif\n", [False]),
    ("#if CUDART_VERSION /* a comment */ < 9000 // another\n#endif\n", [True]),
])
def test_directives_with_numbers_of_the_file(source, expected):
    assert _truths(source, {"CUDART_VERSION"}) == expected


def test_numeric_macros_only_unconditional():
    data = b"#ifndef G\n#define G\n#define A 3\n#ifdef X\n#define B 4\n#endif\n#define C (1)\n#endif\n"
    tree = parse.parse("cuda", data)
    assert macros.numeric_macros(tree.root_node, data) == {"A": 3}


def _fns(src: str):
    data = src.encode()
    return functions(parse.parse("cuda", data), data)


def test_arms_of_one_chain_exclude_each_other_and_dead_arms_are_known():
    a, b, c = _fns("#ifdef X\nvoid f(int) {}\n#elif defined(Y)\nvoid f(int) {}\n#else\nvoid f(int) {}\n#endif\n")
    assert exclusive(a, b) and exclusive(b, c) and exclusive(a, c)
    d, e = _fns("#ifdef X\nvoid f(int) {}\n#endif\n#ifndef X\nvoid f(int) {}\n#endif\n")
    assert exclusive(d, e)
    g, h = _fns("#ifdef X\nvoid f(int) {}\n#endif\n#ifdef Y\nvoid f(int) {}\n#endif\n")
    assert not exclusive(g, h) and g.amd is None
    dead, live = _fns("#if !defined(__HIP_PLATFORM_AMD__)\nvoid f(int) {}\n#else\nvoid g(int) {}\n#endif\n")
    assert dead.dead_on_amd() and live.amd is True
    # `#  ifndef` (indented after the `#`) is an #ifndef too
    p, q = _fns("#  ifdef X\nvoid f(int) {}\n#  endif\n#  ifndef X\nvoid f(int) {}\n#  endif\n")
    assert exclusive(p, q)


@pytest.mark.parametrize("name, rest, guard", [
    (b"ifndef", b" GUARD_H\n", b"GUARD_H"), (b"ifndef", b" GUARD_H // the guard\n", b"GUARD_H"),
    (b"if", b" !defined(GUARD_H)\n", b"GUARD_H"), (b"if", b" !defined GUARD_H /* c */\n", b"GUARD_H"),
    (b"if", b" !defined(A) && !defined(B)\n", None), (b"ifdef", b" GUARD_H\n", None), (b"ifndef", b" A B\n", None),
])
def test_include_guard_of_the_text_scanner(name, rest, guard):
    assert _guard_name(name, rest) == guard


def _corpus():
    return yaml.safe_load(CORPUS.read_text())


BUILDS = {"amd": AMD, "amd-5.2": ROCM_52, "amd-7.2": macros.amd("7.2"), "hip-clang": macros.HIP_CLANG,
          "cuda": CUDA, "hip-clang-sm80": macros.with_cuda_arch(macros.HIP_CLANG, 800),
          "hip-clang-host": macros.with_cuda_arch(macros.HIP_CLANG, None)}


@pytest.mark.parametrize("case", _corpus(), ids=lambda c: c["if"][:60])
def test_corpus_conditions(case):
    """The answers of each build on conditions of the real-world corpus (among them those the
    three evaluators this model replaced disagreed on: `# ifndef`, continued lines, `true`,
    arithmetic, unsigned literals)."""
    expr = conditions.parse(case["if"])
    got = {name: (None if v is None else v != 0) for name, v in
           ((name, conditions.value(expr, build)) for name, build in BUILDS.items())}
    want = {name: case.get(name) for name in BUILDS}
    assert got == want
    req = conditions.requirements(expr)
    assert sorted([n, d] for n, d in (req or ())) == sorted(case.get("requires", []))
