"""Checks shared by the migration tests: no CUDA token left without a finding, and no HIP API
newer than the targeted ROCm in the output."""

from __future__ import annotations

import re

from cuda2hip.api.tables import all_table_paths, load_table, version_tuple
from cuda2hip.lang import parse as parsing

# The Done-when patterns of issue 3: cuda*, cu[A-Z]*, CU_*, CUDA_*, and the math libraries'.
CUDA_TOKEN = re.compile(
    r"^(?:cuda\w+|cu[A-Z]\w*|CU_\w*|CUDA_\w*|CU[A-Za-z]\w*|(?:cublas|curand|cufft|cusparse|cusolver|cudnn|"
    r"cufile|nvrtc)\w*|(?:CUBLAS|CURAND|CUFFT|CUSPARSE|CUSOLVER|CUDNN|NVRTC|CUB)_\w*|__nv_\w+|__CUDA\w*|cuda|cub)$")
_NOT_CODE = {"comment", "string_literal", "raw_string_literal", "char_literal", "system_lib_string"}
_ID = re.compile(rb"[A-Za-z_]\w*")


def cuda_tokens(data: bytes) -> list[tuple[int, str]]:
    """(byte offset, text) of CUDA-looking identifiers in code: comments, strings and include
    paths excluded; `#define` bodies included (token by token)."""
    tree = parsing.parse("cuda", data)
    out = []

    def walk(node):
        if node.type in _NOT_CODE:
            return
        if node.type == "preproc_include":
            return
        if node.type == "preproc_arg":
            text = data[node.start_byte:node.end_byte]
            # Strip string literals and comments of the body before scanning.
            masked = re.sub(rb'"(?:\\.|[^"\\\n])*"|//[^\n]*|/\*.*?\*/', lambda m: b" " * len(m.group()), text, flags=re.S)
            for m in _ID.finditer(masked):
                word = m.group().decode()
                if CUDA_TOKEN.match(word):
                    out.append((node.start_byte + m.start(), word))
            return
        if node.child_count == 0 and node.type in ("identifier", "type_identifier", "field_identifier",
                                                   "namespace_identifier"):
            word = data[node.start_byte:node.end_byte].decode()
            if CUDA_TOKEN.match(word):
                out.append((node.start_byte, word))
        for c in node.children:
            walk(c)

    walk(tree.root_node)
    return out


def same_name_in_hip() -> frozenset[str]:
    """CUDA names the tables map to themselves (valid HIP as written, e.g. `CUB_MAX`)."""
    names = set()
    for path in all_table_paths():
        for name, entry in load_table(path).items():
            if entry.hip == entry.cuda:
                names.add(entry.cuda)
    return frozenset(names)


def unreported_tokens(data: bytes, findings: list[dict], path_defs: frozenset[str] = frozenset()) -> list[str]:
    """CUDA tokens of `data` with no finding starting at their line and column, nor one on their
    line whose message names them (findings in the JSON report shape). Tokens the project itself defines are covered by the finding at their
    definition (`path_defs`: names with such a finding somewhere in the tree)."""
    same = same_name_in_hip()
    at = {(f["line"], f["column"]) for f in findings}
    # A finding about a whole condition (e.g. HIP504 on `defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 530`)
    # covers every use it names on its line.
    named = {(f["line"], w) for f in findings for w in re.findall(r"\w+", f["message"])}
    text = data.decode()
    out = []
    for offset, word in cuda_tokens(data):
        if word in same or word in path_defs:
            continue
        line = text.count("\n", 0, len(data[:offset].decode())) + 1
        col = len(data[:offset].decode()) - (text.rfind("\n", 0, len(data[:offset].decode())) + 1) + 1
        if (line, col) not in at and (line, word) not in named:
            out.append(f"{line}:{col} {word}")
    return out


