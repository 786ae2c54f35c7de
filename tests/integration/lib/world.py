#!/usr/bin/env python3
"""Servers and small tools for postern's integration-test world.

world.sh runs this file; nothing here is part of postern.  Sub-commands:

  serve   the upstream servers (HTTP, HTTPS, TCP echo) in the "up" namespace
  wait    wait until a ready file exists, DNS answers, sockets listen
  dns     ask one DNS question over UDP and print the answer (NAME "-":
          read "NAME TYPE" questions from stdin, one answer line each)
  jq      select JSON lines from a log file (the upstream log, the audit log)
  pattern write or hash the deterministic byte pattern /bytes/N serves
  watchdog  stop a scenario that runs longer than WORLD_TIMEOUT

Only the standard library is used.  The servers are deliberately lenient in
what they accept (they are the far side the proxy talks to, not the thing
under test) but never trust a length they read: every read is capped.
"""

import argparse
import hashlib
import json
import os
import re
import select
import signal
import socket
import struct
import sys
import threading
import time

# The /bytes/N pattern: bytes 0..255 repeated.  64 KiB is a whole number of
# repetitions, so any slice of the stream can be sent from this one block.
PATTERN_BLOCK = bytes(range(256)) * 256

MAX_HEAD = 1 << 20          # a request head larger than this gets 431
MAX_LINE = 64 << 10         # one chunk-size or trailer line
MAX_BYTES = 1 << 40         # /bytes/N and /chunked/N upper bound


def pattern_iter(n):
    """Yield the first n bytes of the pattern in blocks of at most 64 KiB."""
    left = n
    while left > 0:
        take = min(left, len(PATTERN_BLOCK))
        yield PATTERN_BLOCK[:take]
        left -= take


def parse_hostport(text):
    """'1.2.3.4:80' or '[fd00::1]:80' -> (family, host, port)."""
    m = re.fullmatch(r"\[([0-9A-Fa-f:.]+)\]:([0-9]{1,5})", text)
    if m:
        return socket.AF_INET6, m.group(1), int(m.group(2))
    m = re.fullmatch(r"([0-9.]+):([0-9]{1,5})", text)
    if m:
        return socket.AF_INET, m.group(1), int(m.group(2))
    raise ValueError("bad address %r (want A.B.C.D:PORT or [V6]:PORT)" % text)


def fmt_addr(sa):
    if ":" in sa[0]:
        return "[%s]:%d" % (sa[0], sa[1])
    return "%s:%d" % (sa[0], sa[1])


# ---------------------------------------------------------------- logging

class JsonLog:
    """Append-only JSON-lines log shared by every server thread."""

    def __init__(self, path):
        self.lock = threading.Lock()
        self.f = open(path, "a", encoding="utf-8")

    def write(self, **fields):
        fields["time"] = round(time.time(), 6)
        line = json.dumps(fields, sort_keys=False, ensure_ascii=True)
        with self.lock:
            self.f.write(line + "\n")
            self.f.flush()


class Counter:
    def __init__(self):
        self.lock = threading.Lock()
        self.n = 0

    def next(self):
        with self.lock:
            self.n += 1
            return self.n


# ---------------------------------------------------------------- reading

class PeerClosed(Exception):
    pass


class Reader:
    """Buffered reads from a socket with hard caps on every line."""

    def __init__(self, sock):
        self.sock = sock
        self.buf = b""
        self.nread = 0

    def fill(self):
        data = self.sock.recv(65536)
        if not data:
            raise PeerClosed()
        self.nread += len(data)
        self.buf += data

    def read_head(self):
        """Return the raw request head including its terminating blank line,
        or None when the peer closed cleanly before sending anything.  A
        bare-LF terminated head is accepted so that a proxy bug that lets
        one through is seen in the log rather than hanging the test."""
        while True:
            i = self.buf.find(b"\r\n\r\n")
            j = self.buf.find(b"\n\n")
            ends = [e for e in ((i, 4), (j, 2)) if e[0] >= 0]
            if ends:
                pos, ln = min(ends)
                head = self.buf[:pos + ln]
                self.buf = self.buf[pos + ln:]
                return head
            if len(self.buf) > MAX_HEAD:
                raise ValueError("head too large")
            try:
                self.fill()
            except PeerClosed:
                if not self.buf:
                    return None
                raise

    def read_line(self):
        while True:
            i = self.buf.find(b"\n")
            if i >= 0:
                line = self.buf[:i + 1]
                self.buf = self.buf[i + 1:]
                return line
            if len(self.buf) > MAX_LINE:
                raise ValueError("line too long")
            self.fill()

    def read_exact_into(self, n, sink):
        """Feed exactly n bytes to sink(bytes) without holding them all."""
        while n > 0:
            if not self.buf:
                self.fill()
            take = self.buf[:n]
            self.buf = self.buf[len(take):]
            sink(take)
            n -= len(take)


