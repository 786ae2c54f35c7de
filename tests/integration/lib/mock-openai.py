# mock-openai.py ADDR PORT CERT KEY LOG READY ANSWER: a stand-in for the
# OpenAI Responses API over HTTPS (plain HTTP when CERT is "-"), enough for
# `codex exec`.  Every request is logged to LOG as one JSON line (method,
# path, authorization, host); POST /v1/responses is answered with ANSWER as
# the assistant's message in server-sent events, GET /v1/models with one
# model, anything else with 404.  READY is created once the socket
# listens.  Standard library only.
import json
import socket
import ssl
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

addr, port, cert, key, log_path, ready, answer = sys.argv[1:8]
lock = threading.Lock()


def log(entry):
    with lock, open(log_path, "a") as f:
        f.write(json.dumps(entry) + "\n")


def sse(events):
    return "".join("event: %s\ndata: %s\n\n" % (ev["type"], json.dumps(ev)) for ev in events).encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def reply(self, status, ctype, body):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("x-request-id", "req_mock")
        self.end_headers()
        self.wfile.write(body)

    def handle_any(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n > 0 else b""
        try:
            req = json.loads(raw) if raw else {}
        except ValueError:
            req = {}
        if not isinstance(req, dict):
            req = {}
        path = self.path.split("?", 1)[0]
        log({"method": self.command, "path": self.path,
             "authorization": self.headers.get("authorization"),
             "host": self.headers.get("host"),
             "stream": bool(req.get("stream"))})
        model = req.get("model", "gpt-mock")
        if self.command == "GET" and path == "/v1/models":
            self.reply(200, "application/json", json.dumps(
                {"object": "list", "data": [{"id": model, "object": "model", "owned_by": "mock"}]}).encode())
            return
        if self.command != "POST" or path != "/v1/responses":
            self.reply(404, "application/json",
                       b'{"error":{"message":"mock","type":"invalid_request_error"}}')
            return
        item = {"id": "msg_mock", "type": "message", "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": answer, "annotations": []}]}
        usage = {"input_tokens": 12, "input_tokens_details": {"cached_tokens": 0},
                 "output_tokens": 6, "output_tokens_details": {"reasoning_tokens": 0},
                 "total_tokens": 18}
        resp = {"id": "resp_mock", "object": "response", "model": model, "status": "in_progress",
                "output": []}
        done = dict(resp, status="completed", output=[item], usage=usage)
        self.reply(200, "text/event-stream", sse([
            {"type": "response.created", "sequence_number": 0, "response": resp},
            {"type": "response.output_item.added", "sequence_number": 1, "output_index": 0,
             "item": dict(item, status="in_progress", content=[])},
            {"type": "response.output_text.delta", "sequence_number": 2, "output_index": 0,
             "item_id": "msg_mock", "content_index": 0, "delta": answer},
            {"type": "response.output_item.done", "sequence_number": 3, "output_index": 0,
             "item": item},
            {"type": "response.completed", "sequence_number": 4, "response": done},
        ]))

    do_GET = do_POST = do_PUT = do_HEAD = do_DELETE = handle_any


class Server(ThreadingHTTPServer):
    daemon_threads = True
    address_family = socket.AF_INET


srv = Server((addr, int(port)), Handler)
if cert != "-":
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
open(ready, "w").close()
srv.serve_forever()
