#!/usr/bin/env bash
# A real single-node Kubernetes on this machine: etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler and a kubelet on containerd/runc, cluster DNS (CoreDNS) and a storage provisioner
# (local-path-provisioner, every access mode), everything from the package registries this machine reaches.
#
#   scripts/k8s-live.sh fetch            build/download once into the cache (idempotent, locked): what
#                                        scripts/k8s-apiserver.sh fetches, plus kubelet,
#                                        kube-controller-manager and kube-scheduler v1.32.13 (Go module
#                                        k8s.io/kubernetes), CoreDNS v1.11.3 (its Go module, the plugins a
#                                        cluster's DNS needs), local-path-provisioner v0.0.30 (Go module),
#                                        Debian's containerd, runc, CNI plugins, iptables and busybox-static
#                                        (apt-get download + dpkg-deb -x), a pause image and a busybox image
#   scripts/k8s-live.sh start DIR        fetch, then start the cluster with its state under DIR, wait until
#                                        the node is Ready and DNS answers, write DIR/kubeconfig
#   scripts/k8s-live.sh load DIR ARCHIVE...  import OCI/docker image archives (`cqlbench k8s image ...`)
#                                        into the cluster's containerd, where pods find them by name
#   scripts/k8s-live.sh k8ssandra DIR    the K8ssandra path as far as it goes here: build cass-operator
#                                        (the version k8ssandra-operator deploys) and k8ssandra-dc
#                                        (scripts/k8ssandra-dc.go on k8ssandra-operator's module), apply both
#                                        operators' CRDs (cass-operator's with its own kustomize patches),
#                                        start cass-operator out of cluster
#   scripts/k8s-live.sh k8ssandra-dc DIR NAMESPACE NAME  do for a new K8ssandraCluster what
#                                        k8ssandra-operator does first, with its code: the superuser Secret and
#                                        the CassandraDatacenters (printed as YAML), which cass-operator then
#                                        reconciles into StatefulSets
#   scripts/k8s-live.sh stop DIR         stop everything started for DIR and leave nothing behind: pods,
#                                        processes (by PID and start time), mounts, the bridge, the
#                                        iptables rules, the directories kubelet and containerd make
#                                        outside DIR; kernel settings kubelet changes are restored to the
#                                        values recorded at start. Fails naming whatever is left.
#
# Everything stays on this machine. The API server, kubelet, containerd's streaming server and the
# components' health ports listen on 127.0.0.1. Pods live on a bridge `cni0` (10.85.0.0/24) that this
# script creates and removes; their only routes are that subnet and the service range, and a FORWARD
# rule drops anything from the bridge to another interface. Cluster DNS is CoreDNS run on the host,
# bound to 10.96.0.10 on the bridge, answering cluster.local names only. There is no kube-proxy, so
# ClusterIP Services do not balance traffic; headless Services (as `cqlbench k8s run` uses) and DNS do.
# Needs root (bridges, mounts, cgroups), go, apt-get/dpkg-deb, openssl, flock and python3.
#
# Ports (127.0.0.1): API ${CQLBENCH_K8S_LIVE_APISERVER_PORT:-26443}, etcd 22379/22380, kubelet 20250
# (healthz 20248), CoreDNS health/ready 20180/20181. Cache: ${CQLBENCH_K8S_CACHE:-$HOME/.cache/cqlbench/k8s}.
set -euo pipefail

export CQLBENCH_K8S_APISERVER_PORT="${CQLBENCH_K8S_LIVE_APISERVER_PORT:-26443}"
export CQLBENCH_K8S_ETCD_PORT="${CQLBENCH_K8S_LIVE_ETCD_PORT:-22379}"
export CQLBENCH_K8S_ETCD_PEER_PORT="${CQLBENCH_K8S_LIVE_ETCD_PEER_PORT:-22380}"
# shellcheck source=scripts/k8s-apiserver.sh
source "$(dirname "${BASH_SOURCE[0]}")/k8s-apiserver.sh"

log() { echo "k8s-live: $*" >&2; }
die() {
  echo "k8s-live: error: $*" >&2
  exit 1
}

# Releases that ask for no newer dependency than Kubernetes v1.32.13 does, so that they build on its packages
# (see build_on_kube_deps); CoreDNS v1.11.4 and later ask for newer grpc and Prometheus client modules.
COREDNS_VERSION=v1.11.3
PROVISIONER_VERSION=v0.0.30
KUBELET_PORT=20250
KUBELET_HEALTHZ_PORT=20248
DNS_HEALTH_PORT=20180
DNS_READY_PORT=20181
POD_SUBNET=10.85.0.0/24
POD_GATEWAY=10.85.0.1
SERVICE_RANGE=10.96.0.0/16
DNS_IP=10.96.0.10
BRIDGE=cni0
# The node's name is also the address the API server reaches the kubelet by (exec, logs): kubelet refuses
# a loopback node IP, but a host name that resolves to 127.0.0.1 it takes.
NODE=localhost
PAUSE_IMAGE=localhost/cqlbench-live/pause:1
BUSYBOX_IMAGE=localhost/cqlbench-live/busybox:1
RULE_COMMENT=cqlbench-k8s-live
# What kubelet sets on start (its "kernel defaults"), and the bridge plugin's IP forwarding.
SYSCTLS=(vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops kernel.keys.root_maxkeys
  kernel.keys.root_maxbytes net.ipv4.ip_forward)
# Directories kubelet, containerd and CNI create outside DIR whatever they are told.
HOST_DIRS=(/var/lib/kubelet /var/log/pods /var/log/containers /run/containerd /var/lib/cni /opt/containerd
  /var/run/netns)
DEBS=(containerd runc containernetworking-plugins iptables libip4tc2 libip6tc2 libxtables12 libnftnl11
  libnetfilter-conntrack3 libnfnetlink0 libmnl0 busybox-static)

