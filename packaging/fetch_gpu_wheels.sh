#!/usr/bin/env bash
# Download into .whl/ the wheels bench/gpu_check.sh installs on the offline NVIDIA H200 machine.
#
#   packaging/fetch_gpu_wheels.sh        # then: run bench/gpu_check.sh there with carry [".whl"]
#
# That machine has no network.  Its image already holds Python 3.12 with jax 0.11.2 +
# jax-cuda13-plugin/pjrt (CUDA 13), numpy, scipy, h5py, pyarrow, networkx, xarray, pillow,
# matplotlib, tqdm, multipledispatch (/work/.library/device/KINDS.md, read 2026-11).  We carry
# only what it lacks or holds at another version than we test with: numpyro and pandas at this
# venv's versions, reportlab and arviz with arviz's missing dependencies.  jax itself is NOT
# carried: jaxlib is ~80 MB, over the 64 MiB a call may carry, so the image's CUDA 13 jax runs.
# The project's own code travels as the working tree and is installed there from source.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
DEST=.whl
mkdir -p "$DEST"
grep -qxF "/.whl/" .gitignore 2>/dev/null || grep -qxF "/.whl/" .git/info/exclude 2>/dev/null \
    || echo "/.whl/" >> .git/info/exclude

ver() { "$PY" -c "import importlib.metadata as m, sys; print(m.version(sys.argv[1]))" "$1"; }
# the versions this venv tests with (one version of each: two stop the whole install there)
PKGS=(
    "numpyro==$(ver numpyro)"
    "pandas==$(ver pandas)"
    "reportlab==$(ver reportlab)"
    "charset-normalizer==$(ver charset-normalizer)"
    "arviz==$(ver arviz)"
    "xarray==$(ver xarray)"
    "xarray-einstats==$(ver xarray-einstats)"
    "h5netcdf==$(ver h5netcdf)"
    "platformdirs==$(ver platformdirs)"
)
PLAT=()
for p in manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_24_x86_64 manylinux_2_17_x86_64 \
         manylinux2014_x86_64 manylinux1_x86_64; do
    PLAT+=(--platform "$p")
done
rm -f "$DEST"/*.whl
for spec in "${PKGS[@]}"; do
    "$PY" -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
        "${PLAT[@]}" -d "$DEST" "$spec"
done
ls -la "$DEST"
total=$(du -cb "$DEST"/*.whl | tail -1 | cut -f1)
echo "== $(ls "$DEST"/*.whl | wc -l) wheels, $((total / 1024 / 1024)) MiB in $DEST (a device call carries 64 MiB with the tree)"
