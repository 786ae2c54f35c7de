#!/usr/bin/env python3
"""Load generator for the reload scenarios (postern's tests; not shipped).

  load.py hold --proxy H:P --target HOST:PORT --ready FILE --stop FILE
        open one CONNECT tunnel, write --ready, then echo-check it five
        times a second until --stop exists (one last check, exit 0) or a
        check fails (exit 1)

  load.py load --proxy H:P --config PATH --a FILE --b FILE --audit PATH
               [--tunnels 200] [--rewrites 100] [--interval 0.25]
               [--workers 6] [--min-seconds 0] [--out FILE]
        1. open --tunnels CONNECT tunnels to the echo port (half to
           allowed.test:7, which both allowlists permit, half to
           other.test:7, which only A permits); every one is echo-checked
           again and again while the load runs;
        2. run a steady stream of new CONNECTs and plain-HTTP requests
           (also on keep-alive connections) to allowed.test (A and B),
           other.test (A only), api.example.test (B only), deny.test
           (neither);
        3. meanwhile rewrite --config --rewrites times, alternating between
           the contents of --b and --a (the file starts as --a), by
           rename and by in-place write in turn;
        4. stop, check every tunnel one last time, close everything, and
           judge the audit log lines written during the run.
        Prints one JSON object (also to --out): counts, and every kind of
        failure as a number the scenario asserts to be 0.

Bounded: every socket operation has a timeout, the run ends after the
rewrites (or --min-seconds), and at most a few hundred sockets are open.
"""
import argparse
import hashlib
import json
import os
import random
import socket
import sys
import threading
import time
from datetime import datetime, timezone

TIMEOUT = 5.0
HOSTS_A = {"allowed.test", "other.test"}
HOSTS_B = {"allowed.test", "api.example.test"}
STREAM_HOSTS = ["allowed.test", "other.test", "api.example.test", "deny.test"]


def parse_hp(s):
    h, p = s.rsplit(":", 1)
    return h, int(p)


def recv_head(sock, buf=b""):
    """Read a response head; return (status, headers dict, rest bytes)."""
    while b"\r\n\r\n" not in buf:
        if len(buf) > 65536:
            raise ValueError("head too large")
        d = sock.recv(65536)
        if not d:
            raise ConnectionError("closed before the response head")
        buf += d
    head, rest = buf.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1."):
        raise ValueError("bad status line %r" % lines[0])
    hdrs = {}
    for ln in lines[1:]:
        k, _, v = ln.partition(":")
        hdrs[k.strip().lower()] = v.strip()
    return int(parts[1]), hdrs, rest


def recv_exact(sock, n, buf=b""):
    while len(buf) < n:
        d = sock.recv(n - len(buf))
        if not d:
            raise ConnectionError("closed")
        buf += d
    return buf


def open_tunnel(proxy, host, port):
    s = socket.create_connection(proxy, timeout=TIMEOUT)
    try:
        s.sendall(("CONNECT %s:%d HTTP/1.1\r\nHost: %s:%d\r\n\r\n" % (host, port, host, port)).encode())
        status, hdrs, rest = recv_head(s)
        if status != 200:
            s.close()
            return status, None
        if rest:
            raise ValueError("bytes after 200 before we sent any")
        return 200, s
    except BaseException:
        s.close()
        raise


def echo_check(s, nonce):
    msg = b"ping %d %s\n" % (nonce, os.urandom(8).hex().encode())
    s.sendall(msg)
    got = recv_exact(s, len(msg))
    if got != msg:
        raise ValueError("echo mismatch")


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.outcomes = {}      # (kind, host, outcome) -> count
        self.unexpected = []    # first few odd results

    def add(self, kind, host, outcome, note=None):
        with self.lock:
            k = (kind, host, str(outcome))
            self.outcomes[k] = self.outcomes.get(k, 0) + 1
            if outcome not in (200, 403) and len(self.unexpected) < 20:
                self.unexpected.append("%s %s: %s %s" % (kind, host, outcome, note or ""))


