#!/usr/bin/env bash
# A real Kubernetes control plane on loopback, with no nodes, for the tests of
# deploy/kubernetes/: the test plays the node (tests/it/kube.rs).
#
#   scripts/kube.sh start   build the control plane (once), start etcd, kube-apiserver and
#                           kube-controller-manager; write .kube.env
#   scripts/kube.sh build   only build (or find) the binaries
#   scripts/kube.sh status  say whether it runs, and where
#   scripts/kube.sh env     print the export lines of the running instance
#   scripts/kube.sh stop    stop every process start started, remove its directory
#
# kube-apiserver, kube-controller-manager and kubectl are built with `go` from Kubernetes'
# Go modules at the release pinned below (k8s.io/kubernetes keeps its staging modules in
# replace directives, which `go install pkg@version` refuses: a module of our own requires
# it and points each staging module at its published version). The binaries are cached
# outside git, in $TALLROW_KUBE_CACHE (default ~/.cache/tallrow/kubernetes-RELEASE); the first
# build downloads about 700 MB of modules and takes 6 to 10 minutes on 2 cores.
# Beside them, the Prometheus operator's PodMonitor CRD is generated with controller-gen
# (crds below) and installed. etcd is Debian's etcd-server, installed with apt-get when
# missing.
#
# The API server listens on 127.0.0.1 with TLS (a CA made here), takes one static bearer
# token (user admin, group system:masters) and authorizes with RBAC. The controller manager
# runs the controllers a Job needs (job, pod GC, garbage collector, namespace, service
# accounts, TTL after finished). No scheduler, no kubelet: pods stay unbound, and whoever
# plays the node writes their status. Ready means the API answers /readyz and the default
# service account exists.
#
# `start` writes .kube.env at the repository root (ignored by git) with:
#   TALLROW_KUBE_SERVER       https://127.0.0.1:PORT
#   TALLROW_KUBE_CA           the CA file the server's certificate verifies against
#   TALLROW_KUBE_TOKEN        the bearer token
#   TALLROW_KUBECONFIG        a kubeconfig for all three
#   TALLROW_KUBECTL           the kubectl built beside the control plane
#   TALLROW_KUBE_VERSION      the release
# Exit codes: 0 done; 1 go missing (one line says so); 2 it failed to build or start (its
# logs are kept in target/kube-failed-start).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
state="$repo/.kube.env"
release=v1.37.2
staging=v0.37.2
prometheus_operator=v0.95.2
controller_tools=v0.23.0
cache="${TALLROW_KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tallrow/kubernetes-$release}"
bin="$cache/bin"
tools=(kube-apiserver kube-controller-manager kubectl)

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

running() {
  [ -f "$state" ] || return 1
  # shellcheck disable=SC1090
  . "$state"
  local p
  for p in $TALLROW_KUBE_PIDS; do
    kill -0 "$p" 2>/dev/null || return 1
  done
}

