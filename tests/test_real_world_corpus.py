"""bench/realworld: the corpus definition (pinned sources, code bases, human ports), fetching an
archive pinned by its hash, staging a code base and its own HIP port, choosing the units, and
the fair-set arithmetic (cuda2hip measured on the units the project's own port compiles).
No network and no compiler: a PyPI index made on disk stands in for PyPI."""

from __future__ import annotations

import hashlib
import io
import json
import re
import sys
import tarfile

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
from realworld import config, fetch, report, units  # noqa: E402
from realworld.config import Codebase, HumanPort, Source  # noqa: E402
from realworld.harness import CodebaseResult, Failure, Unit, Validated, fair_compiled, port_units  # noqa: E402

SOURCES, CODEBASES = config.load()


# -- the corpus definition ----------------------------------------------------------------------

def test_the_corpus_has_eight_code_bases_two_of_them_with_their_own_port():
    assert len(CODEBASES) >= 8
    assert len({c.slug for c in CODEBASES}) == len(CODEBASES)
    ported = [c.name for c in CODEBASES if c.human_port]
    assert len(ported) >= 2, ported
    assert all(c.human_port.what for c in CODEBASES if c.human_port)


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_every_source_is_pinned_by_version_and_sha256(name):
    source = SOURCES[name]
    assert source.type in ("pypi", "debian")
    assert re.fullmatch(r"[0-9a-f]{64}", source.sha256)
    assert source.version and source.package
    if source.type == "debian":
        assert source.suite


@pytest.mark.parametrize("codebase", CODEBASES, ids=[c.slug for c in CODEBASES])
def test_every_code_base_names_its_units_inside_its_files(codebase):
    assert codebase.units or codebase.embedded
    for pattern, _replacement in codebase.human_port.units if codebase.human_port else ():
        re.compile(pattern)
    for rel in codebase.generated:
        assert not rel.startswith("/") and ".." not in rel.split("/")


def test_a_human_port_table_is_read(tmp_path):
    corpus = tmp_path / "corpus.toml"
    corpus.write_text('''
[sources.s]
type = "pypi"
package = "p"
version = "1"
sha256 = "00"

[[codebase]]
name = "k"
source = "s"
root = "."
files = ["*.cu"]
units = ["*.cu"]

[codebase.human_port]
what = "hand-written .hip files"
defines = ["USE_HIP"]
units = [["(.*)\\\\.cu", "\\\\1.hip"]]

[codebase.generated]
"build/config.h" = "#define X 1\\n"
''')
    _sources, (codebase,) = config.load(corpus)
    assert codebase.human_port == HumanPort(what="hand-written .hip files", defines=("USE_HIP",),
                                            units=((r"(.*)\.cu", r"\1.hip"),))
    assert codebase.generated == {"build/config.h": "#define X 1\n"}


# -- fetching: pinned by hash -----------------------------------------------------------------

