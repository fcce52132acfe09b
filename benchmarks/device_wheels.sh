#!/usr/bin/env bash
# The packages benchmarks/device_check.sh needs on a bare GPU machine, packed to travel.
#
# The lent GPU machine (see the device tool) has Python 3.12 with torch, numpy, scipy, pytest,
# pyyaml, pillow, typing-extensions, absl-py, but no warp-lang, usd-core, mujoco, mujoco-warp,
# newton, physx-usd-schemas, newton-usd-schemas or trimesh, and no network: they travel as cp312
# manylinux wheels. One call carries at most 64 MiB (the working tree, about 3 MB, included) and
# warp-lang's wheel alone is larger, so this script downloads the wheels (pip download --no-deps
# --only-binary=:all: --python-version 3.12 --platform manylinux...) plus the shared assets the
# tests and benchmarks read (../shared/assets, which never travels by itself), tars them into one
# bundle and splits it into parts under 55 MiB, one folder each: .whl/part1, .whl/part2, ...
# (.whl/ is ignored through .git/info/exclude, so nothing else of it travels).
#
# Measured by this script when it was written (pip download; bytes): warp-lang 1.19.0
# 149,277,474; mujoco 3.16.0 30,611,543; usd-core 26.8 29,530,957; newton 1.8.0 8,609,387;
# mujoco-warp 3.16.0 2,294,634; trimesh 5.2.0 751,459; physx-usd-schemas 79,370;
# newton-usd-schemas 22,688; the shared assets 3,117,931 gzipped: a bundle of 224,307,200 bytes
# in 4 parts (3 of 55 MiB, one of 48.9 MiB). It prints the sizes it made.
#
# The procedure, one device `run` call per part, each well inside the 30 s the machine stays
# warm between calls (it keeps /tmp between calls while warm; a call that finds it cold starts a
# bare one, so start again from part 1):
#   calls 1 .. n-1: carry [".whl/partK"], command
#       mkdir -p /tmp/whl && cp .whl/partK/* /tmp/whl/ && ls -l /tmp/whl
#   call n:         carry [".whl/partN"], command
#       mkdir -p /tmp/whl && cp .whl/partN/* /tmp/whl/ && bash benchmarks/device_check.sh --install /tmp/whl
# --install reassembles the parts (cat), unpacks the bundle, installs the wheels with
# pip install --no-index --no-deps --target /tmp/site, puts /tmp/site on PYTHONPATH, links the
# assets in as ../shared/assets and runs the check (under 5 minutes; give the call timeout_s 420).
#
#   bash benchmarks/device_wheels.sh [OUT_DIR]        (default .whl in the repo root)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${1:-$ROOT/.whl}
PART_MIB=${PART_MIB:-55}
PY=${PYTHON:-python3}
PACKAGES=(warp-lang==1.19.0 usd-core==26.8 mujoco==3.16.0 mujoco-warp==3.16.0 newton==1.8.0
          physx-usd-schemas==25.11.2.72696984 newton-usd-schemas==0.6.0 trimesh==5.2.0)
ASSETS=$ROOT/../shared/assets

case "$(cd "$(dirname "$OUT")" 2>/dev/null && pwd)/" in
  "$ROOT"/*)   # inside the repo: ignored, so only the carried part folders travel
    exclude="$(git rev-parse --git-common-dir)/info/exclude"
    rel="/${OUT#"$ROOT"/}/"
    mkdir -p "$(dirname "$exclude")"
    grep -qxF "$rel" "$exclude" 2>/dev/null || echo "$rel" >> "$exclude" ;;
esac

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bundle/wheels"
"$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 --platform manylinux1_x86_64 -d "$work/bundle/wheels" "${PACKAGES[@]}"
if [ -d "$ASSETS" ]; then
  tar -C "$ASSETS/.." -czf "$work/bundle/assets.tar.gz" assets
else
  echo "note: $ASSETS not found: the bundle has no assets (tests that need them skip on the device)"
fi
echo "wheels and assets (bytes):"
(cd "$work/bundle" && du -b wheels/* assets.tar.gz 2>/dev/null | sed 's/^/  /')
tar -C "$work/bundle" -cf "$work/bundle.tar" .
rm -rf "$OUT"
mkdir -p "$OUT"
split -b "${PART_MIB}m" -d -a 2 "$work/bundle.tar" "$work/bundle.tar."
i=0
for chunk in "$work"/bundle.tar.[0-9][0-9]; do
  i=$((i + 1))
  mkdir -p "$OUT/part$i"
  mv "$chunk" "$OUT/part$i/"
done
echo "bundle $(du -b "$work/bundle.tar" | cut -f1) bytes in $i parts under $OUT:"
du -b "$OUT"/part*/* | sed "s|$OUT/|  |"
