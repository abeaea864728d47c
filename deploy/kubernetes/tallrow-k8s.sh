#!/usr/bin/env bash
# Runs a sharded tallrow load and run on Kubernetes with the manifests beside this script.
#
#   tallrow-k8s.sh load   --backend URL [--shards N] [--workload FILE] ...
#       the workload loaded by N pods (an Indexed Job, each index retried alone); waits
#   tallrow-k8s.sh run    --backend URL [--shards N] [--lead SECONDS] ...
#       the measured run by N pods that all start at now + lead; waits
#   tallrow-k8s.sh merge  [--run-id ID] [--partial]
#       merges the run shards' reports on the shared volume (a Job); waits
#   tallrow-k8s.sh report [--run-id ID] [--out DIR]
#       copies the merged report folder out of the volume (kubectl cp through a short-lived
#       pod) to DIR/ID-merged
#
# Options (each step takes those that apply to it):
#   --namespace NS        where everything goes (default tallrow; created when missing)
#   --backend URL         the backend every shard uses (load, run)
#   --shards N            how many pods (default 3; load and run)
#   --workload FILE       the workload (default base/workload.toml beside this script)
#   --image REF           the tallrow image (default tallrow:latest; see the Dockerfile)
#   --lead SECONDS        run: how far ahead --start-at is set, to cover scheduling, image
#                         pulls and any load (default 120)
#   --run-id ID           names the reports' folder on the volume (default: the UTC time
#                         for load and run; the last run's for merge and report)
#   --metrics-linger DUR  how long each pod keeps /metrics up after its work (default 15s)
#   --storage-class NAME  the reports volume's class (it must offer ReadWriteMany)
#   --timeout SECONDS     how long to wait for a Job (default 21600)
#   --partial             merge: merge the shards found when some are missing
#   --out DIR             report: where the merged report goes (default reports)
#   --dry-run             print the manifests instead of applying them
#   --kubectl PATH        the kubectl to use (default $KUBECTL or kubectl)
# With the Prometheus operator's CRDs installed, load and run also apply monitoring/ (a
# PodMonitor and the Grafana dashboard).
#
# Exit codes: 0 the step succeeded; 1 its Job failed (the failed indexes are named) or
# timed out; 2 bad arguments or a manifest the API refused.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
kubectl="${KUBECTL:-kubectl}"
namespace=tallrow shards=3 workload="$here/base/workload.toml" image=tallrow:latest lead=120
backend='' run_id='' linger=15s storage_class='' timeout=21600 partial='' out=reports dry_run=''

usage() {
  echo "usage: tallrow-k8s.sh load|run|merge|report [--backend URL] [--shards N] [--workload FILE] [--image REF] [--namespace NS] [--lead SECONDS] [--run-id ID] [--partial] [--out DIR] [--dry-run] ... (see the script's header)" >&2
  exit 2
}
fail() {
  echo "tallrow-k8s.sh: $1" >&2
  exit "${2:-2}"
}

step="${1:-}"
case "$step" in load | run | merge | report) shift ;; *) usage ;; esac
while [ $# -gt 0 ]; do
  [ $# -ge 2 ] || case "$1" in --partial | --dry-run) ;; *) fail "$1 needs a value" ;; esac
  case "$1" in
    --namespace) namespace="$2" ;;
    --backend) backend="$2" ;;
    --shards) shards="$2" ;;
    --workload) workload="$2" ;;
    --image) image="$2" ;;
    --lead) lead="$2" ;;
    --run-id) run_id="$2" ;;
    --metrics-linger) linger="$2" ;;
    --storage-class) storage_class="$2" ;;
    --timeout) timeout="$2" ;;
    --out) out="$2" ;;
    --kubectl) kubectl="$2" ;;
    --partial) partial=1; shift; continue ;;
    --dry-run) dry_run=1; shift; continue ;;
    *) fail "unknown option $1" ;;
  esac
  shift 2
done

if ! [[ "$shards" =~ ^[1-9][0-9]{0,4}$ ]] || [ "$shards" -gt 10000 ]; then
  fail "--shards $shards: not a count from 1 to 10000"
fi
[[ "$lead" =~ ^[0-9]+$ ]] || fail "--lead $lead: not a whole number of seconds"
[[ "$timeout" =~ ^[1-9][0-9]*$ ]] || fail "--timeout $timeout: not a whole number of seconds"
[[ "$namespace" =~ ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$ ]] || fail "--namespace $namespace: not a namespace name"
[ -z "$run_id" ] || [[ "$run_id" =~ ^[A-Za-z0-9][-A-Za-z0-9_.]*$ ]] || fail "--run-id $run_id: letters, digits, - _ . only"
case "$step" in
  load | run)
    [ -n "$backend" ] || fail "$step needs --backend URL (the backend every shard uses)"
    [ -f "$workload" ] || fail "--workload $workload: no such file"
    ;;
