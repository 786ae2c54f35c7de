"""Hostile DNS clients against the bridge's stub on 127.0.0.1:53, run as
the bridge's CMD (tests/integration/bridge-dns-hostile.sh).  After each
attack a normal A query for NAME must be answered: the same ID, NOERROR,
one A record in 198.18.0.0/15.  Prints "ok WHAT" or "bad WHAT: why", one
line each, and "done" last."""
import os
import select
import socket
import struct
import sys
import threading
import time

NAME = sys.argv[1]
STUB = ("127.0.0.1", 53)


def qname(name):
    return b"".join(bytes([len(p)]) + p.encode() for p in name.split(".")) + b"\0"


def query(qid, name=NAME, qtype=1, flags=0x0100, qd=1, an=0, ns=0, ar=0):
    return struct.pack(">HHHHHH", qid, flags, qd, an, ns, ar) + qname(name) + \
        struct.pack(">HH", qtype, 1)


def check_answer(msg, qid):
    """None when MSG answers query QID for NAME with a synthetic A."""
    if len(msg) < 12:
        return "short answer (%d bytes)" % len(msg)
    rid, flags, qd, an = struct.unpack(">HHHH", msg[:8])
    if rid != qid:
        return "ID %d, not %d" % (rid, qid)
    if not flags & 0x8000 or flags & 0xf:
        return "flags %#x" % flags
    if an != 1:
        return "%d answers" % an
    a = msg[-4:]
    if a[0] != 198 or a[1] & 0xfe != 18:
        return "address %s" % socket.inet_ntoa(a)
    return None


def normal(what, limit=3.0):
    """A normal UDP query, answered within LIMIT seconds.  Sent again each
    second, as a resolver does: a flood may have filled the stub's socket
    buffer, and UDP drops what does not fit."""
    qid = int.from_bytes(os.urandom(2), "big")
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    t0 = time.monotonic()
    why = "no answer within %.1f s" % limit
    try:
        while why and time.monotonic() - t0 < limit:
            s.sendto(query(qid), STUB)
            s.settimeout(min(1.0, max(0.05, limit - (time.monotonic() - t0))))
            try:
                why = check_answer(s.recv(4096), qid)
            except socket.timeout:
                pass
    except OSError as e:
        why = "no answer within %.1f s (%s)" % (limit, e)
    finally:
        s.close()
    took = time.monotonic() - t0
    print("%s %s (%.2f s)" % ("bad" if why else "ok", what, took) + (": " + why if why else ""),
          flush=True)


def udp(data):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.sendto(data, STUB)
    except OSError:
        pass
    s.close()


def tcp(data, hold=0.0):
    s = socket.create_connection(STUB, timeout=3)
    try:
        s.sendall(data)
        if hold:
            time.sleep(hold)
        s.settimeout(3)
        try:
            return s.recv(4096)
        except OSError:
            return b""
    finally:
        s.close()


def hdr(qid, flags=0x0100, qd=1, an=0, ns=0, ar=0):
    return struct.pack(">HHHHHH", qid, flags, qd, an, ns, ar)


# The TCP path itself answers a normal query.
qid = 4242
r = tcp(struct.pack(">H", len(query(qid))) + query(qid))
why = check_answer(r[2:], qid) if len(r) > 2 else "no answer"
print(("bad tcp: normal query: " + why) if why else "ok tcp: a normal query is answered",
      flush=True)
normal("start")

