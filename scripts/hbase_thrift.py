#!/usr/bin/env python3
"""Two calls to HBase's Thrift servers that scripts/hbase.sh needs, with the standard
library only (no venv).

    hbase_thrift.py HOST PORT thrift1|thrift1-fc|thrift2
    hbase_thrift.py HOST PORT namespace NAME

The first asks one real question and exits 0 when it is answered: thrift1 calls Hbase.getTableNames over buffered binary (HBase's defaults), thrift1-fc the
same over framed compact, thrift2 THBaseService.tableExists over buffered binary. An open
port is not enough: until the master has started, the call answers with an IOError, which
counts as not ready. The second creates namespace NAME through the Thrift2 server
(Thrift1 has no call for it); an existing namespace is fine.
"""

import socket
import struct
import sys


def varint(n):
    out = bytearray()
    while True:
        if n < 0x80:
            out.append(n)
            return bytes(out)
        out.append((n & 0x7F) | 0x80)
        n >>= 7


def binary_call(name, args):
    name = name.encode()
    return struct.pack(">iI", -2147418111, len(name)) + name + struct.pack(">i", 0) + args


def compact_call(name, args):
    name = name.encode()
    return b"\x82\x21\x00" + varint(len(name)) + name + args


def recv_exact(sock, n):
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return data


def create_namespace(host, port, name):
    name = name.encode()
    # createNamespace(1: TNamespaceDescriptor { 1: string name })
    desc = b"\x0b\x00\x01" + struct.pack(">i", len(name)) + name + b"\x00"
    request = binary_call("createNamespace", b"\x0c\x00\x01" + desc + b"\x00")
    with socket.create_connection((host, port), timeout=30) as sock:
        sock.sendall(request)
        version, length = struct.unpack(">iI", recv_exact(sock, 8))
        if version & 0xFF != 2:
            sys.exit(f"createNamespace {name.decode()}: not a reply (type {version & 0xFF})")
        recv_exact(sock, length + 4)
        ftype = recv_exact(sock, 1)[0]
        if ftype == 0:
            return
        # An exception: read what arrives and look for its class name.
        sock.settimeout(1)
        message = b""
        try:
            while b"Exception" not in message or len(message) < 200:
                chunk = sock.recv(4096)
                if not chunk:
                    break
                message += chunk
        except socket.timeout:
            pass
        if b"NamespaceExistException" not in message:
            text = message.decode(errors="replace").replace("\n", " ")
            sys.exit(f"createNamespace {name.decode()}: {text[:200]}")


def main():
    host, port, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    if mode == "namespace":
        create_namespace(host, port, sys.argv[4])
        return
    if mode == "thrift1":
        request = binary_call("getTableNames", b"\x00")
    elif mode == "thrift1-fc":
        body = compact_call("getTableNames", b"\x00")
        request = struct.pack(">i", len(body)) + body
    elif mode == "thrift2":
        qualifier = b"tallrow_ping"
        # tableExists(1: TTableName { 2: qualifier })
        table = b"\x0b\x00\x02" + struct.pack(">i", len(qualifier)) + qualifier + b"\x00"
        request = binary_call("tableExists", b"\x0c\x00\x01" + table + b"\x00")
    else:
        sys.exit(f"unknown mode {mode}")
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.sendall(request)
        if mode == "thrift1-fc":
            recv_exact(sock, 4)
            head = recv_exact(sock, 2)
            if head != b"\x82\x41":
                sys.exit(f"not a reply: {head.hex()}")
            while recv_exact(sock, 1)[0] & 0x80:  # seqid
                pass
            length, shift = 0, 0
            while True:
                b = recv_exact(sock, 1)[0]
                length |= (b & 0x7F) << shift
                shift += 7
                if not b & 0x80:
                    break
            recv_exact(sock, length)
            field = recv_exact(sock, 1)[0]
            # Field 0 (the result) in its long form: type 9 (list), then id 0.
            ok = field == 0x09
        else:
            version, length = struct.unpack(">iI", recv_exact(sock, 8))
            if version & 0xFF != 2:
                sys.exit(f"not a reply: type {version & 0xFF}")
            recv_exact(sock, length + 4)
            ftype, fid = struct.unpack(">bh", recv_exact(sock, 3))
            ok = fid == 0 and ftype != 0
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    try:
        main()
    except (OSError, ConnectionError) as e:
        sys.exit(f"no answer: {e}")
