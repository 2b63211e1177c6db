#!/usr/bin/env bash
# Record what `ddr` prints and returns for a fixed set of commands, one file set per command, so that a change
# that should not alter the command line (moving code between modules) can be checked byte for byte:
#
#   git stash; tools/cli_outputs.sh /tmp/before; git stash pop; tools/cli_outputs.sh /tmp/after
#   diff -r /tmp/before /tmp/after
#
# Each command N leaves N.cmd, N.out (stdout), N.err (stderr) and N.rc (exit status) in OUTDIR.  It covers
# `--help` of `ddr` and every subcommand, `ddr inspect` of the demo corpus (text and --json), convert,
# henderson, dstudy (components file, cached fit, --preview), fit (reopened from the cache, text and --json),
# methods, and the refusals of each command (exit 2).  The one short fit it reads is made first, in the
# cache folder $CLI_CHECK_CACHE (default /tmp/ddr-cli-check-cache), so both runs reopen the same fit.
# Wall times ("41.8 s") are masked: they differ from run to run.  About 3 minutes on 2 busy cores.
set -uo pipefail
out=${1:?usage: tools/cli_outputs.sh OUTDIR}
DDR=${DDR:-.venv/bin/ddr}
PY=${PY:-.venv/bin/python}
DEMO=resources/demo/terminal-bench-2.csv
export DDR_CACHE_DIR=${CLI_CHECK_CACHE:-/tmp/ddr-cli-check-cache}
work=$(mktemp -d)
mkdir -p "$out" "$DDR_CACHE_DIR"
printf '{"scale": "variance", "components": {"task": 1.0, "model": 0.5, "task:model": 2.0}}\n' > "$work/comps.json"
FIT=(--formula "y~(1|task)+(1|model)" --stop fixed --draws 50 --warmup 50 --chains 1)
"$DDR" fit "$DEMO" "${FIT[@]}" --allow-unconverged --quiet >/dev/null 2>&1  # the cached fit both runs reopen

i=0
run() {
  i=$((i + 1)); local n; n=$(printf %02d "$i")
  echo "$*" | sed "s|$work|WORK|g" > "$out/$n.cmd"
  "$@" > "$out/$n.out" 2> "$out/$n.err"
  echo "rc=$?" > "$out/$n.rc"
  sed -i -E "s|$work|WORK|g; s/[0-9]+\.[0-9]+ s\b/_ s/g" "$out/$n.out" "$out/$n.err"
}
run "$DDR" --help
run "$DDR" --version
for c in inspect convert henderson dstudy fit report analyses methods formats; do run "$DDR" "$c" --help; done
run "$DDR"
run "$DDR" nope
run "$DDR" inspect "$DEMO"
run "$DDR" inspect "$DEMO" --json
run "$DDR" inspect /nonexistent.csv --json
run "$DDR" inspect "$DEMO" --columns task=nope --json
run "$DDR" formats
run "$DDR" convert "$DEMO" -o "$work/out.csv"
run "$DDR" convert "$DEMO" --to py-irt -o "$work/out.jsonl"
run "$DDR" henderson "$DEMO" --formula pooled --json
run "$DDR" henderson "$DEMO" --formula "y ~ (1|nope"
run "$DDR" dstudy
run "$DDR" dstudy --components "$work/comps.json"
run "$DDR" dstudy --components "$work/comps.json" --json --n-tasks 100 --budget 500 --price-per-trial 0.1
run "$DDR" dstudy --components "$work/comps.json" --preview
run "$DDR" dstudy --components /nonexistent.json
run "$DDR" fit "$DEMO" --formula "y ~ (1|task)" --preset pooled --json
run "$DDR" fit "$DEMO" --preset pooled --cache /proc/nope --json
run "$DDR" fit /nonexistent.csv --json
run "$DDR" fit "$DEMO" --design pooled --formula "y ~ (1|task)"
run "$DDR" fit "$DEMO" "${FIT[@]}" --quiet --json
run "$DDR" fit "$DEMO" "${FIT[@]}" --quiet
run "$DDR" dstudy "$(ls "$DDR_CACHE_DIR"/fit-*.h5 | head -1)" --quiet --json --budget 1000
run "$DDR" dstudy "$DEMO" --preview --quiet
run "$DDR" report "$DEMO" -o "$work/x.pdf" --formula "y ~ (1|task)" --preset pooled
run "$DDR" report "$DEMO" -o "$work/x.pdf" --splits 1
run "$DDR" report "$DEMO" -o "$work/x.pdf" --analyses bogus
run "$DDR" analyses "$DEMO" --which bogus
run "$DDR" analyses "$work/x.h5"
run "$DDR" methods "$DEMO" --object nope
run "$DDR" methods "$DEMO" --formula "y~(1|task)+(1|model)" --no-bayes --quiet
run "$PY" -m ddr_explorer.core.cli inspect "$DEMO"
rm -rf "$work"
echo "cli_outputs: $i commands recorded in $out" >&2