def one_connect(proxy, host, stats, n):
    try:
        status, s = open_tunnel(proxy, host, 7)
        if s is not None:
            try:
                echo_check(s, n)
            finally:
                s.close()
        stats.add("connect", host, status)
    except (OSError, ValueError, ConnectionError) as e:
        stats.add("connect", host, "error", repr(e))


def http_request(s, host, n, keep):
    s.sendall(("GET http://%s/load/%d HTTP/1.1\r\nHost: %s\r\n%s\r\n"
               % (host, n, host, "" if keep else "Connection: close\r\n")).encode())
    status, hdrs, rest = recv_head(s)
    if "content-length" in hdrs:
        recv_exact(s, int(hdrs["content-length"]), rest)
    elif not keep:
        while s.recv(65536):
            pass
    else:
        raise ValueError("no Content-Length on a keep-alive response")
    closing = hdrs.get("connection", "").lower() == "close"
    return status, closing


def one_http(proxy, host, stats, n):
    try:
        with socket.create_connection(proxy, timeout=TIMEOUT) as s:
            status, _ = http_request(s, host, n, False)
        stats.add("http", host, status)
    except (OSError, ValueError, ConnectionError) as e:
        stats.add("http", host, "error", repr(e))


def worker(proxy, stats, stop, wid, keepalive):
    n = wid * 10000000
    rnd = random.Random(wid)
    ka = None
    while not stop.is_set():
        n += 1
        host = rnd.choice(STREAM_HOSTS)
        if keepalive:
            # Requests on one keep-alive connection: each is judged by the
            # snapshot in force when it arrives.
            try:
                if ka is None:
                    ka = socket.create_connection(proxy, timeout=TIMEOUT)
                status, closing = http_request(ka, host, n, True)
                stats.add("http-keepalive", host, status)
                if closing:
                    ka.close()
                    ka = None
            except (OSError, ValueError, ConnectionError) as e:
                stats.add("http-keepalive", host, "error", repr(e))
                if ka is not None:
                    ka.close()
                ka = None
        elif n % 2:
            one_connect(proxy, host, stats, n)
        else:
            one_http(proxy, host, stats, n)
    if ka is not None:
        ka.close()


def pinger(tunnels, dropped, stop, rounds):
    n = 0
    while True:
        for i, t in enumerate(tunnels):
            if t is None or i in dropped:
                continue
            try:
                echo_check(t, n)
            except (OSError, ValueError, ConnectionError) as e:
                dropped[i] = repr(e)
            n += 1
        rounds[0] += 1
        if stop.wait(0.3):
            return


def sha12(data):
    return hashlib.sha256(data).hexdigest()[:12]


def rewriter(path, a, b, count, interval, log, hashes, stop):
    """Rewrite PATH COUNT times: B, A, B, ... by rename and in place in
    turn (rename B, rename A, in-place B, in-place A, ...).  Each content
    ends in a comment with its number, so that its hash names one write
    and "which content was in force" is never ambiguous."""
    for i in range(count):
        if stop.is_set():
            return
        which = "B" if i % 2 == 0 else "A"
        data = (b if which == "B" else a) + b"; rewrite %d\n" % (i + 1)
        hashes[sha12(data)] = (which, i + 1)
        how = "rename" if (i // 2) % 2 == 0 else "inplace"
        if how == "rename":
            tmp = "%s.tmp%d" % (path, os.getpid())
            with open(tmp, "wb") as f:
                f.write(data)
            os.rename(tmp, path)
        else:
            with open(path, "r+b") as f:
                f.truncate(0)
                f.write(data)
        log.append((time.time(), sha12(data), how))
        time.sleep(interval)


def parse_time(s):
    return datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc).timestamp()


