#!/usr/bin/env python3
"""A decider for postern's decider = (conf/postern.ini.5), for the tests.

    decider.py unix:PATH|http:ADDR:PORT LOGFILE

Answers each question by its host and path:
  slow.test or a path under /slow   allow, after SLOW seconds (env, 5)
  nope.test or /nope in the path    deny, with a reason that tries to add a
                                    header (CR LF) to the refusal
  garbage.test                      a line that is not JSON
  wrongid.test                      an answer to an id never asked
  big.test                          a line of 20000 bytes
  blank.test                        a blank line, then an allow
  crash.test                        the decider exits at once
  a path under /ttl                 allow, ttl 60
  anything else                     allow, reason "ok"
Every question is appended to LOGFILE as one JSON line (after it is read,
before it is answered).  Slow answers never hold the others back: each
waits in its own task.  Prints "ready" once it listens.
"""
import asyncio
import json
import os
import sys

SLOW = float(os.environ.get("SLOW", "5"))
LOG = None


def answer(q):
    """(delay, bytes of the answer line without its newline) for Q."""
    host, path, qid = q.get("host", ""), q.get("path") or "", q["id"]
    if host == "crash.test":
        os._exit(3)
    if host == "garbage.test":
        return 0, b"this is not json"
    if host == "blank.test":
        return 0, b"\r\n" + json.dumps({"id": qid, "decision": "allow"}).encode()
    if host == "big.test":
        return 0, b"x" * 20000
    if host == "wrongid.test":
        return 0, json.dumps({"id": qid + 1000000, "decision": "allow"}).encode()
    if host == "slow.test" or path.startswith("/slow"):
        return SLOW, json.dumps({"id": qid, "decision": "allow"}).encode()
    if host == "nope.test" or "/nope" in path:
        return 0, json.dumps({"id": qid, "decision": "deny",
                              "reason": "policy says no\r\nX-Injected: yes"}).encode()
    if path.startswith("/ttl"):
        return 0, json.dumps({"id": qid, "decision": "allow", "reason": "kept", "ttl": 60}).encode()
    return 0, json.dumps({"id": qid, "decision": "allow", "reason": "ok"}).encode()


def log(q):
    LOG.write(json.dumps(q) + "\n")
    LOG.flush()


async def unix_client(reader, writer):
    async def later(delay, data):
        await asyncio.sleep(delay)
        writer.write(data + b"\n")

    while True:
        line = await reader.readline()
        if not line:
            break
        q = json.loads(line)
        log(q)
        delay, data = answer(q)
        if delay:
            asyncio.ensure_future(later(delay, data))
        else:
            writer.write(data + b"\n")
    writer.close()


async def http_client(reader, writer):
    head = await reader.readuntil(b"\r\n\r\n")
    n = 0
    for h in head.split(b"\r\n"):
        if h.lower().startswith(b"content-length:"):
            n = int(h.split(b":", 1)[1])
    q = json.loads(await reader.readexactly(n))
    log(q)
    delay, data = answer(q)
    if delay:
        await asyncio.sleep(delay)
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"
                 b"Connection: close\r\n\r\n" % len(data) + data)
    await writer.drain()
    writer.close()


async def main():
    global LOG
    where, LOG = sys.argv[1], open(sys.argv[2], "a")
    if where.startswith("unix:"):
        path = where[5:]
        if os.path.exists(path):
            os.unlink(path)
        server = await asyncio.start_unix_server(unix_client, path, limit=1 << 20)
    else:
        addr, port = where[5:].rsplit(":", 1)
        server = await asyncio.start_server(http_client, addr, int(port), backlog=1024)
    print("ready", flush=True)
    async with server:
        await server.serve_forever()


asyncio.run(main())