def newer_hip_names(data: bytes, target: str, profile: str = "hip") -> list[str]:
    """HIP/roc* identifiers in `data` that the tables say appeared after ROCm `target`."""
    limit = version_tuple(target)
    added: dict[str, str] = {}
    for path in all_table_paths():
        for entry in load_table(path).values():
            for name, version in ((entry.hip, entry.hip_added), (entry.roc, entry.roc_added)):
                if name and version and name != entry.cuda:
                    # a name listed by several rows counts with its earliest version
                    old = added.get(name)
                    if old is None or version_tuple(version) < version_tuple(old):
                        added[name] = version
    out = []
    for m in _ID.finditer(data):
        word = m.group().decode()
        v = added.get(word)
        if v is not None and version_tuple(v) > limit:
            out.append(f"{word} (ROCm {v})")
    return out


# Errors inside a newer release's own headers that this hipcc (clang 15) gives whatever the code
# compiled: (file under usr/include, message, why). Sid's hipcc is clang 21.
KNOWN_HEADER_ERRORS = (
    ("hip/amd_detail/amd_warp_functions.h", "use of undeclared identifier '__builtin_amdgcn_ballot_w64'",
     "HIP 6.4's __ballot calls __builtin_amdgcn_ballot_w64, a builtin clang 15 does not have"),
)
ERROR_AT = re.compile(r"^(.+?):\d+:\d+: (?:fatal )?error: (.*)$", re.M)


def release_errors(stderr: str, src, include) -> tuple[list[str], list[str]]:
    """hipcc's errors (compiled with a release's headers under `include`): (those in the compiled
    file `src`, those elsewhere that KNOWN_HEADER_ERRORS does not list)."""
    root = str(include) + "/"
    own, unknown = [], []
    for path, message in ERROR_AT.findall(stderr):
        if path.endswith(src.name):
            own.append(f"{path}: {message}")
        elif not any(path == root + f and message == m for f, m, _why in KNOWN_HEADER_ERRORS):
            unknown.append(f"{path}: {message}")
    return own, unknown


_ERROR_LINE = re.compile(r"^[^:\s]+\.hip:(\d+):\d+: error:", re.M)


def migrated_fixture(run_cli, source, expected=None, target: str = "5.2") -> str:
    """`fix --target-rocm TARGET --stdout` of `source`, compared with the file `expected` if given
    (CUDA2HIP_UPDATE_FIXTURES=1 rewrites it)."""
    import os

    proc = run_cli("fix", "--isolated", "--no-cache", "--target-rocm", target, "--stdout", source)
    assert proc.returncode in (0, 1), proc.stderr
    if expected is None:
        return proc.stdout
    if os.environ.get("CUDA2HIP_UPDATE_FIXTURES") == "1":
        expected.write_text(proc.stdout)
    assert proc.stdout == expected.read_text()
    return proc.stdout


def assert_findings_are_the_rejected_lines(run_cli, hipcc, migrated, codes, tmp_path) -> None:
    """The lines the release's hipcc rejects in the file migrated for it are exactly the lines
    `check --target-rocm` (that release) reports with a warning or an error of `codes`; at 5.2 the
    compile must fail (a negative control: the fixtures were written for what HIP 5.2 lacks)."""
    import json

    src = tmp_path / "input.hip"
    src.write_text(migrated)
    check = run_cli("check", "--isolated", "--no-cache", "--target-rocm", hipcc.release, "--format", "json",
                    src.name, cwd=tmp_path)
    findings = json.loads(check.stdout)["findings"]
    reported = {f["line"] for f in findings if f["code"] in codes and f["severity"] in ("warning", "error")}
    proc = hipcc(src, "-std=c++17", "-ferror-limit=0")
    rejected = {int(n) for n in _ERROR_LINE.findall(proc.stderr)}
    if not rejected:
        assert proc.returncode == 0, proc.stderr
    if hipcc.release == "5.2":
        assert proc.returncode != 0 and rejected, proc.stderr
    assert reported == rejected, (f"lines with a finding but no error: {sorted(reported - rejected)}; "
                                  f"errors without a finding: {sorted(rejected - reported)}\n{proc.stderr}")