esac
if [ -z "$dry_run" ] && ! command -v "$kubectl" >/dev/null; then
  fail "$kubectl not found: install kubectl or pass --kubectl PATH"
fi
k() { "$kubectl" "$@"; }
kn() { "$kubectl" -n "$namespace" "$@"; }

# A YAML single-quoted scalar.
q() { printf "'%s'" "${1//\'/\'\'}"; }

# REF as kustomize's images entry: newName, and newTag or digest.
image_entry() {
  local name="$1" tag='' digest=''
  case "$name" in
    *@*) digest="${name#*@}" name="${name%@*}" ;;
    *)
      if [[ "${name##*/}" == *:* ]]; then tag="${name##*:}" name="${name%:*}"; fi
      ;;
  esac
  printf '  - name: tallrow\n    newName: %s\n' "$(q "$name")"
  if [ -n "$digest" ]; then printf '    digest: %s\n' "$(q "$digest")"; fi
  if [ -n "$tag" ]; then printf '    newTag: %s\n' "$(q "$tag")"; fi
}

# An overlay of STEP in a temporary folder: the namespace, the settings, the workload, the
# image, N pods; prints its folder.
overlay() { # step start_at
  local dir
  dir="$(mktemp -d -t tallrow-k8s.XXXXXX)"
  cp "$workload" "$dir/workload.toml"
  {
    echo "apiVersion: kustomize.config.k8s.io/v1beta1"
    echo "kind: Kustomization"
    echo "namespace: $namespace"
    echo "resources:"
    echo "  - $(realpath --relative-to "$dir" "$here/$1")"
    echo "configMapGenerator:"
    echo "  - name: tallrow-workload"
    echo "    behavior: replace"
    echo "    files:"
    echo "      - workload.toml"
    echo "  - name: tallrow-settings"
    echo "    behavior: merge"
    echo "    literals:"
    [ -z "$backend" ] || echo "      - $(q "backend=$backend")"
    echo "      - $(q "shards=$shards")"
    [ -z "$2" ] || echo "      - $(q "start-at=$2")"
    echo "      - $(q "run-id=$run_id")"
    echo "      - $(q "metrics-linger=$linger")"
    echo "images:"
    image_entry "$image"
    echo "patches:"
    echo "  - target:"
    echo "      kind: Job"
    echo "      name: tallrow-$1"
    echo "    patch: |-"
    echo "      - op: add"
    echo "        path: /metadata/annotations"
    echo "        value:"
    echo "          tallrow/run-id: $(q "$run_id")"
    if [ "$1" != merge ]; then
      echo "      - op: replace"
      echo "        path: /spec/completions"
      echo "        value: $shards"
      echo "      - op: replace"
      echo "        path: /spec/parallelism"
      echo "        value: $shards"
    elif [ -n "$partial" ]; then
      echo "      - op: add"
      echo "        path: /spec/template/spec/containers/0/args/-"
      echo "        value: --partial"
    fi
    if [ -n "$storage_class" ]; then
      echo "  - target:"
      echo "      kind: PersistentVolumeClaim"
      echo "      name: tallrow-reports"
      echo "    patch: |-"
      echo "      - op: add"
      echo "        path: /spec/storageClassName"
      echo "        value: $(q "$storage_class")"
    fi
  } >"$dir/kustomization.yaml"
  echo "$dir"
}

# The monitoring overlay, when the cluster has the Prometheus operator's PodMonitor.
monitoring() {
  k api-resources --api-group monitoring.coreos.com -o name 2>/dev/null | grep -q '^podmonitors' || return 0
  local dir
  dir="$(mktemp -d -t tallrow-k8s.XXXXXX)"
  printf 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: %s\nresources:\n  - %s/monitoring\n' \
    "$namespace" "$(realpath --relative-to "$dir" "$here")" >"$dir/kustomization.yaml"
  k apply --server-side --field-manager tallrow-k8s -k "$dir" >/dev/null || fail "the API refused monitoring/"
  rm -rf "$dir"
  echo "monitoring: PodMonitor tallrow and ConfigMap tallrow-dashboard in $namespace"
}

# Applies STEP's overlay after removing the step's previous Job (a Job's pods cannot be
# changed in place).
apply() { # step start_at
  local dir
  dir="$(overlay "$1" "$2")"
  if [ -n "$dry_run" ]; then
    k kustomize "$dir"
    rm -rf "$dir"
    exit 0
  fi
  k create namespace "$namespace" --dry-run=client -o yaml | k apply --server-side --field-manager tallrow-k8s -f - >/dev/null
  kn delete job "tallrow-$1" --ignore-not-found --cascade=foreground --wait=true >/dev/null
  if ! k apply --server-side --field-manager tallrow-k8s -k "$dir" >"$dir/apply.log" 2>&1; then
    cat "$dir/apply.log" >&2
    rm -rf "$dir"
    fail "the API refused the $1 manifests"
  fi
  rm -rf "$dir"
}

