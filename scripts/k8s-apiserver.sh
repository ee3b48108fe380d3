#!/usr/bin/env bash
# A real Kubernetes API server (etcd + kube-apiserver, no kubelet, no operator) on loopback, for checking
# what `cqlbench k8s render` writes with server-side dry runs and strict field validation.
#
#   scripts/k8s-apiserver.sh fetch        build/download once into the cache (idempotent, locked):
#                                         etcd (Debian's etcd-server, apt-get download + dpkg-deb -x),
#                                         kube-apiserver and kubectl v1.32.13 (go build from the Go module
#                                         k8s.io/kubernetes), the K8ssandraCluster CRD (k8ssandra-operator v1.21.0)
#                                         and the PodMonitor CRD (prometheus-operator v0.92.1)
#   scripts/k8s-apiserver.sh start DIR    fetch, then start etcd and kube-apiserver with fresh certs and a token
#                                         under DIR, apply the CRDs server-side and wait for Established.
#                                         Refuses if one of its ports is taken. Writes DIR/kubeconfig,
#                                         DIR/etcd.pid and DIR/apiserver.pid (each: PID and start time).
#   scripts/k8s-apiserver.sh stop DIR     stop the two processes started for DIR (by PID and start time),
#                                         wait until they have ended and check their ports are free.
#
# Cache: ${CQLBENCH_K8S_CACHE:-$HOME/.cache/cqlbench/k8s}. Ports: ${CQLBENCH_K8S_APISERVER_PORT:-16443} (apiserver),
# ${CQLBENCH_K8S_ETCD_PORT:-12379}/${CQLBENCH_K8S_ETCD_PEER_PORT:-12380} (etcd), all on 127.0.0.1.
# Progress goes to stderr.
set -euo pipefail

K8S_VERSION=1.32.13
OPERATOR_VERSION=v1.21.0
PROMETHEUS_OPERATOR_VERSION=v0.92.1
CACHE="${CQLBENCH_K8S_CACHE:-$HOME/.cache/cqlbench/k8s}"
API_PORT="${CQLBENCH_K8S_APISERVER_PORT:-16443}"
ETCD_PORT="${CQLBENCH_K8S_ETCD_PORT:-12379}"
ETCD_PEER_PORT="${CQLBENCH_K8S_ETCD_PEER_PORT:-12380}"

log() { echo "k8s-apiserver: $*" >&2; }
die() {
  echo "k8s-apiserver: error: $*" >&2
  exit 1
}

ETCD_BIN="$CACHE/etcd/usr/bin/etcd"
APISERVER_BIN="$CACHE/bin/kube-apiserver"
KUBECTL_BIN="$CACHE/bin/kubectl"
CRD_FILE="$CACHE/crd/k8ssandra.io_k8ssandraclusters.yaml"
PODMONITOR_CRD_FILE="$CACHE/crd/monitoring.coreos.com_podmonitors.yaml"
# The flags of every Go build here (scripts/k8s-live.sh too): paths trimmed, and no debug information, which
# the stripped binaries (-ldflags -s -w) would drop anyway; not writing it saved 5-13 % of the compile's CPU
# (CoreDNS from an empty build cache, twice each way, 2026-11-27).
GO_BUILD=(go build -trimpath -gcflags=all=-dwarf=false)
# scripts/k8s-live.sh adds kube-apiserver flags and certificates of its own through these.
APISERVER_EXTRA_ARGS=()
CERTS_HOOK=""

