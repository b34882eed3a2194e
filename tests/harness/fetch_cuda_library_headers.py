"""Fetch the headers of the CUDA math libraries (cuBLAS, cuRAND, cuFFT, cuSPARSE, cuSOLVER, cuDNN,
NVRTC) and of NCCL from NVIDIA's wheels on PyPI, so nvcc can prove the library fixtures are valid CUDA before
they are migrated (the CUDA 13 toolkit here has none of them).

The wheels weigh 60-520 MB each; their headers a few MB. A wheel is a zip file, so only its
central directory and the header members are read, with HTTP range requests; zipfile checks each
member's CRC-32. Versions are pinned (CUDA 13.0 releases). Nothing is stored in the project.

Usage: python tests/harness/fetch_cuda_library_headers.py DEST   (DEST/include is what tests use)
"""

from __future__ import annotations

import io
import json
import shutil
import sys
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path, PurePosixPath

# package -> version: the libraries of the CUDA 13.0 toolkit (its release notes' component versions).
WHEELS = {
    "nvidia-cublas": "13.0.0.19",
    "nvidia-curand": "10.4.0.35",
    "nvidia-cufft": "12.0.0.15",
    "nvidia-cusparse": "12.6.2.49",
    "nvidia-cusolver": "12.0.3.29",
    "nvidia-cuda-nvrtc": "13.0.88",
    "nvidia-cudnn-cu13": "9.13.0.50",
    "nvidia-nccl-cu13": "2.27.7",
}
BLOCK = 1 << 20


class RemoteFile(io.RawIOBase):
    """A read-only, seekable view of a URL, read in cached blocks with HTTP range requests."""

    def __init__(self, url: str):
        self.url = url
        self.pos = 0
        self.blocks: dict[int, bytes] = {}
        with urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=60) as resp:
            self.size = int(resp.headers["Content-Length"])
            if resp.headers.get("Accept-Ranges") != "bytes":
                raise OSError(f"{url}: the server does not serve byte ranges")

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.pos, io.SEEK_END: self.size}[whence]
        self.pos = max(0, base + offset)
        return self.pos

    def _block(self, index: int) -> bytes:
        if index not in self.blocks:
            start = index * BLOCK
            end = min(self.size, start + BLOCK) - 1
            request = urllib.request.Request(self.url, headers={"Range": f"bytes={start}-{end}"})
            with urllib.request.urlopen(request, timeout=120) as resp:
                data = resp.read()
            if resp.status != 206 or len(data) != end - start + 1:
                raise OSError(f"{self.url}: short range response ({resp.status}, {len(data)} bytes)")
            self.blocks[index] = data
        return self.blocks[index]

    def read(self, size: int = -1) -> bytes:
        if size < 0:
            size = self.size - self.pos
        out = bytearray()
        while size > 0 and self.pos < self.size:
            block = self._block(self.pos // BLOCK)
            offset = self.pos % BLOCK
            chunk = block[offset:offset + size]
            out += chunk
            self.pos += len(chunk)
            size -= len(chunk)
        return bytes(out)

    def readinto(self, buffer) -> int:
        data = self.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)


def wheel_url(package: str, version: str) -> str:
    index = f"https://pypi.org/pypi/{package}/json"
    with urllib.request.urlopen(index, timeout=60) as resp:
        files = json.load(resp)["releases"].get(version, [])
    for file in files:
        name = file["filename"]
        if name.endswith(".whl") and "manylinux" in name and "x86_64" in name:
            return urllib.parse.urljoin(index, file["url"])  # a mirror may give relative URLs
    raise OSError(f"{package} {version}: no manylinux x86_64 wheel on PyPI")


def open_wheel(url: str) -> zipfile.ZipFile:
    """The wheel read in ranges; a server (or proxy) without range support gets a full download."""
    try:
        return zipfile.ZipFile(RemoteFile(url))
    except (OSError, zipfile.BadZipFile) as exc:
        print(f"range reads failed ({exc}); downloading the whole wheel", file=sys.stderr)
    import tempfile

    spool = tempfile.TemporaryFile()
    with urllib.request.urlopen(url, timeout=600) as resp:
        shutil.copyfileobj(resp, spool)
    return zipfile.ZipFile(spool)


def extract_headers(url: str, dest: Path) -> int:
    """Copy every header under an `include/` directory of the wheel into dest/include."""
    count = 0
    with open_wheel(url) as wheel:
        for info in wheel.infolist():
            parts = PurePosixPath(info.filename).parts
            if info.is_dir() or "include" not in parts or ".." in parts:
                continue
            relative = parts[parts.index("include") + 1:]
            if not relative or not relative[-1].endswith((".h", ".hpp", ".cuh", ".inl")):
                continue
            target = dest.joinpath("include", *relative)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(wheel.read(info))  # zipfile verifies the CRC-32
            count += 1
    return count


def up_to_date(dest: Path) -> bool:
    """DEST holds the headers of exactly the pinned wheels."""
    stamp = dest / ".fetched"
    return stamp.is_file() and stamp.read_text() == json.dumps(WHEELS, sort_keys=True)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    dest = Path(argv[0])
    stamp = json.dumps(WHEELS, sort_keys=True)
    if up_to_date(dest):
        print(f"CUDA library headers already in {dest}")
        return 0
    partial = dest.with_name(dest.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    for package, version in WHEELS.items():
        count = extract_headers(wheel_url(package, version), partial)
        print(f"{package} {version}: {count} headers")
    (partial / ".fetched").write_text(stamp)
    # Replace DEST by renames: an interrupted fetch never leaves a half-filled tree behind, and
    # compilers using DEST meanwhile never see it half-deleted.
    old = dest.with_name(dest.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if dest.exists():
        dest.rename(old)
    partial.rename(dest)
    shutil.rmtree(old, ignore_errors=True)
    print(f"extracted to {dest / 'include'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