def parse_head(head):
    """Split a raw head into (request_line, [(name, value)], version)."""
    text = head.decode("latin-1")
    lines = re.split(r"\r?\n", text)
    reqline = lines[0]
    headers = []
    for line in lines[1:]:
        if line == "":
            continue
        name, sep, value = line.partition(":")
        headers.append((name, value.strip(" \t") if sep else None))
    parts = reqline.split(" ")
    version = parts[2] if len(parts) == 3 else ""
    return reqline, headers, version


def header_values(headers, name):
    return [v for (n, v) in headers if n.strip().lower() == name and v is not None]


# ---------------------------------------------------------------- HTTP

class HttpConn:
    """One client connection to the echo HTTP(S) server."""

    def __init__(self, srv, sock, peer, listen, conn_no, sni=None, tls=False):
        self.srv = srv
        self.sock = sock
        self.peer = peer
        self.listen = listen
        self.conn_no = conn_no
        self.sni = sni
        self.tls = tls
        self.rd = Reader(sock)
        self.nreq = 0
        self.sent = 0

    def send(self, data):
        self.sock.sendall(data)
        self.sent += len(data)

    def respond(self, status, reason, body, extra=(), close=False, head_only=False,
                length=None):
        hdrs = [
            "HTTP/1.1 %d %s" % (status, reason),
            "Content-Type: text/plain",
            "X-Conn: %d" % self.conn_no,
            "X-Request: %d" % self.nreq,
            "X-Listener: %s" % self.listen,
        ]
        if self.tls:
            hdrs.append("X-Sni: %s" % (self.sni or "-"))
        hdrs.extend(extra)
        if length is None:
            length = len(body)
        hdrs.append("Content-Length: %d" % length)
        hdrs.append("Connection: %s" % ("close" if close else "keep-alive"))
        out = ("\r\n".join(hdrs) + "\r\n\r\n").encode("latin-1")
        if not head_only and isinstance(body, (bytes, bytearray)):
            out += body
        self.send(out)

    def read_body(self, headers):
        """Consume the request body (RFC 9112 §6: chunked wins, else
        Content-Length, else none) and return (length, sha256 hex, mode)."""
        h = hashlib.sha256()
        total = [0]

        def sink(b):
            h.update(b)
            total[0] += len(b)

        te = ",".join(header_values(headers, "transfer-encoding")).lower()
        cl = header_values(headers, "content-length")
        if "chunked" in te:
            while True:
                line = self.rd.read_line()
                size_txt = line.split(b";", 1)[0].strip()
                if not re.fullmatch(rb"[0-9A-Fa-f]{1,15}", size_txt):
                    raise ValueError("bad chunk size %r" % size_txt[:40])
                size = int(size_txt, 16)
                if size == 0:
                    while self.rd.read_line().strip(b"\r\n") != b"":
                        pass
                    break
                self.rd.read_exact_into(size, sink)
                if self.rd.read_line().strip(b"\r\n") != b"":
                    raise ValueError("chunk not followed by CRLF")
            mode = "chunked"
        elif cl:
            if not re.fullmatch(r"[0-9]{1,15}", cl[0]):
                raise ValueError("bad content-length %r" % cl[0][:40])
            self.rd.read_exact_into(int(cl[0]), sink)
            mode = "length"
        else:
            mode = "none"
        return total[0], h.hexdigest(), mode

    def run(self):
        try:
            while self.serve_one():
                pass
        except (PeerClosed, ConnectionError, OSError, ValueError) as e:
            self.srv.log.write(event="error", kind=self.kind(), conn=self.conn_no,
                               listen=self.listen, peer=self.peer, error=str(e)[:200])
        finally:
            self.srv.log.write(event="close", kind=self.kind(), conn=self.conn_no,
                               listen=self.listen, peer=self.peer, requests=self.nreq,
                               bytes_in=self.rd.nread, bytes_out=self.sent)
            try:
                self.sock.close()
            except OSError:
                pass

    def kind(self):
        return "https" if self.tls else "http"

    def serve_one(self):
        try:
            head = self.rd.read_head()
        except ValueError:
            self.nreq += 1
            self.respond(431, "Request Header Fields Too Large", b"too large\n", close=True)
            return False
        if head is None:
            return False
        self.nreq += 1
        reqline, headers, version = parse_head(head)
        parts = reqline.split(" ")
        method = parts[0] if parts else ""
        target = parts[1] if len(parts) > 1 else ""
        # RFC 9110 §10.1.1: a client that sent "Expect: 100-continue" waits
        # for this interim answer before it sends the body (curl 7.88 waits
        # a whole second otherwise).
        expect = ",".join(header_values(headers, "expect")).lower()
        continued = "100-continue" in expect and version == "HTTP/1.1"
        if continued:
            self.send(b"HTTP/1.1 100 Continue\r\n\r\n")
        try:
            blen, bsha, bmode = self.read_body(headers)
        except ValueError as e:
            # Say what was wrong, so that a scenario whose proxy forwarded a
            # malformed body sees it in the answer as well as in the log.
            self.srv.log.write(event="request", kind=self.kind(), conn=self.conn_no,
                               req=self.nreq, listen=self.listen, peer=self.peer,
                               request_line=reqline, head=head.decode("latin-1"),
                               bad_body=str(e)[:200])
            self.respond(400, "Bad Request", ("bad body: %s\n" % e).encode("latin-1",
                         "replace"), close=True)
            return False
        rec = dict(event="request", kind=self.kind(), conn=self.conn_no, req=self.nreq,
                   listen=self.listen, peer=self.peer, request_line=reqline,
                   method=method, target=target, version=version,
                   headers=[[n, v] for (n, v) in headers],
                   head=head.decode("latin-1"), body_length=blen, body_sha256=bsha,
                   body_mode=bmode, continued=continued)
        if self.tls:
            rec["sni"] = self.sni
        host = header_values(headers, "host")
        rec["host"] = host[0] if host else None
        self.srv.log.write(**rec)

        conn_tokens = ",".join(header_values(headers, "connection")).lower()
        if version == "HTTP/1.0":
            close = "keep-alive" not in conn_tokens
        else:
            close = "close" in conn_tokens
        head_only = method == "HEAD"

        # Only the path decides the route; an absolute-form target (which a
        # proxy should have turned into origin-form) is routed by its path.
        path = target
        m = re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://[^/]*(/.*)?$", path)
        if m:
            path = m.group(1) or "/"
        path = path.split("?", 1)[0]

        echo = (("sni=%s\n" % (self.sni or "-")).encode("latin-1") if self.tls else b"")
        echo += head + ("body-length=%d\nbody-sha256=%s\n" % (blen, bsha)).encode()
        info = ["X-Body-Length: %d" % blen, "X-Body-Sha256: %s" % bsha]

        m = re.fullmatch(r"/bytes/([0-9]{1,13})", path)
        if m and int(m.group(1)) <= MAX_BYTES:
            n = int(m.group(1))
            self.respond(200, "OK", None, info, close, head_only=True, length=n)
            if not head_only:
                for blk in pattern_iter(n):
                    self.send(blk)
            return not close
        m = re.fullmatch(r"/chunked(?:/([0-9]{1,13}))?", path)
        if m:
            self.send_chunked(m.group(1), info, close, head_only)
            return not close
        m = re.fullmatch(r"/status/([1-5][0-9][0-9])", path)
        if m:
            code = int(m.group(1))
            if code < 200 or code in (204, 304):
                # RFC 9110 §15.2, §15.3.5, §15.4.5: these carry no body.
                self.respond(code, "Status", b"", info, close, head_only=True, length=0)
            else:
                self.respond(code, "Status", echo, info, close, head_only)
            return not close
        m = re.fullmatch(r"/delay/([0-9]{1,4}(?:\.[0-9]{1,3})?)", path)
        if m:
            time.sleep(min(float(m.group(1)), 3600.0))
            self.respond(200, "OK", echo, info, close, head_only)
            return not close
        if path == "/close":
            self.respond(200, "OK", echo, info, True, head_only)
            return False
        if path in ("/upgrade", "/upgrade/slow") and header_values(headers, "upgrade"):
            proto = header_values(headers, "upgrade")[0]
            if path == "/upgrade/slow":
                # The 101 after 1.5 s: time for a reload to land between
                # the request and the switch (reload-address.sh).
                time.sleep(1.5)
            out = ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: %s\r\n"
                   "Connection: Upgrade\r\nX-Conn: %d\r\n\r\n" % (proto, self.conn_no))
            self.send(out.encode("latin-1"))
            # After the switch the connection is a raw byte echo (what is
            # already buffered first), until the client half-closes.
            if self.rd.buf:
                self.send(self.rd.buf)
                self.rd.buf = b""
            echo_loop(self.sock, self)
            return False
        self.respond(200, "OK", echo, info, close, head_only)
        return not close

    def send_chunked(self, count, info, close, head_only):
        hdrs = [
            "HTTP/1.1 200 OK",
            "Content-Type: text/plain",
            "X-Conn: %d" % self.conn_no,
            "X-Request: %d" % self.nreq,
            "X-Listener: %s" % self.listen,
            "Transfer-Encoding: chunked",
            "Connection: %s" % ("close" if close else "keep-alive"),
        ] + list(info)
        if self.tls:
            hdrs.append("X-Sni: %s" % (self.sni or "-"))
        self.send(("\r\n".join(hdrs) + "\r\n\r\n").encode("latin-1"))
        if head_only:
            return
        if count is None:
            pieces = [b"one\n", b"two\n", b"three\n"]
        else:
            n = min(int(count), MAX_BYTES)
            pieces = pattern_chunks(n, 16384)
        for p in pieces:
            self.send(b"%x\r\n" % len(p) + p + b"\r\n")
        self.send(b"0\r\n\r\n")


