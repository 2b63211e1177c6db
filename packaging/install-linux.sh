#!/usr/bin/env bash
# Install the frozen build (dist/ddr-explorer, from packaging/build.sh) for the current user:
# the folder under ~/.local/opt, the launchers in ~/.local/bin, the .desktop entry and the icons
# in the freedesktop locations.  PREFIX=/usr/local (as root) installs for everyone.
#   packaging/install-linux.sh            # install
#   packaging/install-linux.sh --remove   # uninstall
#   packaging/install-linux.sh --anyway   # install even when system libraries are missing
# Before installing it checks the system libraries Qt's platform plugin needs and pip/PyInstaller
# cannot bring (libxcb-cursor0, libxcb-icccm4 ...: README, Quick start), with the frozen app's own
# preflight (`ddr-explorer --check-system`, gui/preflight.py), and stops with the install command
# for this system's family when one is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
PREFIX=${PREFIX:-$HOME/.local}
APPDIR=$PREFIX/opt/ddr-explorer
if [ "${1:-}" = --remove ]; then
    rm -rf "$APPDIR" "$PREFIX/bin/ddr-explorer" "$PREFIX/share/applications/ddr-explorer.desktop"
    rm -f "$PREFIX"/share/icons/hicolor/*/apps/ddr-explorer.{png,svg}
    echo "removed DDR Explorer from $PREFIX"
    exit 0
fi
[ -x dist/ddr-explorer/ddr-explorer ] || { echo "no dist/ddr-explorer: run packaging/build.sh first" >&2; exit 2; }
if [ "${1:-}" != --anyway ]; then
    echo "== checking the system libraries of Qt's platform plugin"
    if ! dist/ddr-explorer/ddr-explorer --check-system; then
        echo "install-linux.sh: install the packages above, then run this again (or pass --anyway: the" \
             "ddr command line needs none of them, only the desktop app does)" >&2
        exit 3
    fi
fi
mkdir -p "$PREFIX/opt" "$PREFIX/bin" "$PREFIX/share/applications"
rm -rf "$APPDIR"
cp -a dist/ddr-explorer "$APPDIR"
ln -sfn "$APPDIR/ddr-explorer" "$PREFIX/bin/ddr-explorer"
# the CLI as ddr-frozen: a plain `ddr` on PATH may be a development venv's
ln -sfn "$APPDIR/ddr" "$PREFIX/bin/ddr-frozen"
sed "s|^Exec=ddr-explorer|Exec=$APPDIR/ddr-explorer|; s|^TryExec=ddr-explorer|TryExec=$APPDIR/ddr-explorer|" \
    packaging/ddr-explorer.desktop > "$PREFIX/share/applications/ddr-explorer.desktop"
for n in 16 24 32 48 64 128 256 512; do
    d=$PREFIX/share/icons/hicolor/${n}x${n}/apps
    mkdir -p "$d" && cp "resources/icons/ddr-explorer-$n.png" "$d/ddr-explorer.png"
done
mkdir -p "$PREFIX/share/icons/hicolor/scalable/apps"
cp resources/icons/ddr-explorer.svg "$PREFIX/share/icons/hicolor/scalable/apps/ddr-explorer.svg"
command -v update-desktop-database >/dev/null && update-desktop-database -q "$PREFIX/share/applications" || true
command -v gtk-update-icon-cache >/dev/null && gtk-update-icon-cache -q -t "$PREFIX/share/icons/hicolor" || true
echo "installed DDR Explorer in $APPDIR (launcher: $PREFIX/bin/ddr-explorer, menu entry: DDR Explorer)"
