#!/usr/bin/env bash
# Regenerates src/idl/thrift2.rs, the client and server code of HBase's Thrift2 service
# (THBaseService), from the hbase.thrift that ships inside the hbase-thrift jar CI runs
# (tests/hbase/pom.xml), with the Thrift compiler matching the `thrift` crate (0.17;
# Debian's thrift-compiler). The IDL is kept beside the code as src/idl/hbase2.thrift.
set -euo pipefail
cd "$(dirname "$0")/.."

want=0.17.0
if ! command -v thrift >/dev/null || [ "$(thrift --version | awk '{print $3}')" != "$want" ]; then
    echo "needs the Thrift compiler $want (apt-get install thrift-compiler)" >&2
    exit 1
fi
version="$(grep -o '<hbase.thrift.version>[^<]*' tests/hbase/pom.xml | cut -d'>' -f2)"
scripts/hbase.sh classpath >/dev/null
jar="$(find ~/.m2/repository/org/apache/hbase/hbase-thrift/"$version" -name "hbase-thrift-$version.jar" | head -1)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
unzip -q -o "$jar" org/apache/hadoop/hbase/thrift2/hbase.thrift -d "$tmp"
cp "$tmp/org/apache/hadoop/hbase/thrift2/hbase.thrift" src/idl/hbase2.thrift
# Its warnings (on standard output) are about the IDL, not the code.
thrift --gen rs -out "$tmp" src/idl/hbase2.thrift >/dev/null
mv "$tmp/hbase2.rs" src/idl/thrift2.rs
echo "src/idl/thrift2.rs from HBase $version's Thrift2 IDL"
