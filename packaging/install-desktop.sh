#!/usr/bin/env bash
# Add RLM Studio to the desktop's application menu (for this user only).
# Run it from the unpacked bundle folder, where it is copied by the build:
#
#   ./install-desktop.sh            # menu entry + icons, pointing at this folder
#   ./install-desktop.sh --remove   # take them away again
#
# Nothing is copied but the entry and the icons: the app stays in this folder.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
DATA=${XDG_DATA_HOME:-$HOME/.local/share}
BIN=$HOME/.local/bin
APPS=$DATA/applications
ICONS=$DATA/icons/hicolor
if [ "${1:-}" = "--remove" ]; then
  rm -f "$APPS/rlm-studio.desktop" "$ICONS"/*/apps/rlm-studio.png "$ICONS/scalable/apps/rlm-studio.svg"
  [ -L "$BIN/rlm-studio" ] && rm -f "$BIN/rlm-studio"
  echo "removed the RLM Studio menu entry and icons"
  exit 0
fi
EXE=$HERE/rlm-studio
[ -x "$EXE" ] || { echo "install-desktop.sh: no rlm-studio executable next to this script" >&2; exit 1; }
RES=$HERE/_internal/resources/icons
[ -d "$RES" ] || RES=$HERE/resources/icons
mkdir -p "$APPS" "$BIN" "$ICONS/scalable/apps"
for png in "$RES"/rlm-studio-*.png; do
  size=$(basename "$png" .png); size=${size#rlm-studio-}
  mkdir -p "$ICONS/${size}x${size}/apps"
  cp "$png" "$ICONS/${size}x${size}/apps/rlm-studio.png"
done
cp "$RES/rlm-studio.svg" "$ICONS/scalable/apps/rlm-studio.svg"
sed -e "s|^Exec=.*|Exec=\"$EXE\"|" -e "s|^TryExec=.*|TryExec=$EXE|" \
  "$HERE/rlm-studio.desktop" >"$APPS/rlm-studio.desktop"
ln -sfn "$EXE" "$BIN/rlm-studio"
command -v update-desktop-database >/dev/null && update-desktop-database -q "$APPS" || true
command -v gtk-update-icon-cache >/dev/null && gtk-update-icon-cache -q -t "$ICONS" 2>/dev/null || true
echo "RLM Studio is in the application menu; 'rlm-studio' is linked from $BIN"
