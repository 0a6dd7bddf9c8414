# Pinned versions of the Kubernetes test cluster's parts (sourced by build.sh and cluster.sh).
K8S_VERSION=v1.36.3      # k8s.io/kubernetes; its go.mod pins Go 1.26 (Go 1.27's jsonv2 breaks the apiserver's OpenAPI)
COREDNS_VERSION=v1.14.7  # github.com/coredns/coredns
JOBSET_VERSION=v0.12.0   # sigs.k8s.io/jobset
K8S_CACHE="${CLOUDTRAIN_K8S_CACHE:-$HOME/.cache/cloudtrain-k8s}/$K8S_VERSION-coredns-$COREDNS_VERSION-jobset-$JOBSET_VERSION"
