#!/usr/bin/env bash
# Everything the Kubernetes tests need on this machine, as root: the Debian packages (tools/system_prereqs.sh),
# then the binaries built from Go modules and the pod images, each only when it is not cached (build.sh, images.sh).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
"$here/../system_prereqs.sh"  # the Debian packages (one list for make test and CI)
start=$(date +%s)
"$here/build.sh" >/dev/null
"$here/images.sh" >/dev/null
echo "kubernetes test cluster: binaries and images ready in $(( $(date +%s) - start )) s"
