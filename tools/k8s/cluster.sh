#!/usr/bin/env bash
# A Kubernetes cluster on 127.0.0.1 for the tests: etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
# two kubelets (node-a, node-b, both at their bridge's address, 10.244.0.1 for the first cluster: a node IP may not be loopback) each on its own containerd (runc, bridge CNI), CoreDNS (headless-Service names
# resolve as on GKE) and JobSet's controller with its webhooks; pod images imported offline (images.sh).
#
#   tools/k8s/cluster.sh up DIR     # prints nothing on success; DIR/kubeconfig is the admin's kubeconfig
#   tools/k8s/cluster.sh down DIR   # stops every process it started, unmounts, removes DIR
#
# What this sandbox needs (cgroup v1, root without CAP_SYS_RESOURCE): each kubelet's cgroup root made in every
# v1 hierarchy, nested under this session's own memory cgroup; failCgroupV1: false; containerd's
# restrict_oom_score_adj = true. A cluster's pods share one bridge (10.244.0.0/16, gateway 10.244.0.1, where CoreDNS listens, for slot 0).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/versions.sh"
cmd="${1:?up|down}"
dir="$(realpath -m "${2:?state folder}")"
bin="$K8S_CACHE/bin"
images="$K8S_CACHE/images"
# Several clusters may run side by side (parallel test sessions): each takes a free slot N (0-9) under a lock and
# has a bridge, a pod network and cgroup roots of its own: ctk8sN, 10.(244-N).0.0/16, gateway 10.(244-N).0.1.
SLOTS=/tmp/ctk8s-slots
take_slot() {
  mkdir -p "$SLOTS"
  exec 9>"$SLOTS/lock"; flock 9
  local n
  for n in 0 1 2 3 4 5 6 7 8 9; do
    if [ ! -f "$SLOTS/$n" ] || [ ! -d "$(cat "$SLOTS/$n")" ]; then echo "$dir" >"$SLOTS/$n"; echo "$n" >"$dir/slot"; break; fi
  done
  exec 9>&-
  [ -f "$dir/slot" ] || { echo "cluster: ten test clusters are up already (see $SLOTS)" >&2; exit 1; }
}
slot_settings() {
  SLOT="$(cat "$dir/slot" 2>/dev/null || echo 0)"
  BRIDGE="ctk8s$SLOT"; NET="10.$((244 - SLOT))"; GATEWAY="$NET.0.1"
}
NODES="node-a node-b"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("",0)); print(s.getsockname()[1])'; }

start() {  # name, command...: a process of its own session, its pid in DIR/pids/NAME
  local name="$1"; shift
  setsid "$@" >"$dir/logs/$name.log" 2>&1 < /dev/null &
  echo $! >"$dir/pids/$name"
}

wait_for() {  # what, seconds, command...
  local what="$1" limit="$2"; shift 2
  local t=0
  until "$@" >/dev/null 2>&1; do
    sleep 0.5; t=$((t + 1))
    if [ "$t" -ge $((limit * 2)) ]; then echo "cluster: $what not ready in ${limit}s (logs in $dir/logs)" >&2; return 1; fi
  done
}

session_memcg() { awk -F: '$2 == "memory" {print $3}' /proc/self/cgroup; }

make_cgroup() {  # the kubelet's cgroup root in every v1 hierarchy (cpuset levels get their parent's cpus/mems)
  local path="$1" h
  for h in /sys/fs/cgroup/*/; do
    h="${h%/}"; [ "$(basename "$h")" = unified ] && continue
    local cur="$h" part
    for part in $(echo "$path" | tr '/' ' '); do
      if [ ! -d "$cur/$part" ]; then
        mkdir "$cur/$part"
        if [ -f "$cur/cpuset.cpus" ]; then cat "$cur/cpuset.cpus" >"$cur/$part/cpuset.cpus"; cat "$cur/cpuset.mems" >"$cur/$part/cpuset.mems"; fi
      fi
      cur="$cur/$part"
    done
  done
}

remove_cgroup() {  # depth first; what is still busy stays
  local path="$1" h
  for h in /sys/fs/cgroup/*/; do
    [ -d "$h$path" ] && find "$h$path" -depth -type d -exec rmdir {} \; 2>/dev/null || true
  done
}