def pattern_chunks(n, size):
    off = 0
    while off < n:
        take = min(size, n - off)
        start = off % len(PATTERN_BLOCK)
        if start + take <= len(PATTERN_BLOCK):
            yield PATTERN_BLOCK[start:start + take]
        else:
            yield (PATTERN_BLOCK[start:] + PATTERN_BLOCK)[:take]
        off += take


def echo_loop(sock, counter):
    """Send back every byte until EOF, then half-close our side too."""
    while True:
        data = sock.recv(65536)
        if not data:
            break
        counter.rd.nread += len(data)
        sock.sendall(data)
        counter.sent += len(data)
    try:
        sock.shutdown(socket.SHUT_WR)
    except OSError:
        pass


class EchoConn:
    def __init__(self, srv, sock, peer, listen, conn_no):
        self.srv, self.sock, self.peer, self.listen, self.conn_no = srv, sock, peer, listen, conn_no
        self.rd = Reader(sock)
        self.sent = 0

    def run(self):
        try:
            echo_loop(self.sock, self)
        except OSError as e:
            self.srv.log.write(event="error", kind="echo", conn=self.conn_no,
                               listen=self.listen, peer=self.peer, error=str(e)[:200])
        finally:
            self.srv.log.write(event="close", kind="echo", conn=self.conn_no,
                               listen=self.listen, peer=self.peer,
                               bytes_in=self.rd.nread, bytes_out=self.sent)
            self.sock.close()


