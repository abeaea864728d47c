#!/usr/bin/env bash
# The whole test suite, as CI runs it: formatting, lints, then every test.
# Installs what the tests need first, so it works on a fresh clone.
set -euo pipefail
cd "$(dirname "$0")/.."

# One target directory shared by every run (override with CARGO_TARGET_DIR).
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

if ! cargo fmt --version >/dev/null 2>&1 || ! cargo clippy --version >/dev/null 2>&1; then
  rustup component add rustfmt clippy
fi

# Python packages some tests read our output with (third-party readers), in .venv.
echo "== Python test environment (.venv)"
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -r tests/requirements.txt
export TALLROW_PYTHON="$PWD/.venv/bin/python"

# Kerberos (the cargo feature `kerberos`: SASL/GSSAPI and SPNEGO through the system's
# GSSAPI library) needs its build dependencies; without them the suite runs without it.
echo "== Kerberos build dependencies"
. scripts/kerberos_deps.sh
features=()
if kerberos_build_deps; then
  features=(--features kerberos)
fi

echo "== cargo fmt --check"
cargo fmt --all --check

# Both builds: the README's main command builds without the feature.
echo "== cargo clippy --all-targets -- -D warnings"
cargo clippy --all-targets --locked -- -D warnings
if [ ${#features[@]} -gt 0 ]; then
  echo "== cargo clippy --all-targets ${features[*]} -- -D warnings"
  cargo clippy --all-targets --locked "${features[@]}" -- -D warnings
fi

echo "== cargo test --doc"
cargo test --doc --locked "${features[@]}"

# The bigtable backend's tests run against Google's emulator when this machine has it.
echo "== Bigtable emulator"
. scripts/bigtable_emulator.sh
start_bigtable_emulator || [ $? -eq 1 ]

# Real HBase (scripts/hbase.sh: fetched with Maven, standalone on loopback) is the
# reference the hbase backend's contract runs against; without Java or Maven it says so and
# those tests return. --secure adds a Kerberos KDC and HBase's Kerberized Thrift servers
# (SASL, and HTTP + SPNEGO + TLS), which the secured tests use.
echo "== Apache HBase"
stop_all() {
  stop_bigtable_emulator
  scripts/hbase.sh stop
  scripts/kube.sh stop
}
trap stop_all EXIT
if scripts/hbase.sh start --secure; then
  . ./.hbase.env
else
  rc=$?
  [ $rc -eq 1 ] || exit $rc
fi

# A real Kubernetes control plane (scripts/kube.sh: kube-apiserver and
# kube-controller-manager built with go once and cached, over Debian's etcd) for the tests
# of deploy/kubernetes/, which play the node; without go it says so and those tests return.
echo "== Kubernetes control plane"
if scripts/kube.sh start; then
  . ./.kube.env
else
  rc=$?
  [ $rc -eq 1 ] || exit $rc
fi

# Library, binary and integration tests; the benches are built by clippy above and run by
# scripts/bench.sh, not here.
# The quickstart end to end on the emulator keeps both cores busy for minutes, which would
# skew the latency tests beside it: it runs alone, after the rest.
heavy=bigtable::load_verify_and_run_the_quickstart_on_the_emulator
echo "== cargo test"
cargo test --lib --bins --tests --locked "${features[@]}" -- --skip "$heavy"
echo "== cargo test $heavy"
cargo test --test it --locked "${features[@]}" -- --exact "$heavy"