certs() {
  local c="$dir/pki"; mkdir -p "$c"
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$c/ca.key" -out "$c/ca.crt" -days 30 -subj "/CN=cloudtrain-test-ca" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -keyout "$c/serving.key" -out "$c/serving.csr" -subj "/CN=127.0.0.1" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes.default.svc\n' >"$c/san.ext"
  openssl x509 -req -in "$c/serving.csr" -CA "$c/ca.crt" -CAkey "$c/ca.key" -CAcreateserial -out "$c/serving.crt" -days 30 -extfile "$c/san.ext" 2>/dev/null
  openssl genrsa -out "$c/sa.key" 2048 2>/dev/null
  openssl rsa -in "$c/sa.key" -pubout -out "$c/sa.pub" 2>/dev/null
  mkdir -p "$c/jobset"; cp "$c/serving.crt" "$c/jobset/tls.crt"; cp "$c/serving.key" "$c/jobset/tls.key"
}

kubeconfig() {  # file, user, token
  cat >"$1" <<KC
apiVersion: v1
kind: Config
clusters:
- name: cloudtrain-test
  cluster: {server: "https://127.0.0.1:$API_PORT", certificate-authority: "$dir/pki/ca.crt"}
users:
- name: $2
  user: {token: "$3"}
contexts:
- name: cloudtrain-test
  context: {cluster: cloudtrain-test, user: $2, namespace: default}
current-context: cloudtrain-test
KC
}

containerd_up() {  # node
  local n="$1" d="$dir/$1"
  mkdir -p "$d/root" "$d/state" "$d/opt"
  cat >"$d/containerd.toml" <<TOML
version = 2
root = "$d/root"
state = "$d/state"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]
[grpc]
  address = "$d/containerd.sock"
[ttrpc]
  address = "$d/containerd.sock.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "$d/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "registry.k8s.io/pause:3.10"
  restrict_oom_score_adj = true
  disable_apparmor = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$dir/cni"
TOML
  start "containerd-$n" containerd --config "$d/containerd.toml"
  wait_for "containerd of $n" 30 ctr -a "$d/containerd.sock" version
  for image in pause debian-python; do
    ctr -a "$d/containerd.sock" -n k8s.io images import --no-unpack=false "$images/$image.tar" >/dev/null
  done
}

