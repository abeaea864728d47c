#!/usr/bin/env bash
# A real, standalone Apache HBase on loopback, for the test suite, the benchmark and anyone
# who wants to try tallrow against real HBase without a cluster.
#
#   scripts/hbase.sh start    fetch HBase with Maven (once), start it and its Thrift servers
#   scripts/hbase.sh start --secure
#                             the same, plus a Kerberos KDC and Kerberized Thrift servers
#                             (SASL/GSSAPI, and HTTP + SPNEGO + TLS): scripts/secure.sh
#   scripts/hbase.sh start --hdfs
#                             the same with hbase.rootdir on a real HDFS (scripts/hdfs.sh,
#                             started first and stopped with it), where a bulk load renames
#                             files instead of copying them; both flags may be given
#   scripts/hbase.sh start --version V
#                             the same with HBase release V from Maven Central (2.4.18,
#                             2.5.13-hadoop3, 2.6.4-hadoop3, ...) in place of the pinned one;
#                             its Thrift servers run the hbase-thrift of V's line that Maven
#                             Central serves (2.4.17, 2.5.8, 2.6.1): scripts/compat.sh runs
#                             tallrow against each line
#   scripts/hbase.sh status   say whether it runs, and where
#   scripts/hbase.sh env      print the export lines of the running instance
#   scripts/hbase.sh stop     stop every process start started, remove its directory
#   scripts/hbase.sh stop --now
#                             the same with SIGKILL, for a cluster whose data goes with it
#                             (the suite's): no region server closes its regions first
#   scripts/hbase.sh completebulkload DIR TABLE
#                             HBase's bulk-load tool (what `hbase completebulkload` runs on a
#                             cluster) against the running instance: hands the HFiles under
#                             DIR/<family>/ to TABLE's regions; what `tallrow bulkload
#                             --hbase-cmd "scripts/hbase.sh completebulkload"` runs
#   scripts/hbase.sh hfile ARGS...
#                             HBase's HFilePrettyPrinter (`hbase hfile`), e.g. -m -v -f FILE
#   scripts/hbase.sh regionserver N
#                             start region server N (1 or 2) again, after a test killed it
#   scripts/hbase.sh graceful N
#                             restart region server N as HBase's graceful_stop.sh --restart
#                             --reload does: its regions moved off (RegionMover unload), the
#                             server stopped (SIGTERM) and started again on its port, its
#                             regions moved back (RegionMover load)
#   scripts/hbase.sh master N
#                             start master N (1 or 2) again, after a test killed it: it joins
#                             as the backup of the one that took over
#   scripts/hbase.sh kerberized NAME [PROPERTY=VALUE...]
#                             one more Kerberized standalone HBase (as --secure's, with the
#                             properties over its settings); prints its pid and URL
#   scripts/hbase.sh chaos ARGS...
#                             faults made through HBase's Java Admin (split, move, flush,
#                             major-compact, wait for the cluster to settle):
#                             tests/hbase/src/.../faults/Chaos.java
#   scripts/hbase.sh describe TABLE...
#                             each TABLE's families as HBase's Java Admin describes them
#                             (codec, encoding, bloom filter, block size, TTL, versions), one
#                             a line, each after its table's name
#   scripts/hbase.sh compact TABLE...
#                             major-compact each TABLE through HBase's Java Admin and wait
#                             until every file of it was rewritten
#   scripts/hbase.sh java CLASS ARGS...
#                             run a native HBase client against the running instance: the
#                             bench classpath (HBase's PerformanceEvaluation and the tools in
#                             tests/hbase/src, built here with Maven) behind its configuration
#
# HBase (pinned in tests/hbase/pom.xml) runs as pseudo-distributed mode runs it
# (`bin/start-hbase.sh` with hbase.cluster.distributed=true): ZooKeeper (`hbase zookeeper`),
# the master, a backup master and two region servers, each its own JVM, over the local file system (or, with
# --hdfs, over HDFS as on a cluster: a bulk load then renames its files into the regions,
# where on the local file system it copies them), so that regions live on two servers and
# routing, splits, moves and a dead server are real. Beside
# them run HBase's Thrift1 server in its defaults (thread pool, buffered, binary), a second
# Thrift1 server framed + compact, and the Thrift2 server. Every port is chosen free on
# 127.0.0.1; the web UIs are off. Ready means both region servers have checked in and each
# Thrift server answers a real call. It also creates the namespace the shipped workloads use
# (weibo): Thrift1 has no call for it. The balancer does not run on its own (a move in the
# tests is one the test made), and the cluster has a test cluster's timings (site(), below):
# a region server whose ZooKeeper session lapses for 10 s is dead (HBase's default is 90 s).
#
# `start` writes .hbase.env at the repository root (ignored by git) with:
#   TALLROW_HBASE_THRIFT1      HOST:PORT of the buffered/binary Thrift1 server
#   TALLROW_HBASE_THRIFT1_FC   HOST:PORT of the framed/compact Thrift1 server
#   TALLROW_HBASE_THRIFT2      HOST:PORT of the Thrift2 server
#   TALLROW_HBASE_ZK           HOST:PORT of ZooKeeper (for native clients)
#   TALLROW_HBASE_NATIVE       tallrow's URL of the cluster through HBase's own RPC
#   TALLROW_HBASE_RS1_PID, TALLROW_HBASE_RS2_PID
#                              the region servers' processes (the fault tests kill one)
#   TALLROW_HBASE_CP           the classpath (conf directory first), for native clients
#   TALLROW_HBASE_VERSION      the HBase release (tests/hbase/pom.xml, or --version's)
#   TALLROW_HBASE_THRIFT_VERSION
#                              the release of its Thrift servers (hbase-thrift)
#   TALLROW_HDFS               with --hdfs, the hdfs:// URL of the NameNode HBase's root
#                              directory is on (hbase.rootdir is TALLROW_HDFS/hbase)
# With --secure also the secured endpoints' URLs, KRB5_CONFIG, KRB5CCNAME and the CA file
# (scripts/secure.sh says which).
# Exit codes: 0 done; 1 Java or Maven missing (one line says so); 2 HBase failed to start
# (twice: a failed start is tried once more with new ports; its logs are kept in
# tests/hbase/target/failed-start); 4 with --secure, the KDC or a Kerberized server did
# not start (not tried again: new ports would not help).
#
# Heaps are capped (TALLROW_HBASE_HEAP per region server, default 1g; 512m for the master,
# 128m for ZooKeeper, 384m per Thrift server): HBase shares the machine with the tests.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
state="$repo/.hbase.env"
heap="${TALLROW_HBASE_HEAP:-1g}"
# shellcheck source=scripts/secure.sh
. "$repo/scripts/secure.sh"
secure=
hdfs=