ROOT="$CACHE/live-root"
KUBELET_BIN="$CACHE/bin/kubelet"
CONTROLLER_BIN="$CACHE/bin/kube-controller-manager"
SCHEDULER_BIN="$CACHE/bin/kube-scheduler"
# The node's Kubernetes commands and the Go module they are built in, whose versions CoreDNS and the
# provisioner take (build_on_kube_deps).
KUBE_NODE_MODULE="$CACHE/build-live"
KUBE_NODE_COMMANDS=(kubelet kube-scheduler kube-controller-manager)
COREDNS_BIN="$CACHE/bin/coredns-$COREDNS_VERSION"
PROVISIONER_BIN="$CACHE/bin/local-path-provisioner-$PROVISIONER_VERSION"
PAUSE_BIN="$CACHE/bin/pause"
IMAGES="$CACHE/images"
# The cass-operator that k8ssandra-operator $OPERATOR_VERSION deploys (its config/cass-operator kustomization).
CASS_OPERATOR_VERSION=v1.23.0
CASS_OPERATOR_BIN="$CACHE/bin/cass-operator-$CASS_OPERATOR_VERSION"
CASS_OPERATOR_FILES="$CACHE/cass-operator-$CASS_OPERATOR_VERSION"
CASS_OPERATOR_HEALTH_PORT=20281
K8SSANDRA_DC_SOURCE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/k8ssandra-dc.go"
# Named by its source's content: a fresh clone (new file times) finds it cached; an edit rebuilds it.
K8SSANDRA_DC_BIN="$CACHE/bin/k8ssandra-dc-$OPERATOR_VERSION-$(sha256sum "$K8SSANDRA_DC_SOURCE" 2>/dev/null | cut -c1-12)"

# --- fetch ---------------------------------------------------------------------------------------------

fetch_debs() {
  [[ -f "$ROOT/.complete" ]] && return 0
  log "downloading Debian's ${DEBS[*]}"
  local tmp
  tmp="$(mktemp -d "$CACHE/live-debs.XXXXXX")"
  apt_unpack "$tmp" "${DEBS[@]}"
  local tool
  for tool in usr/bin/containerd usr/sbin/runc usr/lib/cni/bridge usr/sbin/xtables-nft-multi bin/busybox; do
    [[ -x "$tmp/root/$tool" ]] || die "the Debian packages hold no $tool"
  done
  touch "$tmp/root/.complete"
  rm -rf "$ROOT"
  mv "$tmp/root" "$ROOT"
  rm -rf "$tmp"
}

fetch_kube_node() {
  [[ -x "$KUBELET_BIN" && -x "$CONTROLLER_BIN" && -x "$SCHEDULER_BIN" ]] && return 0
  kube_module "$KUBE_NODE_MODULE" "${KUBE_NODE_COMMANDS[@]}"
  local cmd
  for cmd in "${KUBE_NODE_COMMANDS[@]}"; do build_kube_command "$KUBE_NODE_MODULE" "$cmd"; done
}

# build_on_kube_deps NAME MODULE VERSION PACKAGE OUT: the main package PACKAGE of the Go module MODULE at
# VERSION built into OUT, in the module $CACHE/build-NAME (with any Go files already written there). That
# module requires every version the kubelet build selected and pins the same staging modules, so each package
# the two share (client-go, the API types and what they import) has the same build ID and comes from Go's
# build cache instead of being compiled a second time. This holds only while MODULE@VERSION asks for no newer
# version of a shared module than Kubernetes v$K8S_VERSION does, and a replace directive, even to the same
# version, changes the build ID: hence the older CoreDNS above, and requirements rather than replaces for
# all but the staging modules. Measured here after kubelet's build: CoreDNS 11 s instead of 89,
# local-path-provisioner 9 s instead of 96.
build_on_kube_deps() {
  local name="$1" module="$2" version="$3" package="$4" out="$5"
  local mod="$CACHE/build-$name" kube="$KUBE_NODE_MODULE" start=$SECONDS
  kube_module "$kube" "${KUBE_NODE_COMMANDS[@]}"
  mkdir -p "$mod" "$CACHE/bin"
  {
    printf 'module cqlbench.invalid/%s\n\ngo 1.23.0\n\nrequire %s %s\n\nrequire (\n' "$name" "$module" "$version"
    awk '/^require \(/ { inside = 1; next } inside && /^\)/ { inside = 0 }
      inside && NF >= 2 && $1 != "k8s.io/kubernetes" { print "\t" $1 " " $2 }' "$kube/go.mod"
    echo ")"
    echo
    sed -n '/^replace (/,/^)/p' "$kube/go.mod"
  } >"$mod/go.mod"
  rm -f "$mod/go.sum"
  log "building $name $version on Kubernetes v$K8S_VERSION's dependencies (Go module)"
  (cd "$mod" && go mod tidy 2>&1 | grep -v '^go: downloading' >&2 || true)
  (cd "$mod" && CGO_ENABLED=0 "${GO_BUILD[@]}" -ldflags="-s -w" -o "$out.tmp" "$package" >&2) ||
    die "building $name failed"
  mv "$out.tmp" "$out"
  log "$name built in $((SECONDS - start)) s"
}

# CoreDNS with the plugins a cluster's DNS needs (in CoreDNS's own plugin order), not its full set.
fetch_coredns() {
  [[ -x "$COREDNS_BIN" ]] && return 0
  local mod="$CACHE/build-coredns"
  mkdir -p "$mod"
  cat >"$mod/main.go" <<'EOF'
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/ready"
)

func init() {
	dnsserver.Directives = []string{"bind", "ready", "health", "errors", "log", "loadbalance", "cache", "kubernetes"}
}

func main() { coremain.Run() }
EOF
  build_on_kube_deps coredns github.com/coredns/coredns "$COREDNS_VERSION" . "$COREDNS_BIN"
}

