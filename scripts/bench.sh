#!/usr/bin/env bash
# Loader and runner benchmarks: prints figures for reports/BENCHMARKS.md. Not a test, and nothing here
# has a time limit; rates are compared with a reference measured in the same run.
#
#   scripts/bench.sh            everything (a few minutes, ~3 GB of scratch disk)
#   scripts/bench.sh quick      load vs raw, runner overhead, cursor vs offset paging
#   scripts/bench.sh scale      memory and rate at 10M/20M rows, 2 and 16 threads; load and run thread scaling
#   scripts/bench.sh thrift     tallrow serve: loads through Thrift vs happybase and direct
#   scripts/bench.sh bigtable   the bigtable backend on Google's emulator vs its Python client
#   scripts/bench.sh hbase      the hbase backend on real HBase vs HBase's native client,
#                               happybase and PerformanceEvaluation, then loads through the
#                               Kerberized gateways (starts HBase --secure if none runs)
#   scripts/bench.sh native [ROUNDS]
#                               api=native against HBase's Java client at its best: loads
#                               (a warm Java BufferedMutator loader in 6 configurations,
#                               PerformanceEvaluation, native, Thrift2 each round in rotated
#                               order, ROUNDS (3) rounds, medians and ranges, ratios to the
#                               round's best Java configuration), client CPU per row, gets and
#                               pages, home timelines (starts HBase if none runs)
#   scripts/bench.sh observe [ROUNDS]
#                               the cluster observer's cost: the same closed-loop run of
#                               benches/paging.toml through api=native (20 s after 5 s of
#                               warm-up) with the observer and with --observe off, the
#                               order alternating per round, ROUNDS (3) rounds; throughput
#                               and p99 per run, medians and ranges (starts HBase if none runs)
#   scripts/bench.sh replicas [ROUNDS [TIMEOUT]]
#                               region replicas with both servers healthy: the quickstart's
#                               home timelines (data.users 5,000, tables of 2 copies, flushed)
#                               through api=native, each region server on a core of its own
#                               (taskset; put back after), after untimed runs (45 s, then
#                               20 s with every read sent to both copies at once), with
#                               STRONG reads, TIMELINE ones at HBase's primary timeout (10 ms
#                               for a get, 1 s for a scan) and TIMELINE ones at TIMEOUT (3ms)
#                               for both, 20 s after 5 s of warm-up each, the order rotated
#                               per round, ROUNDS (3) rounds; p50, p99, p99.9 and the stale
#                               share per run, each TIMELINE's over STRONG's per round,
#                               medians and ranges (starts HBase if none runs)
#   scripts/bench.sh secure [ROUNDS [native]]
#                               only the loads through sasl=gssapi (auth, auth-conf) against
#                               plain: through the Thrift1 gateways, and through HBase's own
#                               RPC (api=native, also auth-conf with crypto=aes) into one more
#                               Kerberized HBase, started for it; ROUNDS (3) rounds; with
#                               native, only the api=native part
#   scripts/bench.sh resume [USERS [ROUNDS]]
#                               a load into the embedded store with --no-bulk, whole, then
#                               killed (SIGKILL) at half its wall time and resumed, rows
#                               counted after each, capacity.toml at USERS (20,000: about
#                               3.8M row writes), ROUNDS (3) rounds: the resumed process's
#                               wall time over the whole one's (no HBase needed)
#   scripts/bench.sh compare [N [noisy]]
#                               compare's verdicts on real runs: N (10) comparisons, each of
#                               three runs a side of the quickstart (300 users, 3 s after 1 s
#                               of warm-up) on one embedded store, the sides' runs taken in
#                               turn: a build against itself, and against the same build
#                               through delay:2ms: (2 ms added to every call) with
#                               --threshold p99=10%; each verdict and exit status, and the
#                               counts (no HBase needed); with noisy, two busy loops
#                               share the cores with the first baseline run of each
#                               comparison, as a neighbour would
#   scripts/bench.sh history [RUNS [OPS [ROUNDS]]]
#                               tallrow history over RUNS (1,000) nightly report folders of
#                               OPS (20) operations made from one real run, against Apache
#                               Otava's analysis of its history.csv, the order alternating,
#                               ROUNDS (3) rounds: seconds and peak memory, medians and
#                               ranges, and whether both found the same change points
#   scripts/bench.sh descriptions [ROUNDS]
#                               each seed operation through the seed's code and through its
#                               seed description's operation of the same name (workloads/
#                               designs/), the same draws on the same rows, null: and
#                               embedded:, the order alternating per round, ROUNDS (5)
#                               rounds: ns per operation, the description's over the code's,
#                               medians and ranges (no HBase needed)
#   scripts/bench.sh hfile [seeding|resume|codecs] [USERS [ROUNDS]]
#                               both parts, or the one named (starts HBase on HDFS if none
#                               runs): seeding: HBase's own bulk load (hfile:hdfs:// +
#                               bulkload) vs the native client and vs local HFiles copied
#                               in, and a load killed at half and resumed, capacity.toml at
#                               USERS (84,000: about 20M rows) users, ROUNDS (3) rounds;
#                               resume: only the load killed and resumed, as in seeding,
#                               then the same through HBase's own RPC (batches) at a
#                               quarter of USERS;
#                               codecs: per codec with FAST_DIFF, the bulk-loaded tables'
#                               size and reads against HBase's major compaction of them, and
#                               the write against an uncompressed one, capacity.toml at
#                               USERS (20,000: about 4.7M rows), ROUNDS (3) rounds
set -euo pipefail
cd "$(dirname "$0")/.."