# shellcheck source=scripts/jvm.sh
. "$repo/scripts/jvm.sh"

running() {
  [ -f "$state" ] || return 1
  # shellcheck disable=SC1090
  . "$state"
  # shellcheck disable=SC2086
  all_alive $TALLROW_HBASE_PIDS
}

stop() {
  [ -f "$state" ] || return 0
  # shellcheck disable=SC1090
  . "$state"
  local pid zk_pid="${TALLROW_HBASE_PIDS%% *}" rest
  zk_latency "${TALLROW_HBASE_ZK:-}"
  # SIGTERM lets each region server close its regions (flushing them) before it exits, up
  # to 30 s each; with --now (the suite's cluster, whose data goes with it) none waits.
  local sig=TERM
  [ "${1:-}" = --now ] && sig=KILL
  # Everything but ZooKeeper at once (the directory goes with them: nothing needs to be
  # flushed in order), then HDFS where HBase ran on it, then ZooKeeper.
  # The extra Kerberized HBases (`kerberized`), which may have gone already, with the rest.
  rest="${TALLROW_HBASE_PIDS#"$zk_pid"} ${TALLROW_HBASE_EXTRA_PIDS:-}"
  for pid in $rest; do kill -s "$sig" "$pid" 2>/dev/null || true; done
  for pid in $rest "$zk_pid"; do
    if [ "$pid" = "$zk_pid" ]; then
      # HDFS after the servers writing to it, before the ZooKeeper they wait on.
      if [ -n "${TALLROW_HDFS:-}" ]; then "$repo/scripts/hdfs.sh" stop ${1:+"$1"}; fi
      if [ -n "${TALLROW_HDFS_KRB:-}" ]; then TALLROW_HDFS_STATE=.hdfs-krb.env "$repo/scripts/hdfs.sh" stop ${1:+"$1"}; fi
      kill -s "$sig" "$pid" 2>/dev/null
    fi
    reap "$pid"
  done
  fsync_stalls "$TALLROW_HBASE_DIR/logs/zookeeper.log"
  case "$TALLROW_HBASE_DIR" in
    */tallrow-hbase.*) rm -rf "$TALLROW_HBASE_DIR" ;;
  esac
  rm -f "$state"
}

# One line on the longest ZooKeeper took to answer a request since it started (its `srvr`
# command's maximum latency): a session's creation is a transaction, logged and synced
# before the client hears back, so a client opening then waits that long.
zk_latency() { # host:port
  [ -n "$1" ] || return 0
  python3 - "$1" <<'PY' 2>/dev/null || true
import socket, sys
host, port = sys.argv[1].rsplit(":", 1)
s = socket.create_connection((host, int(port)), timeout=2)
s.sendall(b"srvr")
out = b""
while True:
    d = s.recv(4096)
    if not d:
        break
    out += d
for line in out.decode().splitlines():
    if line.startswith("Latency min/avg/max:"):
        lo, avg, hi = line.split(":", 1)[1].strip().split("/")[:3]
        print(f"ZooKeeper answered within {float(hi):.0f} ms at most, {float(avg):.1f} ms on average (srvr)")
PY
}

# One line on the times ZooKeeper waited over a second on its transaction log's fsync
# (its own warning, zookeeper.fsync.warningthresholdms): each one a stall of every
# ZooKeeper read and write, the kind the client must wait through.
fsync_stalls() { # log
  [ -f "$1" ] || return 0
  local ms
  ms="$(grep -o 'fsync-ing the write ahead log in [^ ]* took [0-9]*ms' "$1" | grep -o '[0-9]*ms$' | tr -d ms | sort -n)" || true
  [ -n "$ms" ] || return 0
  echo "ZooKeeper waited over 1 s on fsync $(echo "$ms" | wc -l) times, longest $(echo "$ms" | tail -1) ms (logs/zookeeper.log)"
}

