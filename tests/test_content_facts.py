"""What local headers define and need is kept on disk by content (cuda2hip/content_facts.py), so
that a pre-commit call on a file does not parse every header the file includes again. These
tests show that a later process reads the stored facts (a planted fact changes its findings),
that --no-cache runs never do, and that a damaged or untrusted store only costs time."""

from __future__ import annotations

import json
import sqlite3
import os

from conftest import run_process

HEADER = "#pragma once\ninline int cudaMyHelper() { return 1; }\n"
MAIN = '#include "helper.cuh"\nint use() { return cudaMyHelper(); }\n'


def _project(tmp_path):
    (tmp_path / "helper.cuh").write_text(HEADER)
    (tmp_path / "main.cu").write_text(MAIN)
    return {"CUDA2HIP_CACHE_DIR": str(tmp_path / "cache")}


def _unknown_helper(tmp_path, env, *extra, edit: str) -> bool:
    """Whether `check main.cu` reports cudaMyHelper as an unknown CUDA name (main.cu edited
    first, so that its own result is never the result cache's). A process of its own: what one
    run left in the store is what the next one reads."""
    (tmp_path / "main.cu").write_text(MAIN + f"// {edit}\n")
    res = run_process("check", "--format", "json", *extra, "main.cu", cwd=tmp_path, env=env)
    assert res.returncode in (0, 1), res.stderr
    return any("cudaMyHelper" in f["message"] for f in json.loads(res.stdout)["findings"])


class _Entry:
    """A fact in the store (store.py) of the tests' cache folder, read and written directly."""

    def __init__(self, tmp_path, kind: str, data: bytes):
        from cuda2hip.cache import store
        from cuda2hip.cache.digest import blake2b

        self.db = tmp_path / "cache" / store.DB_NAME
        self.key = store.key("fact", kind, blake2b(data, digest_size=16).digest())

    def read_bytes(self) -> bytes | None:
        con = sqlite3.connect(self.db)
        row = con.execute("SELECT value FROM store WHERE key = ?", (self.key,)).fetchone()
        con.close()
        return None if row is None else bytes(row[0])

    def write_bytes(self, value: bytes) -> None:
        con = sqlite3.connect(self.db)
        con.execute("UPDATE store SET value = ? WHERE key = ?", (value, self.key))
        con.commit()
        con.close()


def _definitions_entry(tmp_path):
    entry = _Entry(tmp_path, "definitions", (tmp_path / "helper.cuh").read_bytes())
    assert entry.read_bytes() is not None
    return entry


def _plant(entry, names: list[bytes]) -> None:
    import msgspec

    from cuda2hip.run.cached import seal

    entry.write_bytes(seal(msgspec.msgpack.encode(names)))


def test_a_later_run_reads_what_the_header_defines_from_the_store(tmp_path):
    env = _project(tmp_path)
    assert not _unknown_helper(tmp_path, env, edit="1")  # defined in the header
    entry = _definitions_entry(tmp_path)
    _plant(entry, [])  # the store now says the header defines nothing
    assert _unknown_helper(tmp_path, env, edit="2")  # read, not parsed again
    assert not _unknown_helper(tmp_path, env, "--no-cache", edit="3")  # --no-cache derives afresh


def test_an_edited_header_is_a_new_entry(tmp_path):
    env = _project(tmp_path)
    assert not _unknown_helper(tmp_path, env, edit="1")
    _plant(_definitions_entry(tmp_path), [])
    (tmp_path / "helper.cuh").write_text(HEADER + "// edited\n")  # other content: other key
    assert not _unknown_helper(tmp_path, env, edit="2")


def test_a_damaged_entry_is_derived_again_and_replaced(tmp_path):
    env = _project(tmp_path)
    assert not _unknown_helper(tmp_path, env, edit="1")
    entry = _definitions_entry(tmp_path)
    good = entry.read_bytes()
    entry.write_bytes(good[:-3])  # truncated: fails its checksum
    assert not _unknown_helper(tmp_path, env, edit="2")
    assert entry.read_bytes() == good


def test_a_store_open_to_others_is_not_read(tmp_path):
    env = _project(tmp_path)
    assert not _unknown_helper(tmp_path, env, edit="1")
    entry = _definitions_entry(tmp_path)
    _plant(entry, [])
    os.chmod(tmp_path / "cache", 0o777)  # anyone could have written the planted entry
    assert not _unknown_helper(tmp_path, env, edit="2")


def test_what_a_header_needs_and_includes_is_read_from_the_store(tmp_path):
    """hip-runtime-include asks of each local header whether it will have the runtime (it needs
    it, so it gets the include): kept by content as well. A header that declares a kernel covers
    the file that includes it; planted facts saying it needs nothing and includes nothing make
    the file need its own include."""
    import msgspec

    from cuda2hip.run.cached import seal

    (tmp_path / "k.cuh").write_text("#pragma once\n__global__ void k(float* x);\n")
    main = '#include "k.cuh"\nvoid run(float* x) { k<<<1, 1>>>(x); }\n'
    env = {"CUDA2HIP_CACHE_DIR": str(tmp_path / "cache")}

    def runtime_missing(edit: str, *extra) -> bool:
        (tmp_path / "main.cu").write_text(main + f"// {edit}\n")
        res = run_process("check", "--format", "json", *extra, "main.cu", cwd=tmp_path, env=env)
        assert res.returncode in (0, 1), res.stderr
        return any(f["code"] == "HIP121" for f in json.loads(res.stdout)["findings"])

    assert not runtime_missing("1")
    from cuda2hip.cache import store
    from cuda2hip.run.cached import unseal

    def runtime_fact(value: bytes) -> bool:  # (need, includes): a pair, where results have 7 fields
        got = unseal(value)
        decoded = None if got is None else msgspec.msgpack.decode(got)
        return isinstance(decoded, list) and len(decoded) == 2 and isinstance(decoded[0], int)

    con = sqlite3.connect(tmp_path / "cache" / store.DB_NAME)
    [key] = [k for k, v in con.execute("SELECT key, value FROM store") if runtime_fact(bytes(v))]
    con.execute("UPDATE store SET value = ? WHERE key = ?", (seal(msgspec.msgpack.encode((0, []))), key))
    con.commit()
    con.close()
    assert runtime_missing("2")
    assert not runtime_missing("3", "--no-cache")