# With Kerberos where it can be built (scripts/kerberos_deps.sh), for the secured loads.
. scripts/kerberos_deps.sh
features=()
if kerberos_build_deps; then
    features=(--features kerberos)
fi
cargo build --release --locked --quiet "${features[@]}"
bin=${CARGO_TARGET_DIR:-target}/release/tallrow
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# tallrow serve: tallrow's hbase backend vs a happybase batch loader vs the embedded store,
# the same rows into the same serve process; pages of 10 and 100 rows through Thrift.
thrift() {
    [ -x .venv/bin/python ] || python3 -m venv .venv
    .venv/bin/python -m pip install --quiet --disable-pip-version-check -r tests/requirements.txt
    echo "== tallrow serve (workloads/quickstart.toml)"
    cargo bench --locked --quiet --bench thrift -- workloads/quickstart.toml --python .venv/bin/python
}
if [[ "${1:-}" == "thrift" ]]; then
    thrift
    exit 0
fi

# The bigtable backend against Google's Bigtable emulator: its load rate next to a plain
# loader written with Google's Python client, the same rows; pages of 10 and 100 rows.
bigtable() {
    [ -x .venv/bin/python ] || python3 -m venv .venv
    .venv/bin/python -m pip install --quiet --disable-pip-version-check -r benches/requirements.txt
    . scripts/bigtable_emulator.sh
    if ! start_bigtable_emulator; then
        echo "the Bigtable benchmark needs the emulator" >&2
        return 1
    fi
    trap 'stop_bigtable_emulator; rm -rf "$tmp"' EXIT
    echo "== bigtable backend (benches/paging.toml)"
    cargo bench --locked --quiet --bench bigtable -- benches/paging.toml --python .venv/bin/python
}
if [[ "${1:-}" == "bigtable" ]]; then
    bigtable
    exit 0
fi

# The hbase backend against real HBase (scripts/hbase.sh): its loads next to a native Java
# loader, happybase and HBase's PerformanceEvaluation, the same rows; pages of 10 and 100 rows.
hbase() {
    [ -x .venv/bin/python ] || python3 -m venv .venv
    .venv/bin/python -m pip install --quiet --disable-pip-version-check -r tests/requirements.txt
    if ! scripts/hbase.sh status >/dev/null; then
        scripts/hbase.sh start --secure || return 1
        trap 'scripts/hbase.sh stop; rm -rf "$tmp"' EXIT
    fi
    eval "$(scripts/hbase.sh env)"
    # Built (and HBase's test jars fetched) before anything is timed.
    scripts/hbase.sh java dev.tallrow.bench.Native 2>/dev/null || [ $? -eq 64 ]
    cargo bench --locked --quiet "${features[@]}" --bench hbase -- benches/paging.toml --python .venv/bin/python
    secure
}

# Loads through the Kerberized Thrift1 gateways (sasl=gssapi, qop auth and auth-conf)
# against the plain one, then the same through HBase's own RPC into a Kerberized standalone
# HBase that offers authentication and privacy and also lets plain clients in, rounds
# alternating (benches/secure.rs).
secure() {
    if ! scripts/hbase.sh status >/dev/null || [ -z "$(scripts/hbase.sh env | grep SASL1_AUTH)" ]; then
        scripts/hbase.sh start --secure || return 1
        trap 'scripts/hbase.sh stop; rm -rf "$tmp"' EXIT
    fi
    eval "$(scripts/hbase.sh env)"
    local started pid
    started="$(scripts/hbase.sh kerberized "bench-native-$$" hbase.rpc.protection=authentication,privacy \
        hbase.ipc.server.fallback-to-simple-auth-allowed=true)" || return 1
    pid="${started%% *}"
    echo "== loads through sasl=gssapi (the gateways: tests/fixtures/hbase.toml; HBase's RPC: workloads/quickstart.toml)"
    TALLROW_BENCH_NATIVE_KRB="${started#* }" \
        cargo bench --locked --quiet "${features[@]}" --bench secure -- tests/fixtures/hbase.toml \
        --native-workload workloads/quickstart.toml --rounds "${1:-3}" ${2:+"--$2-only"} || {
        kill "$pid"
        return 1
    }
    kill "$pid"
}
if [[ "${1:-}" == "hbase" ]]; then
    hbase
    exit 0