def judge_audit(path, offset, hashes, writes, t_start):
    """Check every decision line written during the run."""
    res = {"audit_decisions": 0, "audit_wrong_decision": 0, "audit_unknown_hash": 0,
           "audit_stale": 0, "audit_no_generation": 0, "gen_hash_conflicts": 0,
           "generations_seen": 0, "audit_examples": []}
    gen_hash = {}
    counts = {}
    with open(path, "rb") as f:
        f.seek(offset)
        lines = f.read().decode("utf-8", "replace").splitlines()
    for ln in lines:
        try:
            j = json.loads(ln)
        except ValueError:
            continue
        if j.get("event") != "decision" or j.get("port") not in (7, 80):
            continue
        res["audit_decisions"] += 1
        host, dec, gen, h = j.get("host"), j.get("decision"), j.get("generation"), j.get("config")
        kind = "connect" if j.get("method") == "CONNECT" else "http"
        counts[(kind, host, dec)] = counts.get((kind, host, dec), 0) + 1
        if gen is None or h is None:
            res["audit_no_generation"] += 1
            continue
        if gen_hash.setdefault(gen, h) != h:
            res["gen_hash_conflicts"] += 1
        which = hashes.get(h)
        if which is None:
            res["audit_unknown_hash"] += 1
            continue
        allowed = host in (HOSTS_A if which[0] == "A" else HOSTS_B)
        if (dec == "allow") != allowed:
            res["audit_wrong_decision"] += 1
            if len(res["audit_examples"]) < 5:
                res["audit_examples"].append(ln[:300])
        # In force at the time: the content written last at least 1 s
        # before the line (plus 0.1 s for the connect an allow line waits
        # for), or one written since; never an older one, never a later.
        t = parse_time(j["time"])
        oldest = 0
        for k, (wt, wh, _) in enumerate(writes):
            if wt <= t - 1.1:
                oldest = k
        idx = which[1]
        if idx < oldest or writes[idx][0] > t + 0.05:
            res["audit_stale"] += 1
            if len(res["audit_examples"]) < 5:
                res["audit_examples"].append("stale (write %d, want >= %d): %s" % (idx, oldest, ln[:300]))
    res["generations_seen"] = len(gen_hash)
    return res, counts


def cmd_load(args):
    proxy = parse_hp(args.proxy)
    a = open(args.a, "rb").read()
    b = open(args.b, "rb").read()
    hashes = {sha12(a): ("A", 0)}
    if open(args.config, "rb").read() != a:
        raise SystemExit("load.py: --config must start with --a's content")
    audit_off = os.path.getsize(args.audit) if os.path.exists(args.audit) else 0
    t_start = time.time()
    out = {"tunnels": args.tunnels, "tunnel_open_failed": 0}

    tunnels = []
    for i in range(args.tunnels):
        host = "allowed.test" if i % 2 == 0 else "other.test"
        try:
            st, s = open_tunnel(proxy, host, 7)
            if s is not None:
                echo_check(s, i)
        except (OSError, ValueError, ConnectionError):
            st, s = "error", None
        if s is None:
            out["tunnel_open_failed"] += 1
        tunnels.append(s)
    stats = Stats()
    for i, s in enumerate(tunnels):
        stats.add("connect", "allowed.test" if i % 2 == 0 else "other.test", 200 if s else "error")

    stop = threading.Event()
    dropped = {}
    rounds = [0]
    threads = [threading.Thread(target=pinger, args=(tunnels, dropped, stop, rounds))]
    for w in range(args.workers):
        threads.append(threading.Thread(target=worker, args=(proxy, stats, stop, w + 1, w == 0)))
    for t in threads:
        t.start()
    writes = [(t_start - 10.0, sha12(a), "start")]
    rw_stop = threading.Event()
    rewriter(args.config, a, b, args.rewrites, args.interval, writes, hashes, rw_stop)
    left = args.min_seconds - (time.time() - t_start)
    if left > 0:
        time.sleep(left)
    # Let the last rewrite take effect and be exercised before stopping.
    time.sleep(1.5)
    stop.set()
    for t in threads:
        t.join()
    # One last round trip on every tunnel, then close them.
    for i, s in enumerate(tunnels):
        if s is None or i in dropped:
            continue
        try:
            echo_check(s, 999999)
        except (OSError, ValueError, ConnectionError) as e:
            dropped[i] = repr(e)
    for s in tunnels:
        if s is not None:
            s.close()
    t_end = time.time()

    # Give the proxy a moment to write the last lines, then judge them.
    time.sleep(0.5)
    res, counts = judge_audit(args.audit, audit_off, hashes, writes, t_start)
    out.update(res)
    out["seconds"] = round(t_end - t_start, 1)
    out["rewrites"] = len(writes) - 1
    out["tunnels_dropped"] = len(dropped)
    out["dropped_examples"] = list(dropped.values())[:5]
    out["ping_rounds"] = rounds[0]
    total = sum(stats.outcomes.values())
    out["requests"] = total
    # A request to allowed.test is permitted by both allowlists: it must
    # never fail.  Any request may be 403 only when the rules in force
    # refused it (checked against the audit log); nothing may end in an
    # error or a status other than 200 and 403.
    out["failed_permitted"] = sum(v for (k, h, o), v in stats.outcomes.items()
                                  if h == "allowed.test" and o != "200")
    out["failed_other"] = sum(v for (k, h, o), v in stats.outcomes.items() if o not in ("200", "403"))
    out["unexpected"] = stats.unexpected
    out["refused_never_allowed"] = sum(v for (k, h, o), v in stats.outcomes.items()
                                       if h == "deny.test" and o == "200")
    # What the clients saw must be what the audit log says was decided.
    mismatch = []
    for kind in ("connect", "http"):
        for host in STREAM_HOSTS:
            c_ok = sum(v for (k, h, o), v in stats.outcomes.items()
                       if h == host and o == "200" and k.startswith(kind))
            c_no = sum(v for (k, h, o), v in stats.outcomes.items()
                       if h == host and o == "403" and k.startswith(kind))
            a_ok = counts.get((kind, host, "allow"), 0)
            a_no = counts.get((kind, host, "deny"), 0)
            if (c_ok, c_no) != (a_ok, a_no):
                mismatch.append("%s %s: clients %d/%d, audit %d/%d" % (kind, host, c_ok, c_no, a_ok, a_no))
    out["reconcile_mismatch"] = len(mismatch)
    out["reconcile_examples"] = mismatch[:8]
    out["outcomes"] = {"%s %s %s" % k: v for k, v in sorted(stats.outcomes.items())}
    text = json.dumps(out, sort_keys=True)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    return 0


