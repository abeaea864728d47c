#!/usr/bin/env bash
# A real HDFS on loopback: one NameNode and one DataNode of Hadoop 3.3.5, the release the
# pinned HBase (tests/hbase/pom.xml, 2.6.1-hadoop3) is built on, for HBase to keep its root
# directory on and for `tallrow load --backend hfile:hdfs://...` to write into.
#
#   scripts/hdfs.sh start    start HDFS (the daemons come from HBase's own classpath: nothing
#                            more is downloaded than scripts/hbase.sh fetches)
#   scripts/hdfs.sh status   say whether it runs, and where
#   scripts/hdfs.sh env      print the export lines of the running instance
#   scripts/hdfs.sh stop [--now]
#                            stop it and remove its directory (every file in it goes); with
#                            --now by SIGKILL
#   scripts/hdfs.sh ls|put|rm|mkdir|cat|stat|chmod ARGS...
#                            Hadoop's FsShell (`hdfs dfs -ls` and so on) against it
#
# The two daemons are what a cluster runs (`hdfs namenode`, `hdfs datanode`), each its own
# JVM with a capped heap, every address on 127.0.0.1, ports chosen free, one replica,
# permissions on (the NameNode's user, the one running this script, is the superuser; /tmp
# is open to every user, as on a cluster), and
# 32 MB blocks so that a DataNode in a small temporary directory can reserve space for the
# files HBase holds open. Ready means the DataNode checked in and the NameNode is out of
# safe mode with space to give.
#
# `start` writes .hdfs.env at the repository root (ignored by git) with:
#   TALLROW_HDFS       the hdfs:// URL of the NameNode
#   TALLROW_HDFS_DIR   the directory holding its configuration (conf/), metadata and blocks
# Exit codes: 0 done; 1 Java or Maven missing (one line says so); 2 HDFS failed to start (its
# logs are kept in tests/hbase/target/failed-start-hdfs).
#
# Kerberized, beside the plain one (scripts/hbase.sh start --secure starts it): with
# TALLROW_HDFS_KERBEROS naming the realm's directory (scripts/secure.sh's KDC: krb5.conf,
# hbase.keytab) and TALLROW_HDFS_STATE another state file, both daemons log in as
# hbase/localhost, the NameNode's RPC asks for privacy, block access tokens are on, and the
# DataNode's data transfer offers SASL at authentication, integrity and privacy (AES-CTR for
# privacy), so that each client picks its own (dfs.data.transfer.protection). Its ports are
# not privileged, as a test cluster's are (ignore.secure.ports.for.testing). conf/ then also
# holds client-LEVEL/ (core-site.xml and hdfs-site.xml for a client at each level).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
state="$repo/${TALLROW_HDFS_STATE:-.hdfs.env}"
krb="${TALLROW_HDFS_KERBEROS:-}"
realm=TALLROW.TEST
# shellcheck source=scripts/jvm.sh
. "$repo/scripts/jvm.sh"

running() {
  [ -f "$state" ] || return 1
  # shellcheck disable=SC1090
  . "$state"
  # shellcheck disable=SC2086
  all_alive $TALLROW_HDFS_PIDS
}

stop() {
  [ -f "$state" ] || return 0
  # shellcheck disable=SC1090
  . "$state"
  local pid sig=TERM
  [ "${1:-}" = --now ] && sig=KILL
  # The DataNode first, then the NameNode: each exits on SIGTERM within seconds.
  for pid in $TALLROW_HDFS_PIDS; do
    kill -s "$sig" "$pid" 2>/dev/null || true
    reap "$pid"
  done
  case "$TALLROW_HDFS_DIR" in
    */tallrow-hdfs.*) rm -rf "$TALLROW_HDFS_DIR" ;;
  esac
  rm -f "$state"
}

property() { printf '  <property><name>%s</name><value>%s</value></property>\n' "$1" "$2"; }

core_site() { # nn
  echo '<?xml version="1.0"?>'
  echo '<configuration>'
  property fs.defaultFS "hdfs://127.0.0.1:$1"
  if [ -n "$krb" ]; then
    property hadoop.security.authentication kerberos
    property hadoop.rpc.protection privacy
    # The web pages (the readiness check's /jmx) stay open: only RPC and data are secured.
    property hadoop.http.authentication.type simple
  fi
  echo '</configuration>'
}

# What every process that reaches the Kerberized HDFS needs to know of it.
kerberos_site() {
  property dfs.block.access.token.enable true
  property dfs.namenode.kerberos.principal "hbase/localhost@$realm"
  property dfs.datanode.kerberos.principal "hbase/localhost@$realm"
  property dfs.web.authentication.kerberos.principal "HTTP/localhost@$realm"
  property dfs.namenode.kerberos.internal.spnego.principal "HTTP/localhost@$realm"
}

# A client's configuration for the Kerberized HDFS at data-transfer protection LEVEL.
client_conf() { # nn level
  echo '<?xml version="1.0"?>'
  echo '<configuration>'
  kerberos_site
  property dfs.data.transfer.protection "$2"
  property dfs.replication 1
  echo '</configuration>'
}

