"""The structural pattern matcher and rule objects (pattern / kind / regex / query / relations)."""

from __future__ import annotations

import msgspec
import pytest

from cuda2hip.engine.engine import Engine
from cuda2hip.engine.frontends.cuda import CudaFrontend
from cuda2hip.engine.pattern import Pattern, PatternError
from cuda2hip.lang import parse as parsing
from cuda2hip.lang.source import SourceText
from cuda2hip.rulebook.schema import Rule
from cuda2hip.settings import Settings


def nodes_of(code: str, kind: str):
    """(data, nodes of `kind` in document order) of a snippet."""
    data = code.encode()
    out = []
    stack = [parsing.parse("cuda", data).root_node]
    while stack:
        n = stack.pop()
        if n.type == kind:
            out.append(n)
        stack.extend(n.children)
    return data, sorted(out, key=lambda n: n.start_byte)


def calls(code: str):
    return nodes_of(code, "call_expression")


def test_single_and_multi_metavariables():
    p = Pattern("cudaMemcpy($DST, $SRC, $$$REST)")
    data, nodes = calls("void f() { cudaMemcpy(a + 1, b, n * 4, kind); }")
    caps = p.match(nodes[0], data)
    assert caps["DST"].text == "a + 1"
    assert caps["SRC"].text == "b"
    assert caps["REST"].text == "n * 4, kind"


def test_multi_metavariable_may_be_empty_and_fixed_elements_must_match():
    p = Pattern("f($X, $$$R)")
    data, nodes = calls("void g() { f(1); f(1, 2); h(1, 2); }")
    assert p.match(nodes[0], data) is None  # f(1): the comma is required
    assert p.match(nodes[1], data)["R"].text == "2"
    assert p.match(nodes[2], data) is None  # different callee


def test_repeated_metavariable_must_bind_same_text():
    p = Pattern("$A = $A + $B")
    data, assigns = nodes_of("void f() { x = x + 1; y = z + 1; }", "assignment_expression")
    assert p.match(assigns[0], data) is not None
    assert p.match(assigns[1], data) is None


def test_comments_inside_matched_code_are_ignored():
    p = Pattern("cudaFree($P)")
    data, nodes = calls("void f() { cudaFree(/* device */ p); }")
    assert p.match(nodes[0], data)["P"].text == "p"


def test_operators_are_compared():
    p = Pattern("$A + $B")
    assert p.kind == "binary_expression"
    data = b"int x = a - b;"
    tree = parsing.parse("cuda", data)
    node = tree.root_node.children[0].child_by_field_name("declarator").child_by_field_name("value")
    assert p.match(node, data) is None


def test_pattern_that_does_not_parse_is_rejected():
    with pytest.raises(PatternError):
        Pattern("cudaMemcpy($A,, )")


def _rule(**fields) -> Rule:
    base = {"code": "TST001", "id": "test-rule", "kind": "pattern", "severity": "warning",
            "summary": "s", "message": "m", "docs": {"what": "a", "why": "b"}}
    base.update(fields)
    return msgspec.convert(base, Rule)


def lint(rule: Rule, code: str, **settings):
    s = Settings(select=(rule.code,), use_cache=False, **settings)
    engine = Engine(s, rules=[rule])
    return CudaFrontend().lint(SourceText.from_bytes(code.encode(), "t.cu"), engine.ruleset_for("t.cu", "cuda"), s).findings


def test_inside_with_stop_rule_and_not():
    rule = _rule(rule={
        "pattern": "__syncthreads()",
        "inside": {"kind": "if_statement", "stopBy": {"kind": "function_definition"}},
        "not": {"inside": {"kind": "for_statement", "stopBy": "end"}},
    })
    code = ("__global__ void k() {\n"
            "  if (threadIdx.x < 16) { __syncthreads(); }\n"
            "  for (;;) { if (x) { __syncthreads(); } }\n"
            "  __syncthreads();\n"
            "}\n")
    found = lint(rule, code)
    assert [f.line for f in found] == [2]