class Servers:
    def __init__(self, args):
        self.args = args
        self.log = JsonLog(args.log)
        self.conns = Counter()
        self.tls_ctx = None
        self.tls_local = threading.local()
        if args.https:
            import ssl
            self.ssl = ssl
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(args.cert, args.key)
            # Offer only HTTP/1.1 so that curl never switches to h2 and the
            # echo stays one format.
            ctx.set_alpn_protocols(["http/1.1"])
            ctx.sni_callback = self.on_sni
            self.tls_ctx = ctx

    def on_sni(self, sslobj, name, ctx):
        # Called inside do_handshake(), on the thread that serves this
        # connection, so a thread-local is the connection's own slot.
        self.tls_local.sni = name
        return None

    def listen(self, kind, spec):
        fam, host, port = parse_hostport(spec)
        s = socket.socket(fam, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if fam == socket.AF_INET6:
            s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        s.bind((host, port))
        s.listen(1024)
        t = threading.Thread(target=self.accept_loop, args=(kind, s, spec), daemon=True)
        return t

    def accept_loop(self, kind, lsock, spec):
        while True:
            try:
                sock, sa = lsock.accept()
            except OSError:
                time.sleep(0.01)
                continue
            t = threading.Thread(target=self.handle, args=(kind, sock, fmt_addr(sa), spec),
                                 daemon=True)
            try:
                t.start()
            except RuntimeError as e:
                # Out of threads (a load test with thousands of idle
                # tunnels): drop this connection, keep the listener alive.
                self.log.write(event="error", kind=kind, listen=spec, peer=fmt_addr(sa),
                               error="cannot start a thread: %s" % e)
                sock.close()

    def handle(self, kind, sock, peer, listen):
        n = self.conns.next()
        self.log.write(event="accept", kind=kind, conn=n, listen=listen, peer=peer)
        if kind == "echo":
            EchoConn(self, sock, peer, listen, n).run()
            return
        if kind == "http":
            HttpConn(self, sock, peer, listen, n).run()
            return
        self.tls_local.sni = None
        tls = self.tls_ctx.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        tls.settimeout(15)
        try:
            tls.do_handshake()
        except (OSError, self.ssl.SSLError) as e:
            self.log.write(event="tls", kind="https", conn=n, listen=listen, peer=peer,
                           sni=self.tls_local.sni, ok=False, error=str(e)[:200])
            self.log.write(event="close", kind="https", conn=n, listen=listen, peer=peer,
                           requests=0)
            try:
                tls.close()
            except OSError:
                pass
            return
        tls.settimeout(None)
        sni = self.tls_local.sni
        self.log.write(event="tls", kind="https", conn=n, listen=listen, peer=peer, sni=sni,
                       ok=True, version=tls.version(), alpn=tls.selected_alpn_protocol())
        HttpConn(self, tls, peer, listen, n, sni=sni, tls=True).run()


def cmd_serve(args):
    threading.stack_size(512 * 1024)
    srv = Servers(args)
    threads = []
    try:
        for spec in args.http:
            threads.append(srv.listen("http", spec))
        for spec in args.https:
            threads.append(srv.listen("https", spec))
        for spec in args.echo:
            threads.append(srv.listen("echo", spec))
    except (OSError, ValueError) as e:
        print("world.py serve: cannot listen: %s" % e, file=sys.stderr)
        return 1
    for t in threads:
        t.start()
    # Every socket is bound and listening before the ready file appears, so
    # world_up can return as soon as it sees the file.
    tmp = args.ready + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % os.getpid())
    os.rename(tmp, args.ready)
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    while True:
        signal.pause()


