#!/usr/bin/env bash
# The system programs `make test` drives for real, checked in well under a second: run as root (CI:
# .ci/run), it installs what is missing with apt-get; otherwise it stops at once with one line naming the
# missing packages and the command that installs them. `make test` and .ci/run both call it.
#
#   tools/system_prereqs.sh          # check; as root, install what is missing
#
# One line per program: the command a test runs, then the Debian package that has it. Add a line to add one.
set -euo pipefail

PREREQS="
slurmctld  slurm-wlm       # the Slurm tests' real cluster (tests/slurm)
slurmd     slurm-wlm
sbatch     slurm-client
srun       slurm-client
scontrol   slurm-client
munged     munge           # Slurm's authentication
sshd       openssh-server  # the Slurm cluster's login node
chromium   chromium        # the browser tests (Playwright with the system Chromium)
containerd containerd      # the Kubernetes tests' real cluster (tests/kubernetes; tools/k8s builds the rest)
runc       runc
/usr/lib/cni/bridge containernetworking-plugins
etcd       etcd-server
debootstrap debootstrap    # the pods' Debian image, made offline
busybox    busybox-static  # the pause image
kubectl    kubectl
openssl    openssl         # the cluster's certificates
ip         iproute2        # the pods' bridge
"

missing=()
while read -r line; do
    read -r command package _ <<<"${line%%#*}"  # bash alone: the check needs no other program
    [ -n "${command:-}" ] || continue
    if ! PATH="$PATH:/usr/sbin:/sbin" command -v "$command" >/dev/null 2>&1; then
        case " ${missing[*]:-} " in *" $package "*) ;; *) missing+=("$package") ;; esac
    fi
done <<<"$PREREQS"

[ "${#missing[@]}" -eq 0 ] && exit 0
if [ "$EUID" -eq 0 ]; then
    echo "installing ${missing[*]} (apt-get)" >&2
    apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null
    exit 0
fi
echo "make test needs the system packages ${missing[*]}: run 'sudo apt-get install -y ${missing[*]}' (or make test as root, which installs them)" >&2
exit 1