site() {
  local dir="$1" zk="$2" master="$3" hdfs="${4:-}" root
  root="file://$dir/hbase"
  [ -n "$hdfs" ] && root="$hdfs/hbase"
  cat <<EOF
<?xml version="1.0"?>
<configuration>
  <property><name>hbase.cluster.distributed</name><value>true</value></property>
  <property><name>hbase.rootdir</name><value>$root</value></property>
  <property><name>hbase.tmp.dir</name><value>$dir/tmp</value></property>
  <property><name>hbase.zookeeper.property.dataDir</name><value>$dir/zookeeper</value></property>
EOF
  if [ -z "$hdfs" ]; then
    # The local file system has no hflush/hsync for the WAL to demand, and no fan-out
    # output for the asynchronous WAL.
    echo '  <property><name>hbase.wal.provider</name><value>filesystem</value></property>'
    echo '  <property><name>hbase.unsafe.stream.capability.enforce</name><value>false</value></property>'
  else
    # HBase's default WAL on HDFS: the asynchronous one, which writes to the DataNodes itself.
    echo '  <property><name>hbase.wal.provider</name><value>asyncfs</value></property>'
    # One DataNode: a WAL of one replica is all there can be (FSHLog would roll it forever).
    echo '  <property><name>hbase.regionserver.hlog.tolerable.lowreplication</name><value>1</value></property>'
  fi
  cat <<EOF
  <property><name>hbase.zookeeper.quorum</name><value>127.0.0.1</value></property>
  <property><name>hbase.zookeeper.property.clientPort</name><value>$zk</value></property>
  <property><name>hbase.zookeeper.property.clientPortAddress</name><value>127.0.0.1</value></property>
  <!-- A test cluster's timings, as HBase's own test suites set theirs (hbase-server's test
       hbase-site.xml: reports and chores every second): a region server whose ZooKeeper
       session lapses for 10 s is dead (HBase's default is 90 s), which is also how long a
       backup master waits for a dead active one's znode to go; ZooKeeper's tick of 1 s (its
       default here is 3 s, which floors sessions at 6 s) lets sessions be that short. The
       client's RPC timeout, pause and retries keep HBase's defaults: the fault tests that
       are about them set their own on their URLs. -->
  <property><name>zookeeper.session.timeout</name><value>10000</value></property>
  <property><name>hbase.zookeeper.property.tickTime</name><value>1000</value></property>
  <property><name>hbase.regionserver.msginterval</name><value>1000</value></property>
  <property><name>hbase.server.thread.wakefrequency</name><value>1000</value></property>
  <property><name>hbase.master.port</name><value>$master</value></property>
  <!-- A master that becomes active starts once both region servers have reported, as
       HBase's testing utility sets it (min = max = the servers it starts): without a max it
       waits out hbase.master.wait.on.regionservers.timeout (4.5 s) at every start and
       takeover. -->
  <property><name>hbase.master.wait.on.regionservers.mintostart</name><value>2</value></property>
  <property><name>hbase.master.wait.on.regionservers.maxtostart</name><value>2</value></property>
  <!-- The lease of a dead server's WAL (or a dead master's store) is taken over on HDFS,
       whose DataNode beats every second here (scripts/hdfs.sh): the first retry after a
       second, not HBase's 4 s, as its own tests set it. -->
  <property><name>hbase.lease.recovery.first.pause</name><value>1000</value></property>
  <property><name>hbase.balancer.period</name><value>86400000</value></property>
  <!-- A daughter of a split stays unsplittable while any of its store files, compacted ones
       included (HStore.hasReferences, HBASE-20940), is a reference to its parent: the
       compacted ones go at the discharger's next pass, every 2 minutes by default. -->
  <property><name>hbase.hfile.compaction.discharger.interval</name><value>5000</value></property>
  <!-- Secondary region replicas (REGION_REPLICATION > 1) see the primary's flushed files
       within a second: what a TIMELINE read of a secondary can be behind by. -->
  <property><name>hbase.regionserver.storefile.refresh.period</name><value>1000</value></property>
  <property><name>hbase.master.hostname</name><value>localhost</value></property>
  <property><name>hbase.unsafe.regionserver.hostname</name><value>localhost</value></property>
  <property><name>hbase.master.ipc.address</name><value>127.0.0.1</value></property>
  <property><name>hbase.regionserver.ipc.address</name><value>127.0.0.1</value></property>
  <property><name>hbase.master.info.port</name><value>-1</value></property>
  <!-- Each region server's info server on a free loopback port, which it reports to the
       master: the observer reads its /jmx (queues, blocked updates, GC). -->
  <property><name>hbase.regionserver.info.port</name><value>0</value></property>
  <property><name>hbase.regionserver.info.bindAddress</name><value>127.0.0.1</value></property>
  <property><name>hbase.thrift.info.port</name><value>-1</value></property>
  <!-- Tests make hundreds of small tables: 2 MB memstore chunks per family would fill the
       capped heap, so memstores allocate per cell instead. -->
  <property><name>hbase.hregion.memstore.mslab.enabled</name><value>false</value></property>
  <!-- ZSTD without Hadoop's native library, as a cluster without it is configured: HBase's
       own codec over zstd-jni (hbase-compression-zstd in tests/hbase/pom.xml). -->
  <property><name>hbase.io.compress.zstd.codec</name><value>org.apache.hadoop.hbase.io.compress.zstd.ZstdCodec</value></property>
</configuration>
EOF
}

log4j() {
  cat <<'EOF'
status = warn
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{ISO8601} %-5p [%t] %c{2}: %m%n
rootLogger = INFO,console
logger.zookeeper.name = org.apache.zookeeper
logger.zookeeper.level = WARN
logger.hadoop.name = org.apache.hadoop
logger.hadoop.level = WARN
logger.hbase.name = org.apache.hadoop.hbase
logger.hbase.level = INFO
EOF
}

# Keeps a failed start's logs (tests/hbase/target/failed-start, ignored by git), says which
# process and where in one line plus the log's end, and stops what started.
failed() { # dir why log
  local kept="$repo/tests/hbase/target/failed-start"
  rm -rf "$kept"
  mkdir -p "$kept"
  cp -r "$1/logs/." "$kept/" 2>/dev/null || true
  echo "HBase did not start: $2 (logs kept in $kept)" >&2
  tail -n 5 "$kept/$3" >&2 || true
  stop
  return 2
}

# Starts HBase; a start that fails (a port taken between choosing and binding it, say) is
# tried once more with new ports.
start() {
  local rc=0
  start_once || rc=$?
  if [ $rc -eq 2 ]; then
    echo "trying once more with new ports" >&2
    start_once
    return
  fi
  return $rc
}