kubelet_up() {  # node
  local n="$1" d="$dir/$1" root
  root="$(session_memcg)/ctk8s$SLOT-$n"; root="/${root#/}"; root="${root//\/\//\/}"
  echo "$root" >"$d/cgroup-root"
  make_cgroup "$root"
  local port; port="$(free_port)"
  cat >"$d/kubelet.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $GATEWAY
port: $port
readOnlyPort: 0
healthzPort: 0
authentication: {anonymous: {enabled: true}, webhook: {enabled: false}}
authorization: {mode: AlwaysAllow}
cgroupDriver: cgroupfs
cgroupRoot: $root
cgroupsPerQOS: true
enforceNodeAllocatable: [pods]
failCgroupV1: false
failSwapOn: false
oomScoreAdj: 0
containerRuntimeEndpoint: unix://$d/containerd.sock
clusterDNS: [$GATEWAY]
clusterDomain: cluster.local
resolvConf: /etc/resolv.conf
rootDir: $d/kubelet
podLogsDir: $d/pod-logs
evictionHard: {memory.available: "50Mi", nodefs.available: "1%", imagefs.available: "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
maxPods: 30
nodeStatusUpdateFrequency: 4s
syncFrequency: 10s
YAML
  kubeconfig "$d/kubeconfig" "system:node:$n" "node-token-$n"
  mkdir -p "$d/kubelet" "$d/pod-logs"
  start "kubelet-$n" "$bin/kubelet" --config "$d/kubelet.yaml" --kubeconfig "$d/kubeconfig" \
    --hostname-override "$n" --node-ip "$GATEWAY" --v=1
}

up() {
  [ -x "$bin/kubelet" ] || { echo "cluster: no binaries in $bin: run tools/k8s/build.sh" >&2; exit 1; }
  [ -f "$images/debian-python.tar" ] || { echo "cluster: no images in $images: run tools/k8s/images.sh" >&2; exit 1; }
  mkdir -p "$dir/logs" "$dir/pids" "$dir/cni"
  take_slot; slot_settings
  local t0; t0=$(date +%s.%N)
  if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
    ip link add "$BRIDGE" type bridge; ip addr add "$GATEWAY/16" dev "$BRIDGE"
  fi
  ip link set "$BRIDGE" up
  cat >"$dir/cni/10-cloudtrain.conflist" <<CNI
{"cniVersion": "1.0.0", "name": "cloudtrain-test", "plugins": [
  {"type": "bridge", "bridge": "$BRIDGE", "isGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "dataDir": "$dir/ipam", "ranges": [[{"subnet": "$NET.0.0/16", "rangeStart": "$NET.1.0", "gateway": "$GATEWAY"}]],
            "routes": [{"dst": "0.0.0.0/0"}]}},
  {"type": "portmap", "capabilities": {"portMappings": true}}]}
CNI
  certs
  ETCD_PORT=$(free_port); ETCD_PEER=$(free_port); API_PORT=$(free_port); WEBHOOK_PORT=$(free_port)
  printf 'API_PORT=%s\nETCD_PORT=%s\nWEBHOOK_PORT=%s\n' "$API_PORT" "$ETCD_PORT" "$WEBHOOK_PORT" >"$dir/ports"
  {
    echo "admin-token,admin,admin,system:masters"
    for n in $NODES; do echo "node-token-$n,system:node:$n,system:node:$n,system:nodes"; done
  } >"$dir/pki/tokens.csv"
  kubeconfig "$dir/kubeconfig" admin admin-token
  start etcd etcd --name default --data-dir "$dir/etcd" --listen-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" --listen-peer-urls "http://127.0.0.1:$ETCD_PEER" \
    --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER" --initial-cluster "default=http://127.0.0.1:$ETCD_PEER"
  local setups=""
  for n in $NODES; do containerd_up "$n" & setups="$setups $!"; done
  start kube-apiserver "$bin/kube-apiserver" --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
    --bind-address 127.0.0.1 --advertise-address "$GATEWAY" --secure-port "$API_PORT" \
    --tls-cert-file "$dir/pki/serving.crt" --tls-private-key-file "$dir/pki/serving.key" \
    --client-ca-file "$dir/pki/ca.crt" --token-auth-file "$dir/pki/tokens.csv" --authorization-mode Node,RBAC \
    --service-account-issuer https://kubernetes.default.svc --service-account-key-file "$dir/pki/sa.pub" \
    --service-account-signing-key-file "$dir/pki/sa.key" --service-cluster-ip-range 10.96.0.0/16 \
    --allow-privileged --cert-dir "$dir/pki/apiserver" --profiling=false --kubelet-preferred-address-types InternalIP
  wait_for kube-apiserver 90 kubectl --kubeconfig "$dir/kubeconfig" get --raw /readyz
  start kube-controller-manager "$bin/kube-controller-manager" --kubeconfig "$dir/kubeconfig" \
    --authentication-kubeconfig "$dir/kubeconfig" --authorization-kubeconfig "$dir/kubeconfig" \
    --leader-elect=false --bind-address 127.0.0.1 --secure-port 0 --use-service-account-credentials=false \
    --service-account-private-key-file "$dir/pki/sa.key" --root-ca-file "$dir/pki/ca.crt" \
    --cluster-signing-cert-file "$dir/pki/ca.crt" --cluster-signing-key-file "$dir/pki/ca.key" \
    --controllers '*'
  start kube-scheduler "$bin/kube-scheduler" --kubeconfig "$dir/kubeconfig" \
    --authentication-kubeconfig "$dir/kubeconfig" --authorization-kubeconfig "$dir/kubeconfig" \
    --leader-elect=false --bind-address 127.0.0.1 --secure-port 0
  echo "control plane ready in $(python3 -c "import time; print(round(time.time() - $t0, 1))") s" >"$dir/timings"
  for p in $setups; do wait "$p"; done  # the containerds and their images
  for n in $NODES; do kubelet_up "$n"; done
  cat >"$dir/Corefile" <<COREFILE
cluster.local:53 {
  bind $GATEWAY
  errors
  kubernetes cluster.local {
    kubeconfig $dir/kubeconfig cloudtrain-test
    pods insecure
  }
}
.:53 {
  bind $GATEWAY
  errors
  template ANY ANY {
    rcode NXDOMAIN
  }
}
COREFILE
  if [ -x "$bin/coredns" ]; then start coredns "$bin/coredns" -conf "$dir/Corefile"; else echo "cluster: no coredns in $bin" >&2; fi
  if [ -x "$bin/jobset-manager" ]; then jobset_up; else echo "cluster: no jobset-manager in $bin" >&2; fi
  for n in $NODES; do
    wait_for "node $n" 90 bash -c "kubectl --kubeconfig '$dir/kubeconfig' get node $n -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}' | grep -qx True"
  done
  wait_for "the default service account" 60 kubectl --kubeconfig "$dir/kubeconfig" get serviceaccount default
  echo "two nodes ready in $(python3 -c "import time; print(round(time.time() - $t0, 1))") s" >>"$dir/timings"
}