fi

# api=native against HBase's own Java client, on the two-region-server HBase of
# scripts/hbase.sh (benches/native.rs).
native() {
    if ! scripts/hbase.sh status >/dev/null; then
        scripts/hbase.sh start || return 1
        trap 'scripts/hbase.sh stop; rm -rf "$tmp"' EXIT
    fi
    eval "$(scripts/hbase.sh env)"
    # Built (and HBase's test jars fetched) before anything is timed.
    scripts/hbase.sh java dev.tallrow.bench.Native 2>/dev/null || [ $? -eq 64 ]
    echo "== api=native against HBase's Java client (benches/paging.toml)"
    cargo bench --locked --quiet --bench native -- benches/paging.toml --rounds "${1:-3}"
}
if [[ "${1:-}" == "native" ]]; then
    native "${2:-}"
    exit 0
fi
# CPU clock ticks of HBase's masters (active and backup) so far.
master_ticks() { ticks_of org.apache.hadoop.hbase.master.HMaster; }
# The region servers' (they answer the observer's /jmx reads).
rs_ticks() { ticks_of org.apache.hadoop.hbase.regionserver.HRegionServer; }
ticks_of() { # class
    local t=0 p
    for p in $(pgrep -f "$1"); do
        t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat")))
    done
    echo "$t"
}

# The cluster observer's cost (src/observe/): the same run with it and without, alternating.
observe() {
    if ! scripts/hbase.sh status >/dev/null; then
        scripts/hbase.sh start || return 1
        trap 'scripts/hbase.sh stop; rm -rf "$tmp"' EXIT
    fi
    eval "$(scripts/hbase.sh env)"
    local rounds="${1:-3}" r mode order
    echo "== the cluster observer's cost: benches/paging.toml through api=native, 20 s after 5 s of warm-up, $rounds rounds"
    # Loaded once, untimed: each run reads what it finds and writes a little.
    "$bin" run benches/paging.toml --backend "$TALLROW_HBASE_NATIVE" --reports "$tmp/warm" \
        --duration 5s --warmup 0s --observe off >/dev/null
    for r in $(seq "$rounds"); do
        order="on off"
        [ $((r % 2)) -eq 0 ] && order="off on"
        for mode in $order; do
            local flags=()
            [ "$mode" = off ] && flags=(--observe off)
            # The masters' CPU (clock ticks) around the run: what answering the observer costs them.
            local m0 m1 s0 s1
            m0=$(master_ticks) s0=$(rs_ticks)
            /usr/bin/time -f "%U %S" -o "$tmp/$mode-$r.cpu" \
                "$bin" run benches/paging.toml --backend "$TALLROW_HBASE_NATIVE" --reports "$tmp/$mode-$r" \
                --duration 20s --warmup 5s "${flags[@]}" >/dev/null
            m1=$(master_ticks) s1=$(rs_ticks)
            echo "$((m1 - m0))" >"$tmp/$mode-$r.master"
            echo "$((s1 - s0))" >"$tmp/$mode-$r.rs"
        done
    done
    .venv/bin/python - "$tmp" "$rounds" <<'PY'
import json, glob, statistics, sys
tmp, rounds = sys.argv[1], int(sys.argv[2])
def run(mode, r):
    s = json.load(open(glob.glob(f"{tmp}/{mode}-{r}/*/summary.json")[0]))
    cpu = sum(float(x) for x in open(f"{tmp}/{mode}-{r}.cpu").read().split()[-2:])
    master = int(open(f"{tmp}/{mode}-{r}.master").read()) / 100
    rs = int(open(f"{tmp}/{mode}-{r}.rs").read()) / 100
    return s["all"]["ops_per_s"], s["all"]["response"]["p99"] / 1e6, s.get("events"), cpu, master, rs
rows = {m: [run(m, r) for r in range(1, rounds + 1)] for m in ("on", "off")}
for r in range(rounds):
    (a, pa, ev, ca, ma, ra), (b, pb, _, cb, mb, rb) = rows["on"][r], rows["off"][r]
    print(f"round {r + 1}: observed {a:,.0f} ops/s p99 {pa:.2f} ms, CPU-s tallrow {ca:.2f} masters {ma:.2f} region servers {ra:.2f} (events {ev}); "
          f"not observed {b:,.0f} ops/s p99 {pb:.2f} ms, CPU-s tallrow {cb:.2f} masters {mb:.2f} region servers {rb:.2f}: {a / b:.3f}x")
def spread(v, f):
    return f"{statistics.median(v):{f}} ({min(v):{f}} to {max(v):{f}})"
for m in ("on", "off"):
    print(f"{'observed' if m == 'on' else 'not observed':<13} ops/s {spread([x[0] for x in rows[m]], ',.0f')}  p99 ms {spread([x[1] for x in rows[m]], '.2f')}")
print(f"throughput observed / not, per round: {spread([a[0] / b[0] for a, b in zip(rows['on'], rows['off'])], '.3f')}")
print(f"p99 observed / not, per round: {spread([a[1] / b[1] for a, b in zip(rows['on'], rows['off'])], '.3f')}")
for i, what in ((3, "tallrow's CPU"), (4, "the masters' CPU"), (5, "the region servers' CPU")):
    print(f"{what}, observed less not, per round (s): {spread([a[i] - b[i] for a, b in zip(rows['on'], rows['off'])], '+.2f')}")
PY
}
if [[ "${1:-}" == "observe" ]]; then
    observe "${2:-}"
    exit 0