fetch_provisioner() {
  [[ -x "$PROVISIONER_BIN" ]] && return 0
  local mod="$CACHE/build-provisioner"
  mkdir -p "$mod"
  # Keeps the provisioner's module in go.mod through `go mod tidy`; never compiled itself.
  printf '//go:build tools\n\npackage tools\n\nimport _ "github.com/rancher/local-path-provisioner"\n' >"$mod/tools.go"
  build_on_kube_deps provisioner github.com/rancher/local-path-provisioner "$PROVISIONER_VERSION" \
    github.com/rancher/local-path-provisioner "$PROVISIONER_BIN"
}

# The sandbox ("pause") program: holds a pod's namespaces, reaps children, ends on SIGTERM/SIGINT.
fetch_pause() {
  [[ -x "$PAUSE_BIN" ]] && return 0
  local mod="$CACHE/build-pause"
  mkdir -p "$mod" "$CACHE/bin"
  printf 'module cqlbench.invalid/pause\n\ngo 1.23.0\n' >"$mod/go.mod"
  cat >"$mod/main.go" <<'EOF'
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range signals {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			var status syscall.WaitStatus
			if pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil); pid <= 0 || err != nil {
				break
			}
		}
	}
}
EOF
  (cd "$mod" && CGO_ENABLED=0 "${GO_BUILD[@]}" -ldflags="-s -w" -o "$PAUSE_BIN.tmp" . >&2) ||
    die "building the pause program failed"
  mv "$PAUSE_BIN.tmp" "$PAUSE_BIN"
}

# oci_archive NAME ROOTFS ENTRYPOINT_JSON OUT: a one-layer OCI image archive named NAME for containerd.
oci_archive() {
  local name="$1" rootfs="$2" entrypoint="$3" out="$4" tmp
  tmp="$(mktemp -d "$CACHE/oci.XXXXXX")"
  mkdir -p "$tmp/blobs/sha256"
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$rootfs" -cf "$tmp/layer.tar" .
  local diff_id layer layer_size config config_size manifest manifest_size
  diff_id="$(sha256sum "$tmp/layer.tar" | cut -d' ' -f1)"
  gzip -n "$tmp/layer.tar"
  layer="$(sha256sum "$tmp/layer.tar.gz" | cut -d' ' -f1)"
  layer_size="$(stat -c %s "$tmp/layer.tar.gz")"
  mv "$tmp/layer.tar.gz" "$tmp/blobs/sha256/$layer"
  printf '{"architecture":"amd64","os":"linux","config":{"Entrypoint":%s},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
    "$entrypoint" "$diff_id" >"$tmp/config.json"
  config="$(sha256sum "$tmp/config.json" | cut -d' ' -f1)"
  config_size="$(stat -c %s "$tmp/config.json")"
  mv "$tmp/config.json" "$tmp/blobs/sha256/$config"
  printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"sha256:%s","size":%s}]}' \
    "$config" "$config_size" "$layer" "$layer_size" >"$tmp/manifest.json"
  manifest="$(sha256sum "$tmp/manifest.json" | cut -d' ' -f1)"
  manifest_size="$(stat -c %s "$tmp/manifest.json")"
  mv "$tmp/manifest.json" "$tmp/blobs/sha256/$manifest"
  printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"annotations":{"io.containerd.image.name":"%s","org.opencontainers.image.ref.name":"%s"}}]}' \
    "$manifest" "$manifest_size" "$name" "${name##*:}" >"$tmp/index.json"
  echo '{"imageLayoutVersion":"1.0.0"}' >"$tmp/oci-layout"
  tar -C "$tmp" -cf "$out.tmp" oci-layout index.json blobs
  mv "$out.tmp" "$out"
  rm -rf "$tmp"
}

fetch_images() {
  mkdir -p "$IMAGES"
  local rootfs
  if [[ ! -s "$IMAGES/pause.tar" ]]; then
    rootfs="$(mktemp -d "$CACHE/pause-root.XXXXXX")"
    cp "$PAUSE_BIN" "$rootfs/pause"
    oci_archive "$PAUSE_IMAGE" "$rootfs" '["/pause"]' "$IMAGES/pause.tar"
    rm -rf "$rootfs"
  fi
  if [[ ! -s "$IMAGES/busybox.tar" ]]; then
    # The storage provisioner's helper pods run `sh`, `mkdir` and `rm` from it.
    rootfs="$(mktemp -d "$CACHE/busybox-root.XXXXXX")"
    mkdir -p "$rootfs/bin" "$rootfs/tmp"
    cp "$ROOT/bin/busybox" "$rootfs/bin/busybox"
    local applet
    for applet in sh mkdir rm ls cat sleep; do ln -s busybox "$rootfs/bin/$applet"; done
    oci_archive "$BUSYBOX_IMAGE" "$rootfs" '["/bin/sh"]' "$IMAGES/busybox.tar"
    rm -rf "$rootfs"
  fi
}

fetch_live() {
  mkdir -p "$CACHE"
  fetch # etcd, kube-apiserver, kubectl, the CRDs (scripts/k8s-apiserver.sh; takes and releases the lock)
  exec 9>"$CACHE/.lock"
  flock 9
  fetch_debs
  fetch_pause
  fetch_images
  fetch_kube_node # first: CoreDNS and the provisioner take its module's versions
  fetch_coredns
  fetch_provisioner
  flock -u 9
  exec 9>&-
}