cases = [
    ("udp: zero-length datagram", lambda: udp(b"")),
    ("udp: truncated header", lambda: udp(b"\x12\x34\x01")),
    ("udp: header only", lambda: udp(hdr(7))),
    ("udp: qdcount 2", lambda: udp(hdr(8, qd=2) + qname(NAME) + b"\0\1\0\1" + qname(NAME) + b"\0\1\0\1")),
    ("udp: qdcount 65535, one question", lambda: udp(hdr(9, qd=65535) + qname(NAME) + b"\0\1\0\1")),
    ("udp: ancount 65535", lambda: udp(hdr(10, an=65535) + qname(NAME) + b"\0\1\0\1")),
    ("udp: a response, not a query", lambda: udp(query(11, flags=0x8180))),
    ("udp: compression pointer to itself", lambda: udp(hdr(12) + b"\xc0\x0c\0\1\0\1")),
    ("udp: compression pointer loop", lambda: udp(hdr(13) + b"\x01a\xc0\x0c\0\1\0\1")),
    ("udp: pointer past the end", lambda: udp(hdr(14) + b"\xc3\xff\0\1\0\1")),
    ("udp: label of 63 and 64", lambda: udp(hdr(15) + b"\x3f" + b"a" * 63 + b"\x40" + b"b" * 64 + b"\0\0\1\0\1")),
    ("udp: name of 300 bytes", lambda: udp(hdr(16) + (b"\x3f" + b"a" * 63) * 5 + b"\0\0\1\0\1")),
    ("udp: label running past the end", lambda: udp(hdr(17) + b"\x30abc")),
    ("udp: 512-byte garbage", lambda: udp(os.urandom(512))),
    ("udp: 64 KiB datagram", lambda: udp(query(18) + os.urandom(65507 - len(query(18))))),
    ("udp: 1000 garbage datagrams", lambda: [udp(os.urandom(1 + i % 600)) for i in range(1000)]),
    ("tcp: length 0", lambda: tcp(b"\0\0")),
    ("tcp: length larger than the data", lambda: tcp(b"\x01\x00" + query(19))),
    ("tcp: length 65535", lambda: tcp(b"\xff\xff" + query(20))),
    ("tcp: one byte of length", lambda: tcp(b"\x00")),
    ("tcp: garbage", lambda: tcp(os.urandom(700))),
    ("tcp: truncated header", lambda: tcp(b"\0\x03\x12\x34\x01")),
    ("tcp: compression loop", lambda: tcp(struct.pack(">H", 18) + hdr(21) + b"\xc0\x0c\0\1\0\1")),
]
for what, fn in cases:
    try:
        fn()
    except OSError as e:
        print("ok %s (the stub closed: %s)" % (what, e.__class__.__name__), flush=True)
    normal("after " + what)


# A slowloris: a length and one byte every 0.2 s for 4 s.  Meanwhile the
# stub must go on answering others.
def slowloris(stop):
    try:
        s = socket.create_connection(STUB, timeout=3)
        s.send(struct.pack(">H", len(query(22))))
        for b in query(22):
            if stop.is_set():
                break
            try:
                s.send(bytes([b]))
            except OSError:
                break
            time.sleep(0.2)
        s.close()
    except OSError:
        pass


stop = threading.Event()
t = threading.Thread(target=slowloris, args=(stop,))
t.start()
time.sleep(0.5)
normal("during a slowloris TCP client", limit=2.0)
stop.set()
t.join()
normal("after a slowloris TCP client")

# Many TCP connections at once, silent or sending half a length.  The
# stub takes one at a time and its backlog is 64: the rest wait for their
# SYN to be taken, all at once, for 3 s at most.
socks = []
for i in range(100):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setblocking(False)
    s.connect_ex(STUB)
    socks.append(s)
pending = list(socks)
end = time.monotonic() + 3
while pending and time.monotonic() < end:
    _, w, _ = select.select([], pending, [], max(0, end - time.monotonic()))
    pending = [s for s in pending if s not in w]
opened = 0
for i, s in enumerate(socks):
    if s not in pending and s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0:
        opened += 1
        if i % 2:
            try:
                s.send(b"\x00")
            except OSError:
                pass
print("ok opened %d TCP connections" % opened, flush=True)
normal("while 100 TCP connections are open", limit=5.0)
for s in socks:
    s.close()
normal("after 100 TCP connections")

try:
    comm = open("/proc/%d/comm" % os.getppid()).read().strip()
except OSError:
    comm = "?"
print(("ok" if comm == "postern-bridge" else "bad") + " the bridge is alive (%s)" % comm, flush=True)
print("done", flush=True)