hdfs_site() { # dir nn http
  echo '<?xml version="1.0"?>'
  echo '<configuration>'
  property dfs.namenode.name.dir "file://$1/name"
  property dfs.datanode.data.dir "file://$1/data"
  property hadoop.tmp.dir "$1/tmp"
  property dfs.namenode.rpc-address "127.0.0.1:$2"
  property dfs.namenode.http-address "127.0.0.1:$3"
  property dfs.namenode.secondary.http-address "127.0.0.1:0"
  property dfs.datanode.address "127.0.0.1:0"
  property dfs.datanode.http.address "127.0.0.1:0"
  property dfs.datanode.ipc.address "127.0.0.1:0"
  property dfs.datanode.hostname 127.0.0.1
  property dfs.namenode.datanode.registration.ip-hostname-check false
  property dfs.replication 1
  property dfs.blocksize 33554432
  property dfs.permissions.enabled true
  property dfs.namenode.safemode.extension 0
  property dfs.heartbeat.interval 1
  if [ -n "$krb" ]; then
    kerberos_site
    property dfs.namenode.keytab.file "$krb/hbase.keytab"
    property dfs.datanode.keytab.file "$krb/hbase.keytab"
    property dfs.web.authentication.kerberos.keytab "$krb/hbase.keytab"
    property dfs.data.transfer.protection authentication,integrity,privacy
    property dfs.encrypt.data.transfer.cipher.suites AES/CTR/NoPadding
    property ignore.secure.ports.for.testing true
  fi
  echo '</configuration>'
}

log4j() {
  cat <<'EOF'
status = warn
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{ISO8601} %-5p [%t] tid=%tid %c{2}: %m%n
rootLogger = WARN,console
logger.hdfs.name = org.apache.hadoop.hdfs.server
logger.hdfs.level = INFO
logger.blocks.name = org.apache.hadoop.hdfs.server.datanode.DataNode.clienttrace
logger.blocks.level = WARN
logger.state.name = org.apache.hadoop.hdfs.StateChange
logger.state.level = WARN
logger.audit.name = org.apache.hadoop.hdfs.server.namenode.FSNamesystem.audit
logger.audit.level = WARN
logger.native.name = org.apache.hadoop.util.NativeCodeLoader
logger.native.level = ERROR
# Each data-transfer SASL handshake's protection, as the DataNode negotiated it (the
# Kerberized HDFS's tests read it).
logger.sasl.name = org.apache.hadoop.hdfs.protocol.datatransfer.sasl.DataTransferSaslUtil
logger.sasl.level = DEBUG
EOF
}

# Keeps a failed start's logs, says which process in one line plus the log's end, stops.
failed() { # dir why log
  local kept="$repo/tests/hbase/target/failed-start-hdfs"
  rm -rf "$kept"
  mkdir -p "$kept"
  cp -r "$1/logs/." "$kept/" 2>/dev/null || true
  echo "HDFS did not start: $2 (logs kept in $kept)" >&2
  tail -n 5 "$kept/$3" >&2 || true
  stop
  rm -rf "$1"
  return 2
}

# True once the NameNode reports a live DataNode, is out of safe mode and has space.
ready() { # http
  python3 - "$1" <<'PY' 2>/dev/null
import json, sys, urllib.request
u = "http://127.0.0.1:%s/jmx?qry=Hadoop:service=NameNode,name=FSNamesystemState" % sys.argv[1]
b = json.load(urllib.request.urlopen(u, timeout=2))["beans"][0]
ok = b["NumLiveDataNodes"] >= 1 and b["FSState"] == "Operational" and b["CapacityRemaining"] > 0
sys.exit(0 if ok else 1)
PY
}

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
  if running; then
    echo "HDFS already runs: $TALLROW_HDFS"
    return 0
  fi
  stop
  have_tools || return 1
  local cp dir nn http pids=() began=$SECONDS
  cp="$(classpath)" || return 2
  dir="$(mktemp -d -t tallrow-hdfs.XXXXXX)"
  mkdir -p "$dir/conf" "$dir/logs"
  nn="$(free_port)" http="$(free_port)"
  core_site "$nn" >"$dir/conf/core-site.xml"
  hdfs_site "$dir" "$nn" "$http" >"$dir/conf/hdfs-site.xml"
  local level
  if [ -n "$krb" ]; then
    for level in authentication integrity privacy; do
      mkdir -p "$dir/conf/client-$level"
      cp "$dir/conf/core-site.xml" "$dir/conf/client-$level/"
      client_conf "$nn" "$level" >"$dir/conf/client-$level/hdfs-site.xml"
    done
  fi
  log4j >"$dir/conf/log4j2.properties"
  # The web applications both daemons serve (the NameNode's /jmx, the DataNode's internal
  # server): Hadoop's distribution puts these on the classpath; its jar does not hold them.
  local app
  for app in hdfs datanode; do
    mkdir -p "$dir/conf/webapps/$app/WEB-INF"
    echo '<web-app version="2.4" xmlns="http://java.sun.com/xml/ns/j2ee"></web-app>' \
      >"$dir/conf/webapps/$app/WEB-INF/web.xml"
  done
  mkdir -p "$dir/conf/webapps/static"
  local java=(java "${jdk_flags[@]}" "-Dlog4j2.configurationFile=$dir/conf/log4j2.properties"
    "-Dhadoop.log.dir=$dir/logs" -cp "$dir/conf:$cp")
  [ -z "$krb" ] || java+=("-Djava.security.krb5.conf=$krb/krb5.conf")

  if ! (cd "$dir" && "${java[@]}" -Xmx256m -XX:TieredStopAtLevel=1 \
    org.apache.hadoop.hdfs.server.namenode.NameNode -format -nonInteractive) \
    >"$dir/logs/namenode-format.log" 2>&1; then
    failed "$dir" "the NameNode could not format $dir/name" namenode-format.log
    return 2
  fi
  (cd "$dir" && exec "${java[@]}" -Xmx384m org.apache.hadoop.hdfs.server.namenode.NameNode) \
    >"$dir/logs/namenode.log" 2>&1 &
  pids+=($!)
  (cd "$dir" && exec "${java[@]}" -Xmx256m org.apache.hadoop.hdfs.server.datanode.DataNode) \
    >"$dir/logs/datanode.log" 2>&1 &
  pids+=($!)
  # The DataNode first in the list: stop takes it down before the NameNode.
  cat >"$state" <<EOF
