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

# The runtime classpath of tests/hbase/pom.xml, resolved once into Maven's local repository.
# With PROFILE=bench it also holds HBase's PerformanceEvaluation and our native-client tools.
classpath() {
  local profile="${1:-}" out="$repo/tests/hbase/target/classpath${1:+-$1}.txt"
  if [ ! -s "$out" ] || [ "$repo/tests/hbase/pom.xml" -nt "$out" ]; then
    mkdir -p "$repo/tests/hbase/target"
    echo "resolving HBase with Maven (the first time downloads about 240 MB to ~/.m2)" >&2
    if ! mvn -B -q -f "$repo/tests/hbase/pom.xml" ${profile:+-P "$profile"} \
      dependency:build-classpath -Dmdep.outputFile="$out" >"$out.log" 2>&1; then
      echo "Maven could not resolve HBase: $(grep -m1 ERROR "$out.log" || tail -1 "$out.log")" >&2
      rm -f "$out"
      return 2
    fi
    # Maven leaves an unchanged file as it was: mark it resolved now.
    touch "$out"
  fi
  cat "$out"
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
