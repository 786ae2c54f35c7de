#!/usr/bin/env python3
"""race.py: the clients, the reloader and the judge of reload-race-term.sh.

  race.py h1 --port P --ca CA --ph PH --conns N --ready FILE --stop FILE --out JSON
      N HTTP/1.1 keep-alive connections, each a CONNECT to allowed.test:443
      and TLS trusting CA, asking GET /h1/C/SEQ with x-api-key: PH every
      few ms until FILE exists.  A connection is never opened again: an
      error or a close ends it and is counted (dropped).
  race.py reload --conf F --a A --b B --bad BAD --bad-line L --pid PID
          --admin SOCK --count N --out JSON
      N reloads as fast as they go: write A, B (alternating) or, one time
      in seven, BAD over F by rename, then SIGHUP PID or POST /reload on
      SOCK (alternating).  A POST of BAD must be 422 naming F:L; one of A
      or B must be 200 and taken.
  race.py judge --audit LOG --upstream LOG --h2log LOG --hash-a H --hash-b H
          --val-a V --val-b V --ph PH --out JSON
      For each request the upstreams received (the world's log for /h1/,
      nghttpd's for /h2/): the value it carried, and the config hash of
      its audit line; counts and mismatches as JSON."""
import argparse, json, os, re, signal, socket, ssl, sys, threading, time


def h1(a):
    ctx = ssl.create_default_context(cafile=a.ca)
    res = [None] * a.conns
    ready = [0]
    lock = threading.Lock()

    def one(cid):
        r = {"sent": 0, "answered": 0, "not_200": 0, "error": None}
        res[cid] = r
        try:
            s = socket.create_connection(("127.0.0.1", a.port), timeout=10)
            s.sendall(b"CONNECT allowed.test:443 HTTP/1.1\r\nHost: allowed.test:443\r\n\r\n")
            buf = b""
            while b"\r\n\r\n" not in buf:
                d = s.recv(4096)
                if not d:
                    raise OSError("the proxy closed before its answer to CONNECT")
                buf += d
            if b" 200 " not in buf.split(b"\r\n")[0]:
                raise OSError("CONNECT: %r" % buf[:100])
            t = ctx.wrap_socket(s, server_hostname="allowed.test")
            f = t.makefile("rb")
            seq = 0
            while True:
                seq += 1
                t.sendall(("GET /h1/%d/%d HTTP/1.1\r\nHost: allowed.test\r\nx-api-key: %s\r\n\r\n"
                           % (cid, seq, a.ph)).encode())
                r["sent"] += 1
                line = f.readline()
                if not line:
                    raise OSError("closed by the proxy after %d requests" % (seq - 1))
                if line.split()[1] != b"200":
                    r["not_200"] += 1
                n = 0
                while True:
                    h = f.readline()
                    if not h:
                        raise OSError("closed in a response head")
                    if h in (b"\r\n", b"\n"):
                        break
                    k, _, v = h.partition(b":")
                    if k.strip().lower() == b"content-length":
                        n = int(v.strip())
                if len(f.read(n)) != n:
                    raise OSError("closed in a response body")
                r["answered"] += 1
                if seq == 1:
                    with lock:
                        ready[0] += 1
                        if ready[0] == a.conns:
                            open(a.ready, "w").close()
                if os.path.exists(a.stop):
                    break
                time.sleep(0.002 + 0.001 * (cid % 3))
            t.close()
        except Exception as e:
            r["error"] = str(e) or type(e).__name__

    th = [threading.Thread(target=one, args=(i,)) for i in range(a.conns)]
    for x in th:
        x.start()
    for x in th:
        x.join()
    out = {"conns": res,
           "sent": sum(r["sent"] for r in res),
           "answered": sum(r["answered"] for r in res),
           "not_200": sum(r["not_200"] for r in res),
           "dropped": sum(1 for r in res if r["error"] is not None),
           "errors": [r["error"] for r in res if r["error"] is not None]}
    json.dump(out, open(a.out, "w"))


def post_reload(sock):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(10)
    s.connect(sock)
    s.sendall(b"POST /reload HTTP/1.1\r\nHost: postern\r\nContent-Length: 0\r\n"
              b"Connection: close\r\n\r\n")
    buf = b""
    while True:
        d = s.recv(65536)
        if not d:
            break
        buf += d
    s.close()
    head, _, body = buf.partition(b"\r\n\r\n")
    return int(head.split()[1]), body.decode(errors="replace")


def reload(a):
    src = {k: open(p, "rb").read() for k, p in (("a", a.a), ("b", a.b), ("bad", a.bad))}
    want_err = "%s:%d: " % (a.conf, a.bad_line)
    o = {"reloads": 0, "hup": 0, "post": 0, "post_taken": 0, "post_refused_bad": 0,
         "post_wrong": [], "seconds": 0.0}
    t0 = time.monotonic()
    good = 0
    for i in range(a.count):
        if i % 7 == 3:
            kind = "bad"
        else:
            kind = "ab"[good % 2]
            good += 1
        tmp = "%s.tmp.%d" % (a.conf, os.getpid())
        with open(tmp, "wb") as f:
            f.write(src[kind])
        os.rename(tmp, a.conf)
        o["reloads"] += 1
        if i % 2 == 0:
            os.kill(a.pid, signal.SIGHUP)
            o["hup"] += 1
            time.sleep(0.004)
            continue
        o["post"] += 1
        code, body = post_reload(a.admin)
        try:
            j = json.loads(body)
        except ValueError:
            j = {}
        if kind == "bad":
            if code == 422 and j.get("taken") is False and \
                    any(e.startswith(want_err) for e in j.get("errors", [])):
                o["post_refused_bad"] += 1
            else:
                o["post_wrong"].append("%d bad: %d %s" % (i, code, body.strip()[:300]))
        elif code == 200 and j.get("taken") is True:
            o["post_taken"] += 1
        else:
            o["post_wrong"].append("%d %s: %d %s" % (i, kind, code, body.strip()[:300]))
    o["seconds"] = round(time.monotonic() - t0, 2)
    json.dump(o, open(a.out, "w"))


