#!/usr/bin/env bash
# Everything the Kubernetes tests need on this machine, as root: the Debian packages, then the binaries built
# from Go modules and the pod images, each only when it is not cached (build.sh, images.sh).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
PACKAGES="containerd runc containernetworking-plugins etcd-server debootstrap busybox-static kubectl openssl iproute2"
missing=""
for p in $PACKAGES; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
  (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing) >/dev/null
fi
start=$(date +%s)
"$here/build.sh" >/dev/null
"$here/images.sh" >/dev/null
echo "kubernetes test cluster: binaries and images ready in $(( $(date +%s) - start )) s"
