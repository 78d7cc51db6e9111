#!/usr/bin/env bash
# Makes a fresh clone ready: installs the npm dependencies (with the pinned Node 24) when they are
# missing or older than package-lock.json; with NODELOAD_BUILD_CONTROLPLANE=1 also builds or reuses the
# local control plane (the test runner builds it as its own step, so a failure is counted).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

stamp=node_modules/.nodeload-lock
if [ ! -f "$stamp" ] || ! cmp -s package-lock.json "$stamp"; then
  echo "[bootstrap] npm ci (first run or package-lock.json changed)" >&2
  npm ci --no-audit --no-fund >&2
  cp package-lock.json "$stamp"
fi

node_major=$(node_modules/.bin/node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$node_major" -lt 22 ]; then
  echo "[bootstrap] ERROR: nodeload needs Node.js >= 22; node_modules/.bin/node is v$node_major. Run 'npm ci' (the 'node' devDependency pins Node 24)." >&2
  exit 1
fi

if [ "${NODELOAD_BUILD_CONTROLPLANE:-}" = "1" ]; then
  bash test/cluster/build.sh >/dev/null
fi