# ---------------------------------------------------------------- DNS

QTYPES = {"A": 1, "AAAA": 28, "CNAME": 5, "TXT": 16, "MX": 15, "NS": 2, "ANY": 255}
RCODES = {0: "NOERROR", 1: "FORMERR", 2: "SERVFAIL", 3: "NXDOMAIN", 4: "NOTIMP", 5: "REFUSED"}


def dns_build(name, qtype, qid):
    q = struct.pack("!HHHHHH", qid, 0x0100, 1, 0, 0, 0)
    for label in name.rstrip(".").split("."):
        raw = label.encode("ascii")
        if not 0 < len(raw) < 64:
            raise ValueError("bad label in %r" % name)
        q += bytes([len(raw)]) + raw
    return q + b"\x00" + struct.pack("!HH", qtype, 1)


def dns_skip_name(msg, off):
    """Advance past a (possibly compressed) name, bounds-checked."""
    for _ in range(128):
        if off >= len(msg):
            raise ValueError("truncated name")
        ln = msg[off]
        if ln == 0:
            return off + 1
        if ln & 0xC0 == 0xC0:
            return off + 2
        off += 1 + ln
    raise ValueError("name too long")


def dns_parse(msg, qid):
    if len(msg) < 12:
        raise ValueError("short reply")
    rid, flags, qd, an, _, _ = struct.unpack("!HHHHHH", msg[:12])
    if rid != qid:
        raise ValueError("id mismatch")
    off = 12
    for _ in range(qd):
        off = dns_skip_name(msg, off) + 4
    answers = []
    for _ in range(an):
        off = dns_skip_name(msg, off)
        if off + 10 > len(msg):
            raise ValueError("truncated answer")
        atype, _, ttl, rdlen = struct.unpack("!HHIH", msg[off:off + 10])
        off += 10
        rdata = msg[off:off + rdlen]
        if len(rdata) != rdlen:
            raise ValueError("truncated rdata")
        off += rdlen
        if atype == 1 and rdlen == 4:
            answers.append(("A", socket.inet_ntop(socket.AF_INET, rdata), ttl))
        elif atype == 28 and rdlen == 16:
            answers.append(("AAAA", socket.inet_ntop(socket.AF_INET6, rdata), ttl))
        else:
            answers.append((str(atype), rdata.hex(), ttl))
    return RCODES.get(flags & 0xF, str(flags & 0xF)), answers


