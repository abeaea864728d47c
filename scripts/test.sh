#!/usr/bin/env bash
# The whole test suite, as CI runs it: what the tests need first, then formatting, lints and
# every test.
#
#   scripts/test.sh [--strict]
#
# It installs what the tests need (the Python packages in .venv, the kerberos feature's
# build dependencies) and starts what they run against: the Bigtable emulator, real HBase
# on a real HDFS with a Kerberos KDC and Kerberized gateways (scripts/hbase.sh and
# scripts/hdfs.sh), and a Kubernetes control plane (scripts/kube.sh).
#
# Strict (with CI set, or --strict): a component that cannot be installed or started fails
# the run at once, in one line naming it and the command that failed, and so does any test
# that finds its component absent (TALLROW_STRICT). Otherwise the script says what it could
# not start and goes on; the tests that need it return early, each one recorded, and the
# last line counts them: `N tests did not run: <component>: <count>, ...`.
set -euo pipefail
cd "$(dirname "$0")/.."

strict=
[ -n "${CI:-}" ] && strict=1
for arg in "$@"; do
  case "$arg" in
    --strict) strict=1 ;;
    *)
      echo "usage: scripts/test.sh [--strict]" >&2
      exit 64
      ;;
  esac
done
if [ -n "$strict" ]; then
  export TALLROW_STRICT=1
else
  unset TALLROW_STRICT
fi

# Where cargo builds (override with CARGO_TARGET_DIR): the checkout's target/, except in CI,
# whose every run is a fresh clone: there one folder outside it, kept between runs, so that
# a run compiles only what changed (the dependencies, built once, are most of the build). A
# clone's own crates are built anew in each, under a path of its own: the last clone's are
# removed first, so that the folder does not grow with every run.
if [ -z "${CARGO_TARGET_DIR:-}" ] && [ -n "${CI:-}" ]; then
  export CARGO_TARGET_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/tallrow/target"
  mkdir -p "$CARGO_TARGET_DIR"
  for p in dev ci; do
    cargo clean --quiet --profile "$p" -p tallrow -p hbase-client -p fjall -p hdfs-native 2>/dev/null || true
  done
fi
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
# The tests build with the `ci` profile (Cargo.toml): optimized enough that the binary the
# integration tests run is not their bottleneck, with debug assertions and overflow checks
# on. A fresh clone gains nothing from incremental builds, which cost time.
profile=(--profile ci)
[ -n "${CI:-}" ] && export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"

# missing COMPONENT COMMAND [EXIT]: a component the suite needs could not be had.
missing() {
  if [ -n "$strict" ]; then
    echo "scripts/test.sh: $1 is missing and the suite runs strict: \`$2\` failed${3:+ (exit $3)}" >&2
    exit 1
  fi
  echo "scripts/test.sh: $1 is missing (\`$2\` failed${3:+, exit $3}): the tests that need it do not run, and are counted at the end"
}

# failed COMPONENT COMMAND EXIT: a component that is there did not start; in any mode.
failed() {
  echo "scripts/test.sh: $1 did not start: \`$2\` failed (exit $3)" >&2
  exit "$3"
}

# Every test that returns early for want of a component appends a line here
# (tallrow::testkit); the last line of the run counts them.
TALLROW_SKIPS="$(mktemp -t tallrow-skips.XXXXXX)"
export TALLROW_SKIPS
skipped() {
  local n
  n="$(sort -u "$TALLROW_SKIPS" | wc -l)"
  if [ "$n" -eq 0 ]; then
    echo "0 tests did not run"
  else
    echo "$n tests did not run: $(sort -u "$TALLROW_SKIPS" | cut -f1 | sort | uniq -c |
      awk '{ c = $1; sub(/^ *[0-9]+ /, ""); printf "%s%s: %d", (NR > 1 ? ", " : ""), $0, c }')"
  fi
}

