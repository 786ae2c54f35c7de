#!/usr/bin/env python3
"""Decisions at a steady rate through postern, for the decider's load test
and bench.

    decload.py --ports P[,P...] --target HOST:PORT --rate R --seconds S
               [--conc C] [--unique] [--host 127.0.0.1]

With --rate 0 it is a closed loop instead: C clients, each sending its
next CONNECT as soon as the last is answered, for S seconds (the rate
is then the throughput).

Sends R CONNECTs a second for S seconds, spread over the proxy ports P
(one session each) in turn, at most C (200) open at once; each reads the
answer's status line and closes.  --unique gives each CONNECT its own
target port (TARGET's port + n, wrapping below 65536) so no answer is
kept for another.  Prints one JSON object: for each port and in total, how
many were sent, the statuses, and the latency p50/p99/max in ms (from
connect to the status line), the achieved rate, and "late": how many
could not be sent on time because C were open.
"""
import argparse
import asyncio
import json
import time


def pct(v, p):
    if not v:
        return None
    v = sorted(v)
    return round(v[min(len(v) - 1, int(len(v) * p))] * 1000, 2)


async def one(a, port, target, res, sem):
    t0 = time.monotonic()
    try:
        r, w = await asyncio.wait_for(asyncio.open_connection(a.host, port), 10)
        w.write(b"CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target.encode(), target.encode()))
        line = await asyncio.wait_for(r.readline(), 10)
        w.close()
        st = line.split()[1].decode() if len(line.split()) > 1 else "none"
    except Exception:
        st = "error"
    res.setdefault(port, []).append((st, time.monotonic() - t0))
    sem.release()


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ports", required=True)
    ap.add_argument("--target", required=True)
    ap.add_argument("--rate", type=float, required=True)
    ap.add_argument("--seconds", type=float, required=True)
    ap.add_argument("--conc", type=int, default=200)
    ap.add_argument("--unique", action="store_true")
    ap.add_argument("--host", default="127.0.0.1")
    a = ap.parse_args()
    ports = [int(p) for p in a.ports.split(",")]
    thost, tport = a.target.rsplit(":", 1)
    tport = int(tport)
    res, tasks, late = {}, [], 0
    sem = asyncio.Semaphore(a.conc)
    n_total = int(a.rate * a.seconds)
    start = time.monotonic()
    if a.rate == 0:
        async def client(k):
            n = k
            while time.monotonic() - start < a.seconds:
                await sem.acquire()
                p = tport + n % 60000 if a.unique else tport
                await one(a, ports[n % len(ports)], "%s:%d" % (thost, p), res, sem)
                n += a.conc
        sem = asyncio.Semaphore(a.conc)
        tasks = [asyncio.ensure_future(client(k)) for k in range(a.conc)]
    for n in range(n_total):
        due = start + n / a.rate
        now = time.monotonic()
        if due > now:
            await asyncio.sleep(due - now)
        if sem.locked():
            late += 1
        await sem.acquire()
        p = tport + n % 60000 if a.unique else tport
        if p > 65535:
            p -= 60000
        tasks.append(asyncio.ensure_future(one(a, ports[n % len(ports)], "%s:%d" % (thost, p), res, sem)))
    await asyncio.gather(*tasks)
    took = time.monotonic() - start
    out, allv = {"ports": {}}, []
    for port, v in res.items():
        lat = [x[1] for x in v]
        allv += v
        st = {}
        for s, _ in v:
            st[s] = st.get(s, 0) + 1
        out["ports"][str(port)] = {"sent": len(v), "status": st, "p50": pct(lat, 0.5),
                                   "p99": pct(lat, 0.99), "max": pct(lat, 1.0)}
    st = {}
    for s, _ in allv:
        st[s] = st.get(s, 0) + 1
    lat = [x[1] for x in allv]
    out.update({"sent": len(allv), "status": st, "p50": pct(lat, 0.5), "p99": pct(lat, 0.99),
                "max": pct(lat, 1.0), "seconds": round(took, 2), "rate": round(len(allv) / took, 1),
                "late": late})
    print(json.dumps(out))


asyncio.run(main())