def dns_ask(server, name, qtype, timeout):
    qid = int.from_bytes(os.urandom(2), "big")
    fam = socket.AF_INET6 if ":" in server else socket.AF_INET
    with socket.socket(fam, socket.SOCK_DGRAM) as s:
        s.settimeout(timeout)
        s.sendto(dns_build(name, QTYPES[qtype], qid), (server, 53))
        while True:
            msg, _ = s.recvfrom(4096)
            try:
                return dns_parse(msg, qid)
            except ValueError:
                continue


def cmd_dns_batch(args):
    """One "NAME TYPE" question per input line; one "NAME TYPE RCODE
    ADDR,ADDR..." (sorted, "-" for none) answer line each.  One process for
    a whole table of questions instead of one per question."""
    for line in sys.stdin:
        parts = line.split()
        if len(parts) != 2:
            continue
        name, qtype = parts[0], parts[1].upper()
        try:
            rcode, answers = dns_ask(args.server, name, qtype, args.timeout)
        except (ValueError, KeyError):
            rcode, answers = "BADQUESTION", []
        except OSError:
            rcode, answers = "TIMEOUT", []
        addrs = sorted(a for (_, a, _) in answers)
        print("%s %s %s %s" % (name, qtype, rcode, ",".join(addrs) or "-"))
    return 0


def cmd_dns(args):
    if args.name == "-":
        return cmd_dns_batch(args)
    try:
        rcode, answers = dns_ask(args.server, args.name, args.type.upper(), args.timeout)
    except ValueError as e:
        print("world.py dns: %s" % e, file=sys.stderr)
        return 2
    except OSError as e:
        if args.rcode:
            print("TIMEOUT")
        print("world.py dns: %s" % e, file=sys.stderr)
        return 4
    if args.rcode:
        print(rcode)
        return 0
    for (t, addr, ttl) in answers:
        if args.ttl:
            print("%s %d" % (addr, ttl))
        elif args.all:
            print("%s %s %d" % (t, addr, ttl))
        else:
            print(addr)
    return 0 if rcode == "NOERROR" else 2


# ---------------------------------------------------------------- wait

def can_connect(fam, addr, timeout=0.2):
    try:
        with socket.socket(fam, socket.SOCK_STREAM) as s:
            s.settimeout(timeout)
            s.connect(addr)
            return True
    except OSError:
        return False


def tcp_listening(fam, host, port):
    """True when a TCP socket in this network namespace listens on host:port
    (or on the wildcard address).  Read from /proc/net/tcp{,6} rather than
    by connecting, so that waiting leaves no connection in the proxy's audit
    log."""
    raw = socket.inet_pton(fam, host)
    any_raw = bytes(len(raw))

    def kernel_hex(b):
        # /proc/net/tcp prints each 32-bit word of the address in host
        # (little-endian) order.
        return "".join("%08X" % struct.unpack("<I", b[i:i + 4])[0] for i in range(0, len(b), 4))

    want = {"%s:%04X" % (kernel_hex(raw), port), "%s:%04X" % (kernel_hex(any_raw), port)}
    table = "/proc/net/tcp" if fam == socket.AF_INET else "/proc/net/tcp6"
    try:
        with open(table) as f:
            next(f, None)
            for line in f:
                cols = line.split()
                if len(cols) > 3 and cols[3] == "0A" and cols[1] in want:
                    return True
    except OSError:
        pass
    return False


