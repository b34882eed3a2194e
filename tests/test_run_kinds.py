"""A run over many files captures, with one dispatch query, every node kind any of its rules
visits (frontends/cuda.py, `_RUN_KINDS`); files that keep fewer rules see extra nodes no rule of
theirs wants. Their findings and fixed text must be exactly those of a run over the file alone."""

from __future__ import annotations

from pathlib import Path

from conftest import FIXTURES, ROOT
from cuda2hip.engine.engine import Engine
from cuda2hip.engine.frontends import cuda
from cuda2hip.lang import parse as parsing
from cuda2hip.results import SourceFile
from cuda2hip.run import workers as runner
from cuda2hip.settings import Settings


def _results(files, engine, settings):
    out = runner.run_files(files, settings, runner.Mode.PREVIEW, engine)
    return {r.path: ([f.to_dict() for f in r.findings], [f.to_dict() for f in r.fixed], r.migrated) for r in out}


def test_many_file_run_gives_what_each_file_alone_gives(monkeypatch):
    monkeypatch.setattr(parsing, "WALK_BYTES_BEFORE_QUERY", 0)  # always query, both ways
    monkeypatch.setattr(cuda, "_RUN_KINDS", None)
    paths = sorted(FIXTURES.rglob("*.cu")) + sorted((ROOT / "examples").rglob("*.cu"))
    files = [SourceFile(path=p, language="cuda") for p in paths]
    assert len(files) >= runner.PARALLEL_THRESHOLD
    settings = Settings(root=Path.cwd(), jobs=1, use_cache=False)
    together = _results(files, Engine(settings), settings)
    assert cuda._RUN_KINDS  # the many-file path was taken
    monkeypatch.setattr(cuda, "_RUN_KINDS", None)
    alone = {}
    for item in files:
        alone.update(_results([item], Engine(settings), settings))
        assert cuda._RUN_KINDS is None
    assert together == alone
