"""The fetch scripts of tests/harness that bring in HIPIFY's API tables (Debian's hipify source
package) and Microsoft's SARIF Multitool (npm), checked offline: what they accept from the signed
index and from a tarball, and what they refuse."""

from __future__ import annotations

import importlib.util
import io
import json
import tarfile

import pytest

from conftest import ROOT


def _load(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "tests" / "harness" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


hipify = _load("fetch_hipify_tables")
multitool = _load("fetch_sarif_multitool")


def _showsrc(version: str, sha: str, name: str) -> str:
    return (f"Package: hipify\nVersion: {version}\nDirectory: pool/main/h/hipify\nChecksums-Sha256:\n"
            f" {'1' * 64} 2140 hipify_{version}.dsc\n {sha} 617612 {name}\n"
            f" {'2' * 64} 4872 hipify_{version}.debian.tar.xz\nHomepage: https://github.com/ROCm/HIPIFY\n")


def test_the_signed_index_entry_of_the_pinned_tarball_is_found():
    text = _showsrc("7.0.2+dfsg-1", hipify.SHA256, hipify.ORIG) + "\n" + _showsrc("6.0.2+dfsg-1", "3" * 64,
                                                                                  "hipify_6.0.2+dfsg.orig.tar.xz")
    assert hipify.listed(text) == [("7.0.2+dfsg-1", "pool/main/h/hipify", hipify.SHA256)]
    assert hipify.listed(_showsrc("6.0.2+dfsg-1", "3" * 64, "hipify_6.0.2+dfsg.orig.tar.xz")) == []


def _tarball(path, members: dict[str, bytes], mode="w:xz", symlink=None):
    with tarfile.open(path, mode) as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        if symlink:
            info = tarfile.TarInfo(symlink)
            info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
            tar.addfile(info)
    return path


def test_only_the_tables_and_the_license_are_extracted(tmp_path):
    top = hipify.TOP
    tarball = _tarball(tmp_path / hipify.ORIG, {
        f"{top}/docs/reference/tables/CUDA_RTC_API_supported_by_HIP.md": b"# RTC\n",
        f"{top}/docs/reference/tables/nested/other.md": b"no\n",
        f"{top}/docs/reference/hipify-clang-cmd.rst": b"no\n",
        f"{top}/LICENSE.txt": b"MIT\n",
        f"{top}/src/CUDA2HIP.cpp": b"no\n",
    })
    out = tmp_path / "out"
    out.mkdir()
    assert hipify.extract(tarball, out) == ["CUDA_RTC_API_supported_by_HIP.md"]
    assert sorted(p.name for p in out.iterdir()) == ["CUDA_RTC_API_supported_by_HIP.md", "LICENSE.txt"]


def test_a_table_that_is_a_link_is_refused(tmp_path):
    top = hipify.TOP
    tarball = _tarball(tmp_path / hipify.ORIG, {f"{top}/LICENSE.txt": b"MIT\n"},
                       symlink=f"{top}/docs/reference/tables/CUDA_RTC_API_supported_by_HIP.md")
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(SystemExit, match="not a regular file"):
        hipify.extract(tarball, out)


def test_the_multitool_package_is_extracted_under_its_own_folder_only(tmp_path):
    good = _tarball(tmp_path / "good.tgz", {"package/Sarif.Multitool": b"\x7fELF", "package/sarif-2.1.0.json": b"{}"},
                    mode="w:gz")
    out = tmp_path / "out"
    out.mkdir()
    multitool.extract(good, out)
    assert (out / "Sarif.Multitool").stat().st_mode & 0o111 and (out / "sarif-2.1.0.json").read_text() == "{}"
    for bad in ({"package/../escape": b"x"}, {"other/Sarif.Multitool": b"x"}):
        with pytest.raises(SystemExit, match="unexpected member"):
            multitool.extract(_tarball(tmp_path / "bad.tgz", bad, mode="w:gz"), tmp_path / "out2")
    with pytest.raises(SystemExit, match="not a regular file"):
        multitool.extract(_tarball(tmp_path / "link.tgz", {}, mode="w:gz", symlink="package/Sarif.Multitool"),
                          tmp_path / "out3")


def test_the_integrity_is_npms_sha512(tmp_path):
    f = tmp_path / "x.tgz"
    f.write_bytes(b"")
    # sha512 of nothing, as npm writes it
    assert multitool.integrity(f) == ("sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGl"
                                      "ODJ6+SfaPg==")


def test_a_fetched_folder_with_the_pinned_version_is_kept(tmp_path, capsys):
    dest = tmp_path / "hipify-tables"
    dest.mkdir()
    (dest / "manifest.json").write_text(json.dumps({"orig": hipify.ORIG, "sha256": hipify.SHA256}))
    assert hipify.fetch(dest)["sha256"] == hipify.SHA256
    assert "already in" in capsys.readouterr().out
