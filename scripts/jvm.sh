# Shared by scripts/hbase.sh and scripts/hdfs.sh (sourced, with $repo set): the JVM flags
# HBase's and Hadoop's daemons run with, free loopback ports, and the classpath of
# tests/hbase/pom.xml, which holds HBase and the Hadoop 3.3.5 it is built on (HDFS included).

# The flags bin/hbase passes on JDK 11 and later.
jdk_flags=(
  -Dorg.apache.hbase.thirdparty.io.netty.tryReflectionSetAccessible=true
  --add-modules jdk.unsupported
  --add-opens java.base/java.io=ALL-UNNAMED
  --add-opens java.base/java.nio=ALL-UNNAMED
  --add-opens java.base/sun.nio.ch=ALL-UNNAMED
  --add-opens java.base/java.lang=ALL-UNNAMED
  --add-opens java.base/jdk.internal.ref=ALL-UNNAMED
  --add-opens java.base/java.lang.reflect=ALL-UNNAMED
  --add-opens java.base/java.util=ALL-UNNAMED
  --add-opens java.base/java.util.concurrent=ALL-UNNAMED
  --add-exports java.base/jdk.internal.misc=ALL-UNNAMED
  --add-exports java.security.jgss/sun.security.krb5=ALL-UNNAMED
  --add-exports java.base/sun.net.dns=ALL-UNNAMED
  --add-exports java.base/sun.net.util=ALL-UNNAMED
  -Djava.net.preferIPv4Stack=true
  -Dzookeeper.admin.enableServer=false
  -XX:+UseG1GC
)

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# The HBase release to run where it is not the one tests/hbase/pom.xml pins (empty: the
# pinned one): set by `scripts/hbase.sh start --version V`, and read back from .hbase.env by
# the commands on a running instance.
release="${TALLROW_HBASE_RELEASE:-}"

# Maven's -D flags for $release. Maven Central serves hbase-thrift for a few releases of each
# line only: the Thrift servers run the line's served one (TALLROW_HBASE_THRIFT_RELEASE
# overrides it) on the release's jars, as the pinned 2.6.1-hadoop3 runs plain 2.6.1's. HBase's
# own ZSTD codec comes with the pinned line only.
release_flags() {
  [ -n "$release" ] || return 0
  local line="${release%%-*}"
  line="${line%.*}"
  echo "-Dhbase.version=$release"
  echo "-Dhbase.thrift.version=$(thrift_release)"
  [ "$line" = 2.6 ] || echo "-Dhbase.nozstd"
}

# The hbase-thrift release the Thrift servers of $release run.
thrift_release() {
  local line="${release%%-*}"
  line="${line%.*}"
  if [ -n "${TALLROW_HBASE_THRIFT_RELEASE:-}" ]; then
    echo "$TALLROW_HBASE_THRIFT_RELEASE"
    return
  fi
  case "$line" in
    2.4) echo 2.4.17 ;;
    2.5) echo 2.5.8 ;;
    2.6) echo 2.6.1 ;;
    *) echo "${release%-hadoop3}" ;;
  esac
}

# The runtime classpath of tests/hbase/pom.xml (at $release), resolved once into Maven's
# local repository. With PROFILE=bench it also holds HBase's PerformanceEvaluation and our
# native-client tools.
classpath() {
  local profile="${1:-}" out
  out="$repo/tests/hbase/target/classpath${profile:+-$profile}${release:+-$release}.txt"
  if [ ! -s "$out" ] || [ "$repo/tests/hbase/pom.xml" -nt "$out" ]; then
    mkdir -p "$repo/tests/hbase/target"
    echo "resolving HBase${release:+ $release} with Maven (the first time downloads about 240 MB to ~/.m2)" >&2
    # shellcheck disable=SC2046
    if ! mvn -B -q -f "$repo/tests/hbase/pom.xml" ${profile:+-P "$profile"} $(release_flags) \
      dependency:build-classpath -Dmdep.outputFile="$out" >"$out.log" 2>&1; then
      echo "Maven could not resolve HBase${release:+ $release}: $(unresolved "$out.log")" >&2
      rm -f "$out"
      return 2
    fi
    # Maven leaves an unchanged file as it was: mark it resolved now.
    touch "$out"
    [ -z "$release" ] || webapps "$out" || return 2
  fi
  cat "$out"
}

# Maven's reason in one line: the artifacts it could not have (the first three and how many
# more), or its first error.
unresolved() { # log
  local missing n
  missing="$(sed 's/\x1b\[[0-9;]*m//g' "$1" | grep -m1 -o 'could not be resolved: .*' | cut -d' ' -f5- | tr -d ',' )"
  if [ -n "$missing" ]; then
    n="$(echo "$missing" | wc -w)"
    echo "not served: $(echo "$missing" | cut -d' ' -f1-3 | sed 's/ /, /g')$([ "$n" -le 3 ] || echo " and $((n - 3)) more")"
  else
    sed 's/\x1b\[[0-9;]*m//g' "$1" | grep -m1 ERROR || tail -1 "$1"
  fi
}

# A region server starts its info server (the observer reads its /jmx) from the
# hbase-webapps/ folder of hbase-server's jar. The jars Maven Central serves for some releases
# (2.5.13-hadoop3, 2.6.4-hadoop3) lack it: the pinned release's folder, which only names the
# pages' classes, goes first on such a release's classpath.
webapps() { # classpath-file
  local jar pinned dir="$repo/tests/hbase/target/webapps-$release"
  jar="$(tr ':' '\n' <"$1" | grep -m1 '/hbase-server-[^/]*\.jar$')"
  if unzip -l "$jar" 'hbase-webapps/regionserver/*' >/dev/null 2>&1; then return 0; fi
  pinned="$(release='' classpath | tr ':' '\n' | grep -m1 '/hbase-server-[^/]*\.jar$')" || return
  rm -rf "$dir"
  unzip -q -o "$pinned" 'hbase-webapps/*' -d "$dir" || return
  echo "HBase $release's hbase-server jar has no hbase-webapps/: its region servers' info servers take $(basename "$pinned")'s" >&2
  printf '%s:%s' "$dir" "$(cat "$1")" >"$1.tmp" && mv "$1.tmp" "$1"
}

have_tools() {
  if ! command -v java >/dev/null 2>&1 || ! command -v mvn >/dev/null 2>&1; then
    echo "no Java or Maven on this machine: real HBase does not run (install OpenJDK 17 and Maven)"
    return 1
  fi
}

# all_alive PID...: whether every one of the processes runs.
all_alive() {
  local pid
  for pid in "$@"; do
    kill -0 "$pid" 2>/dev/null || return 1
  done
}

# reap PID: waits up to 30 s for the process to exit (after its SIGTERM), then kills it.
reap() {
  local i
  for i in $(seq 1 300); do
    kill -0 "$1" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -9 "$1" 2>/dev/null || true
}