start_once() {
  if running && [ -n "$secure" ] && [ -z "${TALLROW_HBASE_NATIVE_KRB:-}" ]; then
    echo "HBase runs without its secured servers: restarting it with them" >&2
    stop
  fi
  if running && [ -n "$hdfs" ] && [ -z "${TALLROW_HDFS:-}" ]; then
    echo "HBase runs on the local file system: restarting it on HDFS" >&2
    stop
  fi
  if running && [ "$TALLROW_HBASE_VERSION" != "$(wanted)" ]; then
    echo "HBase $TALLROW_HBASE_VERSION runs: restarting it as $(wanted)" >&2
    stop
  fi
  if running; then
    echo "HBase already runs: $TALLROW_HBASE_THRIFT1 (thrift1), $TALLROW_HBASE_THRIFT1_FC (thrift1 framed compact), $TALLROW_HBASE_THRIFT2 (thrift2)"
    return 0
  fi
  stop
  have_tools || return 1
  local cp dir zk master t1 t1fc t2 pids=() hdfs_url= rc=0
  local logs=(zookeeper.log master.log master-2.log regionserver-1.log regionserver-2.log thrift1.log thrift1-fc.log thrift2.log)
  cp="$(classpath)" || return 2
  if [ -n "$hdfs" ]; then
    "$repo/scripts/hdfs.sh" start || rc=$?
    [ $rc -eq 0 ] || return $rc
    # shellcheck disable=SC1091
    hdfs_url="$(. "$repo/.hdfs.env" && echo "$TALLROW_HDFS")"
  fi
  dir="$(mktemp -d -t tallrow-hbase.XXXXXX)"
  mkdir -p "$dir/conf" "$dir/logs"
  zk="$(free_port)" master="$(free_port)"
  t1="$(free_port)" t1fc="$(free_port)" t2="$(free_port)"
  site "$dir" "$zk" "$master" "$hdfs_url" >"$dir/conf/hbase-site.xml"
  if [ -n "$hdfs" ]; then
    # HDFS's client settings for every HBase process and tool (no fs.defaultFS: a bare path
    # handed to a tool stays on the local file system).
    cat >"$dir/conf/hdfs-site.xml" <<EOF
<?xml version="1.0"?>
<configuration>
  <property><name>dfs.replication</name><value>1</value></property>
  <property><name>dfs.blocksize</name><value>33554432</value></property>
  <!-- A file's close asks the NameNode again after this delay while its last block is not
       reported yet: 400 ms by default, which every small file HBase writes (a region's
       .regioninfo, a flush) paid on 2 cores. -->
  <property><name>dfs.client.block.write.locateFollowingBlock.initial.delay.ms</name><value>20</value></property>
</configuration>
EOF
  fi
  log4j >"$dir/conf/log4j2.properties"
  cp="$dir/conf:$cp"
  local java=(java "${jdk_flags[@]}" "-Dlog4j2.configurationFile=$dir/conf/log4j2.properties"
    "-Dhbase.log.dir=$dir/logs" -cp "$cp")

  (cd "$dir" && exec "${java[@]}" -Xmx128m org.apache.hadoop.hbase.zookeeper.HQuorumPeer start) \
    >"$dir/logs/zookeeper.log" 2>&1 &
  pids+=($!)
  local n rs_pids=() rs_ports=() master_pids=() master2
  master2="$(free_port)"
  for n in 1 2; do
    if [ $n = 1 ]; then start_master "$dir" 1 "$cp" "$master"; else start_master "$dir" 2 "$cp" "$master2" --backup; fi
    master_pids+=("$started")
    pids+=("$started")
  done
  for n in 1 2; do
    rs_ports+=("$(free_port)")
    start_regionserver "$dir" "$n" "$cp" "${rs_ports[-1]}"
    rs_pids+=("$started")
    pids+=("$started")
  done
  (cd "$dir" && exec "${java[@]}" -Xmx384m org.apache.hadoop.hbase.thrift.ThriftServer \
    -b 127.0.0.1 -p "$t1" start) >"$dir/logs/thrift1.log" 2>&1 &
  pids+=($!)
  (cd "$dir" && exec "${java[@]}" -Xmx384m org.apache.hadoop.hbase.thrift.ThriftServer \
    -b 127.0.0.1 -p "$t1fc" -f -c start) >"$dir/logs/thrift1-fc.log" 2>&1 &
  pids+=($!)
  (cd "$dir" && exec "${java[@]}" -Xmx384m org.apache.hadoop.hbase.thrift2.ThriftServer \
    -b 127.0.0.1 -p "$t2" start) >"$dir/logs/thrift2.log" 2>&1 &
  pids+=($!)

  local version thrift_version
  version="$(wanted)"
  thrift_version="$(grep -o '<hbase.thrift.version>[^<]*' "$repo/tests/hbase/pom.xml" | cut -d'>' -f2)"
  [ -z "$release" ] || thrift_version="$(thrift_release)"
  cat >"$state" <<EOF
export TALLROW_HBASE_VERSION='$version'
export TALLROW_HBASE_THRIFT_VERSION='$thrift_version'
export TALLROW_HBASE_DIR='$dir'
export TALLROW_HBASE_PIDS='${pids[*]}'
export TALLROW_HBASE_THRIFT1='127.0.0.1:$t1'
export TALLROW_HBASE_THRIFT1_FC='127.0.0.1:$t1fc'
export TALLROW_HBASE_THRIFT2='127.0.0.1:$t2'
export TALLROW_HBASE_ZK='127.0.0.1:$zk'
export TALLROW_HBASE_NATIVE='hbase://127.0.0.1:$zk?api=native'
export TALLROW_HBASE_ZK_PID='${pids[0]}'
export TALLROW_HBASE_MASTER1_PID='${master_pids[0]}'
export TALLROW_HBASE_MASTER1_PORT='$master'
export TALLROW_HBASE_MASTER2_PID='${master_pids[1]}'
export TALLROW_HBASE_MASTER2_PORT='$master2'
export TALLROW_HBASE_RS1_PID='${rs_pids[0]}'
export TALLROW_HBASE_RS1_PORT='${rs_ports[0]}'
export TALLROW_HBASE_RS2_PID='${rs_pids[1]}'
export TALLROW_HBASE_RS2_PORT='${rs_ports[1]}'
export TALLROW_HBASE_CP='$cp'
EOF
  if [ -n "$hdfs" ]; then echo "export TALLROW_HDFS='$hdfs_url'" >>"$state"; fi

  # A slow start on 2 cores takes a minute or two; five minutes is a failure.
  local deadline=$((SECONDS + 300)) mode port i ok
  for mode in thrift1:$t1 thrift1-fc:$t1fc thrift2:$t2; do
    port="${mode#*:}" mode="${mode%%:*}"
    ok=
    while [ $SECONDS -lt $deadline ]; do
      if python3 "$repo/scripts/hbase_thrift.py" 127.0.0.1 "$port" "$mode" 2>/dev/null; then
        ok=1
        break
      fi
      for i in "${!pids[@]}"; do
        if ! kill -0 "${pids[$i]}" 2>/dev/null; then
          failed "$dir" "the process logging to ${logs[$i]} exited" "${logs[$i]}"
          return 2
        fi
      done
      sleep 1
    done
    if [ -z "$ok" ]; then
      failed "$dir" "no answer on $mode (port $port) within 300 s" master.log
      return 2
    fi
  done
  # Thrift1 cannot create namespaces: make the one the shipped workloads use.
  local ns
  for ns in weibo; do
    if ! python3 "$repo/scripts/hbase_thrift.py" 127.0.0.1 "$t2" namespace "$ns"; then
      stop
      return 2
    fi
  done
  if [ -n "$secure" ]; then
    start_secure "$dir" "$cp" || return
  fi
  echo "HBase $version (Thrift servers $thrift_version) on loopback in ${SECONDS}s: thrift1 127.0.0.1:$t1, thrift1 framed compact 127.0.0.1:$t1fc, thrift2 127.0.0.1:$t2 (logs in $dir/logs)"
}