fi

# TIMELINE against STRONG reads of the same tables of two copies, both servers healthy.
replicas() {
    local stop=
    if ! scripts/hbase.sh status >/dev/null; then
        scripts/hbase.sh start || return 1
        stop='scripts/hbase.sh stop;'
        trap "$stop"' rm -rf "$tmp"' EXIT
    fi
    eval "$(scripts/hbase.sh env)"
    local rounds="${1:-3}" timeout="${2:-3ms}" r i mode t
    local set=(--set storage.table_prefix=bench_replicas_)
    # Two region servers sharing two cores are not two hosts: what one does (a collection on
    # its parallel threads, a flush) takes the other's core too, and a slow primary has a slow
    # secondary. Each gets a core of its own here, as on hosts of their own.
    # Their affinity is put back on every exit, a failed run's too.
    local unpin= rs pid
    if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
        for rs in "$TALLROW_HBASE_RS1_PID:0" "$TALLROW_HBASE_RS2_PID:1"; do
            pid=${rs%%:*}
            unpin+="taskset -a -pc $(taskset -pc "$pid" | awk '{print $NF}') $pid >/dev/null 2>&1;"
            taskset -a -pc "${rs##*:}" "$pid" >/dev/null
        done
        trap "$unpin $stop"' rm -rf "$tmp"' EXIT
        echo "== region servers pinned: pid $TALLROW_HBASE_RS1_PID to core 0, pid $TALLROW_HBASE_RS2_PID to core 1"
    else
        echo "== region servers not pinned (no taskset, or one core): they share the machine's cores"
    fi
    echo "== region replicas: home timelines through api=native, STRONG, TIMELINE (HBase's timeouts) and TIMELINE ($timeout), 20 s after 5 s of warm-up, $rounds rounds"
    cp workloads/quickstart.toml "$tmp/timeline.toml"
    printf '\n[run.mix]\ntimeline = 1\n' >>"$tmp/timeline.toml"
    "$bin" drop "$tmp/timeline.toml" --backend "$TALLROW_HBASE_NATIVE" "${set[@]}" >/dev/null 2>&1 || true
    "$bin" load "$tmp/timeline.toml" --backend "$TALLROW_HBASE_NATIVE" --reports "$tmp/load" \
        "${set[@]}" --set storage.region_replication=2 --observe off >/dev/null
    # The secondaries see what is flushed (scripts/hbase.sh refreshes their files each second).
    for t in weibo:bench_replicas_inbox weibo:bench_replicas_content weibo:bench_replicas_celebrity weibo:bench_replicas_relation; do
        scripts/hbase.sh chaos flush "$t" >/dev/null 2>&1
    done
    # Warmed first, untimed: the servers' JIT and caches, and the page cache. A freshly
    # started server on one core takes a minute to come to speed; the second run asks both
    # copies of every read at once, so that the secondaries' caches are warm too.
    "$bin" run "$tmp/timeline.toml" --backend "$TALLROW_HBASE_NATIVE" --reports "$tmp/warm" \
        "${set[@]}" --duration 45s --warmup 0s --observe off >/dev/null
    "$bin" run "$tmp/timeline.toml" --backend "$TALLROW_HBASE_NATIVE" --reports "$tmp/warm2" \
        "${set[@]}" --set run.consistency=timeline --set run.primary_timeout=0s \
        --set run.scan_primary_timeout=0s --duration 20s --warmup 0s --observe off >/dev/null
    local modes=(strong timeline tuned)
    declare -A args=(
        [strong]="--set run.consistency=strong"
        [timeline]="--set run.consistency=timeline"
        [tuned]="--set run.consistency=timeline --set run.primary_timeout=$timeout --set run.scan_primary_timeout=$timeout"
    )
    for r in $(seq "$rounds"); do
        for i in 0 1 2; do
            mode=${modes[$(((i + r - 1) % 3))]}
            # shellcheck disable=SC2086 # the settings are words
            "$bin" run "$tmp/timeline.toml" --backend "$TALLROW_HBASE_NATIVE" --reports "$tmp/$mode-$r" \
                "${set[@]}" ${args[$mode]} --duration 20s --warmup 5s --observe off >/dev/null
        done
    done
    "$bin" drop "$tmp/timeline.toml" --backend "$TALLROW_HBASE_NATIVE" "${set[@]}" >/dev/null 2>&1 || true
    .venv/bin/python - "$tmp" "$rounds" "$timeout" <<'PY'
import json, glob, statistics, sys
tmp, rounds, timeout = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def run(mode, r):
    s = json.load(open(glob.glob(f"{tmp}/{mode}-{r}/*/summary.json")[0]))["all"]
    share = s.get("timeline", {}).get("stale_share", 0.0)
    x = s["response"]
    return s["ops_per_s"], x["p50"] / 1e6, x["p99"] / 1e6, x["p999"] / 1e6, share
names = {"strong": "strong", "timeline": "timeline 10ms/1s", "tuned": f"timeline {timeout}"}
rows = {m: [run(m, r) for r in range(1, rounds + 1)] for m in names}
for r in range(rounds):
    print(f"round {r + 1}: " + "; ".join(
        f"{names[m]} {o:,.0f} ops/s p50 {a:.2f} ms p99 {b:.2f} ms p99.9 {c:.2f} ms stale {d:.2%}"
        for m in names for o, a, b, c, d in [rows[m][r]]))
def spread(v, f):
    return f"{statistics.median(v):{f}} ({min(v):{f}} to {max(v):{f}})"
for m in ("timeline", "tuned"):
    pairs = list(zip(rows[m], rows["strong"]))
    for k, label in ((1, "p50"), (2, "p99"), (3, "p99.9"), (0, "throughput")):
        print(f"{label} {names[m]} / strong, per round: {spread([t[k] / s[k] for t, s in pairs], '.3f')}")
    print(f"stale share {names[m]}, per round: {spread([t[4] * 100 for t, _ in pairs], '.2f')} %")
PY
}
if [[ "${1:-}" == "replicas" ]]; then
    replicas "${2:-}" "${3:-}"
    exit 0