def test_has_follows_precedes():
    rule = _rule(rule={"kind": "compound_statement",
                       "has": {"pattern": "cudaDeviceSynchronize()", "stopBy": "end"},
                       "inside": {"kind": "function_definition"}})
    assert len(lint(rule, "void f() { { cudaDeviceSynchronize(); } }")) == 1
    assert lint(rule, "void f() { g(); }") == []
    rule = _rule(rule={"kind": "expression_statement",
                       "follows": {"pattern": "cudaMalloc($$$);"},
                       "precedes": {"pattern": "cudaFree($$$);"}})
    found = lint(rule, "void f() { cudaMalloc(&p, 4); use(p); cudaFree(p); }")
    assert len(found) == 1 and found[0].column == len("void f() { cudaMalloc(&p, 4); ") + 1


def test_raw_query_and_captures_in_message():
    rule = _rule(message="launch of $KERNEL", rule={
        "query": "(call_expression function: (identifier) @kernel (kernel_call_syntax)) @match"})
    found = lint(rule, "void f() { k1<<<1, 2>>>(x); g(x); }")
    assert [f.message for f in found] == ["launch of k1"]


def test_constraints_and_template_fix_with_indentation():
    rule = _rule(rule={"pattern": "cudaMemset($P, $V, $N)"},
                 constraints={"V": {"regex": "^0$"}},
                 fix={"applicability": "safe", "template": "{\n  zero($P, $N);\n}"})
    code = "void f() {\n    cudaMemset(p, 0, n);\n    cudaMemset(p, 1, n);\n}\n"
    found = lint(rule, code)
    assert len(found) == 1 and found[0].line == 2
    edit = found[0].fix.edits[0]
    assert edit.text == "{\n      zero(p, n);\n    }"


def test_rules_also_run_inside_macro_bodies():
    rule = _rule(message="launch of $K", rule={"pattern": "$K<<<$$$CFG>>>($$$ARGS)"})
    code = "#define LAUNCH(n) my_kernel<<<n, 64>>>(data, n)\nvoid f() { LAUNCH(4); }\n"
    found = lint(rule, code)
    assert len(found) == 1
    assert (found[0].line, found[0].column) == (1, len("#define LAUNCH(n) ") + 1)
    assert found[0].message == "launch of my_kernel"


def test_unknown_kind_and_predicate_are_compile_errors():
    from cuda2hip.engine.compiled import RuleCompileError

    with pytest.raises(RuleCompileError, match="not a node kind"):
        Engine(Settings(select=("TST001",), use_cache=False), rules=[_rule(rule={"kind": "no_such_kind"})]).compiled
    with pytest.raises(RuleCompileError, match="unknown predicate"):
        Engine(Settings(select=("TST001",), use_cache=False),
               rules=[_rule(rule={"kind": "call_expression", "check": "no-such-check"})]).compiled


def test_callee_key_matches_the_last_name_of_the_function():
    rule = _rule(message="call of $F", rule={"callee": ["launch_it"]})
    code = ("void f() { launch_it(1); ns::launch_it(2); obj.launch_it(3); tmpl::launch_it<int>(4);"
            " launch_it_more(5); other(6); }")
    found = lint(rule, code)
    assert len(found) == 4


def test_callee_index_hands_a_predicate_only_the_calls_it_declared(monkeypatch):
    seen = []

    @predicate_for_test(monkeypatch, "test-only-frobnicate", callees={"frobnicate"})
    def only_frobnicate(node, env, ctx, args):
        seen.append(ctx.node_text(node.child_by_field_name("function")))
        return True

    rule = _rule(rule={"kind": "call_expression", "check": "test-only-frobnicate"})
    s = Settings(select=(rule.code,), use_cache=False)
    engine = Engine(s, rules=[rule])
    rules = engine.ruleset_for("t.cu", "cuda")
    assert rules.rules[0].callees == {"frobnicate"}
    # CUDA calls are found from their callee names (no visit per call of the file)
    assert "call_expression" not in rules.dispatch
    assert [type(v).__name__ for v in rules.text_visitors] == ["CalleeIndex"]
    code = "void f() { frobnicate(1); a(2); b(3); x.frobnicate(); }"
    found = CudaFrontend().lint(SourceText.from_bytes(code.encode(), "t.cu"), rules, s).findings
    assert len(found) == 2 and seen == ["frobnicate", "x.frobnicate"]
    # a file without the name skips the rule altogether
    seen.clear()
    CudaFrontend().lint(SourceText.from_bytes(b"void f() { a(); }", "t.cu"), rules, s)
    assert seen == []