# The release start runs: --version's, else the one tests/hbase/pom.xml pins.
wanted() {
  if [ -n "$release" ]; then
    echo "$release"
  else
    grep -o '<hbase.version>[^<]*' "$repo/tests/hbase/pom.xml" | cut -d'>' -f2
  fi
}

# Starts master N of the cluster in DIR on PORT, logging to master.log (N=1) or
# master-N.log (appended: a restart keeps the killed one's log); its pid in $started. With
# `--backup` it waits, as a backup master does, until the active one's znode goes.
start_master() { # dir n classpath port [--backup]
  local dir="$1" n="$2" cp="$3" port="$4" log=master.log
  [ "$n" = 1 ] || log="master-$n.log"
  (cd "$dir" && exec java "${jdk_flags[@]}" "-Dlog4j2.configurationFile=$dir/conf/log4j2.properties" \
    "-Dhbase.log.dir=$dir/logs" -cp "$cp" -Xmx512m \
    org.apache.hadoop.hbase.master.HMaster -D "hbase.master.port=$port" ${5:+"$5"} start) \
    >>"$dir/logs/$log" 2>&1 &
  started=$!
}

# Starts region server N of the cluster in DIR on PORT, logging to regionserver-N.log
# (appended: a restart keeps the killed one's log); its pid in $started.
start_regionserver() { # dir n classpath port
  local dir="$1" n="$2" cp="$3" port="$4"
  (cd "$dir" && exec java "${jdk_flags[@]}" "-Dlog4j2.configurationFile=$dir/conf/log4j2.properties" \
    "-Dhbase.log.dir=$dir/logs" -cp "$cp" "-Xmx$heap" \
    org.apache.hadoop.hbase.regionserver.HRegionServer -D "hbase.regionserver.port=$port" start) \
    >>"$dir/logs/regionserver-$n.log" 2>&1 &
  started=$!
}

# Records that KIND N (RS or MASTER) runs as pid NEW now, in place of OLD.
replaced() { # kind n old new
  sed -e "s/^export TALLROW_HBASE_$1$2_PID=.*/export TALLROW_HBASE_$1$2_PID='$4'/" \
    -e "/^export TALLROW_HBASE_PIDS=/s/\\b$3\\b/$4/" "$state" >"$state.tmp"
  mv "$state.tmp" "$state"
}

# Loads the state of the running instance, for a command on one of its processes.
instance() { # n
  case "$1" in 1 | 2) ;; *) echo "no process $1: 1 or 2" >&2; return 64 ;; esac
  [ -f "$state" ] || { echo "HBase is not running: scripts/hbase.sh start" >&2; return 3; }
  # shellcheck disable=SC1090
  . "$state"
}

# Starts KIND N (RS: region server, MASTER: master) again on its port, after a test killed
# it: the new pid replaces the old in the state. A master started again is a backup: the
# other one took over.
restart() { # kind n
  local kind="$1" n="$2" old port what="region server"
  instance "$n" || return
  [ "$kind" = MASTER ] && what=master
  old="$(eval echo "\$TALLROW_HBASE_${kind}${n}_PID")" port="$(eval echo "\$TALLROW_HBASE_${kind}${n}_PORT")"
  if kill -0 "$old" 2>/dev/null; then
    echo "$what $n runs (pid $old)" >&2
    return 0
  fi
  if [ "$kind" = MASTER ]; then
    start_master "$TALLROW_HBASE_DIR" "$n" "$TALLROW_HBASE_CP" "$port" --backup
  else
    start_regionserver "$TALLROW_HBASE_DIR" "$n" "$TALLROW_HBASE_CP" "$port"
  fi
  replaced "$kind" "$n" "$old" "$started"
  echo "$what $n started again (pid $started)"
}