# cass-operator from its Go module (`go install` is refused: the proxy keeps its version list from us), with
# the files it reads at run time: its CRDs, their kustomize patches and its image configuration.
fetch_cass_operator() {
  [[ -x "$CASS_OPERATOR_BIN" && -f "$CASS_OPERATOR_FILES/.complete" ]] && return 0
  local mdir start=$SECONDS
  mkdir -p "$CACHE/bin"
  log "building cass-operator $CASS_OPERATOR_VERSION (Go module, a few minutes)"
  mdir="$(GONOSUMDB=github.com/k8ssandra module_dir "github.com/k8ssandra/cass-operator@$CASS_OPERATOR_VERSION")"
  [[ -f "$mdir/cmd/main.go" ]] || die "no cass-operator $CASS_OPERATOR_VERSION module"
  (cd "$mdir" && CGO_ENABLED=0 GONOSUMDB=github.com/k8ssandra GOFLAGS=-mod=readonly \
    "${GO_BUILD[@]}" -ldflags="-s -w" -o "$CASS_OPERATOR_BIN.tmp" ./cmd >&2) || die "building cass-operator failed"
  rm -rf "$CASS_OPERATOR_FILES"
  mkdir -p "$CASS_OPERATOR_FILES"
  cp -r "$mdir/config/crd/bases" "$CASS_OPERATOR_FILES/crd"
  cp "$mdir/config/crd/patches/config_removal.yaml" "$mdir/config/crd/patches/remove_xkeys.yaml" \
    "$mdir/config/manager/image_config.yaml" "$CASS_OPERATOR_FILES/"
  chmod -R u+w "$CASS_OPERATOR_FILES"
  touch "$CASS_OPERATOR_FILES/.complete"
  mv "$CASS_OPERATOR_BIN.tmp" "$CASS_OPERATOR_BIN"
  log "cass-operator built in $((SECONDS - start)) s"
}

# k8ssandra-dc (scripts/k8ssandra-dc.go) on k8ssandra-operator's module, with the module's replace
# directives (a dependency's own are ignored).
fetch_k8ssandra_dc() {
  [[ -x "$K8SSANDRA_DC_BIN" ]] && return 0
  local mod="$CACHE/build-k8ssandra-dc" mdir start=$SECONDS
  mkdir -p "$mod" "$CACHE/bin"
  mdir="$(GONOSUMDB=github.com/k8ssandra module_dir "github.com/k8ssandra/k8ssandra-operator@$OPERATOR_VERSION")"
  [[ -f "$mdir/go.mod" ]] || die "no k8ssandra-operator $OPERATOR_VERSION module"
  {
    printf 'module cqlbench.invalid/k8ssandra-dc\n\ngo 1.22\n\nrequire github.com/k8ssandra/k8ssandra-operator %s\n\n' \
      "$OPERATOR_VERSION"
    sed -n '/^replace (/,/^)/p' "$mdir/go.mod"
  } >"$mod/go.mod"
  rm -f "$mod/go.sum"
  cp "$K8SSANDRA_DC_SOURCE" "$mod/main.go"
  log "building k8ssandra-dc on k8ssandra-operator $OPERATOR_VERSION (Go module, a few minutes)"
  (cd "$mod" && GONOSUMDB=github.com/k8ssandra go mod tidy 2>&1 | grep -v '^go: downloading' >&2 || true)
  (cd "$mod" && CGO_ENABLED=0 GONOSUMDB=github.com/k8ssandra "${GO_BUILD[@]}" -ldflags="-s -w" \
    -o "$K8SSANDRA_DC_BIN.tmp" . >&2) || die "building k8ssandra-dc failed"
  mv "$K8SSANDRA_DC_BIN.tmp" "$K8SSANDRA_DC_BIN"
  log "k8ssandra-dc built in $((SECONDS - start)) s"
}

fetch_k8ssandra() {
  fetch_live
  exec 9>"$CACHE/.lock"
  flock 9
  fetch_cass_operator
  fetch_k8ssandra_dc
  flock -u 9
  exec 9>&-
}

# --- the pieces of a running cluster ------------------------------------------------------------------

# Debian's unpacked tools first on PATH (containerd finds its shim and runc there), their libraries found.
tool_env() {
  export PATH="$ROOT/usr/bin:$ROOT/usr/sbin:$ROOT/bin:$PATH"
  export LD_LIBRARY_PATH="$ROOT/usr/lib/x86_64-linux-gnu:$ROOT/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
}

iptables_cmd() {
  XTABLES_LIBDIR="$ROOT/usr/lib/x86_64-linux-gnu/xtables" "$ROOT/usr/sbin/xtables-nft-multi" iptables "$@"
}

ctr_cmd() { "$ROOT/usr/bin/ctr" --address "$1/containerd/containerd.sock" --namespace k8s.io "${@:2}"; }

kubectl_cmd() { "$KUBECTL_BIN" --kubeconfig "$1/kubeconfig" "${@:2}"; }

# spawn DIR NAME COMMAND...: a process of the cluster in a session of its own, its log DIR/NAME.log, its
# PID and start time in DIR/NAME.pid.
spawn() {
  local dir="$1" name="$2"
  shift 2
  setsid "$@" >"$dir/$name.log" 2>&1 </dev/null &
  echo "$! $(start_ticks $!)" >"$dir/$name.pid"
}

# running DIR NAME: the process started as NAME still runs.
running() {
  local pid start
  [[ -f "$1/$2.pid" ]] || return 1
  read -r pid start <"$1/$2.pid" || return 1
  process_running "$pid" "$start"
}

# wait_for DIR NAME SECONDS WHAT COMMAND...: polls COMMAND until it succeeds; fails with NAME's log if NAME
# ends or SECONDS pass.
wait_for() {
  local dir="$1" name="$2" seconds="$3" what="$4" i
  shift 4
  for i in $(seq 1 $((seconds * 4))); do
    "$@" >/dev/null 2>&1 && return 0
    if ! running "$dir" "$name"; then
      tail -20 "$dir/$name.log" >&2
      die "$name exited before $what (log: $dir/$name.log)"
    fi
    sleep 0.25
  done
  tail -20 "$dir/$name.log" >&2
  die "$what not after $seconds s (log: $dir/$name.log)"
}

