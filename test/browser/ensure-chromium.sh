#!/usr/bin/env bash
# Installs Debian's Chromium for the browser tests when it is missing (playwright-core drives it; no
# browser is downloaded from anywhere else). Needs root, as on the project's machines and CI.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
  exit 0
fi
echo "[browser] /usr/bin/chromium is missing: installing Debian's chromium package" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
# Fonts: chromium only recommends them, and a page without fonts renders as boxes.
apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core fonts-liberation >&2
/usr/bin/chromium --version >&2
