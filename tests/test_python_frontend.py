"""The Python frontend: literal decoding and mapping, fixes written back into literals of every
kind, report-only sources, name resolution, suppressions, syntax errors."""

from __future__ import annotations

import ast

import libcst
import pytest

from cuda2hip.engine.engine import Engine
from cuda2hip.engine.frontends.registry import frontend
from cuda2hip.findings import Applicability
from cuda2hip.lang.python.literals import LiteralSyntax, TextMap, decode_into, encode_for, split_literal
from cuda2hip.lang.source import SourceText
from cuda2hip.settings import Settings

ALL = frozenset({Applicability.SAFE, Applicability.UNSAFE})


def lint(code: str, select=("HIP001", "HIP002", "HIP100", "HIP101", "HIP600"), path="case.py"):
    settings = Settings(select=tuple(select), use_cache=False)
    engine = Engine(settings)
    rules = engine.ruleset_for(path, "python")
    fe = frontend("python")
    source = SourceText.from_bytes(code.encode(), path)
    return fe, rules, settings, source, fe.lint(source, rules, settings)


def fix(code: str, **kw) -> str:
    fe, rules, settings, source, _ = lint(code, **kw)
    out = fe.fix(source, rules, settings, ALL)
    return out.source.to_bytes().decode()


def codes(result):
    return [(f.code, f.line, f.column) for f in result.findings if not f.suppressed]


# -- literal decoding --------------------------------------------------------------------------
@pytest.mark.parametrize("token", [
    r'"a\nb\tc\\d\"e"', r"'\x41\101\u00e9\N{GREEK SMALL LETTER ALPHA}'", r"'keep \d and \q'",
    "'''line one\\\ncontinued'''", "r'''raw \\n stays'''", "b'bytes \\x00\\n'", "u'unicode'",
    "'\u00e9t\u00e9 caf\u00e9'",
])
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.filterwarnings("ignore::SyntaxWarning")
def test_decoded_value_equals_python_value(token):
    syntax, body = split_literal(token)
    tm = TextMap()
    decode_into(tm, body, len(syntax.prefix) + len(syntax.quote), syntax)
    expected = ast.literal_eval(token)
    if isinstance(expected, bytes):
        expected = expected.decode("latin-1")
    assert tm.value == expected


def test_map_points_into_escapes_and_verbatim_text():
    token = r'"ab\ncd"'
    syntax, body = split_literal(token)
    tm = TextMap()
    decode_into(tm, body, 1, syntax)
    assert tm.value == "ab\ncd"
    assert tm.start(0) == 1 and tm.start(3) == 5  # 'c' comes after the two-byte escape
    assert tm.start(2) == 3 and tm.end(3) == 5  # the escape maps as a whole
    assert tm.boundary(3) == 5 and tm.boundary(2) == 3


def test_crlf_reads_as_newline():
    syntax, body = split_literal('"""a\r\nb"""')
    tm = TextMap()
    decode_into(tm, body, 3, syntax)
    assert tm.value == "a\nb" and tm.start(2) == 6


@pytest.mark.parametrize("text,syntax,expected", [
    ("hipMalloc", LiteralSyntax("", '"'), "hipMalloc"),
    ('a "q"\n', LiteralSyntax("", '"'), 'a \\"q\\"\\n'),
    ("x\ny", LiteralSyntax("", '"""'), "x\ny"),
    ("back\\slash", LiteralSyntax("r", "'"), None),
    ("it's", LiteralSyntax("r", "'"), None),
    ("line\nbreak", LiteralSyntax("r", "'"), None),
    ("line\nbreak", LiteralSyntax("r", "'''"), "line\nbreak"),
    ("caf\u00e9", LiteralSyntax("b", "'"), None),
])
def test_encode_for_literal(text, syntax, expected):
    assert encode_for(text, syntax) == expected


# -- rewriting embedded sources ----------------------------------------------------------------
HEAD = "import cupy as cp\n"


@pytest.mark.parametrize("literal,fixed", [
    ("'cudaFree(p);'", "'hipFree(p);'"),
    ('r"""\n  cudaFree(p);\n"""', 'r"""\n  hipFree(p);\n"""'),
    ("u'x = 1;\\n\\tcudaFree(p);\\n'", "u'x = 1;\\n\\thipFree(p);\\n'"),
    ("\"\\\"s\\\" cudaFree(p); // caf\u00e9\\u00e9\"", "\"\\\"s\\\" hipFree(p); // caf\u00e9\\u00e9\""),
    ("b'cudaFree(p);'", "b'hipFree(p);'"),
])
def test_fix_rewrites_literal_in_place(literal, fixed):
    out = fix(HEAD + f"k = cp.RawKernel({literal}, 'k')\n")
    assert out == HEAD + f"k = cp.RawKernel({fixed}, 'k')\n"
    assert libcst.parse_module(out).code == out


def test_fix_keeps_crlf_and_indentation():
    code = "import cupy as cp\r\ndef make():\r\n    return cp.RawKernel('''\r\n    #include <cuda_runtime.h>\r\n    cudaStream_t s;\r\n    ''', 'k')\r\n"
    out = fix(code)
    assert out == code.replace("cuda_runtime.h", "hip/hip_runtime.h").replace("cudaStream_t", "hipStream_t")


