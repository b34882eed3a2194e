"""The YAML data files the checks read (rulebook/data_files.py): parsed once, then read from the
store; a broken file is a clear error, whatever its fault, and every run sees the same values."""

from __future__ import annotations

import pytest

from cuda2hip.api.build_tables import TableError, library_table_file
from cuda2hip.cache import store
from cuda2hip.rulebook.data_files import DataFileError, load_data

pytestmark = pytest.mark.unit


@pytest.fixture(autouse=True)
def own_store(tmp_path, monkeypatch):
    monkeypatch.setenv("CUDA2HIP_CACHE_DIR", str(tmp_path / "cache"))
    yield
    store.flush()


def test_invalid_yaml_is_a_value_error_naming_the_fault(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("- names: [a\n  bad: : :\n")
    with pytest.raises(DataFileError, match="not valid YAML"):
        load_data(str(bad))
    library_table_file.cache_clear()
    with pytest.raises(TableError, match=r"bad\.yaml: cannot read table: not valid YAML"):
        library_table_file(str(bad))


def test_a_value_msgpack_cannot_hold_is_read_from_the_file_each_time(tmp_path):
    big = tmp_path / "big.yaml"
    big.write_text("- value: 18446744073709551616\n")
    assert load_data(str(big)) == [{"value": 2**64}]
    store.flush()
    assert load_data(str(big)) == [{"value": 2**64}]


def test_the_first_run_sees_what_later_runs_read_from_the_store(tmp_path):
    dated = tmp_path / "dated.yaml"
    dated.write_text("- note: 2024-01-01\n")
    first = load_data(str(dated))
    store.flush()
    assert first == load_data(str(dated)) == [{"note": "2024-01-01"}]