jobset_up() {
  local k=(kubectl --kubeconfig "$dir/kubeconfig")
  "${k[@]}" apply --server-side -f "$K8S_CACHE/jobset/" >/dev/null
  cat >"$dir/jobset.yaml" <<CFG
apiVersion: config.jobset.x-k8s.io/v1alpha1
kind: Configuration
leaderElection: {leaderElect: false}
internalCertManagement: {enable: false}
webhook: {port: $WEBHOOK_PORT, host: 127.0.0.1, certDir: $dir/pki/jobset}
metrics: {bindAddress: "0"}
health: {healthProbeBindAddress: "0"}
CFG
  start jobset env KUBECONFIG="$dir/kubeconfig" "$bin/jobset-manager" --config "$dir/jobset.yaml" --zap-log-level=info
  local ca url; ca="$(base64 -w0 "$dir/pki/ca.crt")"; url="https://127.0.0.1:$WEBHOOK_PORT"
  cat >"$dir/jobset-webhooks.yaml" <<HOOKS
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: jobset-mutating}
webhooks:
- {name: mjobset.kb.io, admissionReviewVersions: [v1], sideEffects: None, failurePolicy: Fail,
   clientConfig: {url: "$url/mutate-jobset-x-k8s-io-v1alpha2-jobset", caBundle: "$ca"},
   rules: [{apiGroups: [jobset.x-k8s.io], apiVersions: [v1alpha2], operations: [CREATE], resources: [jobsets]}]}
- {name: mpod.kb.io, admissionReviewVersions: [v1], sideEffects: None, failurePolicy: Fail,
   clientConfig: {url: "$url/mutate--v1-pod", caBundle: "$ca"},
   objectSelector: {matchExpressions: [{key: jobset.sigs.k8s.io/jobset-name, operator: Exists}]},
   rules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}]}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: jobset-validating}
webhooks:
- {name: vjobset.kb.io, admissionReviewVersions: [v1], sideEffects: None, failurePolicy: Fail,
   clientConfig: {url: "$url/validate-jobset-x-k8s-io-v1alpha2-jobset", caBundle: "$ca"},
   rules: [{apiGroups: [jobset.x-k8s.io], apiVersions: [v1alpha2], operations: [CREATE, UPDATE], resources: [jobsets]}]}
- {name: vpod.kb.io, admissionReviewVersions: [v1], sideEffects: None, failurePolicy: Fail,
   clientConfig: {url: "$url/validate--v1-pod", caBundle: "$ca"},
   objectSelector: {matchExpressions: [{key: jobset.sigs.k8s.io/jobset-name, operator: Exists}]},
   rules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}]}
HOOKS
  wait_for "the JobSet webhook" 60 bash -c "exec 3<>/dev/tcp/127.0.0.1/$WEBHOOK_PORT"
  "${k[@]}" apply -f "$dir/jobset-webhooks.yaml" >/dev/null
}

stop_pid() {  # name
  local f="$dir/pids/$1" pid
  [ -f "$f" ] || return 0
  pid="$(cat "$f")"
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$f"
}

down() {
  [ -d "$dir" ] || return 0
  local n
  slot_settings
  for name in jobset coredns kube-scheduler kube-controller-manager; do stop_pid "$name"; done
  for n in $NODES; do stop_pid "kubelet-$n"; done
  for n in $NODES; do  # every container of this node's containerd, then its shims (found by its socket path)
    local sock="$dir/$n/containerd.sock"
    if [ -S "$sock" ]; then
      for task in $(ctr -a "$sock" -n k8s.io tasks ls -q 2>/dev/null); do
        ctr -a "$sock" -n k8s.io tasks kill -s SIGKILL "$task" >/dev/null 2>&1 || true
      done
      sleep 0.5
    fi
    stop_pid "containerd-$n"
    for pid in $(pgrep -f -- "-address $sock" || true); do kill -9 "$pid" 2>/dev/null || true; done
  done
  stop_pid kube-apiserver
  stop_pid etcd
  { grep -F " $dir/" /proc/mounts || true; } | awk '{print $2}' | sort -r | while read -r m; do umount -l "$m" 2>/dev/null || true; done
  for n in $NODES; do
    [ -f "$dir/$n/cgroup-root" ] && remove_cgroup "$(cat "$dir/$n/cgroup-root")"
  done
  rm -rf "$dir"
  if [ "$(cat "$SLOTS/$SLOT" 2>/dev/null)" = "$dir" ]; then rm -f "$SLOTS/$SLOT"; fi
}

case "$cmd" in
  up) up ;;
  down) down ;;
  *) echo "usage: $0 up|down DIR" >&2; exit 2 ;;
esac