def test_edit_covering_a_whole_escape_sequence_is_mapped():
    code = HEAD + "k = cp.RawKernel('\\x63udaFree(p);', 'k')\n"
    f = next(f for f in lint(code)[-1].findings if f.code == "HIP101")
    assert (f.line, f.column, f.end_column) == (2, 19, 30)  # covers `\x63udaFree`
    assert fix(code) == HEAD + "k = cp.RawKernel('hipFree(p);', 'k')\n"


@pytest.mark.parametrize("expr,how", [
    ("f'cudaFree({p});'", "an f-string"),
    ("'cudaFree(' 'p);'", "an implicit concatenation"),
    ("'cudaFree(%s);' % p", "`%` formatting"),
    ("'cudaFree({});'.format(p)", "`str.format`"),
    ("PRE + 'cudaFree(p);'", "a `+` concatenation"),
])
def test_built_sources_are_reported_at_the_right_place_not_rewritten(expr, how):
    code = HEAD + f"k = cp.RawKernel({expr}, 'k')\n"
    _, _, _, _, result = lint(code)
    hip101 = [f for f in result.findings if f.code == "HIP101"]
    assert len(hip101) == 1 and hip101[0].fix is None
    line = code.splitlines()[hip101[0].line - 1]
    assert line[hip101[0].column - 1:].startswith("cudaFree")
    note = [f for f in result.findings if f.code == "HIP600"]
    assert len(note) == 1 and how in note[0].message
    assert fix(code) == code


def test_names_resolve_to_single_assignments_only():
    once = HEAD + "def f():\n    src = 'cudaFree(p);'\n    return cp.RawKernel(src, 'k')\n"
    twice = HEAD + "src = 'cudaFree(p);'\nsrc = 'cudaMalloc(p);'\nk = cp.RawKernel(src, 'k')\n"
    assert [c for c, *_ in codes(lint(once)[-1])] == ["HIP101"]
    assert codes(lint(twice)[-1]) == []


def test_import_forms_and_fragments():
    code = ("from cupy import ElementwiseKernel, ReductionKernel\nimport torch.utils.cpp_extension as ce\n"
            "e = ElementwiseKernel('float32 x', 'float32 y', 'cudaError_t e = cudaSuccess; y = x', 'e')\n"
            "r = ReductionKernel('T x', 'T y', 'x', 'a + b', 'y = (cudaError_t)a', '0', 'r')\n"
            "m = ce.load_inline('m', cpp_sources='', cuda_sources=['cudaStream_t s;'])\n")
    result = lint(code)[-1]
    lines = code.splitlines()
    want = [(3, "cudaError_t"), (3, "cudaSuccess"), (4, "cudaError_t"), (5, "cudaStream_t")]
    assert codes(result) == [("HIP101", n, lines[n - 1].index(name) + 1) for n, name in want]
    # fragments are linted inside a function body: no parse-recovery noise
    assert not [f for f in result.findings if f.code == "HIP002"]


def test_python_suppressions_cover_embedded_findings():
    code = HEAD + "k = cp.RawKernel('cudaFree(p);', 'k')  # cuda2hip: ignore[HIP101]\n"
    result = lint(code)[-1]
    assert codes(result) == []
    assert any(f.suppressed and f.code == "HIP101" for f in result.findings)
    unused = HEAD + "k = cp.RawKernel('hipFree(p);', 'k')  # cuda2hip: ignore[HIP101]\n"
    assert [c for c, *_ in codes(lint(unused)[-1])] == ["HIP001"]
    assert fix(unused) == HEAD + "k = cp.RawKernel('hipFree(p);', 'k')\n"


def test_cuda_suppressions_inside_the_kernel_text_work_too():
    code = HEAD + "k = cp.RawKernel('''\ncudaFree(p);  // cuda2hip: ignore[HIP101]\n''', 'k')\n"
    assert codes(lint(code)[-1]) == []


def test_embedded_parse_errors_are_reported_at_python_lines():
    code = HEAD + "k = cp.RawKernel('''\nint ok;\nint f(int a, int b) { return a + b; }\nvoid g( {\n''', 'k')\n"
    result = lint(code)[-1]
    rec = [f for f in result.findings if f.code == "HIP002"]
    assert rec and rec[0].line == 5 and result.parse_errors > 0


def test_python_syntax_error_is_reported_not_raised():
    result = lint(HEAD + "def broken(:\n    pass\n")[-1]
    assert [(f.code, f.line) for f in result.findings] == [("HIP002", 2)]
    assert "Python syntax error" in result.findings[0].message


def test_files_without_needles_are_not_parsed():
    # Not Python at all, but nothing any rule looks for: no parse, no finding.
    assert lint("this is not python (\n")[-1].findings == []


def test_selection_applies_to_embedded_rules():
    code = HEAD + "k = cp.RawKernel('#include <cuda.h>\\ncudaFree(p);', 'k')\n"
    assert [c for c, *_ in codes(lint(code, select=("HIP600", "HIP100"))[-1])] == ["HIP100"]
    assert codes(lint(code, select=("HIP101",))[-1]) == []  # HIP600 off: embedded code not looked at


def test_strings_that_are_not_cpp_at_all_are_skipped():
    code = HEAD + "k = cp.RawKernel('see the README for how to build this: it is not code!', 'k')\n"
    assert lint(code)[-1].findings == []