# Waits for Job NAME to complete or fail, printing its counts as they change.
wait_job() { # name
  local deadline=$((SECONDS + timeout)) last='' now conds
  while :; do
    # The conditions first: counts read after them are at least as new, so the last counts
    # are printed before the verdict.
    conds=" $(kn get job "$1" -o jsonpath='{range .status.conditions[?(@.status=="True")]}{.type}{" "}{end}' 2>/dev/null || true) "
    now="$(kn get job "$1" -o jsonpath='{.status.succeeded}/{.status.failed}/{.status.active}' 2>/dev/null || true)"
    IFS=/ read -r s f a <<<"$now"
    now="succeeded ${s:-0}, failed ${f:-0}, active ${a:-0}"
    if [ "$now" != "$last" ]; then
      echo "job/$1: $now"
      last="$now"
    fi
    case "$conds" in
      *" Complete "*) return 0 ;;
      *" Failed "*)
        local why idx
        why="$(kn get job "$1" -o jsonpath='{.status.conditions[?(@.type=="Failed")].reason}: {.status.conditions[?(@.type=="Failed")].message}')"
        idx="$(kn get job "$1" -o jsonpath='{.status.failedIndexes}')"
        echo "job/$1 failed: $why${idx:+ (failed indexes: $idx)}" >&2
        return 1
        ;;
    esac
    if [ $SECONDS -ge $deadline ]; then
      echo "job/$1 did not finish within $timeout s" >&2
      return 1
    fi
    sleep 2
  done
}

# The pod `report` copies through: the reports volume read-only, `sleep` so that
# `kubectl cp` can run tar in it, gone after 15 minutes whatever happens.
report_pod() { # name
  cat <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: $1
  namespace: $namespace
  labels:
    app.kubernetes.io/name: tallrow
    app.kubernetes.io/component: report
    app.kubernetes.io/part-of: tallrow
spec:
  restartPolicy: Never
  activeDeadlineSeconds: 900
  automountServiceAccountToken: false
  enableServiceLinks: false
  securityContext:
    runAsNonRoot: true
    runAsUser: 10001
    runAsGroup: 10001
    seccompProfile:
      type: RuntimeDefault
  containers:
    - name: copy
      image: $(q "$image")
      command: [sleep, "900"]
      resources:
        requests:
          cpu: 10m
          memory: 16Mi
        limits:
          cpu: 100m
          memory: 64Mi
      securityContext:
        allowPrivilegeEscalation: false
        readOnlyRootFilesystem: true
        capabilities:
          drop: [ALL]
      volumeMounts:
        - name: reports
          mountPath: /reports
          readOnly: true
  volumes:
    - name: reports
      persistentVolumeClaim:
        claimName: tallrow-reports
        readOnly: true
EOF
}

# The run id of the last run Job, for merge and report.
last_run_id() {
  [ -n "$run_id" ] && return 0
  run_id="$(kn get job tallrow-run -o jsonpath='{.metadata.annotations.tallrow/run-id}' 2>/dev/null || true)"
  [ -n "$run_id" ] || fail "no run Job in namespace $namespace to take the run id from: pass --run-id" 1
}

case "$step" in
  load | run)
    [ -n "$run_id" ] || run_id="$step-$(date -u +%Y%m%dT%H%M%SZ)"
    start_at=
    if [ "$step" = run ]; then
      start_at="$(date -u -d "@$(($(date +%s) + lead))" +%Y-%m-%dT%H:%M:%SZ)"
    fi
    apply "$step" "$start_at"
    monitoring
    echo "$step: $shards shards of $(basename "$workload") against $backend, run id $run_id${start_at:+, measuring from $start_at}"
    wait_job "tallrow-$step"
    echo "$step done: reports under /reports/$run_id on the volume"
    ;;
  merge)
    last_run_id
    apply merge ""
    echo "merge: the shards' reports under /reports/$run_id/shards${partial:+ (--partial)}"
    wait_job tallrow-merge
    echo "merged: /reports/$run_id/merged on the volume; tallrow-k8s.sh report copies it out"
    ;;
  report)
    last_run_id
    pod="tallrow-report-$(date +%s)"
    if [ -n "$dry_run" ]; then
      report_pod "$pod"
      exit 0
    fi
    report_pod "$pod" | k create -f - >/dev/null || fail "the API refused the report pod"
    trap 'kn delete pod "$pod" --ignore-not-found --wait=false >/dev/null' EXIT
    kn wait --for condition=Ready --timeout 300s "pod/$pod" >/dev/null || fail "pod $pod did not start within 300 s" 1
    mkdir -p "$out"
    kn cp "$pod:/reports/$run_id/merged" "$out/$run_id-merged" >/dev/null ||
      fail "/reports/$run_id/merged could not be copied: did tallrow-k8s.sh merge succeed?" 1
    echo "report: $out/$run_id-merged"
    ;;
esac