# HBase's graceful_stop.sh --restart --reload for region server N: RegionMover moves its
# regions to the other server and waits until each is open there; SIGTERM stops it as
# `hbase-daemon.sh stop` does (it closes what it still holds and leaves the cluster); it
# starts again on its port, and RegionMover moves the regions back once it is online.
graceful_regionserver() { # n
  local n="$1" pid port file t0=$SECONDS
  instance "$n" || return
  pid="$(eval echo "\$TALLROW_HBASE_RS${n}_PID")" port="$(eval echo "\$TALLROW_HBASE_RS${n}_PORT")"
  kill -0 "$pid" 2>/dev/null || { echo "region server $n is not running" >&2; return 3; }
  file="$TALLROW_HBASE_DIR/regions-of-rs$n"
  # Each of RegionMover's moves checks where its region is once a second (MoveWithAck), so
  # that one costs 1.1 to 2.3 s however fast the region opens: 16 at a time, which is every
  # region of a test's tables at once, where 4 took 13 s for 15 regions.
  local mover=(java "${jdk_flags[@]}" -XX:TieredStopAtLevel=1 -Xmx256m
    "-Dlog4j2.configurationFile=$TALLROW_HBASE_DIR/conf/log4j2.properties"
    -cp "$TALLROW_HBASE_CP" org.apache.hadoop.hbase.util.RegionMover
    -r "localhost:$port" -m 16 -f "$file")
  "${mover[@]}" -o unload >>"$TALLROW_HBASE_DIR/logs/regionmover.log" 2>&1 ||
    { echo "RegionMover could not unload region server $n (logs/regionmover.log)" >&2; return 2; }
  local unloaded=$((SECONDS - t0))
  kill -TERM "$pid"
  local deadline=$((SECONDS + 120))
  while kill -0 "$pid" 2>/dev/null; do
    [ $SECONDS -lt $deadline ] || { echo "region server $n still runs 120 s after SIGTERM" >&2; return 2; }
    sleep 0.2
  done
  local stopped=$((SECONDS - t0)) log="$TALLROW_HBASE_DIR/logs/regionserver-$n.log" served
  served="$(grep -c "Serving as" "$log" || true)"
  start_regionserver "$TALLROW_HBASE_DIR" "$n" "$TALLROW_HBASE_CP" "$port"
  replaced RS "$n" "$pid" "$started"
  # Online once it has reported for duty to the master (RegionMover's load waits for that
  # only when it has regions to move back).
  deadline=$((SECONDS + 120))
  until [ "$(grep -c "Serving as" "$log" || true)" -gt "$served" ]; do
    kill -0 "$started" 2>/dev/null || { echo "region server $n exited as it started (logs/regionserver-$n.log)" >&2; return 2; }
    [ $SECONDS -lt $deadline ] || { echo "region server $n not online 120 s after it started" >&2; return 2; }
    sleep 0.2
  done
  # The master places hbase:meta and hbase:namespace only on servers whose version it knows,
  # which comes with a server's first report (every hbase.regionserver.msginterval, 1 s
  # here): a move of meta to it before that lands back where it was and RegionMover waits
  # 60 s.
  sleep 1.5
  "${mover[@]}" -o load >>"$TALLROW_HBASE_DIR/logs/regionmover.log" 2>&1 ||
    { echo "RegionMover could not load region server $n again (logs/regionmover.log)" >&2; return 2; }
  echo "region server $n restarted gracefully: unloaded at ${unloaded}s, stopped at ${stopped}s, reloaded at $((SECONDS - t0))s (pid $started)"
}

# Waits until the standalone HBase NAME (pid PID) has initialized (its region server
# assigned hbase:meta), up to SECONDS reaching DEADLINE; else prints why and fails.
initialized() { # dir name pid deadline
  until grep -q "Master has completed initialization" "$1/logs/$2.log" 2>/dev/null; do
    kill -0 "$3" 2>/dev/null || { echo "the Kerberized HBase $2 exited"; return 1; }
    [ $SECONDS -lt "$4" ] || { echo "the Kerberized HBase $2 did not initialize within 300 s"; return 1; }
    sleep 1
  done
}

