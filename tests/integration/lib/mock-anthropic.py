# mock-anthropic.py ADDR PORT CERT KEY LOG READY ANSWER: a stand-in for the
# Anthropic Messages API over HTTPS, enough for `claude -p`.  Every request
# is logged to LOG as one JSON line (method, path, x-api-key, authorization,
# host); POST /v1/messages is answered with ANSWER as the assistant's text
# (server-sent events when the request asks for a stream, else one JSON
# message), count_tokens with a count, anything else with 404.  READY is
# created once the socket listens.  Standard library only.
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
    out = []
    for ev in events:
        out.append("event: %s\ndata: %s\n\n" % (ev["type"], json.dumps(ev)))
    return "".join(out).encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def reply(self, status, ctype, body):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("request-id", "req_mock")
        self.end_headers()
        self.wfile.write(body)

    def handle_any(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n > 0 else b""
        try:
            req = json.loads(raw) if raw else {}
        except ValueError:
            req = {}
        path = self.path.split("?", 1)[0]
        log({"method": self.command, "path": self.path,
             "x-api-key": self.headers.get("x-api-key"),
             "authorization": self.headers.get("authorization"),
             "host": self.headers.get("host"),
             "stream": bool(req.get("stream")) if isinstance(req, dict) else False})
        model = req.get("model", "claude-mock") if isinstance(req, dict) else "claude-mock"
        if self.command == "POST" and path == "/v1/messages/count_tokens":
            self.reply(200, "application/json", b'{"input_tokens": 12}')
            return
        if self.command != "POST" or path != "/v1/messages":
            self.reply(404, "application/json",
                       b'{"type":"error","error":{"type":"not_found_error","message":"mock"}}')
            return
        usage = {"input_tokens": 12, "output_tokens": 6,
                 "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        msg = {"id": "msg_mock", "type": "message", "role": "assistant", "model": model,
               "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}
        if not req.get("stream"):
            msg["content"] = [{"type": "text", "text": answer}]
            msg["stop_reason"] = "end_turn"
            self.reply(200, "application/json", json.dumps(msg).encode())
            return
        body = sse([
            {"type": "message_start", "message": msg},
            {"type": "content_block_start", "index": 0,
             "content_block": {"type": "text", "text": ""}},
            {"type": "content_block_delta", "index": 0,
             "delta": {"type": "text_delta", "text": answer}},
            {"type": "content_block_stop", "index": 0},
            {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
             "usage": {"output_tokens": 6}},
            {"type": "message_stop"},
        ])
        self.reply(200, "text/event-stream", body)

    do_GET = do_POST = do_PUT = do_HEAD = handle_any


class Server(ThreadingHTTPServer):
    daemon_threads = True
    address_family = socket.AF_INET


ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
srv = Server((addr, int(port)), Handler)
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
open(ready, "w").close()
srv.serve_forever()
