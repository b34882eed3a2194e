"""No rule recommends a HIP name that the newest release's headers lack: every `hip...`, `HIP_...`
and `__...` name in a rule's message, its `use_instead` example and its other message templates is
declared by HIP 7.2's headers (the ROCm library headers of Debian experimental, fetched by
tests/harness/fetch_rocm_release_headers.py) or by clang 22's HIP wrapper headers. (The HIP405
message recommended clang's `__AMDGCN_WAVEFRONT_SIZE`, which clang 22 no longer defines.)"""

from __future__ import annotations

import re
from pathlib import Path

import hip_toolchains
import pytest
import yaml

from conftest import ROOT

RELEASE_HEADERS = ROOT / ".cache" / "rocm-release-headers" / "experimental" / "usr" / "include"
_NAME = re.compile(r"\b(hip[A-Z]\w+|HIP_[A-Z]\w*|__[a-z]\w+)\b")
# names in those texts that are not HIP declarations: CUDA names a message describes, environment
# variables and build settings, name prefixes
NOT_DECLARATIONS = {"HIP_PLATFORM", "HIP_VISIBLE_DEVICES", "HIP_ARCHITECTURES", "__nv_", "__match_", "__reduce_",
                    "__grid_constant__", "__dp4a", "__nanosleep", "__stcs", "__stdcall", "hipDNN"}


def _declared() -> set[str]:
    words: set[str] = set()
    toolchain = hip_toolchains.get("7.2")
    roots = [RELEASE_HEADERS]
    if toolchain is not None:
        roots += list(Path(hip_toolchains.tree("7.2")).glob("toolchain/usr/lib/llvm-*/lib/clang/*/include"))
    for root in roots:
        for path in root.rglob("*"):
            if path.is_file():
                words.update(re.findall(r"\w+", path.read_text(encoding="utf-8", errors="replace")))
    return words


def _recommendations(rule: dict) -> list[str]:
    texts = [rule.get("message", "")]
    texts.append(str((rule.get("docs") or {}).get("use_instead", "")))
    messages = (rule.get("params") or {}).get("messages")
    if isinstance(messages, dict):
        texts += [str(m) for m in messages.values()]
    return texts


def test_rules_recommend_only_names_hip_7_2_declares():
    if not RELEASE_HEADERS.is_dir():
        pytest.skip("HIP 7.2 headers not fetched (python tests/harness/fetch_rocm_release_headers.py "
                    ".cache/rocm-release-headers)")
    declared = _declared()
    missing = []
    for path in sorted((ROOT / "rules").rglob("*.yaml")):
        rule = yaml.safe_load(path.read_text(encoding="utf-8"))
        if not isinstance(rule, dict):
            continue
        for text in _recommendations(rule):
            for name in _NAME.findall(text):
                if name not in declared and name not in NOT_DECLARATIONS:
                    missing.append(f"{rule.get('code')}: {name}")
    assert not missing, missing
