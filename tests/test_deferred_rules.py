"""A run over few files compiles only the rules whose words its files hold (the rules' pre-filter
data is cached beside the validated rules); results never depend on it."""

from __future__ import annotations

import os
from pathlib import Path

from cuda2hip.cache import store
from cuda2hip.cache.store import DB_NAME as STORE
from cuda2hip.engine.engine import Deferred, Engine
from cuda2hip.pipeline import Mode, run
from cuda2hip.settings import Settings

BARRIER = """\
__global__ void k(float* a) {
  if (threadIdx.x < 16) { __syncthreads(); }
  a[threadIdx.x] = 0;
}
"""
PLAIN = "__global__ void k(float* a) { a[threadIdx.x] = 1.0f; }\n"


def _run(path: Path, settings: Settings):
    engine = Engine(settings)
    result = run([str(path)], settings, Mode.CHECK, engine)
    return engine, [f.to_dict() for f in result.findings]


def test_rules_whose_words_a_file_lacks_are_not_compiled(tmp_path, monkeypatch):
    monkeypatch.setenv("CUDA2HIP_CACHE_DIR", str(tmp_path / "cache"))
    barrier, plain = tmp_path / "barrier.cu", tmp_path / "plain.cu"
    barrier.write_text(BARRIER)
    plain.write_text(PLAIN)
    settings = Settings(root=tmp_path, jobs=1)
    # First run: no pre-filter data cached yet, every rule compiles.
    first, expected_plain = _run(plain, settings)
    assert first.compiled_for("cuda")  # (already compiled: nothing deferred)
    assert tmp_path.joinpath("cache", STORE).is_file()  # the pre-filter data is stored

    plain.write_text(PLAIN + "// edited (not served by the result cache)\n")
    second, got_plain = _run(plain, settings)
    compiled = set(second._compiled_rules)
    assert "barrier-in-thread-dependent-flow" not in compiled  # no __syncthreads in plain.cu
    assert "cuda-runtime-api" in compiled  # no pre-filter: compiled for every file that runs
    assert got_plain == expected_plain
    entries = second._entries_for("cuda")
    assert any(type(e) is Deferred and e.id == "barrier-in-thread-dependent-flow" for e in entries)

    # A file holding the words compiles the rule and gets the same findings as with every
    # rule compiled.
    third, got_barrier = _run(barrier, settings)
    assert "barrier-in-thread-dependent-flow" in third._compiled_rules
    everything = Engine(Settings(root=tmp_path, jobs=1, use_cache=False))
    everything.compiled_for("cuda")
    full = run([str(barrier)], everything.settings, Mode.CHECK, everything)
    assert got_barrier == [f.to_dict() for f in full.findings]
    assert any(f["code"] == "HIP401" for f in got_barrier)