fi
if [[ "${1:-}" == "secure" ]]; then
    secure "${2:-}" "${3:-}"
    exit 0
fi


# HBase's own bulk load, on HBase over a real HDFS: `seeding` (HFiles into HDFS, then the
# bulk load) against the native client, with a load killed and resumed; `codecs` each codec
# against HBase's compaction of the same tables; capacity.toml at $2 users.
hfile() { # part users rounds
    if ! scripts/hbase.sh status >/dev/null; then
        scripts/hbase.sh start --hdfs || return 1
        trap 'scripts/hbase.sh stop; rm -rf "$tmp"' EXIT
    fi
    eval "$(scripts/hbase.sh env)"
    # Built (and HBase's test jars fetched) before anything is timed.
    scripts/hbase.sh java dev.tallrow.bench.Native 2>/dev/null || [ $? -eq 64 ]
    local w
    if [[ "$1" == resume ]]; then
        w=$(scaled "${2:-84000}" capacity_hfile)
        cargo bench --locked --quiet --bench hfile -- "$w" --rounds "${3:-3}" --resume-only
        # Batches are slower: a quarter of the users, so that each load takes about a minute.
        w=$(scaled "$((${2:-84000} / 4))" capacity_resume)
        cargo bench --locked --quiet --bench hfile -- "$w" --rounds "${3:-3}" --resume-only --resume-native
        return
    fi
    if [[ "$1" != codecs ]]; then
        w=$(scaled "${2:-84000}" capacity_hfile)
        cargo bench --locked --quiet --bench hfile -- "$w" --rounds "${3:-3}"
    fi
    if [[ "$1" != seeding ]]; then
        w=$(scaled "${2:-20000}" capacity_codecs)
        cargo bench --locked --quiet --bench hfile_codecs -- "$w" --rounds "${3:-3}"
    fi
}

# capacity.toml scaled by its user count: about 240 rows per user.
scaled() { # users name
    sed -e "s/^users = .*/users = $1/" -e "s/^name = .*/name = \"$2\"/" workloads/capacity.toml >"$tmp/$2.toml"
    echo "$tmp/$2.toml"
}
if [[ "${1:-}" == "resume" ]]; then
    w=$(scaled "${2:-20000}" capacity_resume)
    cargo bench --locked --quiet --bench hfile -- "$w" --rounds "${3:-3}" --resume-embedded
    exit 0