# Each step's header says when it started, so that a run's log shows where its time went;
# the run's last lines say it again, each step's time against the suite's budget (the tables
# in docs/testing.md), where a log's tail is all one sees. A run over budget says where, and
# does not fail for it: the budget is for people, and a slow machine must not turn a correct
# change red.
TALLROW_STEPS="$(mktemp -t tallrow-steps.XXXXXX)"
step() {
  printf '== %s (at %d:%02d)\n' "$1" $((SECONDS / 60)) $((SECONDS % 60))
  printf '%d\t%s\n' "$SECONDS" "$1" >>"$TALLROW_STEPS"
}
# Without the budget (no python3, or a table it cannot read), each step's time alone.
step_times() {
  echo "time by step (m:ss):"
  awk -F'\t' -v end="$SECONDS" '
    NR > 1 { printf "  %3d:%02d  %s\n", (s = $1 - from) / 60, s % 60, name }
    { from = $1; name = $2; sub(/ \(.*/, "", name) }
    END { if (NR) printf "  %3d:%02d  %s\n", (s = end - from) / 60, s % 60, name }' "$TALLROW_STEPS"
}

# Each test's wall time, from the JUnit reports of the nextest runs that got that far:
# target/test-times.tsv, slowest first, and the 20 slowest aloud; then the budget.
test_times() {
  local reports=() p
  for p in default faults; do
    [ -f "target/nextest/$p/junit.xml" ] && reports+=("$p=target/nextest/$p/junit.xml")
  done
  printf '%d\tend\n' "$SECONDS" >>"$TALLROW_STEPS"
  python3 scripts/test_times.py --steps "$TALLROW_STEPS" --budget docs/testing.md \
    target/test-times.tsv "${reports[@]}" || step_times
}

. scripts/bigtable_emulator.sh
stop_all() {
  local rc=$?
  step "stopping the services"
  stop_bigtable_emulator
  # The cluster's data goes with it: nothing to flush on the way out.
  scripts/hbase.sh stop --now
  scripts/kube.sh stop
  if [ -n "${tested:-}" ]; then
    test_times
    skipped
  else
    step_times
  fi
  step "done, exit status $rc"
  rm -f "$TALLROW_SKIPS" "$TALLROW_STEPS"
  exit $rc
}
trap stop_all EXIT

if ! cargo fmt --version >/dev/null 2>&1 || ! cargo clippy --version >/dev/null 2>&1; then
  rustup component add rustfmt clippy
fi

# Python packages some tests read our output with (third-party readers), in .venv.
step "Python test environment (.venv)"
if { [ -x .venv/bin/python ] || python3 -m venv .venv; } &&
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -r tests/requirements.txt; then
  export TALLROW_PYTHON="$PWD/.venv/bin/python"
else
  missing "the Python test environment" "python3 -m venv .venv && .venv/bin/python -m pip install -r tests/requirements.txt"
fi

# Kerberos (the cargo feature `kerberos`: SASL/GSSAPI and SPNEGO through the system's
# GSSAPI library) needs its build dependencies; without them the suite runs without it.
step "Kerberos build dependencies"
. scripts/kerberos_deps.sh
features=()
if kerberos_build_deps; then
  features=(--features kerberos)
else
  missing "the kerberos build" "apt-get install pkg-config libkrb5-dev libclang-dev"
fi

# Debian's Chromium, headless, reads the report pages as a browser shows them
# (tests/browser.py, over the DevTools protocol on a pipe).
step "Chromium"
chromium_ok() { /usr/bin/chromium --version >/dev/null 2>&1; }
if ! chromium_ok; then
  sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo -n)
  apt_log="$(mktemp -t tallrow-apt.XXXXXX)"
  { DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q --no-install-recommends chromium ||
    { "${sudo[@]}" apt-get update -q &&
      DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q --no-install-recommends chromium; }; } \
    >"$apt_log" 2>&1 || true
fi
if chromium_ok; then
  export TALLROW_CHROMIUM=/usr/bin/chromium
else
  missing "Chromium" "apt-get install chromium (see ${apt_log:-the apt log})"
fi

# The services, before the builds: a component that cannot be had fails a strict run in
# minutes, not after the build.
step "Bigtable emulator"
rc=0
start_bigtable_emulator || rc=$?
trap stop_all EXIT # the emulator's start sets a trap of its own
case $rc in
  0) ;;
  1) missing "the Bigtable emulator" "gcloud info (platform/bigtable-emulator/cbtemulator)" ;;
  *) failed "the Bigtable emulator" "start_bigtable_emulator (scripts/bigtable_emulator.sh)" $rc ;;
esac

# Real HBase (scripts/hbase.sh: fetched with Maven, two region servers on loopback) is the
# reference the hbase backend's contract runs against. --hdfs keeps its root directory on a
# real HDFS (scripts/hdfs.sh: a NameNode and a DataNode from the same Maven artifacts), as
# a cluster's is, which hfile:hdfs:// writes into and the bulk load renames from. --secure
# adds a Kerberos KDC and HBase's Kerberized Thrift servers (SASL, and HTTP + SPNEGO + TLS),
# which the secured tests use.
step "Apache HBase on HDFS"
rc=0
scripts/hbase.sh start --secure --hdfs || rc=$?
case $rc in
  0)
    . ./.hbase.env
    if [ -z "${TALLROW_HBASE_SASL1_AUTH:-}" ]; then
      missing "the Kerberos KDC and the Kerberized HBase gateways" "scripts/hbase.sh start --secure --hdfs (apt-get install krb5-kdc krb5-admin-server krb5-user)"
    fi
    ;;
  1) missing "real HBase and HDFS (Java and Maven)" "scripts/hbase.sh start --secure --hdfs" 1 ;;
  4) failed "the Kerberos KDC or a Kerberized HBase gateway" "scripts/hbase.sh start --secure --hdfs" 4 ;;
  *) failed "real HBase on HDFS" "scripts/hbase.sh start --secure --hdfs" $rc ;;
