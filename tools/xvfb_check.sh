#!/usr/bin/env bash
# What a Linux user sees when starting ddr-explorer, shown on a Debian/Ubuntu machine under Xvfb
# (run as root: it installs packages; a throw-away container or VM is the place for it).
#
#   1. as found: ddr-explorer on an X display with whatever system libraries the machine has
#      (on a fresh Debian 12: the preflight's message naming the missing ones, exit 3);
#   2. the README's Debian line installed: the app starts on the X server, and a screenshot of the
#      X screen is written to docs/linux-xvfb-main-window.png;
#   3. one of those libraries hidden again (libxcb-icccm.so.4, in a private mount namespace so the rest
#      of the machine keeps it): the preflight's message and exit 3, then Qt's own abort with the
#      preflight skipped (DDR_SKIP_PREFLIGHT=1), for comparison;
#   4. no display at all: the preflight's message, exit 4.
# The transcript (commands, output, exit codes) goes to docs/linux-preflight.txt.
#
#   tools/xvfb_check.sh                 # PY=.venv/bin/python by default (make test creates it)
#   NO_INSTALL=1 tools/xvfb_check.sh    # skip apt-get: Xvfb, x11-utils, imagemagick must be there
#   FROZEN=dist/ddr-explorer/ddr-explorer HIDE=libEGL.so.1 LOG_NAME=linux-preflight-frozen.txt \
#       SHOT_NAME=linux-xvfb-frozen.png tools/xvfb_check.sh   # the frozen build (packaging/build.sh)
# HIDE names the library step 3 hides; the frozen build bundles the libxcb-* libraries of the machine
# it was built on, so hide one it takes from the system (ldd on its libqxcb.so tells which).
set -uo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)
PY=${PY:-$REPO/.venv/bin/python}
OUT=${OUT:-$REPO/docs}
SHOT=$OUT/${SHOT_NAME:-linux-xvfb-main-window.png}
LOG=$OUT/${LOG_NAME:-linux-preflight.txt}
DISP=${DISP:-:71}
HIDE=${HIDE:-libxcb-icccm.so.4}
[ -x "$PY" ] || { echo "xvfb_check.sh: no Python at $PY (run make test, or set PY)" >&2; exit 2; }
mkdir -p "$OUT"
WORK=$(mktemp -d)
XVFB_PID=
APP_PID=
cleanup() {
    [ -n "$APP_PID" ] && kill "$APP_PID" 2>/dev/null
    [ -n "$XVFB_PID" ] && kill "$XVFB_PID" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT

# a first start: settings, last session and cache in a fresh folder, the demo corpus opens
export HOME=$WORK/home XDG_CONFIG_HOME=$WORK/home/.config XDG_CACHE_HOME=$WORK/home/.cache
mkdir -p "$HOME"
unset QT_QPA_PLATFORM WAYLAND_DISPLAY XDG_SESSION_TYPE
if [ -n "${FROZEN:-}" ]; then
    APP=("$(cd "$(dirname "$FROZEN")" && pwd)/$(basename "$FROZEN")")
else
    APP=("$PY" -m ddr_explorer.gui.app)
fi

: > "$LOG"
shorten() { sed "s|$REPO|<repo>|g; s|$WORK|<tmp>|g"; }
say() { echo "$*" | shorten | tee -a "$LOG"; }
# run a command, record it, its output (repository path shortened) and its exit status
record() {
    say "\$ $*"
    timeout 120 "$@" > "$WORK/out.txt" 2>&1  # never left running: the app is expected to stop at once
    local rc=$?
    shorten < "$WORK/out.txt" | tee -a "$LOG"
    say "[exit status $rc$([ $rc -gt 128 ] && echo ": killed by signal $((rc - 128))")]"
    say ""
    return "$rc"
}

desktop_packages() {
    "$PY" -c "from ddr_explorer.gui.preflight import DESKTOP_LIBRARIES, install_commands
print(dict(install_commands(DESKTOP_LIBRARIES))['Debian, Ubuntu'].split(' ', 3)[3])"
}

if [ -z "${NO_INSTALL:-}" ]; then
    echo "== apt-get: Xvfb and the screenshot tools"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq xvfb x11-utils imagemagick \
        >/dev/null || { echo "xvfb_check.sh: apt-get failed" >&2; exit 2; }
fi
command -v Xvfb >/dev/null && command -v xwininfo >/dev/null && command -v import >/dev/null \
    || { echo "xvfb_check.sh: needs Xvfb, xwininfo (x11-utils) and import (imagemagick)" >&2; exit 2; }

Xvfb "$DISP" -screen 0 1280x800x24 -nolisten tcp >"$WORK/xvfb.log" 2>&1 &
XVFB_PID=$!
for _ in $(seq 50); do xwininfo -root -display "$DISP" >/dev/null 2>&1 && break; sleep 0.2; done
export DISPLAY=$DISP

say "# ddr-explorer on Linux under Xvfb ($(. /etc/os-release; echo "$PRETTY_NAME"), $(uname -m)), $(date -u +%F)"
say "# PySide6 $("$PY" -c 'import importlib.metadata as m; print(m.version("PySide6-Essentials"))')${FROZEN:+, the frozen build}"
say ""
say "## 1. as found"
if ! record "${APP[@]}" --check-system; then
    say "# and the app itself, on the X display:"
    record "${APP[@]}"
fi

say "## 2. the README's Debian line installed${NO_INSTALL:+ (already: apt-get skipped)}; the app on the X server"
PKGS=$(desktop_packages)
if [ -z "${NO_INSTALL:-}" ]; then
    say "\$ apt-get install -y $PKGS"
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $PKGS >/dev/null
    say "[exit status $?]"
    say ""
fi
record "${APP[@]}" --check-system
say "\$ ddr-explorer &   # DISPLAY=$DISP, first start: the demo corpus"
"${APP[@]}" > "$WORK/app.log" 2>&1 &
APP_PID=$!
wid=
for _ in $(seq 150); do  # up to 30 s for the window
    wid=$(xwininfo -root -tree 2>/dev/null | awk '/"DDR Explorer/ {print $1; exit}')
    [ -n "$wid" ] && break
    kill -0 "$APP_PID" 2>/dev/null || break
    sleep 0.2
done
if [ -n "$wid" ]; then
    sleep 8  # the demo corpus loads off the GUI thread; let the Corpus tab draw it
    xwininfo -root -tree | grep '"DDR Explorer' | sed 's/^ */  /' | tee -a "$LOG"
    import -window root "$SHOT" && say "screenshot of the X screen: ${SHOT#"$REPO"/}"
    kill "$APP_PID"; wait "$APP_PID" 2>/dev/null
    APP_PID=
else
    wait "$APP_PID"; say "the app did not open a window (exit status $?):"
    APP_PID=
    shorten < "$WORK/app.log" | tee -a "$LOG"
fi
say ""

say "## 3. $HIDE hidden (a private mount namespace: the library folder seen without it)"
lib=$(ldconfig -p | awk -v n="$HIDE" '$1 == n {print $NF; exit}')
if [ -z "$lib" ]; then
    say "($HIDE is not installed: nothing to hide)"
elif ! unshare --mount true 2>/dev/null; then
    say "(unshare --mount is not permitted here: cannot hide $HIDE without removing it)"
else
    libdir=$(dirname "$(readlink -f "$lib")")
    cat > "$WORK/hidden.sh" <<EOF
set -e
orig=\$(mktemp -d "$WORK/orig.XXXX") farm=\$(mktemp -d "$WORK/farm.XXXX")
mount --make-rprivate /
mount --bind "$libdir" "\$orig"
cp -as "\$orig/." "\$farm/"   # the same folder as symbolic links, less one library
rm -f "\$farm/$HIDE" "\$farm/$HIDE".*
mount --bind "\$farm" "$libdir"
set +e
"\$@"
EOF
    say "# in the namespace, $libdir lacks $HIDE*"
    record unshare --mount bash "$WORK/hidden.sh" "${APP[@]}"
    say "# the same with the preflight skipped: Qt's own failure"
    record unshare --mount bash "$WORK/hidden.sh" env DDR_SKIP_PREFLIGHT=1 "${APP[@]}"
fi

say "## 4. no display"
record env -u DISPLAY "${APP[@]}"
echo "== transcript: ${LOG#"$REPO"/}"
