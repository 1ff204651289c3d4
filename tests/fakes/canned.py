"""A server that answers every GET with one fixed status, headers and body: for upstreams that are not an API."""
from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from .server import shut_down


class Canned:
    """A server that answers every request with one fixed status, headers and body (or a cut body)."""

    def __init__(self, status: int = 200, body: bytes = b"", headers: dict | None = None, cut: bool = False):
        canned = self

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):
                self.send_response(canned.status)
                for k, v in (canned.headers or {}).items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(canned.body) + (100 if canned.cut else 0)))
                self.end_headers()
                self.wfile.write(canned.body)
                if canned.cut:
                    self.close_connection = True

            def log_message(self, *a):
                pass
        self.status, self.body, self.headers, self.cut = status, body, headers, cut
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def stop(self):
        shut_down(self.server)
        self.server.server_close()
