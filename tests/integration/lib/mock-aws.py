# mock-aws.py ADDR PORT CERT KEY LOG READY KEYID SECRET [TOKEN]: a stand-in
# for AWS over HTTPS that checks every request's SigV4 signature with the
# real keys, recomputed by botocore (S3SigV4Auth, SigV4Auth,
# S3SigV4QueryAuth: not postern's code), and refuses a bad one with 403
# SignatureDoesNotMatch as AWS does.  It answers STS GetCallerIdentity and
# enough of S3 for `aws s3 cp` up and down (PutObject, the multipart
# upload, HeadObject, GetObject with Range) and a presigned GET; the
# object bucket/echo-token holds the session token its request carried.  Every
# request is logged to LOG as one JSON line (method, path, service, form,
# verdict, key id, token).  READY is created once the socket listens.
# Run it with Debian's python3 (python3-botocore).
import hashlib
import json
import re
import ssl
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from botocore.auth import S3SigV4Auth, S3SigV4QueryAuth, SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

addr, port, cert, key, log_path, ready, key_id, secret = sys.argv[1:9]
token = sys.argv[9] if len(sys.argv) > 9 else None
lock = threading.Lock()
objects = {}
uploads = {}

AUTH_RE = re.compile(r"^AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/([^/]+)/aws4_request, "
                     r"SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$")


def log(entry):
    with lock, open(log_path, "a") as f:
        f.write(json.dumps(entry) + "\n")


