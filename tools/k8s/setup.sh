#!/usr/bin/env bash
# Everything the tests need on this machine, checked in well under a second when it is there (make test's first
# step; .ci/run): the Debian packages (tools/system_prereqs.sh), then the Kubernetes test cluster's binaries built
# from Go modules and its pod images (build.sh, images.sh), cached once per machine in $K8S_CACHE. As root it
# installs and builds what is missing (the first build: ~15 min of 2 cores); otherwise one line says what to run.
set -euo pipefail
here="$(cd "${0%/*}" && pwd)"  # bash alone: the check runs before any other program is known to be there
"$here/../system_prereqs.sh"
. "$here/versions.sh"
[ -x "$K8S_CACHE/bin/kubelet" ] && [ -x "$K8S_CACHE/bin/jobset-manager" ] && [ -f "$K8S_CACHE/images/debian-python.tar" ] && exit 0
if [ "$EUID" -ne 0 ]; then
    echo "make test needs the Kubernetes test cluster's binaries in $K8S_CACHE: run 'sudo tools/k8s/setup.sh' once (it builds them from Go modules, ~15 min of 2 cores), or make test as root, which does" >&2
    exit 1
fi
start=$(date +%s)
echo "building the Kubernetes test cluster into $K8S_CACHE (once per machine)" >&2
"$here/build.sh" >/dev/null
"$here/images.sh" >/dev/null
echo "kubernetes test cluster: binaries and images ready in $(( $(date +%s) - start )) s" >&2