esac

# A real Kubernetes control plane (scripts/kube.sh: kube-apiserver and
# kube-controller-manager built with go once and cached, over Debian's etcd) for the tests
# of deploy/kubernetes/, which play the node.
step "Kubernetes control plane"
rc=0
scripts/kube.sh start || rc=$?
case $rc in
  0) . ./.kube.env ;;
  1) missing "the Kubernetes control plane (go, etcd)" "scripts/kube.sh start" 1 ;;
  *) failed "the Kubernetes control plane" "scripts/kube.sh start" $rc ;;
esac

step "cargo fmt --check"
cargo fmt --all --check

# Both builds: the README's main command builds without the feature.
step "cargo clippy --all-targets -- -D warnings"
cargo clippy --workspace --all-targets --locked -- -D warnings
if [ ${#features[@]} -gt 0 ]; then
  step "cargo clippy --all-targets ${features[*]} -- -D warnings"
  cargo clippy --workspace --all-targets --locked "${features[@]}" -- -D warnings
fi

# Every test target in one build, as nextest would build them, so that the library and its
# unit-test build share the two cores (built apart, the doc step's library first, the
# same took a minute longer); cargo's timings of it go to target/cargo-timings/.
step "cargo test --no-run --timings (every test target, built once)"
cargo test --no-run --timings --workspace --lib --bins --tests --locked "${profile[@]}" "${features[@]}"

step "cargo test --doc"
cargo test --workspace --doc --locked "${profile[@]}" "${features[@]}"

# Library, binary and integration tests, through cargo-nextest (tests/requirements.txt puts
# it in .venv; .config/nextest.toml): each test in a process of its own, its time in a JUnit
# report, every test run once. The benches are built by clippy above and run by
# scripts/bench.sh, not here.
# The tests that load the schema tables of one HBase take turns on it (tests/it/common.rs,
# and the test groups of .config/nextest.toml); four test slots on two cores keep the
# cores busy with the tests that need no turn meanwhile. NEXTEST_TEST_THREADS overrides.
# The fault tests split, move and kill HBase's region servers, which stalls every table on
# them: they run alone, one at a time, last.
nextest=()
if [ -x .venv/bin/cargo-nextest ]; then
  nextest=(.venv/bin/cargo-nextest nextest run --workspace --locked --cargo-profile ci "${features[@]}")
else
  missing "cargo-nextest" ".venv/bin/python -m pip install -r tests/requirements.txt"
  echo "scripts/test.sh: the tests run under cargo test instead, with no per-test times"
fi
rm -f target/nextest/{default,faults}/junit.xml
tested=1
# Both steps run whatever the first's outcome, so that every test runs and the run's last
# lines count all of them; the run fails with the first step that failed.
failed_tests=0
# The fault test that only splits and moves its own table's regions stalls no other table:
# it runs in the first step, in its turn on the schema tables (.config/nextest.toml), and
# the fault step keeps the tests that stop, kill or restart what every table needs.
beside='test(=faults::regions_split_and_moved_during_a_load)'
if [ ${#nextest[@]} -gt 0 ]; then
  step "cargo nextest run"
  "${nextest[@]}" --lib --bins --tests -E "not (binary(it) & test(/^faults::/) & not $beside)" || failed_tests=$?
  step "cargo nextest run faults:: (region servers killed and restarted, masters killed, ZooKeeper stopped, under load)"
  rc=0
  "${nextest[@]}" -P faults --test it -E "test(/^faults::/) & not $beside" || rc=$?
  [ "$failed_tests" -ne 0 ] || failed_tests=$rc
else
  threads=(--test-threads "${NEXTEST_TEST_THREADS:-4}")
  step "cargo test"
  cargo test --workspace --lib --bins --tests --locked "${profile[@]}" "${features[@]}" -- --skip faults:: "${threads[@]}" || failed_tests=$?
  step "cargo test faults:: (regions split and moved, region servers killed and restarted, masters killed, ZooKeeper stopped, under load)"
  rc=0
  cargo test --test it --locked "${profile[@]}" "${features[@]}" -- faults:: --test-threads=1 || rc=$?
  [ "$failed_tests" -ne 0 ] || failed_tests=$rc
fi
[ "$failed_tests" -eq 0 ] || exit "$failed_tests"
