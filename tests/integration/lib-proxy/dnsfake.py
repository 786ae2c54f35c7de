#!/usr/bin/env python3
"""A hostile DNS server for proxy-dns-hostile.sh (python3 standard library).

dnsfake.py ADDR LOGFILE: answer UDP and TCP queries on ADDR:53, each name
its own way (A queries; any other type gets an empty NOERROR answer):

  slow.test      A 10.200.1.2, but only after 1 second
  slowflood.test the same (a second slow name, not in the proxy's cache)
  tc.test        over UDP an empty answer with the TC bit; over TCP A 10.200.1.2
  tcdead.test    over UDP TC; over TCP the connection is closed unanswered
  garbage.test   the query's ID and the QR bit, then random bytes
  noise.test     random bytes, with a random ID
  loop.test      an answer whose name is a compression pointer to itself
  other.test     a well-formed answer to another question (evil.test)
  short.test     an answer record cut off in the middle of its data
  fine.test      A 10.200.1.2, at once
  many.test      20 A records in this order: 10.200.1.2, 10.200.3.1-18,
                 10.200.4.20 (for proxy-many-addrs.sh)
  self.test      the same, with 127.0.0.1 as the 20th
  fine20.test    the same, with 10.200.4.21 as the 20th
  toomany.test   71 A records, 10.200.1.2 then 10.200.5.1-70 (over UDP
                 the TC bit, over TCP the answer)

anything else: NXDOMAIN.  Every query is logged as "PROTO NAME" lines.
"""
import os
import random
import socket
import struct
import sys
import threading
import time

ADDR, LOG = sys.argv[1], sys.argv[2]
UP = socket.inet_aton("10.200.1.2")
log_lock = threading.Lock()


def log(proto, name):
    with log_lock, open(LOG, "a") as f:
        f.write("%s %s\n" % (proto, name))


def parse_query(q):
    """(id, name, qtype, question bytes) or None."""
    if len(q) < 12:
        return None
    qid = struct.unpack("!H", q[:2])[0]
    off, labels = 12, []
    while off < len(q):
        n = q[off]
        if n == 0:
            off += 1
            break
        labels.append(q[off + 1:off + 1 + n].decode("ascii", "replace"))
        off += 1 + n
    if off + 4 > len(q):
        return None
    qtype = struct.unpack("!H", q[off:off + 2])[0]
    return qid, ".".join(labels).lower(), qtype, q[12:off + 4]


def qname(name):
    out = b""
    for label in name.split("."):
        out += bytes([len(label)]) + label.encode()
    return out + b"\0"


def header(qid, flags, an, rcode=0):
    return struct.pack("!HHHHHH", qid, 0x8180 | flags | rcode, 1, an, 0, 0)


def a_record(addr, name_ref=b"\xc0\x0c"):
    return name_ref + struct.pack("!HHIH", 1, 1, 30, 4) + addr


def many(last):
    """10.200.1.2, 10.200.3.1-18, then LAST: 20 addresses, in order."""
    return [UP] + [bytes([10, 200, 3, i]) for i in range(1, 19)] + \
        [socket.inet_aton(last)]


MANY = {
    "many.test": many("10.200.4.20"),
    "self.test": many("127.0.0.1"),
    "fine20.test": many("10.200.4.21"),
    "toomany.test": [UP] + [bytes([10, 200, 5, i]) for i in range(1, 71)],
}


def answer(proto, q):
    """The reply to query Q over PROTO, None for no reply, or "close"."""
    p = parse_query(q)
    if p is None:
        return None
    qid, name, qtype, question = p
    log(proto, name)
    if name in ("slow.test", "slowflood.test"):
        time.sleep(1.0)
    if qtype != 1 and name.endswith(".test"):
        return header(qid, 0, 0) + question
    if name in MANY:
        addrs = MANY[name]
        r = header(qid, 0, len(addrs)) + question + b"".join(a_record(a) for a in addrs)
        if proto == "udp" and len(r) > 512:
            return header(qid, 0x0200, 0) + question
        return r
    if name in ("slow.test", "slowflood.test", "fine.test"):
        return header(qid, 0, 1) + question + a_record(UP)
    if name in ("tc.test", "tcdead.test"):
        if proto == "udp":
            return header(qid, 0x0200, 0) + question
        if name == "tcdead.test":
            return "close"
        return header(qid, 0, 1) + question + a_record(UP)
    if name == "garbage.test":
        return struct.pack("!HH", qid, 0x8180) + os.urandom(60)
    if name == "noise.test":
        return os.urandom(72)
    if name == "loop.test":
        # The answer's name points at itself (offset of the answer).
        at = 12 + len(question)
        ref = struct.pack("!H", 0xC000 | at)
        return header(qid, 0, 1) + question + a_record(UP, ref)
    if name == "other.test":
        q2 = qname("evil.test") + struct.pack("!HH", 1, 1)
        return header(qid, 0, 1) + q2 + a_record(UP)
    if name == "short.test":
        return (header(qid, 0, 1) + question + a_record(UP))[:-2]
    return header(qid, 0, 0, 3) + question


def udp_loop(s):
    while True:
        q, peer = s.recvfrom(4096)

        def reply(q=q, peer=peer):
            r = answer("udp", q)
            if isinstance(r, bytes):
                s.sendto(r, peer)
        threading.Thread(target=reply, daemon=True).start()


def tcp_conn(c):
    with c:
        buf = b""
        while True:
            while len(buf) < 2 or len(buf) < 2 + struct.unpack("!H", buf[:2])[0]:
                d = c.recv(4096)
                if not d:
                    return
                buf += d
            n = struct.unpack("!H", buf[:2])[0]
            q, buf = buf[2:2 + n], buf[2 + n:]
            r = answer("tcp", q)
            if r == "close":
                return
            if isinstance(r, bytes):
                c.sendall(struct.pack("!H", len(r)) + r)


def tcp_loop(s):
    while True:
        c, _ = s.accept()
        threading.Thread(target=tcp_conn, args=(c,), daemon=True).start()


u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.bind((ADDR, 53))
t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
t.bind((ADDR, 53))
t.listen(16)
random.seed()
threading.Thread(target=tcp_loop, args=(t,), daemon=True).start()
open(LOG, "a").close()
print("ready", flush=True)
udp_loop(u)