export TALLROW_HDFS='hdfs://127.0.0.1:$nn'
export TALLROW_HDFS_DIR='$dir'
export TALLROW_HDFS_PIDS='${pids[1]} ${pids[0]}'
EOF
  local deadline=$((SECONDS + 300)) logs=(namenode.log datanode.log) i
  until ready "$http"; do
    for i in 0 1; do
      if ! kill -0 "${pids[$i]}" 2>/dev/null; then
        failed "$dir" "the process logging to ${logs[$i]} exited" "${logs[$i]}"
        return 2
      fi
    done
    if [ $SECONDS -ge $deadline ]; then
      failed "$dir" "no live DataNode within 300 s" namenode.log
      return 2
    fi
    sleep 0.5
  done
  # What a cluster has: a /tmp every user may write into (and remove only their own from).
  # Kerberized, the superuser is the NameNode's principal: its ticket makes /tmp.
  if [ -n "$krb" ]; then
    export KRB5CCNAME="FILE:$dir/hbase.ccache"
    KRB5_CONFIG="$krb/krb5.conf" kinit -kt "$krb/hbase.keytab" "hbase/localhost@$realm" >"$dir/logs/tmp.log" 2>&1 ||
      { failed "$dir" "no ticket for hbase/localhost" tmp.log; return 2; }
  fi
  if ! { shell -mkdir -p /tmp && shell -chmod 1777 /tmp; } >>"$dir/logs/tmp.log" 2>&1; then
    failed "$dir" "no /tmp in HDFS" tmp.log
    return 2
  fi
  echo "HDFS 3.3.5 on loopback in $((SECONDS - began))s: hdfs://127.0.0.1:$nn (logs in $dir/logs)"
}

# Hadoop's FsShell against the running HDFS, as its own user unless HADOOP_USER_NAME says.
shell() { # -ls|-put|... ARGS...
  running || { echo "HDFS is not running: scripts/hdfs.sh start" >&2; return 3; }
  have_tools || return 1
  local cp tool_flags=() f
  cp="$(classpath)" || return 2
  for f in "${jdk_flags[@]}"; do [ "$f" = -XX:+UseG1GC ] || tool_flags+=("$f"); done
  [ -z "$krb" ] || tool_flags+=("-Djava.security.krb5.conf=$krb/krb5.conf")
  java "${tool_flags[@]}" -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xmx256m \
    "-Dlog4j2.configurationFile=$TALLROW_HDFS_DIR/conf/log4j2.properties" \
    -cp "$TALLROW_HDFS_DIR/conf:$cp" org.apache.hadoop.fs.FsShell "$@"
}

case "${1:-}" in
  start) start ;;
  stop) stop "${2:-}" ;;
  status)
    if running; then
      echo "HDFS runs: $TALLROW_HDFS (pids $TALLROW_HDFS_PIDS, $TALLROW_HDFS_DIR)"
    else
      echo "HDFS is not running"
      exit 3
    fi
    ;;
  env)
    running || { echo "HDFS is not running" >&2; exit 3; }
    grep -v TALLROW_HDFS_PIDS "$state"
    ;;
  ls | put | rm | mkdir | cat | stat | chmod)
    cmd="-$1"
    shift
    shell "$cmd" "$@"
    ;;
  *)
    echo "usage: scripts/hdfs.sh start|stop|status|env|ls|put|rm|mkdir|cat|stat|chmod ARGS..." >&2
    exit 64
    ;;
esac