# The module that builds the release: Kubernetes' own go.mod under another name, its
# staging modules taken at their published versions.
build() {
  local t missing=0
  for t in "${tools[@]}"; do [ -x "$bin/$t" ] || missing=1; done
  [ $missing -eq 1 ] || return 0
  if ! command -v go >/dev/null; then
    echo "go is not installed: the Kubernetes tests cannot run (their control plane is built with go)" >&2
    return 1
  fi
  local mod="$cache/module" src
  mkdir -p "$mod" "$bin"
  export GOFLAGS=-mod=mod GOTOOLCHAIN=local
  echo "building kube-apiserver, kube-controller-manager and kubectl $release with go (once; about 700 MB of modules, 6 to 10 minutes)" >&2
  (cd "$mod" && go mod download -json "k8s.io/kubernetes@$release" >"$mod/download.json") || {
    echo "could not fetch k8s.io/kubernetes@$release from the Go module proxy" >&2
    return 2
  }
  src="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["Dir"])' "$mod/download.json")"
  awk -v s="$staging" -v r="$release" '
    /^module / { print "module tallrow.test/kubernetes"; next }
    /=> \.\/staging\/src\// { print "\t" $1 " => " $1 " " s; next }
    /^require \($/ && !done { print; print "\tk8s.io/kubernetes " r; done = 1; next }
    { print }
  ' "$src/go.mod" >"$mod/go.mod"
  cp "$src/go.sum" "$mod/go.sum"
  chmod u+w "$mod/go.sum"
  cat >"$mod/tools.go" <<EOF
//go:build tools

package kubernetes

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
EOF
  local minor="${release#v1.}" x ldflags="-s -w"
  minor="${minor%%.*}"
  for x in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $x.gitVersion=$release -X $x.gitMajor=1 -X $x.gitMinor=$minor -X $x.gitTreeState=clean"
  done
  if ! (cd "$mod" && go mod download k8s.io/kubernetes &&
    go build -trimpath -ldflags "$ldflags" -o "$bin/" \
      k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
      k8s.io/kubernetes/cmd/kubectl) >"$mod/build.log" 2>&1; then
    echo "building the control plane failed (log: $mod/build.log)" >&2
    tail -n 5 "$mod/build.log" >&2
    return 2
  fi
}

# The Prometheus operator's PodMonitor CRD, generated by controller-gen from the operator's
# API types at a pinned release (as the operator generates its own), so that the API server
# validates deploy/kubernetes/monitoring/podmonitor.yaml against the real schema.
crds() {
  local mod="$cache/crds"
  local out="$mod/monitoring.coreos.com_podmonitors.yaml"
  [ -s "$out" ] && return 0
  mkdir -p "$mod"
  printf 'module tallrow.test/crds\n\ngo 1.26.0\n' >"$mod/go.mod"
  printf '//go:build tools\n\npackage crds\n\nimport (\n\t_ "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"\n\t_ "sigs.k8s.io/controller-tools/cmd/controller-gen"\n)\n' >"$mod/tools.go"
  if ! (cd "$mod" && export GOFLAGS=-mod=mod GOTOOLCHAIN=local &&
    go get "sigs.k8s.io/controller-tools@$controller_tools" \
      "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring@$prometheus_operator" &&
    go build -o controller-gen sigs.k8s.io/controller-tools/cmd/controller-gen &&
    ./controller-gen crd:crdVersions=v1 \
      paths=github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1 \
      output:crd:dir=gen) >"$mod/build.log" 2>&1; then
    echo "generating the PodMonitor CRD failed (log: $mod/build.log)" >&2
    tail -n 5 "$mod/build.log" >&2
    return 2
  fi
  cp "$mod/gen/monitoring.coreos.com_podmonitors.yaml" "$out"
}

have_etcd() {
  command -v etcd >/dev/null && return 0
  echo "installing Debian's etcd-server" >&2
  { apt-get install -y -qq etcd-server || { apt-get update -qq && apt-get install -y -qq etcd-server; }; } \
    >/dev/null 2>&1 || true
  if ! command -v etcd >/dev/null; then
    echo "etcd is not installed and Debian's etcd-server could not be: the Kubernetes tests cannot run" >&2
    return 1
  fi
}

# A CA, the API server's certificate (127.0.0.1 and localhost), the service-account key.
certs() {
  local d="$1/pki"
  mkdir -p "$d"
  (
    cd "$d"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 \
      -keyout ca.key -out ca.crt -subj "/CN=tallrow-test-kubernetes-ca"
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
      -keyout apiserver.key -out apiserver.csr -subj "/CN=kube-apiserver"
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' >ext.cnf
    openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 30 \
      -extfile ext.cnf -out apiserver.crt
    openssl genrsa -out sa.key 2048
    openssl rsa -in sa.key -pubout -out sa.pub
  ) >"$1/logs/certs.log" 2>&1
}

failed() { # dir why log
  local kept="$repo/target/kube-failed-start"
  rm -rf "$kept"
  mkdir -p "$kept"
  cp -r "$1/logs/." "$kept/" 2>/dev/null || true
  echo "the Kubernetes control plane did not start: $2 (logs kept in $kept)" >&2
  tail -n 5 "$kept/$3" >&2 || true
  stop
  return 2
}

start() {
  if running; then
    echo "the control plane already runs: $TALLROW_KUBE_SERVER"
    return 0
  fi
  stop
  build || return $?
  crds || return $?
  have_etcd || return 1
  local dir etcd_port peer_port api_port token pids=()
  dir="$(mktemp -d -t tallrow-kube.XXXXXX)"
  mkdir -p "$dir/logs" "$dir/etcd"
  certs "$dir" || { failed "$dir" "openssl could not make the certificates" certs.log; return 2; }
  etcd_port="$(free_port)" peer_port="$(free_port)" api_port="$(free_port)"
  token="$(openssl rand -hex 24)"
  echo "$token,admin,admin,system:masters" >"$dir/pki/tokens.csv"

  etcd --name tallrow-test --data-dir "$dir/etcd" \
    --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls "http://127.0.0.1:$peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
    --initial-cluster "tallrow-test=http://127.0.0.1:$peer_port" \
    --quota-backend-bytes 1073741824 >"$dir/logs/etcd.log" 2>&1 &
  pids+=($!)

  "$bin/kube-apiserver" \
    --etcd-servers "http://127.0.0.1:$etcd_port" \
    --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$api_port" \
    --tls-cert-file "$dir/pki/apiserver.crt" --tls-private-key-file "$dir/pki/apiserver.key" \
    --client-ca-file "$dir/pki/ca.crt" --token-auth-file "$dir/pki/tokens.csv" \
    --authorization-mode RBAC --anonymous-auth=false \
    --service-account-issuer https://kubernetes.default.svc \
    --service-account-key-file "$dir/pki/sa.pub" --service-account-signing-key-file "$dir/pki/sa.key" \
    --service-cluster-ip-range 10.96.0.0/24 --endpoint-reconciler-type none --profiling=false \
    >"$dir/logs/kube-apiserver.log" 2>&1 &
  pids+=($!)

  cat >"$dir/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: tallrow-test
  cluster:
    server: https://127.0.0.1:$api_port
    certificate-authority: $dir/pki/ca.crt
users:
- name: admin
  user:
    token: $token
contexts:
- name: tallrow-test
  context:
    cluster: tallrow-test
    user: admin
current-context: tallrow-test
EOF
  cat >"$state" <<EOF
export TALLROW_KUBE_SERVER='https://127.0.0.1:$api_port'
export TALLROW_KUBE_CA='$dir/pki/ca.crt'
export TALLROW_KUBE_TOKEN='$token'
export TALLROW_KUBECONFIG='$dir/kubeconfig'
export TALLROW_KUBECTL='$bin/kubectl'
export TALLROW_KUBE_VERSION='$release'
export TALLROW_KUBE_DIR='$dir'
export TALLROW_KUBE_PIDS='${pids[*]}'
EOF

  local deadline=$((SECONDS + 180)) p
  until "$bin/kubectl" --kubeconfig "$dir/kubeconfig" get --raw /readyz >/dev/null 2>&1; do
    for p in "${pids[@]}"; do
      kill -0 "$p" 2>/dev/null || { failed "$dir" "etcd or kube-apiserver exited" kube-apiserver.log; return 2; }
    done
    [ $SECONDS -lt $deadline ] || { failed "$dir" "the API did not answer /readyz within 180 s" kube-apiserver.log; return 2; }
    sleep 1
  done

  "$bin/kube-controller-manager" --kubeconfig "$dir/kubeconfig" \
    --bind-address 127.0.0.1 --secure-port 0 --leader-elect=false \
    --controllers job-controller,pod-garbage-collector-controller,garbage-collector-controller,namespace-controller,serviceaccount-controller,ttl-after-finished-controller \
    --service-account-private-key-file "$dir/pki/sa.key" --root-ca-file "$dir/pki/ca.crt" \
    >"$dir/logs/kube-controller-manager.log" 2>&1 &
  pids+=($!)
  sed -i "s/^export TALLROW_KUBE_PIDS=.*/export TALLROW_KUBE_PIDS='${pids[*]}'/" "$state"

  # The service-account controller makes `default` in each namespace; pods wait for it.
  until "$bin/kubectl" --kubeconfig "$dir/kubeconfig" -n default get serviceaccount default >/dev/null 2>&1; do
    for p in "${pids[@]}"; do
      kill -0 "$p" 2>/dev/null || { failed "$dir" "a control-plane process exited" kube-controller-manager.log; return 2; }
    done
    [ $SECONDS -lt $deadline ] || { failed "$dir" "no default service account within 180 s" kube-controller-manager.log; return 2; }
    sleep 1
  done
  if ! "$bin/kubectl" --kubeconfig "$dir/kubeconfig" apply --server-side \
    -f "$cache/crds/monitoring.coreos.com_podmonitors.yaml" >"$dir/logs/crds.log" 2>&1 ||
    ! "$bin/kubectl" --kubeconfig "$dir/kubeconfig" wait --for condition=Established --timeout 60s \
      crd/podmonitors.monitoring.coreos.com >>"$dir/logs/crds.log" 2>&1; then
    failed "$dir" "the PodMonitor CRD was not established" crds.log
    return 2
  fi
  echo "Kubernetes $release control plane: https://127.0.0.1:$api_port (etcd 127.0.0.1:$etcd_port, $dir)"
}

stop() {
  if [ -f "$state" ]; then
    # shellcheck disable=SC1090
    . "$state"
    local p
    for p in ${TALLROW_KUBE_PIDS:-}; do kill "$p" 2>/dev/null || true; done
    for p in ${TALLROW_KUBE_PIDS:-}; do
      for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$p" 2>/dev/null || true
    done
    case "${TALLROW_KUBE_DIR:-}" in
      */tallrow-kube.*) rm -rf "$TALLROW_KUBE_DIR" ;;
    esac
    rm -f "$state"
  fi
}

case "${1:-}" in
  start) start ;;
  build) build && crds ;;
  stop) stop ;;
  status)
    if running; then
      echo "the control plane runs: $TALLROW_KUBE_SERVER (pids $TALLROW_KUBE_PIDS, $TALLROW_KUBE_DIR)"
    else
      echo "the control plane is not running"
      exit 3
    fi
    ;;
  env)
    running || { echo "the control plane is not running" >&2; exit 3; }
    grep -v TALLROW_KUBE_PIDS "$state"
    ;;
  *)
    echo "usage: scripts/kube.sh start|build|status|env|stop" >&2
    exit 64
    ;;
esac
