#!/usr/bin/env bash
# Build the one-folder frozen DDR Explorer (dist/ddr-explorer/: ddr-explorer app + ddr CLI),
# run the frozen app's self-test, and print the build time and the folder's size.
#
#   packaging/build.sh                 # uses .venv/bin/python (make run / make test set it up)
#   PYTHON=/path/to/python packaging/build.sh
#   DDR_CONSOLE=1 packaging/build.sh   # Windows/macOS: a console app, so --self-test prints
#
# Outputs (both git-ignored): build/pyinstaller/ (staging and PyInstaller's work files) and
# dist/ddr-explorer/.  Not part of CI (.ci/run): it takes minutes and a few hundred MB.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)
PY=${PYTHON:-$REPO/.venv/bin/python}
[ -x "$PY" ] || PY=$REPO/.venv/Scripts/python.exe   # Windows (Git Bash)
if [ ! -x "$PY" ]; then
    echo "build.sh: no Python at $PY; run 'make test' (it creates .venv) or set PYTHON" >&2
    exit 2
fi
if ! "$PY" -c "import PySide6, pyqtgraph" 2>/dev/null; then
    echo "build.sh: PySide6/pyqtgraph missing in $PY; install the gui extra: $PY -m pip install -e '.[gui]'" >&2
    exit 2
fi
if ! "$PY" -c "import PyInstaller" 2>/dev/null; then
    echo "== installing PyInstaller into $("$PY" -c 'import sys; print(sys.prefix)')"
    "$PY" -m pip install --quiet "pyinstaller>=6.10"
fi
"$PY" -c "import PyInstaller; print('== PyInstaller', PyInstaller.__version__)"

WORK=$REPO/build/pyinstaller
STAGE=$WORK/stage
DIST=$REPO/dist
NAME=$("$PY" -c "from importlib.metadata import metadata; print(metadata('ddr-explorer')['Name'])")
t0=$(date +%s)

echo "== staging the package (a regular, non-editable install) in $STAGE"
rm -rf "$STAGE"
# --no-build-isolation builds with this environment's setuptools: the SPDX `license = "MIT"` of
# pyproject.toml needs setuptools 77 or newer (a new venv ships 65).
"$PY" -m pip install --quiet "setuptools>=77"
"$PY" -m pip install --quiet --no-deps --no-build-isolation --no-compile --target "$STAGE" "$REPO"

echo "== PyInstaller (one folder)"
rm -rf "${DIST:?}/$NAME"
DDR_STAGE=$STAGE "$PY" -m PyInstaller --noconfirm --clean --log-level WARN \
    --distpath "$DIST" --workpath "$WORK/work" "$REPO/packaging/ddr-explorer.spec"
t1=$(date +%s)

case "$(uname -s)" in
    Darwin) APP="$DIST/$NAME/$NAME" ;;
    MINGW*|MSYS*|CYGWIN*) APP="$DIST/$NAME/$NAME.exe" ;;
    *) APP="$DIST/$NAME/$NAME" ;;
esac
echo "== self-test of the frozen app: $APP --self-test"
# a clean environment: the frozen app must not lean on the venv or the source tree
st0=$(date +%s)
if ! (cd /tmp && env -u PYTHONPATH -u VIRTUAL_ENV PYTHONNOUSERSITE=1 "$APP" --self-test); then
    echo "build.sh: the frozen app's self-test FAILED (build kept in $DIST/$NAME for inspection)" >&2
    exit 1
fi
st1=$(date +%s)
echo "== the frozen ddr CLI: demo corpus -> Parquet -> inspect (pyarrow in the build)"
CLI_TMP=$(mktemp -d)
DEMO="$DIST/$NAME/_internal/ddr_explorer/resources/demo/terminal-bench-2.csv"
[ -f "$DEMO" ] || DEMO=$(find "$DIST/$NAME" -name terminal-bench-2.csv | head -1)
"$DIST/$NAME/ddr" convert "$DEMO" -o "$CLI_TMP/demo.parquet" >/dev/null
"$DIST/$NAME/ddr" inspect "$CLI_TMP/demo.parquet" --json > "$CLI_TMP/parquet.json"
"$DIST/$NAME/ddr" inspect "$DEMO" --json > "$CLI_TMP/csv.json"
"$PY" - "$CLI_TMP" <<'PYEOF'
import json, sys
p, c = (json.load(open(f"{sys.argv[1]}/{n}.json")) for n in ("parquet", "csv"))
keys = ("n_records", "n_trials", "n_successes", "n_tasks", "n_models", "n_scaffolds")
assert p["format"] == "parquet", p["format"]
assert all(p[k] == c[k] for k in keys), {k: (p[k], c[k]) for k in keys}
print("    Parquet round trip: " + ", ".join(f"{k} {p[k]:,}" for k in keys) + " (same as the CSV)")
PYEOF
rm -rf "$CLI_TMP"

size=$(du -sh "$DIST/$NAME" | cut -f1)
files=$(find "$DIST/$NAME" -type f | wc -l)
echo "== build time: $((t1 - t0)) s (staging + PyInstaller); self-test: $((st1 - st0)) s"
echo "== dist size: $size in $files files ($DIST/$NAME)"
