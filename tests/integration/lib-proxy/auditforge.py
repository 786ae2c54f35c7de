#!/usr/bin/env python3
"""auditforge.py KEY [--keep-keyid] FILE...: what an attacker who can write
the audit log but has not the proxy's key can do at best: rewrite the files
in place with the hash chain made whole again (each prev the hash of the
line before, from the first line of the first file on) and every checkpoint
signed again with KEY (an Ed25519 private key, PEM; openssl pkeyutl signs).
The checkpoints then name KEY's id, or keep the id they had with
--keep-keyid.  `audit verify` must find them signed by another key."""
import hashlib
import re
import subprocess
import sys

TRAILER = re.compile(rb',"seq":(\d+),"prev":"([0-9a-f]{64})"(,"sig":"[^"]*")?(\}+)$')
KEY = re.compile(rb'"key":"([0-9a-f]{16})"')


def keyid(key):
    der = subprocess.run(["openssl", "pkey", "-in", key, "-pubout", "-outform", "DER"],
                         check=True, capture_output=True).stdout
    return hashlib.sha256(der[-32:]).hexdigest()[:16].encode()


def sign(key, msg):
    import base64
    import tempfile
    # pkeyutl -rawin reads its input from a file, not a pipe.
    with tempfile.NamedTemporaryFile() as f:
        f.write(msg)
        f.flush()
        sig = subprocess.run(["openssl", "pkeyutl", "-sign", "-inkey", key, "-rawin",
                              "-in", f.name], check=True, capture_output=True).stdout
    return base64.b64encode(sig)


def main():
    args = sys.argv[1:]
    key = args.pop(0)
    keep = False
    if args and args[0] == "--keep-keyid":
        keep = True
        args.pop(0)
    kid = keyid(key)
    head = None
    for path in args:
        out = []
        with open(path, "rb") as f:
            lines = f.read().split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        for line in lines:
            m = TRAILER.search(line)
            if m is None:
                sys.exit("%s: a line without chain fields" % path)
            body = line[:m.start()]
            prev = m.group(2) if head is None else head.encode()
            tr = b',"seq":' + m.group(1) + b',"prev":"' + prev + b'"'
            if m.group(3) is not None:
                if not keep:
                    body = KEY.sub(b'"key":"' + kid + b'"', body, count=1)
                msg = body + tr
                line = msg + b',"sig":"' + sign(key, msg) + b'"' + m.group(4)
            else:
                line = body + tr + m.group(4)
            head = hashlib.sha256(line).hexdigest()
            out.append(line)
        with open(path, "wb") as f:
            f.write(b"".join(x + b"\n" for x in out))


main()
