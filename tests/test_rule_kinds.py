"""Compiling a rule imports the module of its kind only (compiled.CORE_KIND_MODULES), and that
table names every kind the CUDA frontend's modules register, with the module registering it."""

from __future__ import annotations

import subprocess
import sys

from cuda2hip.engine import compiled


def test_the_table_of_core_kinds_is_the_registry():
    compiled._load_core_kinds()
    registered = {kind: cls.__module__ for kind, cls in compiled._KINDS.items() if kind in compiled.CORE_KIND_MODULES}
    assert registered == compiled.CORE_KIND_MODULES


def test_compiling_a_rule_imports_the_module_of_its_kind_only():
    # A fresh process: the modules of other kinds are not imported (a run served by the result
    # cache compiles the engine's diagnostics, and nothing else).
    code = """
import sys
from cuda2hip.engine.compiled import CORE_KIND_MODULES, compile_rule
from cuda2hip.engine.engine import load_all_rules
from cuda2hip.settings import Settings
settings = Settings()
rule = next(r for r in load_all_rules(settings) if r.kind == "diagnostic")
compile_rule(rule, settings)
print(sorted(m for m in set(CORE_KIND_MODULES.values()) if m in sys.modules))
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "['cuda2hip.engine.diagnostics']"