def cmd_hold(args):
    proxy = parse_hp(args.proxy)
    host, port = parse_hp(args.target)
    st, s = open_tunnel(proxy, host, port)
    if s is None:
        print("hold: CONNECT answered %s" % st)
        return 1
    echo_check(s, 0)
    with open(args.ready, "w") as f:
        f.write("ready\n")
    n = 1
    deadline = time.time() + args.max_seconds
    while time.time() < deadline:
        stopping = os.path.exists(args.stop)
        try:
            echo_check(s, n)
        except (OSError, ValueError, ConnectionError) as e:
            print("hold: the tunnel broke after %d checks: %r" % (n, e), flush=True)
            return 1
        n += 1
        if stopping:
            print("hold: the tunnel held through %d checks" % n, flush=True)
            s.close()
            return 0
        time.sleep(0.2)
    print("hold: no stop file after %d s" % args.max_seconds)
    return 1


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    h = sub.add_parser("hold")
    h.add_argument("--proxy", required=True)
    h.add_argument("--target", required=True)
    h.add_argument("--ready", required=True)
    h.add_argument("--stop", required=True)
    h.add_argument("--max-seconds", type=float, default=60)
    ld = sub.add_parser("load")
    ld.add_argument("--proxy", required=True)
    ld.add_argument("--config", required=True)
    ld.add_argument("--a", required=True)
    ld.add_argument("--b", required=True)
    ld.add_argument("--audit", required=True)
    ld.add_argument("--tunnels", type=int, default=200)
    ld.add_argument("--rewrites", type=int, default=100)
    ld.add_argument("--interval", type=float, default=0.25)
    ld.add_argument("--workers", type=int, default=6)
    ld.add_argument("--min-seconds", type=float, default=0)
    ld.add_argument("--out")
    args = ap.parse_args()
    return cmd_load(args) if args.cmd == "load" else cmd_hold(args)


if __name__ == "__main__":
    sys.exit(main())