def test_callee_index_by_name_finds_the_calls_the_per_call_index_finds(monkeypatch):
    from cuda2hip.engine import engine as engine_mod

    seen = []

    @predicate_for_test(monkeypatch, "test-only-frob", callees={"frob", "other"})
    def frob(node, env, ctx, args):
        seen.append((node.start_byte, node.end_byte))
        return True

    rule = _rule(rule={"kind": "call_expression", "check": "test-only-frob"})
    s = Settings(select=(rule.code,), use_cache=False)
    code = b"""
#define M(x) frob(x) + ns::frob(x)
namespace ns { int frob(int); }
struct S { int frob(int); S* p; } s;
int frob(int);
template <class T> T tfrob(T);
void f() {
  frob(1); ns::frob(2); ::frob(3); s.frob(4); s.p->frob(5); frob<int>(6); ns::frob<int>(7);
  a::b::frob(8); (frob)(9); auto g = frob; int frob_x = frob + 1; s.frob; frob::x(10);
  other(frob(11)); tfrob(frob); ns::other<frob>(12); frob(frob(13)); M(14);
  x.y.frob(15); frob
  (16);
}
"""
    settle = engine_mod.CalleeIndex.settle

    def calls(by_text):
        monkeypatch.setattr(engine_mod.CalleeIndex, "settle", lambda self: (
            settle(self), setattr(self, "by_text", by_text and self.by_text)))
        engine = Engine(s, rules=[rule])
        rules = engine.ruleset_for("t.cu", "cuda")
        assert rules._callee_index.by_text is by_text
        seen.clear()
        found = CudaFrontend().lint(SourceText.from_bytes(code, "t.cu"), rules, s).findings
        return sorted(seen), [(f.start, f.end) for f in found]

    by_call, by_name = calls(False), calls(True)
    assert len(by_call[0]) >= 15
    assert by_name == by_call


def predicate_for_test(monkeypatch, name, **kw):
    from cuda2hip.engine import predicates

    monkeypatch.setattr(predicates, "_PREDICATES", dict(predicates._PREDICATES))
    monkeypatch.setattr(predicates, "_CALLEES", dict(predicates._CALLEES))
    return predicates.predicate(name, **kw)


def test_has_child_kind_rule_visited_from_the_children_matches_the_same_nodes():
    """`kind: K` + `has: {kind: C}` (stopBy neighbor) is visited from the C nodes (few) instead of
    every K node: the same nodes must match, each once, as with a rule the shortcut does not take."""
    code = """
#define LAUNCH(k) k<<<1, 2>>>(0)
__global__ void k(int);
void f(int n) {
  k<<<1, 1>>>(n);
  k<<<n, n, 0, 0>>>(g(n), h<<<1, 1>>>(2));
  if (n) k<<<1, 1>>>(1); else g(3);
  LAUNCH(k);
  auto x = [] { k<<<2, 2>>>(0); };
  g(4);
}
"""
    fast = _rule(rule={"kind": "call_expression", "has": {"kind": "kernel_call_syntax"}})
    slow = _rule(rule={"kind": "call_expression", "has": {"kind": "kernel_call_syntax"},
                       "not": {"kind": "comment"}})
    engine = Engine(Settings(select=("TST001",), use_cache=False), rules=[fast])
    [compiled] = engine.ruleset_for("t.cu", "cuda").rules
    assert compiled.kinds == {"kernel_call_syntax"}  # the shortcut is taken
    got = [(f.start, f.end) for f in lint(fast, code)]
    assert len(got) == 6
    assert got == [(f.start, f.end) for f in lint(slow, code)]
