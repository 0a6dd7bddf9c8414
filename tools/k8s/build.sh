#!/usr/bin/env bash
# Build the test cluster's binaries from Go modules into a cache shared between runs:
# kube-apiserver, kube-controller-manager, kube-scheduler, kubelet (k8s.io/kubernetes), coredns, jobset's manager.
# Skips what is already in the cache. k8s.io/kubernetes replaces its k8s.io/* staging modules by ./staging paths,
# which a dependency's replace cannot use, so a wrapper module replaces each by its published v0.<minor>.<patch>.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/versions.sh"
GO="${GO:-/usr/local/go/bin/go}"
bin="$K8S_CACHE/bin"
mkdir -p "$bin"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export CGO_ENABLED=0 GOFLAGS="${GOFLAGS:--p=2}" GOTOOLCHAIN=local
nice_go() { nice -n "${BUILD_NICE:-10}" "$GO" "$@"; }
# What to build: any of k8s, coredns, jobset (default: all three).
want() { [ $# -eq 0 ] || [[ " $WANT " == *" $1 "* ]]; }
WANT="${*:-k8s coredns jobset}"

k8s_bins="kube-apiserver kube-controller-manager kube-scheduler kubelet"
missing=""
for b in $k8s_bins; do [ -x "$bin/$b" ] || missing="$missing $b"; done
if [ -n "$missing" ] && want k8s; then
  start=$(date +%s)
  mkdir "$work/k8s" && cd "$work/k8s"
  nice_go mod init cloudtrain.local/k8s-build >/dev/null 2>&1
  nice_go mod download -json "k8s.io/kubernetes@$K8S_VERSION" >"$work/k8s.json"
  gomod="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["GoMod"])' "$work/k8s.json")"
  minor_patch="${K8S_VERSION#v1.}"
  {
    echo "require k8s.io/kubernetes $K8S_VERSION"
    grep -oE '^\s*k8s\.io/[a-z0-9-]+ => \./staging/' "$gomod" | awk -v v="v0.$minor_patch" '{print "replace " $1 " => " $1 " " v}'
  } >>go.mod
  nice_go mod tidy >/dev/null 2>&1 || true
  pkgs=""
  for b in $missing; do pkgs="$pkgs k8s.io/kubernetes/cmd/$b"; done
  # shellcheck disable=SC2086
  nice_go get $(for p in $pkgs; do echo "$p@$K8S_VERSION"; done)
  ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1"
  ldflags="$ldflags -X k8s.io/component-base/version.gitMinor=${minor_patch%%.*} -X k8s.io/component-base/version.gitTreeState=clean"
  ldflags="$ldflags -X k8s.io/client-go/pkg/version.gitVersion=$K8S_VERSION"
  # shellcheck disable=SC2086
  nice_go build -trimpath -ldflags "$ldflags" -o "$work/out/" $pkgs
  mv "$work/out/"* "$bin/"
  echo "built$missing in $(( $(date +%s) - start )) s" | tee -a "$K8S_CACHE/build-times"
fi

if [ ! -x "$bin/coredns" ] && want coredns; then
  start=$(date +%s)
  mkdir "$work/coredns" && cd "$work/coredns"
  nice_go mod init cloudtrain.local/coredns-build >/dev/null 2>&1
  # CoreDNS with the plugins the cluster's Corefile uses only (its default build compiles every cloud's SDK)
  cat >main.go <<'GO'
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"
	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/template"
)

func init() { dnsserver.Directives = []string{"bind", "errors", "template", "kubernetes", "forward"} }

func main() { coremain.Run() }
GO
  nice_go get "github.com/coredns/coredns@$COREDNS_VERSION"
  nice_go mod tidy
  nice_go build -trimpath -ldflags "-s -w" -o "$work/coredns-bin" .
  mv "$work/coredns-bin" "$bin/coredns"
  echo "built coredns in $(( $(date +%s) - start )) s" | tee -a "$K8S_CACHE/build-times"
fi

if [ ! -x "$bin/jobset-manager" ] && want jobset; then
  start=$(date +%s)
  mkdir "$work/jobset" && cd "$work/jobset"
  nice_go mod init cloudtrain.local/jobset-build >/dev/null 2>&1
  nice_go get "sigs.k8s.io/jobset@$JOBSET_VERSION"
  nice_go build -trimpath -ldflags "-s -w" -o "$work/jobset-bin" sigs.k8s.io/jobset
  # The CRD and the webhook/RBAC manifests ship in the module; the cluster script applies the CRD.
  src="$(nice_go list -m -f '{{.Dir}}' sigs.k8s.io/jobset)"
  mkdir -p "$K8S_CACHE/jobset"
  cp "$src"/config/components/crd/bases/*.yaml "$K8S_CACHE/jobset/"
  mv "$work/jobset-bin" "$bin/jobset-manager"
  echo "built jobset-manager in $(( $(date +%s) - start )) s" | tee -a "$K8S_CACHE/build-times"
fi
ls -la "$bin"