def unix_listening(path):
    """True when a UNIX stream socket bound to path is listening (the
    __SO_ACCEPTCON flag in /proc/net/unix), again without connecting."""
    try:
        with open("/proc/net/unix") as f:
            next(f, None)
            for line in f:
                cols = line.split(None, 7)
                if len(cols) == 8 and cols[7].rstrip("\n") == path and \
                        int(cols[3], 16) & 0x10000:
                    return True
    except (OSError, ValueError):
        pass
    return False


def cmd_wait(args):
    deadline = time.monotonic() + args.timeout
    pending = []
    for f in args.file:
        pending.append(("file " + f, lambda f=f: os.path.exists(f)))
    for spec in args.tcp:
        fam, host, port = parse_hostport(spec)
        pending.append(("tcp " + spec, lambda fam=fam, h=host, p=port: tcp_listening(fam, h, p)))
    for path in args.unix:
        pending.append(("unix " + path, lambda p=path: unix_listening(p)))
    for spec in args.connect:
        fam, host, port = parse_hostport(spec)
        pending.append(("connect " + spec, lambda fam=fam, a=(host, port): can_connect(fam, a)))
    for server in args.dns:
        def ask(server=server):
            try:
                rcode, ans = dns_ask(server, args.dns_name, "A", 0.2)
                return rcode == "NOERROR" and len(ans) > 0
            except (OSError, socket.timeout):
                return False
        pending.append(("dns " + server, ask))
    while pending:
        pending = [(what, fn) for (what, fn) in pending if not fn()]
        if not pending:
            break
        for pid in args.pid:
            try:
                os.kill(pid, 0)
                # A zombie still answers kill(0): look at its state too.
                with open("/proc/%d/stat" % pid) as f:
                    if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                        raise ProcessLookupError
            except (ProcessLookupError, FileNotFoundError):
                print("world.py wait: process %d died while waiting for %s"
                      % (pid, ", ".join(w for (w, _) in pending)), file=sys.stderr)
                return 1
        if time.monotonic() > deadline:
            print("world.py wait: timed out after %gs waiting for %s"
                  % (args.timeout, ", ".join(w for (w, _) in pending)), file=sys.stderr)
            return 1
        time.sleep(0.02)
    return 0


# ---------------------------------------------------------------- watchdog

def children_of(pid):
    kids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            kids.append(int(d))
    return kids


def descendants_of(pid):
    """Every process below PID, children first, grandchildren after."""
    found, todo = [], [pid]
    while todo:
        kids = children_of(todo.pop())
        found.extend(kids)
        todo.extend(kids)
    return found


def signal_tree(pid, sig, also_root):
    """Send SIG to every descendant of PID (and to PID when ALSO_ROOT);
    returns how many processes were signalled."""
    n = 0
    targets = descendants_of(pid) + ([pid] if also_root else [])
    for p in targets:
        if p == os.getpid():
            continue
        try:
            os.kill(p, sig)
            n += 1
        except ProcessLookupError:
            pass
    return n


def cmd_watchdog(args):
    """End a scenario that hangs: after the timeout, SIGTERM the scenario
    shell and every process below it (so a foreground command that waits
    forever returns, however deep it is), and the shell's trap cleans the
    world up.  What still runs 5 s later gets SIGKILL, the shell last and
    only if it is still there after 15 s more (its cleanup hung too).
    Exits by itself as soon as the scenario shell is gone."""
    deadline = time.monotonic() + args.timeout
    while time.monotonic() < deadline:
        try:
            os.kill(args.pid, 0)
        except ProcessLookupError:
            return 0
        time.sleep(min(0.2, max(0.0, deadline - time.monotonic())))
    print("# world: the scenario ran longer than %gs (WORLD_TIMEOUT): stopping it"
          % args.timeout, file=sys.stderr, flush=True)
    try:
        os.kill(args.pid, signal.SIGTERM)
    except ProcessLookupError:
        return 0
    end = time.monotonic() + 20
    while time.monotonic() < end:
        try:
            os.kill(args.pid, 0)
        except ProcessLookupError:
            return 0
        left = end - time.monotonic()
        # Only the descendants: the shell itself must live to run its
        # trap (world_down), which needs the processes below it gone.
        signal_tree(args.pid, signal.SIGTERM if left > 15 else signal.SIGKILL, False)
        time.sleep(0.2)
    print("# world: the scenario's cleanup did not finish either: killing it",
          file=sys.stderr, flush=True)
    signal_tree(args.pid, signal.SIGKILL, True)
    return 0


