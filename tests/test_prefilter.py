"""The rules' pre-filter (engine/prefilter.py) keeps exactly the rules a plain substring search of
each literal keeps, including literals inside longer words, qualified names (`::all` inside
`std::allocate`, not in `:: all`) and literals that are not words."""

from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

from cuda2hip.engine.frontends.cuda import distinct_words
from cuda2hip.engine.prefilter import IDENTIFIER, LiteralFilter

LITERALS = st.sampled_from(["cuda", "cudaMalloc", "Malloc", "x", "__syncthreads", "<<<", "::", "warpSize",
                            "a$b", "threadIdx", "::all", "::__ldg", "::ld", "::a$b", "::x"])
ENTRIES = st.lists(st.builds(
    lambda lits, alts: SimpleNamespace(literals=tuple(lits), alternatives=alts),
    st.lists(LITERALS, max_size=2),
    st.none() | st.lists(st.lists(LITERALS, max_size=3).map(tuple), max_size=4).map(tuple)), max_size=8)
TEXT = st.lists(st.sampled_from(["cudaMallocHost", "x", " ", "\n", "<<", "<", "::", "__syncthreads()", "warp",
                                 "Size", "a$b", "7cuda", "threadIdx.x", "// Malloc", "::allocate", "::__ldg(", ":: all",
                                 "std::all_of", ":", "ld", "::7x", "::a$bc"]), max_size=20).map(
    lambda parts: "".join(parts).encode())


def _naive(entries, data: bytes) -> list:
    def has(lit: str) -> bool:
        return lit.encode() in data

    return [e for e in entries if all(map(has, e.literals))
            and (e.alternatives is None or any(all(map(has, g)) for g in e.alternatives))]


@settings(max_examples=300, deadline=None)
@given(ENTRIES, TEXT)
def test_keeps_what_substring_search_keeps(entries, data):
    lf = LiteralFilter(entries)
    want = _naive(entries, data)
    assert lf.keep(data, distinct_words(data)) == want  # the first file: a search per literal
    assert lf.keep(data, distinct_words(data)) == want  # then the automaton
    assert lf.keep(data, None) == want


def test_literal_inside_a_longer_word_counts():
    entry = SimpleNamespace(literals=("Malloc",), alternatives=None)
    assert LiteralFilter([entry]).keep(b"cudaMallocHost(p);", {b"cudaMallocHost", b"p"}) == [entry]


def test_one_literal_groups_are_any_of():
    entry = SimpleNamespace(literals=(), alternatives=(("asyncEngineCount",), ("pciBusID",), ("a", "b")))
    lf = LiteralFilter([entry])
    assert lf.keep(b"p.pciBusID", {b"p", b"pciBusID"}) == [entry]
    assert lf.keep(b"a", {b"a"}) == []
    assert lf.keep(b"a b", {b"a", b"b"}) == [entry]
    assert IDENTIFIER.fullmatch("pciBusID")


def test_rule_sets_with_the_same_requirements_share_one_index_and_keep_their_own_entries():
    """Engines of one process and a run's rule subsets build their filters again: the index
    (tests and automaton) is reused, the entries returned are the asking filter's."""
    first = [SimpleNamespace(literals=("cudaMalloc",), alternatives=None),
             SimpleNamespace(literals=(), alternatives=(("warpSize",), ("__shfl", "x")))]
    second = [SimpleNamespace(literals=e.literals, alternatives=e.alternatives) for e in first]
    a, b = LiteralFilter(first), LiteralFilter(second)
    assert a._index is b._index
    data = b"cudaMalloc(&p, n); int w = warpSize;"
    assert a.keep(data, distinct_words(data)) == first
    assert b.keep(data, distinct_words(data)) == second
    assert b.keep(b"int w;", None) == []
    other = LiteralFilter([SimpleNamespace(literals=("cudaFree",), alternatives=None)])
    assert other._index is not a._index
