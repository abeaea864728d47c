#!/usr/bin/env python3
"""A TCP proxy on loopback that holds each connection's bytes, both ways, for its first HOLD
seconds, then passes them on: a ZooKeeper stalled on its log's fsync, as a client meets it
while it opens. Standard library only.

    scripts/hold_proxy.py PORT TARGET_HOST:PORT HOLD_SECONDS

docs/testing.md replays the client's open against it.
"""

import socket, sys, threading, time

listen, target, hold = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
host, port = target.rsplit(":", 1)

def pump(a, b, start):
    time.sleep(max(0.0, start + hold - time.time()))
    try:
        while True:
            d = a.recv(65536)
            if not d:
                break
            b.sendall(d)
    except OSError:
        pass
    for s in (a, b):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

l = socket.socket()
l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.1", listen))
l.listen(64)
while True:
    c, _ = l.accept()
    s = socket.create_connection((host, int(port)))
    t = time.time()
    threading.Thread(target=pump, args=(c, s, t), daemon=True).start()
    threading.Thread(target=pump, args=(s, c, t), daemon=True).start()