def test_results_from_the_result_cache_compile_no_rule(tmp_path, monkeypatch):
    """A run whose files' results all come from the result cache compiles no file rule: rules
    that need no word are deferred too (their pre-filter data is cached as well), and the
    header scope check (HIP005) compiles the engine's diagnostics only."""
    from cuda2hip.engine.engine import LOCAL_HEADER_NOT_MIGRATED

    monkeypatch.setenv("CUDA2HIP_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "defs.cuh").write_text("#include <cuda_runtime.h>\ninline void g(float* p) { cudaFree(p); }\n")
    main = tmp_path / "main.cu"
    main.write_text('#include "defs.cuh"\n' + PLAIN)
    settings = Settings(root=tmp_path, jobs=1)
    _, expected = _run(main, settings)
    assert any(f["code"] == "HIP005" for f in expected)  # defs.cuh is outside the run
    engine, got = _run(main, settings)  # served by the result cache
    assert got == expected
    compiled = engine._compiled_rules
    assert LOCAL_HEADER_NOT_MIGRATED in compiled
    assert {r.rule.kind for r in compiled.values()} == {"diagnostic"}  # the engine's own, cheap


def test_a_changed_rule_file_is_compiled_again(tmp_path, monkeypatch):
    monkeypatch.setenv("CUDA2HIP_CACHE_DIR", str(tmp_path / "cache"))
    rules = tmp_path / "rules"
    rules.mkdir()
    rule = rules / "mine.yaml"
    text = ("code: USR001\nid: my-rule\nkind: pattern\nseverity: warning\nsummary: s\nmessage: m\n"
            "docs: {what: w, why: y}\nrule: {pattern: fooBar($$$A)}\n")
    rule.write_text(text)
    src = tmp_path / "a.cu"
    src.write_text("void f() { bazQux(1); }\n")
    settings = Settings(root=tmp_path, jobs=1, rule_dirs=(str(rules),), select=("USR001",))
    assert _run(src, settings)[1] == []
    src.write_text("void f() { bazQux(2); }\n")
    engine, _ = _run(src, settings)
    assert "my-rule" not in engine._compiled_rules
    rule.write_text(text.replace("fooBar", "bazQux"))
    engine, found = _run(src, settings)
    assert [f["code"] for f in found] == ["USR001"]


def test_rule_caches_follow_the_content_of_rule_files(tmp_path, monkeypatch):
    """An edit that keeps the rule file's size and modification time (an editor or checkout
    restoring the mtime) still changes the result: the caches are keyed by content."""
    import os

    from cuda2hip.cache import keys as content_keys

    monkeypatch.setenv("CUDA2HIP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(content_keys, "RACY_S", 0.0)  # trust remembered hashes at once
    rules = tmp_path / "rules"
    rules.mkdir()
    rule = rules / "mine.yaml"
    text = ("code: USR001\nid: my-rule\nkind: pattern\nseverity: warning\nsummary: s\nmessage: m\n"
            "docs: {what: w, why: y}\nrule: {pattern: fooBar($$$A)}\n")
    rule.write_text(text)
    src = tmp_path / "a.cu"
    src.write_text("void f() { bazQux(1); }\n")
    # use_cache=False (--no-cache) turns off the result cache only: the rule caches are used.
    settings = Settings(root=tmp_path, jobs=1, rule_dirs=(str(rules),), select=("USR001",), use_cache=False)
    assert _run(src, settings)[1] == []
    assert tmp_path.joinpath("cache", STORE).is_file()
    before = rule.stat()
    rule.write_text(text.replace("fooBar", "bazQux"))  # same size
    os.utime(rule, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert rule.stat().st_size == before.st_size and rule.stat().st_mtime_ns == before.st_mtime_ns
    content_keys._memo = None  # as a new process: the memo is read from the cache
    from cuda2hip.rulebook import loader

    loader._LOADED.clear()
    assert [f["code"] for f in _run(src, settings)[1]] == ["USR001"]


def test_rule_caches_follow_the_data_beside_the_rules(tmp_path, monkeypatch):
    """The words a rule is pre-filtered by can come from its data (struct-fields.json gives
    struct-field-missing's): new data beside the rule files keys new rule caches, so that no
    run skips a rule by the words of the old data."""
    from cuda2hip.rulebook import loader

    monkeypatch.setenv("CUDA2HIP_CACHE_DIR", str(tmp_path / "cache"))
    rules = tmp_path / "rules"
    (rules / "data").mkdir(parents=True)
    (rules / "mine.yaml").write_text(
        "code: USR001\nid: my-rule\nkind: pattern\nseverity: warning\nsummary: s\nmessage: m\n"
        "docs: {what: w, why: y}\nrule: {pattern: fooBar($$$A)}\n")
    table = rules / "data" / "names.json"
    other = rules / "collisions.json"  # data outside a data/ folder counts too
    table.write_text('{"a": 1}')
    other.write_text("[]")
    sources = [loader.RuleSource(rules, builtin=False)]
    keys = [loader.load_rules_keyed(sources)[1]]
    table.write_text('{"b": 1}')
    keys.append(loader.load_rules_keyed(sources)[1])
    other.write_text("[1]")
    keys.append(loader.load_rules_keyed(sources)[1])
    assert None not in keys and len(set(keys)) == 3
    assert [p.name for p in loader.rule_files(rules)] == ["mine.yaml"]


def _checks(obj) -> list[str]:
    """Predicate names a rule object (as plain data) uses."""
    if isinstance(obj, dict):
        found = []
        check = obj.get("check")
        if isinstance(check, str):
            found.append(check)
        elif isinstance(check, dict):
            found.append(check["name"])
        for value in obj.values():
            found += _checks(value)
        return found
    if isinstance(obj, list):
        return [name for item in obj for name in _checks(item)]
    return []


def test_predicate_requires_words_occur_in_every_case_that_fires():
    """A predicate declaring `requires` makes files without those words skip its rules: every
    `invalid` case of a built-in rule using it must hold one of the words."""
    import msgspec

    from cuda2hip.engine.engine import load_all_rules
    from cuda2hip.engine.predicates import predicate_requires

    checked = 0
    for rule in load_all_rules(Settings(use_cache=False), tests=True):
        if rule.rule is None:
            continue
        for name in _checks(msgspec.to_builtins(rule.rule)):
            words = predicate_requires(name)
            if words is None:
                continue
            for case in rule.tests.invalid:
                code = case if isinstance(case, str) else case.code
                assert any(w in code for w in words), (rule.code, name, code)
                checked += 1
    assert checked >= 5


def test_built_in_rules_read_from_their_files_are_not_walked_again_in_the_process(tmp_path, monkeypatch):
    """A process that validated the built-in rules from their YAML (no cache file yet: a new
    cache folder, a new version) keeps them as it keeps rules read from the cache: its next
    load walks and fingerprints no rule file."""
    from cuda2hip.rulebook import loader

    monkeypatch.setenv("CUDA2HIP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(loader, "_LOADED", {})
    monkeypatch.setattr(loader, "_BUILTIN", {})
    sources = [loader.RuleSource(loader.builtin_rules_dir(), builtin=True)]
    first = loader.load_rules_keyed(sources)
    assert store.get(store.key("rules", first[1])) is not None  # the miss stored them
    walks = []
    real = loader.rule_files
    monkeypatch.setattr(loader, "rule_files", lambda *a, **k: walks.append(a) or real(*a, **k))
    again = loader.load_rules_keyed(sources)
    assert walks == []
    assert again[1] == first[1] and [r.id for r in again[0]] == [r.id for r in first[0]]


def test_pre_filter_data_is_decoded_once_per_process(tmp_path, monkeypatch):
    """Each run's engine reads the pre-filter data: decoded once per process, the data this
    process writes kept as written; each engine gets a copy of its own to add to."""
    import msgspec

    from cuda2hip.rulebook import loader

    monkeypatch.setenv("CUDA2HIP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(loader, "_PREFILTERS_READ", {})
    store.put(store.key("prefilters", "k"), msgspec.msgpack.encode({"a": (("fooBar",), None)}))
    decoded = []
    real = msgspec.msgpack.decode
    monkeypatch.setattr(msgspec.msgpack, "decode", lambda *a, **k: decoded.append(1) or real(*a, **k))
    first = loader.read_prefilters("k")
    first["b"] = (("added",), None)
    second = loader.read_prefilters("k")
    assert second == {"a": (("fooBar",), None)} and len(decoded) == 1
    loader.write_prefilters("k", {"a": (("fooBar",), None), "c": (("bazQux",), None)})
    assert loader.read_prefilters("k") == {"a": (("fooBar",), None), "c": (("bazQux",), None)}
    assert len(decoded) == 1
