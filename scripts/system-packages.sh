#!/usr/bin/env bash
# System libraries that Qt (offscreen and on a desktop), the keychain tests and the
# screenshots need on Debian/Ubuntu. Installs only what is missing; needs root or sudo.
set -euo pipefail
PKGS=(python3-venv libglib2.0-0 libgl1 libegl1 libfontconfig1 libxkbcommon0 libdbus-1-3
      fonts-dejavu-core libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-image0
      libxcb-render-util0 libxcb-shape0 libxkbcommon-x11-0 dbus gnome-keyring xvfb xauth
      tesseract-ocr tesseract-ocr-eng   # tesseract: OCR of scanned pages (optional for users)
      acl    # acl: setfacl, for the security suite run as an unprivileged user
      gcc libc6-dev)   # the bundle's launcher (packaging/launcher.c)
command -v dpkg-query >/dev/null 2>&1 || { echo "not a Debian/Ubuntu system: install the Qt 6 runtime libraries yourself" >&2; exit 0; }
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