# One more Kerberized standalone HBase beside a --secure start's, with PROPS (name=value)
# over its settings; prints its pid and its api=native URL. Its user kills it when done;
# `stop` stops it with the rest if it still runs.
start_kerberized() { # name props...
  [ -f "$state" ] || { echo "HBase is not running: scripts/hbase.sh start --secure" >&2; return 3; }
  # shellcheck disable=SC1090
  . "$state"
  [ -n "${TALLROW_HBASE_NATIVE_KRB:-}" ] || { echo "HBase runs without --secure" >&2; return 3; }
  local name="$1" krb pid zk m
  shift
  [ ! -e "$TALLROW_HBASE_DIR/$name" ] || { echo "$name exists in $TALLROW_HBASE_DIR" >&2; return 64; }
  krb="$(start_kerberized_hbase "$TALLROW_HBASE_DIR" "${TALLROW_HBASE_CP#*:}" "$name" "$@")"
  read -r pid zk m <<<"$krb"
  # Not among the pids that say whether the cluster runs: its user stops it when done.
  echo "export TALLROW_HBASE_EXTRA_PIDS='${TALLROW_HBASE_EXTRA_PIDS:-} $pid'" >>"$state"
  # A failure here stops this one alone: the cluster beside it goes on.
  local why
  why="$(initialized "$TALLROW_HBASE_DIR" "$name" "$pid" $((SECONDS + 300)))" || {
    kill "$pid" 2>/dev/null
    echo "$why (its log: $TALLROW_HBASE_DIR/logs/$name.log)" >&2
    return 4
  }
  echo "$pid hbase://127.0.0.1:$zk?api=native"
}

# The Kerberized Thrift servers in front of the running HBase (scripts/secure.sh).
start_secure() { # dir classpath
  local dir="$1" cp="${2#*:}" rc=0
  kerberos_tools "$dir" || return 0
  start_kdc "$dir" || rc=$?
  [ $rc -eq 0 ] || { failed "$dir" "the KDC did not start" master.log; return 4; }
  local kdc_pid
  kdc_pid="$(cat "$dir/krb5/krb5kdc.pid")"
  make_certificates "$dir" || { failed "$dir" "no certificates" master.log; return 2; }
  local s1a s1c s2i h2 pids=("$kdc_pid") name port c
  s1a="$(free_port)" s1c="$(free_port)" s2i="$(free_port)" h2="$(free_port)"
  local -a servers=(
    "sasl1-auth:$s1a:org.apache.hadoop.hbase.thrift.ThriftServer:hbase.thrift.security.qop=auth"
    "sasl1-conf:$s1c:org.apache.hadoop.hbase.thrift.ThriftServer:hbase.thrift.security.qop=auth-conf"
    "sasl2-int:$s2i:org.apache.hadoop.hbase.thrift2.ThriftServer:hbase.thrift.security.qop=auth-int"
    "https2:$h2:org.apache.hadoop.hbase.thrift2.ThriftServer:hbase.regionserver.thrift.http=true hbase.thrift.ssl.enabled=true hbase.thrift.ssl.keystore.store=$dir/tls/server.p12 hbase.thrift.ssl.keystore.password=tallrow-test hbase.thrift.ssl.keystore.keypassword=tallrow-test hbase.thrift.ssl.keystore.type=PKCS12"
  )
  # With --hdfs, a Kerberized HDFS too, which the Kerberized HBase keeps its root on.
  local krb_hdfs= krb_hdfs_conf= extra=()
  if [ -n "$hdfs" ]; then
    TALLROW_HDFS_STATE=.hdfs-krb.env TALLROW_HDFS_KERBEROS="$dir/krb5" "$repo/scripts/hdfs.sh" start >"$dir/logs/krb-hdfs.out" 2>&1 ||
      { failed "$dir" "the Kerberized HDFS did not start" krb-hdfs.out; return 4; }
    # shellcheck disable=SC1091
    krb_hdfs="$(. "$repo/.hdfs-krb.env" && echo "$TALLROW_HDFS")"
    # shellcheck disable=SC1091
    krb_hdfs_conf="$(. "$repo/.hdfs-krb.env" && echo "$TALLROW_HDFS_DIR")/conf"
    extra=("hbase.rootdir=$krb_hdfs/hbase")
    echo "export TALLROW_HDFS_KRB='$krb_hdfs'" >>"$state"
    echo "export TALLROW_HDFS_KRB_CONF='$krb_hdfs_conf'" >>"$state"
  fi
  local krb krb_pid krb_zk krb_master
  krb="$(KRB_HDFS_CONF="${krb_hdfs_conf:+$krb_hdfs_conf/client-privacy}" start_kerberized_hbase "$dir" "$cp" kerberized-hbase "${extra[@]}")"
  read -r krb_pid krb_zk krb_master <<<"$krb"
  pids+=("$krb_pid")
  # One more, small (its root on the local disk), whose ZooKeeper refuses sessions that did
  # not authenticate by SASL: the clusters that require it of clients.
  local zkk zkk_pid zkk_zk _
  zkk="$(start_kerberized_hbase "$dir" "$cp" kerberized-zk-hbase \
    -Dzookeeper.enforce.auth.enabled=true -Dzookeeper.enforce.auth.schemes=sasl)"
  read -r zkk_pid zkk_zk _ <<<"$zkk"
  pids+=("$zkk_pid")
  local spec class extra
  for spec in "${servers[@]}"; do
    name="${spec%%:*}" spec="${spec#*:}" port="${spec%%:*}" spec="${spec#*:}"
    class="${spec%%:*}" extra="${spec#*:}"
    # shellcheck disable=SC2086
    c="$(secure_conf "$dir" "$name" $extra)"
    (cd "$dir" && exec java "${jdk_flags[@]}" -Xmx384m "-Djava.security.krb5.conf=$KRB5_CONFIG" \
      "-Dlog4j2.configurationFile=$c/log4j2.properties" "-Dhbase.log.dir=$dir/logs" -cp "$c:$cp" \
      "$class" -b 127.0.0.1 -p "$port" start) >"$dir/logs/$name.log" 2>&1 &
    pids+=($!)
  done
  sed -i "s|^export TALLROW_HBASE_PIDS='\(.*\)'|export TALLROW_HBASE_PIDS='\1 ${pids[*]}'|" "$state"
  cat >>"$state" <<EOF
export TALLROW_HBASE_SASL1_AUTH='hbase://localhost:$s1a?sasl=gssapi&qop=auth'
export TALLROW_HBASE_SASL1_CONF='hbase://localhost:$s1c?sasl=gssapi&qop=auth-conf'
export TALLROW_HBASE_SASL2_INT='hbase://localhost:$s2i?api=thrift2&sasl=gssapi&qop=auth-int'
export TALLROW_HBASE_HTTPS2='hbase://localhost:$h2?api=thrift2&transport=http&sasl=gssapi&tls=true&ca=$dir/tls/ca.pem'
export TALLROW_HBASE_NATIVE_KRB='hbase://127.0.0.1:$krb_zk?api=native&sasl=gssapi'
export TALLROW_HBASE_NATIVE_KRB_TLS='hbase://127.0.0.1:$krb_zk?api=native&sasl=gssapi&tls=true&ca=$dir/tls/ca.pem'
export TALLROW_HBASE_NATIVE_KRB_MASTER='localhost:$krb_master'
export TALLROW_HBASE_NATIVE_KRB_ZK_SASL='hbase://localhost:$zkk_zk?api=native&sasl=gssapi&zk_sasl=gssapi'
export TALLROW_HBASE_KRB_CONF='$dir/kerberized-hbase/conf'
export TALLROW_HBASE_CA='$dir/tls/ca.pem'
export TALLROW_HBASE_OTHER_CA='$dir/tls/other-ca.pem'
export TALLROW_KRB5_CLIENT_KEYTAB='$dir/krb5/client.keytab'
export KRB5_CONFIG='$KRB5_CONFIG'
export KRB5CCNAME='$KRB5CCNAME'
EOF
  # Listening means logged in: each server binds its port after its Kerberos login.
  local deadline=$((SECONDS + 300)) i
  for port in $s1a $s1c $s2i $h2; do
    until python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1).close()' "$port" 2>/dev/null; do
      for i in "${pids[@]}"; do
        kill -0 "$i" 2>/dev/null || { failed "$dir" "a secured Thrift server exited" master.log; return 4; }
      done
      [ $SECONDS -lt $deadline ] || { failed "$dir" "no secured Thrift server on port $port within 300 s" master.log; return 4; }
      sleep 1
    done
  done
  # The Kerberized cluster is up when its master has initialized (its region server
  # assigned hbase:meta).
  local why
  why="$(initialized "$dir" kerberized-hbase "$krb_pid" "$deadline")" ||
    { failed "$dir" "$why" kerberized-hbase.log; return 4; }
  why="$(initialized "$dir" kerberized-zk-hbase "$zkk_pid" "$deadline")" ||
    { failed "$dir" "$why" kerberized-zk-hbase.log; return 4; }
  echo "secured: realm $realm (KDC pid $kdc_pid), thrift1 SASL auth localhost:$s1a, auth-conf localhost:$s1c, thrift2 SASL auth-int localhost:$s2i, thrift2 HTTPS+SPNEGO localhost:$h2, native Kerberos 127.0.0.1:$krb_zk, and with SASL to ZooKeeper localhost:$zkk_zk"
}