def verify(method, host, raw_path, headers, body):
    """(verdict, service, form, key id, token): verdict is "ok" or why not."""
    q = urllib.parse.urlsplit(raw_path).query
    params = urllib.parse.parse_qs(q, keep_blank_values=True)
    if "X-Amz-Signature" in params:
        cred = params.get("X-Amz-Credential", [""])[0].split("/")
        if len(cred) != 5:
            return "bad credential", "", "query", "", None
        kid, date, region, service = cred[0], cred[1], cred[2], cred[3]
        tok = params.get("X-Amz-Security-Token", [None])[0]
        sig = params["X-Amz-Signature"][0]
        amz_date = params.get("X-Amz-Date", [""])[0]
        signed = params.get("X-Amz-SignedHeaders", [""])[0].split(";")
        # The URL without its signature, as it was signed.
        kept = "&".join(p for p in q.split("&") if not p.startswith("X-Amz-Signature="))
        url = "https://%s%s?%s" % (host, urllib.parse.urlsplit(raw_path).path, kept)
        hdrs = {k: v for k, v in headers if k.lower() in signed}
        req = AWSRequest(method=method, url=url, headers=hdrs, data=body)
        req.context["timestamp"] = amz_date
        auth = S3SigV4QueryAuth(Credentials(key_id, secret, token), service, region,
                                expires=int(params.get("X-Amz-Expires", ["3600"])[0]))
        form = "query"
    else:
        a = dict((k.lower(), v) for k, v in headers).get("authorization", "")
        m = AUTH_RE.match(a)
        if not m:
            return "no SigV4 Authorization header", "", "none", "", None
        kid, date, region, service, signed, sig = m.groups()
        signed = signed.split(";")
        tok = dict((k.lower(), v) for k, v in headers).get("x-amz-security-token")
        amz_date = dict((k.lower(), v) for k, v in headers).get("x-amz-date", "")
        hdrs = [(k, v) for k, v in headers if k.lower() in signed]
        req = AWSRequest(method=method, url="https://%s%s" % (host, raw_path), headers=dict(hdrs), data=body)
        req.context["timestamp"] = amz_date
        cls = S3SigV4Auth if service == "s3" else SigV4Auth
        auth = cls(Credentials(key_id, secret, token), service, region)
        form = "header"
    if kid != key_id:
        return "unknown access key id", service, form, kid, tok
    if (tok or None) != token:
        return "bad session token", service, form, kid, tok
    cr = auth.canonical_request(req)
    sts = auth.string_to_sign(req, cr)
    want = auth.signature(sts, req)
    if want != sig:
        return "SignatureDoesNotMatch", service, form, kid, tok
    return "ok", service, form, kid, tok


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def reply(self, status, body=b"", ctype="application/xml", extra=(), head=False):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("x-amz-request-id", "mock")
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def error(self, status, code, msg):
        self.reply(status, ("<?xml version=\"1.0\"?><Error><Code>%s</Code><Message>%s</Message>"
                            "<RequestId>mock</RequestId></Error>" % (code, msg)).encode())

    def handle_any(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        host = self.headers.get("Host", "")
        verdict, service, form, kid, tok = verify(self.command, host, self.path, list(self.headers.items()), body)
        log({"method": self.command, "path": self.path.split("?")[0], "host": host, "service": service,
             "form": form, "verdict": verdict, "key_id": kid, "token": tok, "bytes": len(body),
             "sha256": self.headers.get("x-amz-content-sha256")})
        if verdict != "ok":
            return self.error(403, "SignatureDoesNotMatch" if verdict == "SignatureDoesNotMatch"
                              else "InvalidClientTokenId", verdict)
        if service == "sts":
            return self.reply(200, ("<GetCallerIdentityResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">"
                                    "<GetCallerIdentityResult><Arn>arn:aws:iam::123456789012:user/postern-mock</Arn>"
                                    "<UserId>AIDAPOSTERNMOCK</UserId><Account>123456789012</Account>"
                                    "</GetCallerIdentityResult><ResponseMetadata><RequestId>mock</RequestId>"
                                    "</ResponseMetadata></GetCallerIdentityResponse>").encode(), "text/xml")
        return self.s3(body)

    def s3(self, body):
        u = urllib.parse.urlsplit(self.path)
        path = urllib.parse.unquote(u.path)
        q = urllib.parse.parse_qs(u.query, keep_blank_values=True)
        m = self.command
        if m == "PUT" and "uploadId" in q:
            etag = '"%s"' % hashlib.md5(body).hexdigest()
            with lock:
                uploads[q["uploadId"][0]][int(q["partNumber"][0])] = body
            return self.reply(200, extra=[("ETag", etag)])
        if m == "PUT":
            with lock:
                objects[path] = body
            return self.reply(200, extra=[("ETag", '"%s"' % hashlib.md5(body).hexdigest())])
        if m == "POST" and "uploads" in q:
            uid = "up%d" % len(uploads)
            with lock:
                uploads[uid] = {}
            b, k = path.lstrip("/").split("/", 1)
            return self.reply(200, ("<InitiateMultipartUploadResult><Bucket>%s</Bucket><Key>%s</Key>"
                                    "<UploadId>%s</UploadId></InitiateMultipartUploadResult>" % (b, k, uid)).encode())
        if m == "POST" and "uploadId" in q:
            with lock:
                parts = uploads.pop(q["uploadId"][0])
                objects[path] = b"".join(parts[i] for i in sorted(parts))
            b, k = path.lstrip("/").split("/", 1)
            return self.reply(200, ("<CompleteMultipartUploadResult><Bucket>%s</Bucket><Key>%s</Key>"
                                    "<ETag>\"mock-%d\"</ETag></CompleteMultipartUploadResult>"
                                    % (b, k, len(parts))).encode())
        if m in ("GET", "HEAD"):
            data = objects.get(path)
            if path == "/bucket/echo-token":
                # An object whose content is the token the request
                # carried: a response that reflects it.
                data = (self.headers.get("x-amz-security-token") or "").encode()
            if data is None:
                return self.error(404, "NoSuchKey", "no such key")
            extra = [("ETag", '"%s"' % hashlib.md5(data).hexdigest()),
                     ("Last-Modified", "Sun, 30 Aug 2015 12:36:00 GMT"), ("Accept-Ranges", "bytes")]
            rng = self.headers.get("Range")
            if rng and m == "GET":
                a, b = rng.split("=", 1)[1].split("-")
                a, b = int(a), min(int(b) if b else len(data) - 1, len(data) - 1)
                extra.append(("Content-Range", "bytes %d-%d/%d" % (a, b, len(data))))
                return self.reply(206, data[a:b + 1], "binary/octet-stream", extra)
            if m == "HEAD":
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Content-Type", "binary/octet-stream")
                for k, v in extra:
                    self.send_header(k, v)
                self.end_headers()
                return None
            return self.reply(200, data, "binary/octet-stream", extra)
        return self.error(400, "NotImplemented", "the mock does not do this")

    do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = handle_any


srv = ThreadingHTTPServer((addr, int(port)), Handler)
srv.daemon_threads = True
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
# h2 first, as AWS's front ends: a proxy that offered it would get it, and
# this server speaks HTTP/1.1 only (the test checks no tunnel does).
ctx.set_alpn_protocols(["h2", "http/1.1"])
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
open(ready, "w").close()
srv.serve_forever()
