#!/usr/bin/env bash
# Fetch the headers of the ROCm libraries that Debian 12 does not package (hipBLAS, rocBLAS, hipFFT,
# hipSOLVER, rocSOLVER, hipCUB, rocPRIM, rocThrust, MIOpen) from Debian 13 "trixie" (MIOpen: sid,
# the only suite that has it), so the migrated library fixtures can be compiled with Debian 12's
# hipcc (tests/test_migrate_fixtures.py). Only usr/include of each -dev package is extracted: the
# compile check is -fsyntax-only, nothing is linked or installed on the system.
#
# apt verifies the archive signatures with the Debian keyring; nothing is cached in the project.
# Usage: tests/harness/fetch_rocm_library_headers.sh DEST   (DEST/usr/include is what tests use)
set -euo pipefail

dest=${1:?usage: $0 DEST}
packages=(
  libhipblas-dev/trixie librocblas-dev/trixie
  libhipfft-dev/trixie
  libhipsolver-dev/trixie librocsolver-dev/trixie
  libhipcub-dev/trixie librocprim-dev/trixie librocthrust-dev/trixie
)
# sid is a moving suite: if it ever drops MIOpen, the other headers still come, and the MIOpen
# fixture's compile test skips saying its header is missing.
optional=(libmiopen-dev/sid)
stamp="${packages[*]} ${optional[*]}"
if [[ -f "$dest/.fetched" && "$(cat "$dest/.fetched")" == "$stamp" ]]; then
  echo "ROCm library headers already in $dest"
  exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/state/lists/partial" "$work/cache/archives/partial" "$work/debs" "$work/root"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
for suite in trixie sid; do
  echo "deb [signed-by=$keyring] http://deb.debian.org/debian $suite main"
done >"$work/sources.list"
# A private apt state: the system's sources, lists and package status are not touched.
apt_opts=(-o "Dir::State=$work/state" -o "Dir::Cache=$work/cache" -o "Dir::Etc::SourceList=$work/sources.list"
          -o Dir::Etc::SourceParts=/dev/null -o Dir::State::status=/dev/null -o Debug::NoLocking=1
          -o APT::Sandbox::User=root -qq)
apt-get "${apt_opts[@]}" update
(cd "$work/debs" && apt-get "${apt_opts[@]}" download "${packages[@]}")
for pkg in "${optional[@]}"; do
  (cd "$work/debs" && apt-get "${apt_opts[@]}" download "$pkg") || echo "warning: $pkg not available; skipped" >&2
done
for deb in "$work"/debs/*.deb; do
  dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$work/root" --wildcards './usr/include/*'
done

# Replace DEST in one step so an interrupted fetch never leaves a half-filled tree behind.
rm -rf "$dest.partial"
mkdir -p "$(dirname "$dest")"
mv "$work/root" "$dest.partial"
echo "$stamp" >"$dest.partial/.fetched"
rm -rf "$dest"
mv "$dest.partial" "$dest"
echo "ROCm library headers from: $(cd "$work/debs" && ls)"
echo "extracted to $dest/usr/include"
