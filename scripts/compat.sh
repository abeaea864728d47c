#!/usr/bin/env bash
# The HBase releases tallrow speaks, measured: for each release, a real HBase of it on
# loopback (scripts/hbase.sh start --version V), then the quickstart workload loaded,
# verified and run through HBase's own RPC (api=native), through its Thrift2 server, and
# through HBase's own bulk load (HFiles written offline, handed over by tallrow bulkload),
# each under its own table prefix and dropped after. Outside the test suite: each release
# takes minutes (a first start downloads it from Maven Central).
#
#   scripts/compat.sh [RELEASE...]
#       default: the newest 2.4, 2.5 and 2.6 releases and the 3.0 one on Maven Central
#
# Prints one Markdown row per release (what docs/hbase.md's table holds) and writes them with
# each step's output to reports/compat-<UTC time>/ (compat.md, and a log per release).
# TALLROW_BIN: the tallrow binary (default: target/release/tallrow, built first).
# Exit codes: 0 every release passed every path; 1 a path failed or a release could not be
# had (its row says which and why); 64 usage.
set -uo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
cd "$repo" || exit 1
[ $# -gt 0 ] || set -- 2.4.18 2.5.13-hadoop3 2.6.4-hadoop3 3.0.0
case "${1:-}" in -*) echo "usage: scripts/compat.sh [RELEASE...]" >&2; exit 64 ;; esac

bin="${TALLROW_BIN:-}"
if [ -z "$bin" ]; then
  cargo build --release -q || exit 1
  bin="$repo/target/release/tallrow"
fi
out="$repo/reports/compat-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out"
workload=workloads/quickstart.toml
table="$out/compat.md"
{
  echo "| HBase | Thrift servers | api=native: load, verify, run | Thrift2: load, verify, run | bulk load: write, hand over, verify, run | took |"
  echo "|---|---|---|---|---|---|"
} >"$table"
cat "$table"

# One step: its command's output to the release's log; its time, or why it failed, on the
# path's cell.
step() { # log what command...
  local log="$1" what="$2" t0=$SECONDS rc=0
  shift 2
  echo "\$ $*" >>"$log"
  "$@" >>"$log" 2>&1 || rc=$?
  if [ $rc -ne 0 ]; then
    # The command's own one-line error: its last line starting with "tallrow:" or "error:".
    why="$(grep -E '^(tallrow|error)' "$log" | tail -1 | cut -c1-160)"
    cell="$cell${cell:+, }$what failed (exit $rc${why:+: $why})"
    return 1
  fi
  cell="$cell${cell:+, }$what $((SECONDS - t0)) s"
}

# Loads, verifies and runs the workload under PREFIX through URL, then drops its tables.
path() { # log url prefix
  local log="$1" url="$2" set=(--set "storage.table_prefix=$3")
  cell=
  step "$log" load "$bin" load "$workload" --backend "$url" "${set[@]}" --reports "$out/reports" &&
    step "$log" verify "$bin" verify "$workload" --backend "$url" "${set[@]}" &&
    step "$log" run "$bin" run "$workload" --backend "$url" "${set[@]}" --duration 10s --warmup 2s \
      --reports "$out/reports"
  local rc=$?
  "$bin" drop "$workload" --backend "$url" "${set[@]}" >>"$log" 2>&1 || true
  return $rc
}

# The bulk load: HFiles written under PREFIX, handed over through HBase's RPC, verified and
# run through URL.
bulk() { # log url prefix
  local log="$1" url="$2" set=(--set "storage.table_prefix=$3") dir="$out/hfiles-$3"
  cell=
  step "$log" write "$bin" load "$workload" --backend "hfile:$dir" --regions 4 "${set[@]}" \
    --reports "$out/reports" &&
    step "$log" "hand over" "$bin" bulkload "$dir" --backend "$url" --reports "$out/reports" &&
    step "$log" verify "$bin" verify "$workload" --backend "$url" "${set[@]}" &&
    step "$log" run "$bin" run "$workload" --backend "$url" "${set[@]}" --duration 10s --warmup 2s \
      --reports "$out/reports"
  local rc=$?
  "$bin" drop "$workload" --backend "$url" "${set[@]}" >>"$log" 2>&1 || true
  rm -rf "$dir"
  return $rc
}

status=0
for v in "$@"; do
  log="$out/$v.log"
  t0=$SECONDS
  scripts/hbase.sh stop >>"$log" 2>&1
  if ! scripts/hbase.sh start --version "$v" >>"$log" 2>&1; then
    why="$(grep -E '^(Maven could not|HBase did not start|no Java)' "$log" | tail -1 | cut -c1-300)"
    row="| $v | | could not be started: ${why:-see $log} | | | $((SECONDS - t0)) s |"
    echo "$row" | tee -a "$table"
    status=1
    continue
  fi
  # shellcheck disable=SC1091
  . "$repo/.hbase.env"
  native="$TALLROW_HBASE_NATIVE" thrift2="hbase://$TALLROW_HBASE_THRIFT2?api=thrift2"
  cells=()
  path "$log" "$native" compat_native_ || status=1
  cells+=("$cell")
  path "$log" "$thrift2" compat_thrift2_ || status=1
  cells+=("$cell")
  # The files are written for four regions a table; bulkload creates the tables so split.
  bulk "$log" "$native" compat_bulk_ || status=1
  cells+=("$cell")
  row="| $TALLROW_HBASE_VERSION | $TALLROW_HBASE_THRIFT_VERSION | ${cells[0]} | ${cells[1]} | ${cells[2]} | $((SECONDS - t0)) s |"
  echo "$row" | tee -a "$table"
done
scripts/hbase.sh stop >/dev/null 2>&1
echo "written: $table (each release's log beside it)"
exit $status
