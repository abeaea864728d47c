#!/usr/bin/env bash
# Regenerates src/idl/thrift1.rs and src/idl/thrift2.rs, the client and server code of HBase's
# two Thrift services (Hbase and THBaseService), from the Hbase.thrift and hbase.thrift that
# ship inside the hbase-thrift jar CI runs (tests/hbase/pom.xml), with the Thrift compiler
# matching the `thrift` crate (0.17; Debian's thrift-compiler). The IDLs are kept beside the
# code as src/idl/hbase1.thrift and src/idl/hbase2.thrift.
#
# Three edits to what the compiler writes, all about what a peer may send:
# - a list reader reserves room for at most 4 KiB of elements up front
#   (`crate::wire::capacity`), not for whatever count the list header claims, so a
#   request's memory follows the elements that actually arrive;
# - a union whose one field is unknown is a protocol error, where the compiler's code panics;
# - a call whose arguments cannot be read is answered as Thrift's Java processor answers it,
#   a PROTOCOL_ERROR with what was wrong (`crate::wire::answer_failed_call`).
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
unzip -q -o "$jar" org/apache/hadoop/hbase/thrift/Hbase.thrift org/apache/hadoop/hbase/thrift2/hbase.thrift -d "$tmp"
cp "$tmp/org/apache/hadoop/hbase/thrift/Hbase.thrift" src/idl/hbase1.thrift
cp "$tmp/org/apache/hadoop/hbase/thrift2/hbase.thrift" src/idl/hbase2.thrift
for n in 1 2; do
    # The compiler's warnings (on standard output) are about the IDL, not the code.
    thrift --gen rs -out "$tmp" "src/idl/hbase$n.thrift" >/dev/null
    sed -E -e 's/let mut val: Vec<(.+)> = Vec::with_capacity\(list_ident\.size as usize\);/let mut val: Vec<\1> = Vec::with_capacity(crate::wire::capacity::<\1>(list_ident.size));/' \
        -e 's/Ok\(ret\.expect\("return value should have been constructed"\)\)/ret.ok_or_else(|| thrift::Error::Protocol(ProtocolError::new(ProtocolErrorKind::InvalidData, "received an unknown field for a union")))/' \
        -e 's/thrift::server::handle_process_result\(/crate::wire::answer_failed_call(/' \
        "$tmp/hbase$n.rs" >"src/idl/thrift$n.rs"
    if grep -n 'with_capacity(list_ident.size\|return value should have been constructed\|handle_process_result' "src/idl/thrift$n.rs"; then
        echo "src/idl/thrift$n.rs: an edit did not apply" >&2
        exit 1
    fi
done
echo "src/idl/thrift1.rs and src/idl/thrift2.rs from HBase $version's Thrift IDLs"
