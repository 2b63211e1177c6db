#!/usr/bin/env bash
# One run, at most 10 minutes, on a fresh offline NVIDIA H200 machine (the device tool):
# install what the image lacks from carried wheels, show the JAX devices, then
#   1. the self-test on the GPU (no Qt there: --no-gui),
#   2. the HAL-scale pooled benchmark on the GPU (bench/bench_sampler.py --corpus pooled --no-reference),
#   3. CPU-vs-GPU agreement of the posterior on the demo corpus (bench/gpu_agreement.py),
#   4. the demo's 50 hold-out splits by Bayesian refits on the GPU beside REML (bench/bench_heldout_estimators.py:
#      the refit engine's batch path, refits x chains on the batch axis, what `--heldout-estimator auto` picks
#      when its estimate fits the sheet's budget),
# and print the figures.  GPU_CHECK_STEPS (e.g. "self-test heldout") runs a subset: the four do not all fit
# one 600-second call, so a second call runs what the first left out.  Each step has its own time limit, cut so the later ones keep theirs.
#
# Here, once (downloads ~17 MiB of wheels into the git-ignored .whl/):
#     packaging/fetch_gpu_wheels.sh
# Then one device call (run it from the repository root; OUT is the device tool's output folder):
#     run(command="bash bench/gpu_check.sh", carry=[".whl"], timeout_s=600)
# The logs and results land in $OUT (gpu_check.log, one <step>.log each, pooled_gpu.json,
# agreement.json, the self-test's ddr-self-test.pdf): 8 files at most come back.
#
# Dry run of the CPU parts, here (no GPU, the venv's python, small settings):
#     GPU_CHECK_DRY_RUN=1 bench/gpu_check.sh
#
# Environment: PYTHON (python3), GPU_CHECK_BUDGET (seconds for the whole script, 560), GPU_CHECK_INSTALL,
# POOLED_ARGS / AGREE_ARGS / HELDOUT_ARGS (extra arguments of the benchmarks), GPU_CHECK_STEPS (the steps to run,
# default "self-test pooled agreement heldout").
set -uo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)
START=$(date +%s)
DRY=${GPU_CHECK_DRY_RUN:-0}
BUDGET=${GPU_CHECK_BUDGET:-560}
OUT=${OUT:-/tmp/ddr-gpu-check}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/gpu_check.log") 2>&1
export PYTHONUNBUFFERED=1
export MPLBACKEND=Agg

if [ "$DRY" = 1 ]; then
    PY=${PYTHON:-$REPO/.venv/bin/python}
    DEVICE=cpu
    POOLED_DEFAULT="--warmup 30 --draws 30 --chains 2"
    AGREE_DEFAULT="--a cpu --b cpu --seed-b 1 --chains 2 --warmup 100 --draws 150 --allow-unconverged"
    HELDOUT_DEFAULT="--splits 2"  # the fewest splits a correlation across them takes
else
    PY=${PYTHON:-python3}
    DEVICE=gpu
    POOLED_DEFAULT=""
    AGREE_DEFAULT="--a cpu --b gpu --warmup 200 --draws 300"  # 4 chains: ESS ~ 500+ on TB2, in the time left
    HELDOUT_DEFAULT="--splits 50"
fi
STEPS=" ${GPU_CHECK_STEPS:-self-test pooled agreement heldout} "
want() { [[ "$STEPS" == *" $1 "* ]]; }
# install the carried wheels and the project (always on the GPU machine; GPU_CHECK_INSTALL=1 to rehearse
# the install here with a Python 3.12 environment like the machine's)
INSTALL=${GPU_CHECK_INSTALL:-$([ "$DRY" = 1 ] && echo 0 || echo 1)}
POOLED_ARGS=${POOLED_ARGS:-$POOLED_DEFAULT}
AGREE_ARGS=${AGREE_ARGS:-$AGREE_DEFAULT}
HELDOUT_ARGS=${HELDOUT_ARGS:-$HELDOUT_DEFAULT}

elapsed() { echo $(( $(date +%s) - START )); }
# seconds for a step: at most CAP, and leave RESERVE seconds for the steps after it
limit() {
    local cap=$1 reserve=$2 left
    left=$(( BUDGET - $(elapsed) - reserve ))
    [ "$left" -lt "$cap" ] && cap=$left
    [ "$cap" -lt 10 ] && cap=10
    echo "$cap"
}
declare -a SUMMARY=()
record() { SUMMARY+=("$(printf '%-12s %-5s %4s s  %s' "$1" "$2" "$3" "$4")"); }
run_step() {  # name, limit (s), command...
    local name=$1 lim=$2 t0 rc
    shift 2
    echo
    echo "== [$name] (limit ${lim} s, at $(elapsed) s): $*"
    t0=$(date +%s)
    timeout --kill-after=10 "$lim" "$@" 2>&1 | tee "$OUT/$name.log"
    rc=${PIPESTATUS[0]}
    local dt=$(( $(date +%s) - t0 ))
    if [ $rc -eq 0 ]; then record "$name" ok "$dt" ""
    elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then record "$name" TIME "$dt" "stopped at its ${lim} s limit"
    else record "$name" FAIL "$dt" "exit $rc"; fi
    return $rc
}

