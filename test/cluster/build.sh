#!/usr/bin/env bash
# Builds the local control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
# kubectl, kwok) from the pinned Go modules beside this script, once per version, into a cache
# outside the checkout. A cached build is never rebuilt. Prints the bin directory on stdout's last line.
set -euo pipefail

K8S_VERSION=v1.36.3
ETCD_VERSION=v3.6.16
KWOK_VERSION=v0.8.0
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${NODELOAD_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/nodeload}"
bin="$cache/controlplane/k8s-$K8S_VERSION-etcd-$ETCD_VERSION-kwok-$KWOK_VERSION"
want=(etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok)

say() { printf '[controlplane] %s\n' "$*" >&2; }

complete() { for b in "${want[@]}"; do [ -x "$bin/$b" ] || return 1; done; }
if complete; then say "cached: $bin"; echo "$bin"; exit 0; fi

command -v go >/dev/null || { say "ERROR: Go is not installed (needed to build the control plane from Go modules)"; exit 1; }
say "building into $bin (a cold build takes 20-40 minutes on 2 cores; later runs reuse it)"
export CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS="-trimpath -mod=mod" GOPROXY="${GOPROXY:-$(go env GOPROXY)}"
tmp="$bin.partial.$$"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT

step() { # name, dir, package  (builds into $tmp, timed, with memory figure)
  local name=$1 dir=$2; shift 2
  if [ -x "$bin/$name" ]; then cp "$bin/$name" "$tmp/"; say "$name: cached"; return; fi
  say "$name: go build ($(date +%H:%M:%S))"
  local t0=$SECONDS
  if ! (cd "$here/go/$dir" && go mod download && /usr/bin/env time -f '%M' -o "$tmp/.$name.rss" \
          go build -ldflags "$LDF" -o "$tmp/$name" "$@") >"$tmp/.$name.log" 2>&1; then
    say "ERROR: building $name failed; last lines of the log:"; tail -n 30 "$tmp/.$name.log" >&2
    say "(is the Go module proxy reachable? GOPROXY=$GOPROXY)"; exit 1
  fi
  say "$name: done in $((SECONDS - t0))s, peak RSS $(( $(cat "$tmp/.$name.rss" 2>/dev/null || echo 0) / 1024 )) MiB"
}

maj=${K8S_VERSION#v}; maj=${maj%%.*}; min=${K8S_VERSION#v*.}; min=${min%%.*}
LDF="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  LDF="$LDF -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=$maj -X $p.gitMinor=$min"
  LDF="$LDF -X $p.gitTreeState=clean -X $p.gitCommit=$K8S_VERSION -X $p.buildDate=2026-01-01T00:00:00Z"
done
step etcd etcd go.etcd.io/etcd/server/v3
step kwok kwok sigs.k8s.io/kwok/cmd/kwok
for b in kube-apiserver kube-controller-manager kube-scheduler kubectl; do
  step "$b" k8s "k8s.io/kubernetes/cmd/$b"
done
rm -f "$tmp"/.*.log "$tmp"/.*.rss
mkdir -p "$(dirname "$bin")"
rm -rf "$bin"; mv "$tmp" "$bin"; trap - EXIT
"$bin/kube-apiserver" --version >&2
say "built: $bin"
echo "$bin"