record_host_state() {
  local dir="$1" key d
  : >"$dir/sysctl.saved"
  for key in "${SYSCTLS[@]}"; do echo "$key=$(sysctl -n "$key")" >>"$dir/sysctl.saved"; done
  : >"$dir/host-dirs.absent"
  for d in "${HOST_DIRS[@]}"; do [[ -e "$d" ]] || echo "$d" >>"$dir/host-dirs.absent"; done
  ls /sys/class/net >"$dir/interfaces.before"
  : >"$dir/cgroups.absent"
  for d in /sys/fs/cgroup/*/; do
    [[ -e "$d/kubepods" ]] || echo "${d}kubepods" >>"$dir/cgroups.absent"
  done
}

kubelet_certs() {
  local dir="$1"
  log "certificates for the API server to reach the kubelet"
  (
    cd "$dir"
    openssl req -newkey rsa:2048 -nodes -subj "/O=system:masters/CN=kube-apiserver-kubelet-client" \
      -keyout kubelet-client.key -out kubelet-client.csr 2>/dev/null
    openssl x509 -req -in kubelet-client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \
      -out kubelet-client.crt 2>/dev/null
  )
}

# The pods' network: a bridge with the gateway and the DNS address, and nothing forwarded off it.
start_network() {
  ip link add "$BRIDGE" type bridge
  ip addr add "$POD_GATEWAY/24" dev "$BRIDGE"
  ip addr add "$DNS_IP/32" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  iptables_cmd -I FORWARD 1 -i "$BRIDGE" ! -o "$BRIDGE" -j DROP -m comment --comment "$RULE_COMMENT"
  iptables_cmd -I FORWARD 1 -o "$BRIDGE" ! -i "$BRIDGE" -j DROP -m comment --comment "$RULE_COMMENT"
}

write_cni_config() {
  local dir="$1"
  mkdir -p "$dir/cni/net.d" "$dir/cni/ipam" "$dir/cni/cache"
  cat >"$dir/cni/net.d/10-cqlbench-live.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "cqlbench-live",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$BRIDGE",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "$dir/cni/ipam",
        "ranges": [[{"subnet": "$POD_SUBNET", "gateway": "$POD_GATEWAY"}]],
        "routes": [{"dst": "$SERVICE_RANGE"}]
      }
    }
  ]
}
EOF
}

start_containerd() {
  local dir="$1" c="$1/containerd"
  mkdir -p "$c"
  cat >"$c/config.toml" <<EOF
version = 2
root = "$c/root"
state = "$c/state"
disabled_plugins = ["io.containerd.internal.v1.opt"]
[grpc]
  address = "$c/containerd.sock"
[ttrpc]
  address = "$c/containerd.sock.ttrpc"
[metrics]
  address = ""
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "$ROOT/usr/sbin/runc"
        Root = "$c/runc"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$ROOT/usr/lib/cni"
    conf_dir = "$dir/cni/net.d"
EOF
  log "starting containerd"
  spawn "$dir" containerd "$ROOT/usr/bin/containerd" --config "$c/config.toml"
  wait_for "$dir" containerd 30 "containerd serving" ctr_cmd "$dir" version
  ctr_cmd "$dir" images import "$IMAGES/pause.tar" >&2
  ctr_cmd "$dir" images import "$IMAGES/busybox.tar" >&2
}

start_kubelet() {
  local dir="$1" k="$1/kubelet"
  mkdir -p "$k/pod-logs"
  # Pods resolve through cluster DNS only; nothing outside the cluster is looked up.
  printf 'nameserver %s\n' "$DNS_IP" >"$dir/resolv.conf"
  cat >"$k/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: $KUBELET_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $KUBELET_HEALTHZ_PORT
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://$dir/containerd/containerd.sock
podLogsDir: $k/pod-logs
resolvConf: $dir/resolv.conf
clusterDNS: [$DNS_IP]
clusterDomain: cluster.local
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: $dir/ca.crt}
authorization: {mode: AlwaysAllow}
evictionHard: {memory.available: 200Mi, nodefs.available: 5%, imagefs.available: 5%}
imageGCHighThresholdPercent: 95
imageGCLowThresholdPercent: 90
EOF
  log "starting kubelet (node $NODE)"
  spawn "$dir" kubelet "$KUBELET_BIN" --config "$k/config.yaml" --kubeconfig "$dir/kubeconfig" \
    --root-dir "$k" --hostname-override "$NODE"
}

start_controllers() {
  local dir="$1"
  log "starting kube-controller-manager and kube-scheduler"
  spawn "$dir" controller-manager "$CONTROLLER_BIN" --kubeconfig "$dir/kubeconfig" --leader-elect=false \
    --secure-port 0 --service-account-private-key-file "$dir/sa.key" --root-ca-file "$dir/ca.crt" \
    --service-cluster-ip-range "$SERVICE_RANGE"
  spawn "$dir" scheduler "$SCHEDULER_BIN" --kubeconfig "$dir/kubeconfig" --leader-elect=false --secure-port 0
}

node_ready() {
  [[ "$(kubectl_cmd "$1" get node "$NODE" \
    -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" == True ]]
}

# dns_answers IP NAME: the DNS server at IP answers NAME's A record with an address.
dns_answers() {
  python3 - "$1" "$2" <<'EOF'
import random, socket, struct, sys
server, name = sys.argv[1], sys.argv[2]
ident = random.randrange(65536)
query = struct.pack(">HHHHHH", ident, 0x0100, 1, 0, 0, 0)
query += b"".join(bytes([len(p)]) + p.encode() for p in name.split(".")) + b"\0" + struct.pack(">HH", 1, 1)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(1)
s.sendto(query, (server, 53))
reply = s.recv(512)
flags, answers = struct.unpack(">H", reply[2:4])[0], struct.unpack(">H", reply[6:8])[0]
sys.exit(0 if reply[:2] == query[:2] and flags & 0xF == 0 and answers > 0 else 1)
EOF
}

start_dns() {
  local dir="$1"
  cat >"$dir/Corefile" <<EOF
.:53 {
    bind $DNS_IP
    ready 127.0.0.1:$DNS_READY_PORT
    health 127.0.0.1:$DNS_HEALTH_PORT
    errors
    loadbalance
    cache 30
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig $dir/kubeconfig
        pods insecure
    }
}
EOF
  # Its Service holds 10.96.0.10, so that no other Service is given it.
  kubectl_cmd "$dir" apply -f - >&2 <<EOF
apiVersion: v1
kind: Service
metadata: {name: kube-dns, namespace: kube-system, labels: {k8s-app: kube-dns}}
spec:
  clusterIP: $DNS_IP
  selector: {k8s-app: kube-dns}
  ports:
  - {name: dns, port: 53, protocol: UDP}
  - {name: dns-tcp, port: 53, protocol: TCP}
EOF
  log "starting CoreDNS on $DNS_IP"
  spawn "$dir" coredns "$COREDNS_BIN" -conf "$dir/Corefile"
  wait_for "$dir" coredns 60 "DNS answering kubernetes.default.svc.cluster.local" \
    dns_answers "$DNS_IP" kubernetes.default.svc.cluster.local
}

# Volumes of every access mode from one directory on this machine: local-path-provisioner out of cluster,
# its helper pods (busybox) making and removing each volume's directory.
start_storage() {
  local dir="$1"
  mkdir -p "$dir/volumes"
  cat >"$dir/provisioner.json" <<EOF
{"sharedFileSystemPath": "$dir/volumes"}
EOF
  cat >"$dir/helper-pod.yaml" <<EOF
apiVersion: v1
kind: Pod
metadata: {name: helper-pod}
spec:
  containers:
  - name: helper-pod
    image: $BUSYBOX_IMAGE
    imagePullPolicy: Never
EOF
  kubectl_cmd "$dir" apply -f - >&2 <<EOF
apiVersion: v1
kind: Namespace
metadata: {name: local-path-storage}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: local-path-config, namespace: local-path-storage}
data:
  setup: |-
    #!/bin/sh
    set -eu
    mkdir -m 0777 -p "\$VOL_DIR"
  teardown: |-
    #!/bin/sh
    set -eu
    rm -rf "\$VOL_DIR"
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: local
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: rancher.io/local-path
volumeBindingMode: Immediate
reclaimPolicy: Delete
EOF
  log "starting local-path-provisioner (storage class \"local\", the default)"
  spawn "$dir" provisioner "$PROVISIONER_BIN" start --kubeconfig "$dir/kubeconfig" \
    --namespace local-path-storage --service-account-name default --config "$dir/provisioner.json" \
    --helper-pod-file "$dir/helper-pod.yaml"
}

start_live() {
  local dir="$1"
  [[ $EUID == 0 ]] || die "a live cluster needs root (a bridge, mounts, cgroups)"
  mkdir -p "$dir"
  dir="$(cd "$dir" && pwd)"
  [[ ! -e "$dir/kubelet.pid" ]] || die "$dir holds a cluster already (\`$0 stop $dir\` first)"
  fetch_live
  tool_env
  ip link show "$BRIDGE" >/dev/null 2>&1 &&
    die "a network interface $BRIDGE exists already (a live cluster running? \`$0 stop DIR\` stops it)"
  [[ -e /run/containerd ]] &&
    die "/run/containerd exists: another containerd runs on this machine (it would share shim sockets)"
  local port
  for port in "$KUBELET_PORT" "$KUBELET_HEALTHZ_PORT" "$DNS_HEALTH_PORT" "$DNS_READY_PORT"; do
    port_listened "$port" && die "127.0.0.1:$port is taken"
  done
  local t0=$SECONDS
  record_host_state "$dir"
  # A start that fails half-way takes down what it had started.
  trap 'status=$?; trap - EXIT; if [[ $status != 0 ]]; then log "start failed; stopping what was started"; (stop_live "'"$dir"'") || true; fi; exit $status' EXIT
  APISERVER_EXTRA_ARGS=(--kubelet-client-certificate "$dir/kubelet-client.crt"
    --kubelet-client-key "$dir/kubelet-client.key" --kubelet-preferred-address-types Hostname)
  CERTS_HOOK=kubelet_certs
  start "$dir" # etcd and kube-apiserver (scripts/k8s-apiserver.sh)
  start_network
  write_cni_config "$dir"
  start_containerd "$dir"
  start_kubelet "$dir"
  start_controllers "$dir"
  wait_for "$dir" kubelet 120 "node $NODE Ready" node_ready "$dir"
  log "node $NODE Ready $((SECONDS - t0)) s after start"
  start_dns "$dir"
  start_storage "$dir"
  trap - EXIT
  log "cluster ready in $((SECONDS - t0)) s: KUBECONFIG=$dir/kubeconfig (kubectl: $KUBECTL_BIN)"
}

load_images() {
  local dir="$1" archive
  shift
  [[ -S "$dir/containerd/containerd.sock" ]] || die "no live cluster in $dir (no containerd socket)"
  tool_env
  for archive in "$@"; do
    [[ -f "$archive" ]] || die "$archive: no such file"
    log "importing $archive"
    ctr_cmd "$dir" images import "$archive" >&2 || die "containerd could not import $archive"
  done
}

# --- K8ssandra ----------------------------------------------------------------------------------------

live_cluster() {
  [[ -f "$1/kubeconfig" ]] && running "$1" kubelet || die "no live cluster in $1 (\`$0 start $1\` first)"
}

# PORT: GET /healthz on 127.0.0.1:PORT answers 200 (bash's /dev/tcp; no HTTP client needed).
healthy() {
  local status=""
  exec 8<>"/dev/tcp/127.0.0.1/$1" || return 1
  printf 'GET /healthz HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&8
  read -r -t 2 -N 12 status <&8 || true
  exec 8<&-
  [[ "$status" == HTTP/1.?" 200" ]]
}

# The CRDs as both operators' kustomizations install them (cass-operator's CassandraDatacenter without a
# schema for spec.config, which holds free-form JSON), then cass-operator out of cluster: every namespace,
# webhooks off, health on 127.0.0.1, no metrics endpoint.
start_k8ssandra() {
  local dir="$1"
  [[ -d "$dir" ]] || die "$dir: no such directory"
  dir="$(cd "$dir" && pwd)"
  live_cluster "$dir"
  if running "$dir" cass-operator; then
    log "cass-operator runs already for $dir"
    return 0
  fi
  fetch_k8ssandra
  port_listened "$CASS_OPERATOR_HEALTH_PORT" && die "127.0.0.1:$CASS_OPERATOR_HEALTH_PORT is taken"
  log "applying the CRDs of k8ssandra-operator $OPERATOR_VERSION and cass-operator $CASS_OPERATOR_VERSION"
  kubectl_cmd "$dir" apply --server-side --force-conflicts -f "$CRD_FILE" -f "$CASS_OPERATOR_FILES/crd" >/dev/null
  local crd=cassandradatacenters.cassandra.datastax.com patch
  if [[ -n "$(kubectl_cmd "$dir" get crd "$crd" \
    -o jsonpath='{.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.config.type}')" ]]; then
    for patch in config_removal remove_xkeys; do
      kubectl_cmd "$dir" patch crd "$crd" --type json --patch-file "$CASS_OPERATOR_FILES/$patch.yaml" >/dev/null
    done
  fi
  kubectl_cmd "$dir" wait --for condition=established --timeout 60s crd "$crd" \
    k8ssandraclusters.k8ssandra.io >/dev/null
  # No registry this machine reaches holds the operator's images (the Management API, k8ssandra-client,
  # system-logger): they are never pulled, so no pod reaches out for one; their pods wait at
  # ErrImageNeverPull.
  { cat "$CASS_OPERATOR_FILES/image_config.yaml" && echo "imagePullPolicy: Never"; } >"$dir/cass-operator-images.yaml"
  cat >"$dir/cass-operator-config.yaml" <<CONFIG
apiVersion: config.k8ssandra.io/v1beta1
kind: OperatorConfig
metadata:
  name: operator-config
health:
  healthProbeBindAddress: 127.0.0.1:$CASS_OPERATOR_HEALTH_PORT
metrics:
  bindAddress: "0"
leaderElection:
  leaderElect: false
disableWebhooks: true
imageConfigFile: $dir/cass-operator-images.yaml
CONFIG
  log "starting cass-operator $CASS_OPERATOR_VERSION (health on 127.0.0.1:$CASS_OPERATOR_HEALTH_PORT)"
  spawn "$dir" cass-operator env KUBECONFIG="$dir/kubeconfig" WATCH_NAMESPACE= "$CASS_OPERATOR_BIN" \
    --config "$dir/cass-operator-config.yaml"
  wait_for "$dir" cass-operator 60 "cass-operator healthy" healthy "$CASS_OPERATOR_HEALTH_PORT"
  log "cass-operator ready; \`$0 k8ssandra-dc $dir NAMESPACE NAME\` makes a K8ssandraCluster's datacenters"
}

k8ssandra_dc() {
  local dir="$1"
  [[ -d "$dir" ]] || die "$dir: no such directory"
  dir="$(cd "$dir" && pwd)"
  live_cluster "$dir"
  running "$dir" cass-operator || die "cass-operator does not run for $dir (\`$0 k8ssandra $dir\` first)"
  fetch_k8ssandra # all cached, unless scripts/k8ssandra-dc.go changed since `k8ssandra` ran
  KUBECONFIG="$dir/kubeconfig" "$K8SSANDRA_DC_BIN" "$2" "$3"
}

# --- stop ---------------------------------------------------------------------------------------------

# stop_process DIR NAME: SIGTERM, 15 s, SIGKILL; only while its PID names the process started.
stop_process() {
  local dir="$1" name="$2" pid start
  [[ -f "$dir/$name.pid" ]] || return 0
  read -r pid start <"$dir/$name.pid" || true
  signal_and_wait "$pid" "$start" TERM 150 || signal_and_wait "$pid" "$start" KILL 300 ||
    die "$name (process $pid) still runs 30 s after SIGKILL"
  rm -f "$dir/$name.pid"
}

# The pods' containers end as the kubelet ends them (so CNI releases their addresses and netns).
delete_pods() {
  local dir="$1" i
  running "$dir" apiserver && running "$dir" kubelet || return 0
  log "deleting every pod"
  kubectl_cmd "$dir" delete pods --all --all-namespaces --grace-period 1 --wait=false >/dev/null 2>&1 || true
  for i in $(seq 1 120); do
    [[ -z "$(kubectl_cmd "$dir" get pods --all-namespaces -o name 2>/dev/null)" ]] && break
    sleep 0.5
  done
}

# Whatever still runs in a container once kubelet is gone: its tasks killed through containerd, then any
# process left in the pods' cgroups (the cluster's own containers) by PID.
kill_containers() {
  local dir="$1" id pid
  if [[ -S "$dir/containerd/containerd.sock" ]] && running "$dir" containerd; then
    for id in $(ctr_cmd "$dir" tasks ls -q 2>/dev/null); do
      ctr_cmd "$dir" tasks kill -s KILL "$id" >/dev/null 2>&1 || true
      ctr_cmd "$dir" tasks rm -f "$id" >/dev/null 2>&1 || true
    done
    for id in $(ctr_cmd "$dir" containers ls -q 2>/dev/null); do
      ctr_cmd "$dir" containers rm "$id" >/dev/null 2>&1 || true
    done
  fi
  if [[ -d /sys/fs/cgroup/pids/kubepods ]]; then
    for pid in $(find /sys/fs/cgroup/pids/kubepods -name cgroup.procs -exec cat {} + 2>/dev/null); do
      kill -KILL "$pid" 2>/dev/null || true
    done
  fi
}

# The runc shims of this cluster's containerd (they outlive it): found by the socket they were given.
kill_shims() {
  local dir="$1" p cmdline
  for p in /proc/[0-9]*; do
    cmdline="$(tr '\0' ' ' 2>/dev/null <"$p/cmdline")" || continue
    if [[ "$cmdline" == *containerd-shim* && "$cmdline" == *"$dir/containerd/containerd.sock"* ]]; then
      kill -KILL "${p#/proc/}" 2>/dev/null || true
    fi
  done
}

# Mount points under DIR, /run/containerd, /var/lib/kubelet and the pods' network namespaces, deepest first.
cluster_mounts() {
  local dir="$1"
  findmnt -rn -o TARGET | awk -v d="$dir/" '
    index($0, d) == 1 || index($0, "/run/containerd/") == 1 || index($0, "/var/lib/kubelet/") == 1 ||
    index($0, "/run/netns/cni-") == 1 || index($0, "/var/run/netns/cni-") == 1 { print length($0) " " $0 }' |
    sort -rn | cut -d' ' -f2- | sed 's/\\040/ /g'
}

unmount_all() {
  local dir="$1" target
  while IFS= read -r target; do
    [[ -n "$target" ]] || continue
    umount "$target" 2>/dev/null || umount -l "$target" 2>/dev/null || true
  done < <(cluster_mounts "$dir")
}

restore_host() {
  local dir="$1" line d
  if [[ -f "$dir/sysctl.saved" ]]; then
    while IFS= read -r line; do sysctl -q -w "$line" >/dev/null || true; done <"$dir/sysctl.saved"
  fi
  while iptables_cmd -D FORWARD -i "$BRIDGE" ! -o "$BRIDGE" -j DROP -m comment --comment "$RULE_COMMENT" 2>/dev/null; do :; done
  while iptables_cmd -D FORWARD -o "$BRIDGE" ! -i "$BRIDGE" -j DROP -m comment --comment "$RULE_COMMENT" 2>/dev/null; do :; done
  ip link del "$BRIDGE" 2>/dev/null || true
  # The pods' network namespaces (their veths go with them).
  for d in /run/netns/cni-* /var/run/netns/cni-*; do
    [[ -e "$d" ]] && { umount "$d" 2>/dev/null || true; rm -f "$d"; }
  done
  if [[ -f "$dir/cgroups.absent" ]]; then
    while IFS= read -r d; do
      [[ -d "$d" ]] && { find "$d" -depth -type d -exec rmdir {} + 2>/dev/null || true; }
    done <"$dir/cgroups.absent"
  fi
  if [[ -f "$dir/host-dirs.absent" ]]; then
    while IFS= read -r d; do rm -rf "$d"; done <"$dir/host-dirs.absent"
  fi
}

# Network interfaces that were not there before the cluster started (the pods' veths go with their
# network namespaces, which the kernel frees once their last process has ended).
new_interfaces() {
  [[ -f "$1/interfaces.before" ]] || return 0
  ls /sys/class/net | grep -vxF -f "$1/interfaces.before" || true
}

wait_interfaces_gone() {
  local i
  for i in $(seq 1 100); do
    [[ -z "$(new_interfaces "$1")" ]] && return 0
    sleep 0.1
  done
}

# What is left of the cluster, one line each; nothing when it is all gone.
leftovers() {
  local dir="$1" name line key value d
  for name in provisioner coredns scheduler controller-manager kubelet containerd apiserver etcd; do
    running "$dir" "$name" && echo "process $name ($(cut -d' ' -f1 "$dir/$name.pid")) still runs"
  done
  cluster_mounts "$dir" | sed 's/^/mount /'
  new_interfaces "$dir" | sed 's/^/interface /'
  iptables_cmd -S FORWARD 2>/dev/null | grep -F "$RULE_COMMENT" | sed 's/^/iptables rule /' || true
  if [[ -f "$dir/sysctl.saved" ]]; then
    while IFS='=' read -r key value; do
      [[ "$(sysctl -n "$key")" == "$value" ]] || echo "kernel setting $key is $(sysctl -n "$key"), was $value"
    done <"$dir/sysctl.saved"
  fi
  for f in host-dirs.absent cgroups.absent; do
    [[ -f "$dir/$f" ]] || continue
    while IFS= read -r d; do [[ -e "$d" ]] && echo "directory $d"; done <"$dir/$f"
  done
  return 0
}

stop_live() {
  local dir="$1"
  [[ -d "$dir" ]] || die "$dir: no such directory"
  dir="$(cd "$dir" && pwd)"
  tool_env
  stop_process "$dir" cass-operator
  stop_process "$dir" provisioner
  stop_process "$dir" coredns
  stop_process "$dir" scheduler
  stop_process "$dir" controller-manager
  delete_pods "$dir"
  stop_process "$dir" kubelet
  kill_containers "$dir"
  stop_process "$dir" containerd
  kill_shims "$dir"
  unmount_all "$dir"
  restore_host "$dir"
  wait_interfaces_gone "$dir"
  stop "$dir" # kube-apiserver and etcd (scripts/k8s-apiserver.sh)
  local left
  left="$(leftovers "$dir")"
  [[ -z "$left" ]] || die "left behind after stopping the cluster in $dir: $(echo "$left" | paste -sd ';' -)"
  log "stopped; nothing left of the cluster outside $dir"
}

case "${1:-}" in
fetch) fetch_live ;;
start) [[ $# == 2 ]] || die "usage: $0 start DIR" && start_live "$2" ;;
load) [[ $# -ge 3 ]] || die "usage: $0 load DIR ARCHIVE..." && load_images "$2" "${@:3}" ;;
k8ssandra) [[ $# == 2 ]] || die "usage: $0 k8ssandra DIR" && start_k8ssandra "$2" ;;
k8ssandra-dc) [[ $# == 4 ]] || die "usage: $0 k8ssandra-dc DIR NAMESPACE NAME" && k8ssandra_dc "$2" "$3" "$4" ;;
stop) [[ $# == 2 ]] || die "usage: $0 stop DIR" && stop_live "$2" ;;
*) die "usage: $0 fetch | start DIR | load DIR ARCHIVE... | k8ssandra DIR | k8ssandra-dc DIR NAMESPACE NAME | stop DIR" ;;
esac