# apt_unpack DIR PACKAGE...: Debian's .deb files of the packages downloaded into DIR and unpacked (never
# installed) into DIR/root.
apt_unpack() {
  local dir="$1" deb
  shift
  if ! (cd "$dir" && apt-get download -q "$@" >&2); then
    # A fresh machine may have no package lists yet.
    log "apt-get download failed; updating the package lists once"
    apt-get update -qq >&2 || true
    (cd "$dir" && apt-get download -q "$@" >&2) || die "apt-get download $* failed"
  fi
  mkdir -p "$dir/root"
  for deb in "$dir"/*.deb; do dpkg-deb -x "$deb" "$dir/root"; done
}

fetch_etcd() {
  [[ -x "$ETCD_BIN" ]] && return 0
  log "downloading Debian's etcd-server package"
  local tmp
  tmp="$(mktemp -d "$CACHE/etcd-dl.XXXXXX")"
  apt_unpack "$tmp" etcd-server
  [[ -x "$tmp/root/usr/bin/etcd" ]] || die "etcd-server package holds no usr/bin/etcd"
  rm -rf "$CACHE/etcd"
  mv "$tmp/root" "$CACHE/etcd"
  rm -rf "$tmp"
  log "etcd: $("$ETCD_BIN" --version | head -1)"
}

# kube_module DIR CMD...: a scratch Go module in DIR that requires k8s.io/kubernetes v$K8S_VERSION (its
# staging modules pinned at their published v0 versions) and imports k8s.io/kubernetes/cmd/CMD for each
# CMD, tidied (which downloads the dependencies). Kept between runs: a tidied module is not redone.
kube_module() {
  local mod="$1"
  shift
  [[ -s "$mod/go.sum" && -f "$mod/.tidy" ]] && return 0
  command -v go >/dev/null || die "go is needed to build Kubernetes v$K8S_VERSION"
  mkdir -p "$mod"
  log "resolving k8s.io/kubernetes v$K8S_VERSION (Go module)"
  local kdir
  kdir="$(cd "$mod" && GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@v$K8S_VERSION" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  [[ -n "$kdir" && -f "$kdir/go.mod" ]] || die "could not download k8s.io/kubernetes v$K8S_VERSION"
  # Each staging module (k8s.io/X => ./staging/src/k8s.io/X in kubernetes' own go.mod) at its published v0
  # version; k8s.io/endpointslice v0.32.13 is refused by the module proxy, so it takes the release before.
  local staging
  staging="$(sed -n 's|^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/src/.*|\1|p' "$kdir/go.mod" | sort -u)"
  [[ -n "$staging" ]] || die "no staging modules found in $kdir/go.mod"
  log "$(echo "$staging" | wc -l) staging modules pinned at v0.${K8S_VERSION#1.}"
  local patch="${K8S_VERSION##*.}"
  {
    echo "module cqlbench.invalid/k8sbin"
    echo
    echo "go 1.23.0"
    echo
    echo "require k8s.io/kubernetes v$K8S_VERSION"
    echo
    echo "replace ("
    local m
    for m in $staging; do
      if [[ "$m" == k8s.io/endpointslice ]]; then
        echo "	$m => $m v0.${K8S_VERSION#1.}" | sed "s/\.$patch\$/.$((patch - 1))/"
      else
        echo "	$m => $m v0.${K8S_VERSION#1.}"
      fi
    done
    echo ")"
  } >"$mod/go.mod"
  {
    echo "//go:build tools"
    echo
    echo "package tools"
    echo
    echo "import ("
    local c
    for c in "$@"; do echo "	_ \"k8s.io/kubernetes/cmd/$c\""; done
    echo ")"
  } >"$mod/tools.go"
  log "go mod tidy (downloads the dependencies)"
  # -e: the proxy refuses k8s.io/cri-client and k8s.io/csi-translation-lib v0.32.13, which only tests of
  # dependencies import; the binaries do not need them.
  (cd "$mod" && go mod tidy -e 2>&1 | grep -v '^go: downloading' >&2 || true)
  [[ -s "$mod/go.sum" ]] || die "go mod tidy wrote no go.sum"
  touch "$mod/.tidy"
}

# build_kube_command MODULE_DIR CMD: k8s.io/kubernetes/cmd/CMD into $CACHE/bin/CMD, reporting the version it
# is (a module build has no git tree to take it from).
build_kube_command() {
  local mod="$1" cmd="$2"
  [[ -x "$CACHE/bin/$cmd" ]] && return 0
  mkdir -p "$CACHE/bin"
  local v=k8s.io/component-base/version minor="${K8S_VERSION#1.}" start=$SECONDS
  local ldflags="-s -w -X $v.gitVersion=v$K8S_VERSION -X $v.gitMajor=1 -X $v.gitMinor=${minor%%.*}"
  ldflags+=" -X $v.gitTreeState=clean -X $v.buildDate=1970-01-01T00:00:00Z"
  log "building $cmd v$K8S_VERSION (minutes on 2 cores)"
  (cd "$mod" && CGO_ENABLED=0 "${GO_BUILD[@]}" -ldflags="$ldflags" -o "$CACHE/bin/$cmd.tmp" \
    "k8s.io/kubernetes/cmd/$cmd" >&2) || die "building $cmd failed"
  mv "$CACHE/bin/$cmd.tmp" "$CACHE/bin/$cmd"
  log "$cmd built in $((SECONDS - start)) s"
}

fetch_kube() {
  [[ -x "$APISERVER_BIN" && -x "$KUBECTL_BIN" ]] && return 0
  kube_module "$CACHE/build" kube-apiserver kubectl
  build_kube_command "$CACHE/build" kube-apiserver
  build_kube_command "$CACHE/build" kubectl
}

# module_dir MODULE@VERSION: the module's directory in Go's module cache, downloaded through the Go module
# proxy if need be.
module_dir() {
  local json
  mkdir -p "$CACHE/build"
  # -json reports a failed download on stdout, with a non-zero exit.
  json="$(cd "$CACHE/build" && GOFLAGS=-mod=mod go mod download -json "$1")" ||
    die "downloading the Go module $1 failed: $(echo "$json" | sed -n 's/^[[:space:]]*"Error": "\(.*\)",\{0,1\}$/\1/p')"
  echo "$json" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p'
}

# fetch_module_file MODULE@VERSION PATH DEST: one file of a Go module, copied to DEST.
fetch_module_file() {
  local module="$1" path="$2" dest="$3"
  [[ -s "$dest" ]] && return 0
  log "downloading $module (Go module) for $path"
  mkdir -p "$(dirname "$dest")"
  local mdir
  mdir="$(module_dir "$module")"
  [[ -s "$mdir/$path" ]] || die "no $path in $module"
  cp "$mdir/$path" "$dest.tmp"
  mv "$dest.tmp" "$dest"
}

fetch_crds() {
  fetch_module_file "github.com/k8ssandra/k8ssandra-operator@$OPERATOR_VERSION" \
    config/crd/bases/k8ssandra.io_k8ssandraclusters.yaml "$CRD_FILE"
  fetch_module_file "github.com/prometheus-operator/prometheus-operator@$PROMETHEUS_OPERATOR_VERSION" \
    example/prometheus-operator-crd/monitoring.coreos.com_podmonitors.yaml "$PODMONITOR_CRD_FILE"
}

fetch() {
  mkdir -p "$CACHE"
  # One fetch at a time (tests run in parallel); the second waits and then finds everything cached.
  exec 9>"$CACHE/.lock"
  flock 9
  fetch_etcd
  fetch_crds
  fetch_kube
  flock -u 9
  exec 9>&-
}

certs() {
  local dir="$1"
  log "generating a CA, a serving certificate, a service-account key pair and a token under $dir"
  (
    cd "$dir"
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=cqlbench-test-ca" \
      -keyout ca.key -out ca.crt 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -subj "/CN=kube-apiserver" -keyout server.key -out server.csr 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >server.ext
    openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \
      -extfile server.ext -out server.crt 2>/dev/null
    openssl genrsa -out sa.key 2048 2>/dev/null
    openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
    openssl rand -hex 24 >token
    printf '%s,cqlbench-admin,cqlbench-admin,system:masters\n' "$(cat token)" >tokens.csv
    cat >kubeconfig <<EOF
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: https://127.0.0.1:$API_PORT
    certificate-authority: $dir/ca.crt
users:
- name: admin
  user:
    token: $(cat token)
contexts:
- name: local
  context:
    cluster: local
    user: admin
current-context: local
EOF
  )
}

# A process as this script knows it: its PID and start time (clock ticks after boot, field 22 of
# /proc/PID/stat), so that a PID the kernel has handed to another process is never taken for it.
start_ticks() {
  local stat f
  stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 0
  read -r -a f <<<"${stat##*) }"
  echo "${f[19]}"
}

# PID START: the process still runs (a zombie left of one thread has ended and closed its sockets).
process_running() {
  local stat f
  [[ -n "${2:-}" ]] || return 1
  stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 1
  read -r -a f <<<"${stat##*) }"
  [[ "${f[19]}" == "$2" ]] || return 1
  [[ "${f[0]}" == Z && "${f[17]}" -le 1 ]] && return 1
  return 0
}

# PID START SIGNAL TENTHS: sends SIGNAL while PID is still the process started at START, then waits
# up to TENTHS tenths of a second for it to end; fails if it still runs.
signal_and_wait() {
  local i
  process_running "$1" "$2" || return 0
  kill -"$3" "$1" 2>/dev/null || true
  for i in $(seq 1 "$4"); do
    process_running "$1" "$2" || return 0
    sleep 0.1
  done
  ! process_running "$1" "$2"
}

# PORT: something listens on 127.0.0.1:PORT, or on every address (IPv4 or IPv6).
port_listened() {
  local hex
  hex="$(printf '%04X' "$1")"
  awk -v p="$hex" 'FNR > 1 && $4 == "0A" {
      split($2, a, ":")
      if (a[2] == p && (a[1] == "0100007F" || a[1] == "00000000" ||
          a[1] == "00000000000000000000000000000000" || a[1] == "0000000000000000FFFF00000100007F")) found = 1
    } END { exit !found }' /proc/net/tcp /proc/net/tcp6 2>/dev/null
}

start() {
  local dir="$1" port
  mkdir -p "$dir"
  dir="$(cd "$dir" && pwd)"
  fetch
  # A leftover etcd would hand the new API server its old data; anything else on these ports would
  # make one of them fail later and less clearly.
  for port in "$API_PORT" "$ETCD_PORT" "$ETCD_PEER_PORT"; do
    if port_listened "$port"; then
      die "127.0.0.1:$port is taken (an API server or etcd left running? \`$0 stop DIR\` stops those started for DIR)"
    fi
  done
  certs "$dir"
  [[ -z "$CERTS_HOOK" ]] || "$CERTS_HOOK" "$dir"
  log "starting etcd on 127.0.0.1:$ETCD_PORT"
  setsid "$ETCD_BIN" --name cqlbench-test --data-dir "$dir/etcd-data" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "cqlbench-test=http://127.0.0.1:$ETCD_PEER_PORT" \
    >"$dir/etcd.log" 2>&1 </dev/null &
  echo "$! $(start_ticks $!)" >"$dir/etcd.pid"
  local t0=$SECONDS
  log "starting kube-apiserver on 127.0.0.1:$API_PORT"
  setsid "$APISERVER_BIN" --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
    --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$API_PORT" \
    --tls-cert-file "$dir/server.crt" --tls-private-key-file "$dir/server.key" \
    --client-ca-file "$dir/ca.crt" --token-auth-file "$dir/tokens.csv" \
    --service-account-issuer https://kubernetes.default.svc \
    --service-account-key-file "$dir/sa.pub" --service-account-signing-key-file "$dir/sa.key" \
    --service-cluster-ip-range 10.96.0.0/16 --authorization-mode RBAC "${APISERVER_EXTRA_ARGS[@]}" \
    >"$dir/apiserver.log" 2>&1 </dev/null &
  echo "$! $(start_ticks $!)" >"$dir/apiserver.pid"
  local kc=("$KUBECTL_BIN" --kubeconfig "$dir/kubeconfig")
  local i
  for i in $(seq 1 120); do
    if "${kc[@]}" get --raw /readyz >/dev/null 2>&1; then break; fi
    # shellcheck disable=SC2046 # PID and start time, two words
    process_running $(cat "$dir/apiserver.pid") || {
      tail -20 "$dir/apiserver.log" >&2
      die "kube-apiserver exited (log: $dir/apiserver.log)"
    }
    sleep 0.5
    [[ $i == 120 ]] && die "kube-apiserver not ready after 60 s (log: $dir/apiserver.log)"
  done
  log "kube-apiserver ready after $((SECONDS - t0)) s; applying the K8ssandraCluster and PodMonitor CRDs server-side"
  "${kc[@]}" apply --server-side -f "$CRD_FILE" -f "$PODMONITOR_CRD_FILE" >&2
  # `kubectl wait` fails while a CRD has no conditions yet, so poll the Established condition.
  local crd established
  for crd in k8ssandraclusters.k8ssandra.io podmonitors.monitoring.coreos.com; do
    established=""
    for i in $(seq 1 120); do
      established="$("${kc[@]}" get crd "$crd" \
        -o 'jsonpath={.status.conditions[?(@.type=="Established")].status}' 2>/dev/null || true)"
      [[ "$established" == True ]] && break
      sleep 0.5
    done
    [[ "$established" == True ]] || die "the CRD $crd was not Established after 60 s"
  done
  log "CRDs Established $((SECONDS - t0)) s after start; KUBECONFIG=$dir/kubeconfig (kubectl: $KUBECTL_BIN)"
}

stop() {
  # The API server first (it talks to etcd while shutting down); each gets 15 s after SIGTERM, then
  # SIGKILL. Each is signalled only while its PID still names the process started (same start time),
  # and waited for until it has ended; then the ports must be free.
  local dir="$1" f pid start port
  for f in apiserver.pid etcd.pid; do
    [[ -f "$dir/$f" ]] || continue
    read -r pid start <"$dir/$f" || true
    signal_and_wait "$pid" "$start" TERM 150 || signal_and_wait "$pid" "$start" KILL 300 ||
      die "process $pid ($f) still runs 30 s after SIGKILL"
    rm -f "$dir/$f"
  done
  for port in "$API_PORT" "$ETCD_PORT" "$ETCD_PEER_PORT"; do
    if port_listened "$port"; then
      die "127.0.0.1:$port is still listened on after stopping the processes started for $dir"
    fi
  done
}

# scripts/k8s-live.sh sources this file for its functions; only a direct call runs a command.
[[ "${BASH_SOURCE[0]}" == "$0" ]] || return 0
case "${1:-}" in
fetch) fetch ;;
start) [[ $# == 2 ]] || die "usage: $0 start DIR" && start "$2" ;;
stop) [[ $# == 2 ]] || die "usage: $0 stop DIR" && stop "$2" ;;
paths) echo "$KUBECTL_BIN" ;;
*) die "usage: $0 fetch | start DIR | stop DIR | paths" ;;
esac
