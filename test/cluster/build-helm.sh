#!/usr/bin/env bash
# Builds helm (the chart's lint and template tests) from the pinned Go module beside this script
# (go/helm: go.mod + go.sum), once per version, into a cache outside the checkout, as build.sh does for
# the control plane. A cached build is never rebuilt. Prints the binary's path on stdout's last line.
set -euo pipefail

HELM_VERSION=v3.22.0
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${NODELOAD_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/nodeload}"
bin="$cache/helm/helm-$HELM_VERSION"

say() { printf '[helm] %s\n' "$*" >&2; }

if [ -x "$bin/helm" ]; then say "cached: $bin/helm"; echo "$bin/helm"; exit 0; fi

command -v go >/dev/null || { say "ERROR: Go is not installed (needed to build helm from its Go module)"; exit 1; }
say "building helm $HELM_VERSION into $bin (cold: a few minutes on 2 cores; later runs reuse it)"
export CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS="-trimpath -mod=mod" GOPROXY="${GOPROXY:-$(go env GOPROXY)}"
tmp="$bin.partial.$$"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
# As helm's Makefile: the version it reports and the Kubernetes version its lint and template assume.
k8s_minor=$(sed -n 's#^\s*k8s.io/client-go v0\.\([0-9]*\)\..*#\1#p' "$here/go/helm/go.mod")
LDF="-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
for p in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
  LDF="$LDF -X $p.k8sVersionMajor=1 -X $p.k8sVersionMinor=$k8s_minor"
done
t0=$SECONDS
if ! (cd "$here/go/helm" && go mod download && go build -ldflags "$LDF" -o "$tmp/helm" helm.sh/helm/v3/cmd/helm) \
  >"$tmp/.log" 2>&1; then
  say "ERROR: building helm failed; last lines of the log:"; tail -n 30 "$tmp/.log" >&2
  say "(is the Go module proxy reachable? GOPROXY=$GOPROXY)"; exit 1
fi
rm -f "$tmp/.log"
mkdir -p "$(dirname "$bin")"
rm -rf "$bin"; mv "$tmp" "$bin"; trap - EXIT
say "built in $((SECONDS - t0))s: $("$bin/helm" version --short)"
echo "$bin/helm"