# ---------------------------------------------------------------- jq

def json_field(obj, dotted):
    cur = obj
    for part in dotted.split("."):
        if isinstance(cur, dict) and part in cur:
            cur = cur[part]
        elif isinstance(cur, list) and part.isdigit() and int(part) < len(cur):
            cur = cur[int(part)]
        else:
            return (False, None)
    return (True, cur)


def json_text(v):
    if isinstance(v, str):
        return v
    return json.dumps(v)


def cmd_jq(args):
    conds = []
    for c in args.cond:
        m = re.fullmatch(r"([A-Za-z0-9_.-]+)(!=|=|~)(.*)", c, re.S)
        if not m:
            print("world.py jq: bad condition %r (want KEY=VALUE, KEY!=VALUE or KEY~REGEX)" % c,
                  file=sys.stderr)
            return 2
        conds.append((m.group(1), m.group(2), m.group(3)))
    count = 0
    try:
        f = open(args.file, encoding="utf-8", errors="replace")
    except FileNotFoundError:
        f = []
    for line in f:
        line = line.strip()
        if not line:
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        good = True
        for (k, op, v) in conds:
            found, val = json_field(obj, k)
            text = json_text(val) if found else None
            if op == "=":
                good = found and text == v
            elif op == "!=":
                good = not found or text != v
            else:
                good = found and re.search(v, text) is not None
            if not good:
                break
        if not good:
            continue
        count += 1
        if args.count:
            continue
        if args.get:
            found, val = json_field(obj, args.get)
            if found:
                print(json_text(val))
        else:
            print(line)
    if args.count:
        print(count)
    return 0


def cmd_pattern(args):
    if args.sha256:
        h = hashlib.sha256()
        for blk in pattern_iter(args.n):
            h.update(blk)
        print(h.hexdigest())
    else:
        out = sys.stdout.buffer
        for blk in pattern_iter(args.n):
            out.write(blk)
    return 0


def main():
    p = argparse.ArgumentParser(prog="world.py")
    sub = p.add_subparsers(dest="cmd", required=True)

    s = sub.add_parser("serve")
    s.add_argument("--log", required=True)
    s.add_argument("--ready", required=True)
    s.add_argument("--cert")
    s.add_argument("--key")
    s.add_argument("--http", action="append", default=[])
    s.add_argument("--https", action="append", default=[])
    s.add_argument("--echo", action="append", default=[])

    s = sub.add_parser("wait")
    s.add_argument("--timeout", type=float, default=5.0)
    s.add_argument("--file", action="append", default=[])
    s.add_argument("--tcp", action="append", default=[])
    s.add_argument("--unix", action="append", default=[])
    s.add_argument("--connect", action="append", default=[])
    s.add_argument("--dns", action="append", default=[])
    s.add_argument("--dns-name", default="allowed.test")
    s.add_argument("--pid", action="append", type=int, default=[])

    s = sub.add_parser("dns")
    s.add_argument("--server", default="10.200.1.53")
    s.add_argument("--timeout", type=float, default=2.0)
    s.add_argument("--ttl", action="store_true", help="print ADDR TTL")
    s.add_argument("--all", action="store_true", help="print TYPE ADDR TTL")
    s.add_argument("--rcode", action="store_true", help="print only the rcode")
    s.add_argument("name")
    s.add_argument("type", nargs="?", default="A")

    s = sub.add_parser("watchdog")
    s.add_argument("--pid", type=int, required=True)
    s.add_argument("--timeout", type=float, required=True)

    s = sub.add_parser("jq")
    s.add_argument("--get")
    s.add_argument("--count", action="store_true")
    s.add_argument("file")
    s.add_argument("cond", nargs="*")

    s = sub.add_parser("pattern")
    s.add_argument("--sha256", action="store_true")
    s.add_argument("n", type=int)

    args = p.parse_args()
    if args.cmd != "serve":
        # A tool piped into "head" should end quietly, like any filter; the
        # servers keep Python's default so a client's reset is an exception.
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    return {"serve": cmd_serve, "wait": cmd_wait, "dns": cmd_dns, "jq": cmd_jq,
            "pattern": cmd_pattern, "watchdog": cmd_watchdog}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