fi
# compare over real runs of one build (no regression expected) and of that build slowed
# by 2 ms a call (a regression expected), N comparisons of three runs a side.
compare_runs() { # n [noisy]
    local data="$tmp/compare-data" w=workloads/quickstart.toml same=0 slow=0 i k code hogs
    local run=(run "$w" --set data.users=300 --duration 3s --warmup 1s)
    "$bin" load "$w" --set data.users=300 --backend "embedded:$data" --reports "$tmp/reports" >/dev/null
    echo "== compare: $1 comparisons, three runs a side, quickstart at 300 users on embedded:${2:+ $2 baseline}"
    for i in $(seq 1 "$1"); do
        rm -rf "$tmp/c"
        for k in 1 2 3; do
            hogs=()
            if [[ $k == 1 && "${2:-}" == noisy ]]; then
                for _ in 1 2; do
                    (while :; do :; done) &
                    hogs+=($!)
                done
            fi
            "$bin" "${run[@]}" --backend "embedded:$data" --reports "$tmp/c/base" >/dev/null
            [[ ${#hogs[@]} == 0 ]] || kill "${hogs[@]}"
            "$bin" "${run[@]}" --backend "embedded:$data" --reports "$tmp/c/same" >/dev/null
            "$bin" "${run[@]}" --backend "delay:2ms:embedded:$data" --reports "$tmp/c/slow" >/dev/null
        done
        code=0
        "$bin" compare --baseline "$tmp"/c/base/*/ --candidate "$tmp"/c/same/*/ --reports "$tmp/c/v1" >"$tmp/c/same.txt" || code=$?
        echo "  $i: same build: $(grep -m1 '^verdict' "$tmp/c/same.txt" | sed 's/ (.*//') (exit $code)"
        [[ $code == 0 ]] && same=$((same + 1))
        code=0
        "$bin" compare --baseline "$tmp"/c/base/*/ --candidate "$tmp"/c/slow/*/ --threshold p99=10% \
            --reports "$tmp/c/v2" >"$tmp/c/slow.txt" || code=$?
        echo "     2 ms a call, p99=10%: $(grep -m1 '^verdict' "$tmp/c/slow.txt" | sed 's/ (.*//') (exit $code)"
        if [[ $code == 1 ]] && grep -q '^verdict: regression' "$tmp/c/slow.txt"; then
            slow=$((slow + 1))
        else
            # What kept it from a regression: the figures the threshold names.
            grep -E '^(REGRESSION|warning)|  p99  ' "$tmp/c/slow.txt" | sed 's/^/       /'
        fi
    done
    echo "same build: no regression in $same of $1; 2 ms a call: regression in $slow of $1"
}
if [[ "${1:-}" == "compare" ]]; then
    compare_runs "${2:-10}" "${3:-}"
    exit 0
fi
# tallrow history over a long history against Apache Otava's analysis of its CSV: RUNS
# nightly report folders of OPS operations (scripts/history_runs.py, from one real run),
# ROUNDS rounds, the order alternating, each command warmed once first; wall seconds and
# peak memory, medians and ranges, and whether both found the same change points.
history_runs() { # runs ops rounds
    local runs=$1 ops=$2 rounds=$3 h="$tmp/history" r t o src
    [ -x .venv/bin/otava ] || {
        [ -x .venv/bin/python ] || python3 -m venv .venv
        .venv/bin/python -m pip install --quiet --disable-pip-version-check -r tests/requirements.txt
    }
    rm -rf "$h"
    "$bin" run workloads/social.toml --backend memory: --set data.users=200 --ops 4000 --threads 1 \
        --warmup 0s --reports "$h/src" >/dev/null
    src=$(ls -d "$h"/src/social-2*/)
    python3 scripts/history_runs.py "$src" "$h/runs" "$runs" "$ops"
    echo "== history: $runs runs of $ops operations ($(du -sh "$h/runs" | cut -f1)), tallrow history against otava analyze on its history.csv, $rounds rounds"
    "$bin" history "$h/runs" --reports "$h/out" >/dev/null
    local csv
    csv=$(ls -d "$h"/out/history-*/ | tail -1)history.csv
    python3 - "$csv" >"$h/otava.yaml" <<'PY'
import csv, sys
header = next(csv.reader(open(sys.argv[1])))
metrics = [c for c in header if c.endswith((".ln", ".errors"))]
print("tests:\n  history:\n    type: csv\n    file: %s\n    time_column: time\n    attributes: [run]\n"
      "    metrics: [%s]\n    csv_options:\n      delimiter: \",\"\n      quote_char: '\"'"
      % (sys.argv[1], ", ".join('"%s"' % m for m in metrics)))
PY
    local otava=(.venv/bin/otava analyze history --config-file "$h/otava.yaml" --since 2000-01-01
        --window 50 -P 0.001 -M 0 --output json)
    TZ=UTC "${otava[@]}" >"$h/otava.json" 2>/dev/null
    : >"$h/t.tsv"
    for r in $(seq 1 "$rounds"); do
        for which in $( ((r % 2)) && echo "tallrow otava" || echo "otava tallrow"); do
            if [[ $which == tallrow ]]; then
                /usr/bin/time -f "tallrow\t%e\t%M" -a -o "$h/t.tsv" "$bin" history "$h/runs" --reports "$h/out" >/dev/null
            else
                TZ=UTC /usr/bin/time -f "otava\t%e\t%M" -a -o "$h/t.tsv" "${otava[@]}" >/dev/null 2>&1
            fi
        done
    done
    python3 - "$h/t.tsv" "$(ls -d "$h"/out/history-*/ | tail -1)history.json" "$h/otava.json" <<'PY'
import json, statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if "\t" in l]
def figures(who):
    s = [float(r[1]) for r in rows if r[0] == who]
    m = [int(r[2]) for r in rows if r[0] == who]
    return s, m
(ts, tm), (os_, om) = figures("tallrow"), figures("otava")
med = statistics.median
print(f"history (tallrow): {med(ts):.2f} s [{min(ts):.2f}..{max(ts):.2f}], peak {max(tm) / 1024:.0f} MiB (reads every summary.json, writes the page, JSON, Markdown and CSV)")
print(f"analyze (otava):   {med(os_):.2f} s [{min(os_):.2f}..{max(os_):.2f}], peak {max(om) / 1024:.0f} MiB (the CSV's series alone)")
ratios = sorted(t / o for t, o in zip(ts, os_))
print(f"ratio, tallrow over otava: {med(ratios):.2f}x [{ratios[0]:.2f}..{ratios[-1]:.2f}]")
g = json.load(open(sys.argv[2]))["groups"][0]
def metric(c):
    return f"{c['operation']}.{c['figure']}" + ("" if c["figure"] == "errors" else ".ln")
ours = {(metric(c), c["run"]) for k in ("changes", "single_runs") for c in g[k]}
ours |= {(metric(d), s) for d in g["drifts"] for s in d["steps"]}
theirs = {(c["metric"], c["index"]) for t in json.load(open(sys.argv[3]))["history"] for c in t["changes"]}
print(f"change points: tallrow {len(ours)}, otava {len(theirs)}, the same: {'yes' if ours == theirs else 'no'}")
PY
}
if [[ "${1:-}" == "history" ]]; then
    history_runs "${2:-1000}" "${3:-20}" "${4:-3}"
    exit 0
fi
if [[ "${1:-}" == "descriptions" ]]; then
    cargo bench --locked --quiet --bench run -- --descriptions "${2:-5}"
    exit 0
fi
if [[ "${1:-}" == "hfile" ]]; then
    part=both
    if [[ "${2:-}" == seeding || "${2:-}" == codecs || "${2:-}" == resume ]]; then
        part=$2
        shift
    fi
    hfile "$part" "${2:-}" "${3:-}"
    exit 0
fi

# rows/s and peak RSS (KiB) of one load, from the summary line and /usr/bin/time; the
# better rate of two loads into fresh directories (repeats differ by up to 10%), the higher
# peak of the two.
load() { # workload backend
    local rows rate best=0 peak=0 dir="${2#embedded:}"
    for _ in 1 2; do
        [[ "$2" == embedded:* ]] && rm -rf "$dir"
        /usr/bin/time -o "$tmp/time" -f "%M" "$bin" load "$1" --backend "$2" --reports "$tmp/reports" --no-count "${@:3}" >"$tmp/out"
        # total, row writes, rows in table ("-" without counting), cells, MiB, row writes/s
        rows=$(awk '$1 == "total" {print $2}' "$tmp/out")
        rate=$(awk '$1 == "total" {gsub(",", "", $6); print $6}' "$tmp/out")
        best=$(awk -v a="$best" -v b="$rate" 'BEGIN {print (b > a) ? b : a}')
        peak=$(( $(cat "$tmp/time") > peak ? $(cat "$tmp/time") : peak ))
    done
    echo "$rows rows, $best rows/s, peak RSS $(( peak / 1024 )) MiB"
}

# The quickstart mix at 1 thread and at N, each on a fresh copy of one load (a run writes,
# and the next run on the same data reads what it wrote); the better of two runs, since
# repeats here differ by up to 10%.
ops() { # data-dir threads [run flags]
    local best=0 r
    for _ in 1 2; do
        rm -rf "$tmp/qrun"
        cp -r "$1" "$tmp/qrun"
        r=$("$bin" run workloads/quickstart.toml --backend "embedded:$tmp/qrun" --threads "$2" \
            --duration 15s --warmup 3s --reports "$tmp/reports" "${@:3}" | awk '$1 == "all" {print $3}')
        best=$(awk -v a="$best" -v b="$r" 'BEGIN {print (b > a) ? b : a}')
    done
    echo "$best"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
# Size and thread scaling of the embedded store and the loader (issue figures in
# reports/BENCHMARKS.md): peak RSS and load rate at 10M and 20M rows, at 2 and 16 threads;
# the quickstart mix at 1 thread against N; memory: against embedded.
scale() {
    echo "== peak RSS of a 10M-row load (capacity.toml at 42,000 users)"
    w10=$(scaled 42000 bench-10m)
    echo "null store (the loader alone):  $(load "$w10" null:)"
    echo "embedded store:                 $(load "$w10" "embedded:$tmp/d10")"
    rm -rf "$tmp/d10"

    echo "== load rate at 1M vs 20M rows (capacity.toml at 4,200 and 84,000 users, embedded)"
    w1=$(scaled 4200 bench-1m)
    w20=$(scaled 84000 bench-20m)
    small=$(load "$w1" "embedded:$tmp/d1")
    echo "1M:   $small"
    rm -rf "$tmp/d1"
    large=$(load "$w20" "embedded:$tmp/d20")
    echo "20M:                        $large"
    rm -rf "$tmp/d20"
    echo "20M / 1M rows/s: $(ratio "$(echo "$large" | awk '{print $3}')" "$(echo "$small" | awk '{print $3}')")"
    echo "20M at 16 threads:          $(load "$w20" "embedded:$tmp/d20" --threads 16)"
    rm -rf "$tmp/d20"
    echo "20M in batches (--no-bulk): $(load "$w20" "embedded:$tmp/d20" --no-bulk)"
    rm -rf "$tmp/d20"
    echo "20M, null store, 16 threads (the loader alone): $(load "$w20" null: --threads 16)"

    cores=$(nproc)
    # Writers on the store's write path: 16 threads against 4 on a many-core machine, 2
    # against 1 on fewer than 8 cores.
    if [[ "$cores" -ge 8 ]]; then few=4 many=$cores; else few=1 many=2; fi
    echo "== embedded load of quickstart in batches (--no-bulk): $many threads against $few ($cores cores)"
    lf=$(load workloads/quickstart.toml "embedded:$tmp/ql" --threads "$few" --no-bulk)
    lm=$(load workloads/quickstart.toml "embedded:$tmp/ql" --threads "$many" --no-bulk)
    rm -rf "$tmp/ql"
    echo "$few threads: $lf"
    echo "$many threads: $lm"
    echo "$many / $few threads rows/s: $(ratio "$(echo "$lm" | awk '{print $3}')" "$(echo "$lf" | awk '{print $3}')")"

    "$bin" load workloads/quickstart.toml --backend "embedded:$tmp/q" --reports "$tmp/reports" --no-count >/dev/null
    echo "== quickstart mix, closed loop: N threads against 1 ($cores cores), fresh data each"
    # The default mix's reads, in its proportions.
    read_only=(--set 'run.mix={timeline = 20, timeline_later = 5, own_posts = 5, actions_offset = 8, actions_cursor = 8, actions_range = 5, series_range = 5, followers = 3, followees = 3, category = 5}')
    for n in 2 "$cores"; do
        if [[ "$n" == 2 || "$cores" -gt 2 ]]; then
            one=$(ops "$tmp/q" 1)
            many=$(ops "$tmp/q" "$n")
            echo "mixed:     1 thread $one ops/s, $n threads $many ops/s: $(ratio "$many" "$one")x"
            one=$(ops "$tmp/q" 1 "${read_only[@]}")
            many=$(ops "$tmp/q" "$n" "${read_only[@]}")
            echo "read-only: 1 thread $one ops/s, $n threads $many ops/s: $(ratio "$many" "$one")x (reference)"
        fi
        [[ "$cores" -gt 2 ]] || break
    done

    echo "== memory: against the embedded store, quickstart mix, 1 thread"
    embedded=$(ops "$tmp/q" 1)
    memory=$("$bin" run workloads/quickstart.toml --backend memory: --threads 1 --duration 15s \
        --warmup 3s --reports "$tmp/reports" | awk '$1 == "all" {print $3}')
    echo "embedded $embedded ops/s, memory: $memory ops/s: $(ratio "$memory" "$embedded")"
    rm -rf "$tmp/q" "$tmp/qrun"
}
if [[ "${1:-}" == "scale" ]]; then
    scale
    exit 0
fi

echo "== load vs raw store writes (workloads/quickstart.toml)"
cargo bench --locked --quiet --bench load -- workloads/quickstart.toml --repeat 3

# Runner overhead per operation (null store) and action-page p50/p99 at pages 1, 10 and 100.
cargo bench --locked --quiet --bench run -- --ops 2000000 --samples 3000

if [[ "${1:-}" == "quick" ]]; then
    exit 0
fi

thrift
bigtable
hbase
native

scale
