"""Predicate and fix-builder modules are imported per module, through the index in
cuda2hip/match/plugins/__init__.py: the index must name every registered function and its module."""

from __future__ import annotations

import importlib
import json
import pkgutil
import subprocess
import sys

import pytest

from cuda2hip.checks import plugins
from cuda2hip.engine import builders, predicates


def _registered(registry: dict) -> dict[str, str]:
    return {name: fn.__module__ for name, fn in registry.items() if fn.__module__.startswith("cuda2hip.checks.")}


def test_plugin_index_names_every_registered_function_and_its_module():
    for module in plugins.MODULES:
        importlib.import_module(module)
    assert _registered(predicates._PREDICATES) == plugins.PREDICATES
    assert _registered(builders._BUILDERS) == plugins.BUILDERS
    assert sorted(plugins.MODULES) == sorted(set(plugins.PREDICATES.values()) | set(plugins.BUILDERS.values()))


def test_a_predicate_loads_only_its_own_module():
    code = ("import sys\nfrom cuda2hip.engine.predicates import get_predicate\n"
            "get_predicate('inline-ptx')\n"
            "print(sorted(m for m in sys.modules if m.startswith('cuda2hip.checks.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(out.replace("'", '"')) == ["cuda2hip.checks.hazards", "cuda2hip.checks.plugins"]


def test_unknown_predicate_still_lists_every_known_name():
    with pytest.raises(KeyError) as exc:
        predicates.get_predicate("no-such-predicate")
    assert "warp-sync-unavailable" in str(exc.value) and "blocking-copy-call" in str(exc.value)