def _sdist(tmp_path, members: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, text in members.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _index(tmp_path, package: str, version: str, archive: bytes, sha256: str | None = None) -> str:
    """A PyPI JSON API on disk (file: URLs); the sdist's URL is relative, as a mirror's may be."""
    root = tmp_path / "pypi"
    (root / package).mkdir(parents=True)
    (root / "files").mkdir()
    (root / "files" / f"{package}-{version}.tar.gz").write_bytes(archive)
    release = [{"packagetype": "sdist", "filename": f"{package}-{version}.tar.gz",
                "url": f"../files/{package}-{version}.tar.gz",
                "digests": {"sha256": sha256 or hashlib.sha256(archive).hexdigest()}}]
    (root / package / "json").write_text(json.dumps({"releases": {version: release}}))
    return root.as_uri()


def test_a_pinned_sdist_is_downloaded_checked_and_extracted_once(tmp_path):
    archive = _sdist(tmp_path, {"pkg-1.0/kernel.cu": "__global__ void k() {}\n"})
    pypi = _index(tmp_path, "pkg", "1.0", archive)
    source = Source("pkg", "pypi", "pkg", "1.0", hashlib.sha256(archive).hexdigest())
    tree = fetch.fetch(source, tmp_path / "cache", pypi=pypi)
    assert (tree / "pkg-1.0" / "kernel.cu").read_text() == "__global__ void k() {}\n"
    # Fetched: the stamp answers, neither the index nor the download is asked again.
    (tmp_path / "pypi" / "pkg" / "json").unlink()
    (tmp_path / "cache" / "downloads" / "pkg-1.0.tar.gz").unlink()
    assert fetch.fetch(source, tmp_path / "cache", pypi=pypi) == tree


def test_an_archive_whose_hash_differs_from_the_pin_is_refused(tmp_path):
    archive = _sdist(tmp_path, {"pkg-1.0/kernel.cu": "changed upstream\n"})
    pinned = hashlib.sha256(b"what was pinned").hexdigest()
    # The index claims the pinned hash; the bytes served are something else.
    pypi = _index(tmp_path, "pkg", "1.0", archive, sha256=pinned)
    with pytest.raises(fetch.FetchError, match="sha256"):
        fetch.fetch(Source("pkg", "pypi", "pkg", "1.0", pinned), tmp_path / "cache", pypi=pypi)
    assert not (tmp_path / "cache" / "sources" / "pkg").exists()
    assert not (tmp_path / "cache" / "downloads" / "pkg-1.0.tar.gz").exists()


def test_a_version_without_the_pinned_sdist_is_an_error(tmp_path):
    archive = _sdist(tmp_path, {"pkg-1.0/a.cu": ""})
    pypi = _index(tmp_path, "pkg", "1.0", archive)
    with pytest.raises(fetch.FetchError, match="no sdist"):
        fetch.fetch(Source("pkg", "pypi", "pkg", "1.0", "0" * 64), tmp_path / "cache", pypi=pypi)


def test_an_archive_cannot_write_outside_its_folder(tmp_path):
    archive = _sdist(tmp_path, {"../escape.cu": "x", "pkg-1.0/a.cu": ""})
    pypi = _index(tmp_path, "pkg", "1.0", archive)
    with pytest.raises(tarfile.OutsideDestinationError):
        fetch.fetch(Source("pkg", "pypi", "pkg", "1.0", hashlib.sha256(archive).hexdigest()),
                    tmp_path / "cache", pypi=pypi)
    assert not (tmp_path / "cache" / "sources" / "escape.cu").exists()
    assert not (tmp_path / "cache" / "sources" / "pkg").exists()


# -- staging and unit selection ---------------------------------------------------------------

def _source(tmp_path):
    root = tmp_path / "src" / "proj"
    for rel, text in {"include/lib.h": "#pragma once\n", "src/a.cu": "__global__ void a() {}\n",
                      "src/b.cu": "__global__ void b() {}\n", "src/host.cpp": "cudaMalloc(0, 0);\n",
                      "src/plain.cpp": "int main() {}\n", "src/a.hip": "// hand port of a.cu\n",
                      "vendors/hip.h": "#define cudaMalloc hipMalloc\n", "CMakeLists.txt": ""}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return tmp_path / "src"


def _codebase(**fields) -> Codebase:
    base = dict(name="proj", source="s", root="proj", files=("include/**", "src/**", "vendors/**"),
                exclude=("vendors/hip.h",), units=("src/*.cu", "src/*.cpp"), units_matching=r"\bcuda\w*")
    return Codebase(**{**base, **fields})


def test_units_are_the_matching_files_and_cpp_only_where_it_is_cuda(tmp_path):
    codebase = _codebase()
    tree = tmp_path / "in"
    staged = units.stage(codebase, _source(tmp_path), tree)
    assert "vendors/hip.h" not in staged and "CMakeLists.txt" not in staged
    assert units.translation_units(codebase, tree) == ["src/a.cu", "src/b.cu", "src/host.cpp"]


def test_the_port_tree_keeps_what_the_migration_input_leaves_out(tmp_path):
    codebase = _codebase(human_port=HumanPort(what="macros", defines=("USE_HIP",)),
                         generated={"build/config.h": "#define HAVE_CUDA 1\n"})
    source = _source(tmp_path)
    units.stage(codebase, source, tmp_path / "in")
    units.stage_port(codebase, source, tmp_path / "port")
    assert not (tmp_path / "in" / "vendors" / "hip.h").exists()
    assert (tmp_path / "port" / "vendors" / "hip.h").read_text() == "#define cudaMalloc hipMalloc\n"
    for tree in ("in", "port"):  # what the build system writes is in both trees
        assert (tmp_path / tree / "build" / "config.h").read_text() == "#define HAVE_CUDA 1\n"


def test_a_generated_file_cannot_leave_the_tree(tmp_path):
    codebase = _codebase(generated={"../outside.h": ""})
    with pytest.raises(ValueError, match="outside the tree"):
        units.stage(codebase, _source(tmp_path), tmp_path / "in")
    assert not (tmp_path / "outside.h").exists()


def test_a_unit_maps_to_its_hand_written_port_or_to_itself():
    port = HumanPort(what="hand-written .hip files", units=((r"src/(\w+)\.cu", r"src/\1.hip"),))
    assert units.port_path(port, "src/a.cu") == "src/a.hip"
    assert units.port_path(port, "src/host.cpp") == "src/host.cpp"
    assert units.port_path(HumanPort(what="macros"), "src/a.cu") == "src/a.cu"


def test_each_valid_unit_with_a_port_file_is_a_port_unit_and_a_kernel_is_its_own(tmp_path):
    port = HumanPort(what="hand-written .hip files", units=((r"src/(\w+)\.cu", r"src/\1.hip"),))
    codebase = _codebase(human_port=port)
    source = _source(tmp_path)
    units.stage_port(codebase, source, tmp_path / "port")
    kernel = units.Kernel("k.py", 0, "RawKernel", "", 1, True, False)
    valid = [Unit("src/a.cu", "src/a.cu"), Unit("src/b.cu", "src/b.cu"),  # b.hip was never written
             Unit("k.py#0", "../embedded-in/k.py.0.cu", kernel)]
    validated = Validated(codebase, tmp_path, tmp_path / "in", 4, valid, ["src/host.cpp"], tmp_path / "port")
    assert [(u.name, u.path) for u in port_units(validated)] == [("src/a.cu", "src/a.hip"),
                                                                 ("k.py#0", "../embedded-in/k.py.0.cu")]


# -- the fair set -----------------------------------------------------------------------------

def _ported(name: str, valid: int, port_compiles: list[str], migrated_fails: list[str],
            silent: list[str] = ()) -> CodebaseResult:
    failures = [Failure(u, "error", "", "" if u in silent else "HIP102 at x") for u in migrated_fails]
    return CodebaseResult(name, "7.2", units=valid, nvcc_valid=valid, compiled=valid - len(failures),
                          failures=failures, human_port=valid, human_compiled=list(port_compiles))


def test_the_fair_set_is_what_the_port_compiles_and_cuda2hip_is_counted_on_it():
    # 5 valid units; the port compiles a b c d; cuda2hip's output fails on c and e.
    result = _ported("k", 5, ["a", "b", "c", "d"], ["c", "e"])
    assert fair_compiled(result.human_compiled, result.failures) == 3
    assert result.fair_compiled == 3  # e fails too, but the port fails there as well: not counted
    assert report.port_cells([result]) == ["4 (80%)", "3 (75%)"]


def test_a_code_base_without_a_port_has_blank_port_cells_and_is_left_out_of_the_sum():
    plain = CodebaseResult("p", "7.2", units=9, nvcc_valid=9, compiled=9)
    ported = _ported("k", 4, ["a", "b"], ["b"])
    assert report.port_cells([plain]) == ["", ""]
    assert report.port_cells([plain, ported]) == ["2 (50%)", "1 (50%)"]


def test_the_tables_show_the_port_columns_only_when_a_code_base_has_a_port():
    plain = CodebaseResult("p", "7.2", units=3, nvcc_valid=2, compiled=2)
    ported = _ported("k", 4, ["a", "b", "c", "d"], ["d"], silent=["d"])
    lines = report.combined_table({"7.2": [plain, ported]}).splitlines()
    assert lines[0] == ("| code base | units | nvcc-valid | 7.2: compile | 7.2: predicted | 7.2: silent "
                        "| 7.2: human port | 7.2: cuda2hip on fair set |")
    assert lines[2] == "| p | 3 | 2 | 2 (100%) | 0 | 0 |  |  |"
    assert lines[3] == "| k | 4 | 4 | 3 (75%) | 0 | 1 | 4 (100%) | 3 (75%) |"
    assert lines[4] == "| **all** | 7 | 6 | 5 (83%) | 0 | 1 | 4 (100%) | 3 (75%) |"
    assert "human port" not in report.combined_table({"7.2": [plain]})
    assert report.markdown_table([plain, ported]).splitlines()[0].endswith("| human port | cuda2hip on fair set |")


def test_the_port_results_round_trip_through_the_results_json():
    ported = _ported("k", 4, ["a", "b"], ["b"])
    ported.human_errors = {"c": "c.cu:1:1: error: x"}
    data = report.to_json("x", {}, {"7.2": [ported]}, {"7.2": {"describe": "HIP 7.2"}})
    assert data["releases"]["7.2"]["codebases"][0]["fair_compiled"] == 1
    assert report.from_json(json.loads(json.dumps(data))) == {"7.2": [ported]}


# -- joining runs -----------------------------------------------------------------------------

def test_runs_are_joined_per_release_the_later_run_winning_in_corpus_order():
    import real_world

    def run(label, rev, by_release):
        return report.to_json(label, {"tool_rev": rev, "date": "2026-12-04", "seconds": 10.0}, by_release,
                              {r: {"describe": f"HIP {r}"} for r in by_release})

    def result(name, release, compiled):
        return CodebaseResult(name, release, units=5, nvcc_valid=5, compiled=compiled)

    old = run("old", "a" * 40, {"7.2": [result("A", "7.2", 1), result("B", "7.2", 2)],
                                "5.2": [result("A", "5.2", 3), result("B", "5.2", 4)]})
    new = run("new", "b" * 40, {"7.2": [result("C", "7.2", 5), result("B", "7.2", 5)]})
    data = real_world.combine([old, new], ["A", "B", "C"])
    joined = report.from_json(data)
    assert [(c.name, c.compiled) for c in joined["7.2"]] == [("A", 1), ("B", 5), ("C", 5)]
    assert [(c.name, c.compiled) for c in joined["5.2"]] == [("A", 3), ("B", 4)]
    assert data["runs"] == [{"label": "old", "tool_rev": "a" * 40, "date": "2026-12-04", "codebases": ["A", "B"]},
                            {"label": "new", "tool_rev": "b" * 40, "date": "2026-12-04", "codebases": ["B", "C"]}]
    block = real_world._doc_block(data, None, detail=False)
    assert block.startswith("This version, joined from runs (`old` (cuda2hip aaaaaaa, 2026-12-04): A, B; "
                            "`new` (cuda2hip bbbbbbb, 2026-12-04): B, C; 20 s in all")
