"""The package's shape, enforced: the import-linter contracts of pyproject.toml (the layers, and no
import cycle between the modules or packages of any package, lazy imports included) and no module
longer than MAX_LINES."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 400


def test_import_contracts_are_kept(monkeypatch, capsys):
    from importlinter.cli import lint_imports  # a dev extra (pip install -e '.[dev]')

    monkeypatch.chdir(ROOT)  # the contracts are read from pyproject.toml of the working directory
    code = lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True)
    out = capsys.readouterr().out
    assert code == 0, out[out.find("Broken contracts"):] if "Broken contracts" in out else out
    assert "BROKEN" not in out


def test_no_module_is_longer_than_the_limit():
    long = {str(p.relative_to(ROOT)): n for p in (ROOT / "cuda2hip").rglob("*.py")
            if "__pycache__" not in p.parts and (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert long == {}, f"split these modules (one idea per module, {MAX_LINES} lines at most): {long}"