case "${1:-}" in
  start)
    shift
    while [ $# -gt 0 ]; do
      case "$1" in
        --secure) secure=1 ;;
        --hdfs) hdfs=1 ;;
        --version)
          [ -n "${2:-}" ] || { echo "--version needs a release, e.g. --version 2.5.13-hadoop3" >&2; exit 64; }
          release="$2"
          shift
          ;;
        *) echo "usage: scripts/hbase.sh start [--secure] [--hdfs] [--version V]" >&2; exit 64 ;;
      esac
      shift
    done
    # The pinned release named is the pinned release.
    [ "$release" != "$(release='' wanted)" ] || release=
    start
    ;;
  stop)
    case "${2:-}" in
      "" | --now) stop ${2:+"$2"} ;;
      *)
        echo "usage: scripts/hbase.sh stop [--now]" >&2
        exit 64
        ;;
    esac
    ;;
  status)
    if running; then
      echo "HBase runs: thrift1 $TALLROW_HBASE_THRIFT1, thrift1 framed compact $TALLROW_HBASE_THRIFT1_FC, thrift2 $TALLROW_HBASE_THRIFT2, zookeeper $TALLROW_HBASE_ZK (pids $TALLROW_HBASE_PIDS, $TALLROW_HBASE_DIR)"
    else
      echo "HBase is not running"
      exit 3
    fi
    ;;
  env)
    running || { echo "HBase is not running" >&2; exit 3; }
    grep -v "_PIDS=" "$state"
    ;;
  classpath) classpath "${2:-}" ;;
  regionserver) restart RS "${2:-}" ;;
  master) restart MASTER "${2:-}" ;;
  graceful) graceful_regionserver "${2:-}" ;;
  kerberized)
    shift
    [ $# -ge 1 ] || { echo "usage: scripts/hbase.sh kerberized NAME [PROPERTY=VALUE...]" >&2; exit 64; }
    have_tools || exit 1
    start_kerberized "$@"
    ;;
  completebulkload | hfile)
    tool=org.apache.hadoop.hbase.tool.BulkLoadHFilesTool
    [ "$1" = hfile ] && tool=org.apache.hadoop.hbase.io.hfile.HFilePrettyPrinter
    shift
    running || { echo "HBase is not running: scripts/hbase.sh start" >&2; exit 3; }
    have_tools || exit 1
    # A tool run lives seconds: the C1 compiler alone and the serial collector halve its CPU
    # (3.4 to 1.9 CPU-s for a small table), which matters with a JVM per table.
    tool_flags=()
    for f in "${jdk_flags[@]}"; do [ "$f" = -XX:+UseG1GC ] || tool_flags+=("$f"); done
    # The printer resolves a bare path on HBase's root file system (HDFS with --hdfs): a
    # local file named by its path is handed over as a file: URI.
    if [ "$tool" = org.apache.hadoop.hbase.io.hfile.HFilePrettyPrinter ]; then
      args=()
      for a in "$@"; do
        if [ "${a#/}" != "$a" ] && [ -f "$a" ]; then a="file://$a"; fi
        args+=("$a")
      done
      set -- "${args[@]}"
    fi
    # TALLROW_HBASE_TOOL_CONF: another cluster's configuration directory (the Kerberized
    # one's, TALLROW_HBASE_KRB_CONF), in place of the plain cluster's; the tool then logs in
    # from the ticket cache (KRB5CCNAME), as any Kerberos client of HBase and HDFS does.
    tool_cp="$TALLROW_HBASE_CP"
    if [ -n "${TALLROW_HBASE_TOOL_CONF:-}" ]; then
      tool_cp="$TALLROW_HBASE_TOOL_CONF:${TALLROW_HBASE_CP#*:}"
      [ -z "${KRB5_CONFIG:-}" ] || tool_flags+=("-Djava.security.krb5.conf=$KRB5_CONFIG")
    fi
    exec java "${tool_flags[@]}" -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xmx512m \
      "-Dlog4j2.configurationFile=$TALLROW_HBASE_DIR/conf/log4j2.properties" \
      -cp "$tool_cp" "$tool" "$@"
    ;;
  java | chaos | describe | compact)
    what="$1"
    shift
    running || { echo "HBase is not running: scripts/hbase.sh start" >&2; exit 3; }
    have_tools || exit 1
    # The fault tool needs only HBase's client; the bench adds PerformanceEvaluation.
    profile=bench tool_heap=1g
    # The tools on the running release's classpath.
    [ "$TALLROW_HBASE_VERSION" = "$(release='' wanted)" ] || release="$TALLROW_HBASE_VERSION"
    [ "$what" != java ] && profile= tool_heap=512m
    tool_cp="$(classpath $profile)" || exit 2
    jar="$repo/tests/hbase/target/tallrow-hbase-1.jar"
    if [ ! -s "$jar" ] || [ -n "$(find "$repo/tests/hbase/src" "$repo/tests/hbase/pom.xml" -newer "$jar" -print -quit)" ]; then
      mvn -B -q -f "$repo/tests/hbase/pom.xml" package -DskipTests >&2 || exit 2
    fi
    [ "$what" = chaos ] && set -- dev.tallrow.faults.Chaos "$@"
    [ "$what" = describe ] && set -- dev.tallrow.Describe "$@"
    [ "$what" = compact ] && set -- dev.tallrow.Compact "$@"
    # The fault and admin tools wait on the master's procedures (splits, moves, compactions)
    # by polling at their client's pause: 20 ms in place of HBase's 100 ms backoff
    # (dev.tallrow.Cluster reads the property), as an operator's tool on a test cluster
    # may. A benchmark's client (`java`) keeps HBase's.
    pause=()
    [ "$what" = java ] || pause=(-Dtallrow.client.pause=20)
    exec java "${jdk_flags[@]}" "-Xmx$tool_heap" "-Dlog4j2.configurationFile=$TALLROW_HBASE_DIR/conf/log4j2.properties" \
      "${pause[@]}" -cp "$TALLROW_HBASE_DIR/conf:$jar:$tool_cp" "$@"
    ;;
  *)
    echo "usage: scripts/hbase.sh start [--secure] [--hdfs] [--version V]|stop [--now]|status|env|classpath [bench]|regionserver N|graceful N|master N|kerberized NAME [PROPERTY=VALUE...]|chaos ARGS...|describe TABLE...|compact TABLE...|completebulkload DIR TABLE|hfile ARGS...|java CLASS ARGS..." >&2
    exit 64
    ;;
esac