RACEPATH = re.compile(r"^/h[12]/[0-9]+/[0-9]+(/[0-9]+)?$")
H2LINE = re.compile(r"^\[id=(\d+)\].*recv \(stream_id=(\d+)(?:, sensitive)?\) (:?[^:\s]+): (.*)$")


def judge(a):
    want = {a.hash_a: a.val_a, a.hash_b: a.val_b}
    o = {"h1_upstream": 0, "h2_upstream": 0, "audited": 0, "placeholder": 0, "other_value": 0,
         "no_value": 0, "no_audit": 0, "wrong_snapshot": 0, "unknown_hash": 0,
         "duplicate_path": 0, "gen_first": None, "gen_last": None, "gen_back": 0,
         "values": {"a": 0, "b": 0}, "examples": []}

    def note(what):
        if len(o["examples"]) < 8:
            o["examples"].append(what)

    # The audit: each request line's config hash by path, and whether the
    # generation ever goes back on one connection.
    audit = {}
    conn_gen = {}
    for line in open(a.audit):
        try:
            j = json.loads(line)
        except ValueError:
            continue
        g = j.get("generation")
        if isinstance(g, int):
            if o["gen_first"] is None:
                o["gen_first"] = g
            o["gen_last"] = g if o["gen_last"] is None else max(o["gen_last"], g)
            cid = j.get("peer")
            if cid is not None:
                if g < conn_gen.get(cid, 0):
                    o["gen_back"] += 1
                    note("generation back on connection %s: %s" % (cid, line.strip()[:300]))
                conn_gen[cid] = max(g, conn_gen.get(cid, 0))
        if j.get("event") != "request":
            continue
        p = j.get("path", "")
        if RACEPATH.match(p):
            if p in audit:
                o["duplicate_path"] += 1
            audit[p] = j.get("config")

    def one(path, key):
        if key is None:
            o["no_value"] += 1
            note("%s: no x-api-key upstream" % path)
        elif a.ph in key:
            o["placeholder"] += 1
            note("%s: the placeholder reached the upstream" % path)
        elif key not in (a.val_a, a.val_b):
            o["other_value"] += 1
            note("%s: x-api-key %.12s... upstream" % (path, key))
        else:
            o["values"]["a" if key == a.val_a else "b"] += 1
        if path not in audit:
            o["no_audit"] += 1
            note("%s: no audit line" % path)
            return
        o["audited"] += 1
        h = audit[path]
        if h not in want:
            o["unknown_hash"] += 1
            note("%s: audited with config %s, which is neither file" % (path, h))
        elif key is not None and want[h] != key:
            o["wrong_snapshot"] += 1
            note("%s: audited with config %s, upstream got the other file's value" % (path, h))

    for line in open(a.upstream):
        try:
            j = json.loads(line)
        except ValueError:
            continue
        if j.get("event") != "request" or not RACEPATH.match(j.get("target", "")):
            continue
        o["h1_upstream"] += 1
        key = None
        for n, v in j.get("headers", []):
            if n.lower() == "x-api-key":
                key = v
        one(j["target"], key)

    streams = {}
    for line in open(a.h2log, errors="replace"):
        m = H2LINE.match(line.rstrip("\n"))
        if m is None:
            continue
        s = streams.setdefault((m.group(1), m.group(2)), {})
        s[m.group(3)] = m.group(4)
    for s in streams.values():
        p = s.get(":path", "")
        if not RACEPATH.match(p):
            continue
        o["h2_upstream"] += 1
        one(p, s.get("x-api-key"))
    json.dump(o, open(a.out, "w"))


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("h1")
    p.add_argument("--port", type=int, required=True)
    for k in ("ca", "ph", "ready", "stop", "out"):
        p.add_argument("--" + k, required=True)
    p.add_argument("--conns", type=int, default=6)
    p = sub.add_parser("reload")
    for k in ("conf", "a", "b", "bad", "admin", "out"):
        p.add_argument("--" + k, required=True)
    p.add_argument("--bad-line", type=int, required=True)
    p.add_argument("--pid", type=int, required=True)
    p.add_argument("--count", type=int, default=240)
    p = sub.add_parser("judge")
    for k in ("audit", "upstream", "h2log", "hash-a", "hash-b", "val-a", "val-b", "ph", "out"):
        p.add_argument("--" + k, required=True)
    a = ap.parse_args()
    {"h1": h1, "reload": reload, "judge": judge}[a.cmd](a)


if __name__ == "__main__":
    main()