echo "== DDR Explorer GPU check, $(date -u '+%Y-%m-%d %H:%M:%S UTC'), dry run: $DRY, budget ${BUDGET} s"

# -- 0. install ---------------------------------------------------------------------------------
if [ "$INSTALL" = 1 ]; then
    rm -rf /tmp/site /tmp/ddr-site /tmp/ddr-shim
    if ls .whl/*.whl >/dev/null 2>&1; then
        "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
            .whl/*.whl || { echo "gpu_check: installing the carried wheels failed"; exit 1; }
        export PYTHONPATH=/tmp/site
    else
        echo "gpu_check: no .whl/*.whl: run packaging/fetch_gpu_wheels.sh here and carry .whl" >&2
    fi
    # the project from this tree (a regular install: package mapping and metadata as for a user)
    if "$PY" -m pip install -q --no-index --no-deps --no-build-isolation --no-compile --target /tmp/ddr-site \
        "$REPO" >/tmp/ddr-install.log 2>&1; then
        export PYTHONPATH=/tmp/ddr-site${PYTHONPATH:+:$PYTHONPATH}
    else  # no usable setuptools there: map the package by hand (version reads 0.0.0+unknown)
        tail -5 /tmp/ddr-install.log; echo "gpu_check: building the project failed; importing it from the tree instead"
        mkdir -p /tmp/ddr-shim/ddr_explorer
        cp "$REPO/ddr_explorer/__init__.py" /tmp/ddr-shim/ddr_explorer/
        for d in core gui resources; do ln -sfn "$REPO/$d" "/tmp/ddr-shim/ddr_explorer/$d"; done
        export PYTHONPATH=/tmp/ddr-shim${PYTHONPATH:+:$PYTHONPATH}
    fi
fi
echo "== installed in $(elapsed) s"
# never import the repository's bare ddr_explorer/ folder from the working directory (python -m / -)
export PYTHONSAFEPATH=1

# jax 0.11.2 (the H200 image's) segfaults while compiling the sampler's pmapped chunk on CPU (seen
# on CPU with Python 3.12 + jax/jaxlib 0.11.2 in any sampler setting; jax 0.10.2 and 0.12.0.1 run
# it, as does jit(vmap(...)) in place of pmap).  The self-test below runs the real code path on the
# GPU first; for the steps after it, with jax 0.11.x, a sitecustomize replaces jax.pmap by
# jit(vmap) (one device, chains vectorised: the same Markov chains' distribution).
# GPU_CHECK_PMAP_WORKAROUND=0 turns that off.
JAX_VER=$("$PY" -c "import importlib.metadata as m; print(m.version('jax'))" 2>/dev/null || echo unknown)
WORKAROUND=${GPU_CHECK_PMAP_WORKAROUND:-$(case "$JAX_VER" in 0.11.*) echo 1 ;; *) echo 0 ;; esac)}
mkdir -p /tmp/ddr-pmap-shim
cat > /tmp/ddr-pmap-shim/sitecustomize.py <<'PYEOF'
"""bench/gpu_check.sh: jax.pmap -> jax.jit(jax.vmap) when DDR_PMAP_AS_JIT=1 (jax 0.11.2 workaround)."""
import os

if os.environ.get("DDR_PMAP_AS_JIT") == "1":
    import ddr_explorer.core.model  # noqa: F401  (XLA_FLAGS before jax, as the app does)
    import jax

    def _pmap_as_jit(f, axis_name=None, *, in_axes=0, out_axes=0, devices=None, **_ignored):
        return jax.jit(jax.vmap(f, in_axes=in_axes, out_axes=out_axes))

    jax.pmap = _pmap_as_jit
PYEOF

# -- environment ----------------------------------------------------------------------------------
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null \
    || echo "(no nvidia-smi)"
"$PY" - <<'PYEOF'
import importlib.metadata as m, platform
import ddr_explorer.core.model  # noqa: F401  (sets XLA_FLAGS before jax)
import jax
vers = []
for n in ("ddr-explorer", "jax", "jaxlib", "jax-cuda13-plugin", "jax-cuda12-plugin", "numpyro", "numpy", "pandas",
          "arviz", "reportlab", "h5py", "scipy"):
    try:
        vers.append(f"{n} {m.version(n)}")
    except m.PackageNotFoundError:
        pass
print("== python", platform.python_version(), "|", ", ".join(vers))
print("== jax default backend:", jax.default_backend())
print("== jax devices:", jax.devices())
try:
    print("== jax gpu devices:", jax.devices("gpu"))
except RuntimeError as e:
    print("== jax gpu devices: none (", e, ")")
PYEOF
HAVE_GPU=0
"$PY" -c "import jax, sys; sys.exit(0 if jax.devices('gpu') else 1)" >/dev/null 2>&1 && HAVE_GPU=1
if [ "$DRY" != 1 ] && [ $HAVE_GPU != 1 ]; then
    echo "gpu_check: JAX sees no GPU; the GPU steps below will fail (device='gpu')"
fi

# -- 1. self-test ---------------------------------------------------------------------------------
want self-test && run_step self-test "$(limit 120 380)" "$PY" -m ddr_explorer.gui.self_test --no-gui --device "$DEVICE" \
    --keep "$OUT"

if [ "$WORKAROUND" = 1 ]; then
    echo
    echo "== NOTE: jax $JAX_VER: jax.pmap runs as jit(vmap) in the steps below (GPU_CHECK_PMAP_WORKAROUND=0: off)"
    export PYTHONPATH=/tmp/ddr-pmap-shim${PYTHONPATH:+:$PYTHONPATH} DDR_PMAP_AS_JIT=1
fi

# -- 2. HAL-scale pooled benchmark ----------------------------------------------------------------
# shellcheck disable=SC2086
want pooled && run_step pooled "$(limit 240 170)" "$PY" bench/bench_sampler.py --corpus pooled --no-reference \
    --json "$OUT/pooled_gpu.json" $POOLED_ARGS

# -- 3. CPU-vs-GPU agreement ----------------------------------------------------------------------
# shellcheck disable=SC2086
want agreement && run_step agreement "$(limit 400 5)" "$PY" bench/gpu_agreement.py --json "$OUT/agreement.json" $AGREE_ARGS

# -- 4. the demo's hold-out splits, Bayesian refits on the device beside REML -----------------------------
# shellcheck disable=SC2086
want heldout && run_step heldout "$(limit 540 5)" "$PY" bench/bench_heldout_estimators.py \
    --json "$OUT/heldout.json" $HELDOUT_ARGS

# -- figures ---------------------------------------------------------------------------------------
echo
echo "== figures"
grep -h "self-test passed\|ok    fit" "$OUT/self-test.log" 2>/dev/null | sed 's/^/  self-test: /'
"$PY" - "$OUT" <<'PYEOF'
import json, sys
from pathlib import Path
out = Path(sys.argv[1])
p = out / "pooled_gpu.json"
if p.is_file():
    for r in json.loads(p.read_text()):
        o = r["ours"]
        print(f"  pooled ({o['device']}): {o['wall']:.1f} s, min bulk ESS {o['min_ess']:.0f} ({o['min_ess_term']}), "
              f"ESS/s {o['min_ess'] / o['wall']:.2f}, max R-hat {o['max_r_hat']:.3f}, {o['divergences']} divergences, "
              f"converged {o['converged']}, {o['steps_per_draw']:.0f} leapfrog steps/draw; timings {o['timings']}")
        print("  pooled sigma (posterior mean | true): " + ", ".join(
            f"{k} {v:.2f}|{r['expected_sigma'].get(k, float('nan')):.2f}" for k, v in o["sigma"].items()))
a = out / "agreement.json"
if a.is_file():
    r = json.loads(a.read_text())
    print(f"  agreement {r['a']} vs {r['b']}: max |z| {r['max_abs_z']:.2f} (bound {r['bound']:.2f}), "
          f"{'PASS' if r['ok'] else 'FAIL'}, converged {r['converged']}; wall {r['wall_a']:.1f} s vs {r['wall_b']:.1f} s "
          f"(ratio {r['wall_a'] / r['wall_b']:.2f})")
PYEOF
grep -h "^bayes\|^reml\|^REML\|^parent fit" "$OUT/heldout.log" 2>/dev/null | sed 's/^/  heldout: /'
echo
echo "== summary (total $(elapsed) s)"
printf '  %s\n' "${SUMMARY[@]}"
fails=$(printf '%s\n' "${SUMMARY[@]}" | grep -vc " ok ")
echo "== GPU check: $([ "$fails" -eq 0 ] && echo "ALL PASSED" || echo "$fails step(s) not ok")"
[ "$fails" -eq 0 ]
