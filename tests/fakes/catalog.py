"""A fake catalog host on 127.0.0.1 (plain HTTP): serves the recorded samples at models.dev's and OpenRouter's paths.

    with FakeCatalog() as fake:                    # the samples in tests/catalog_fixtures/
        sources.use_fake_for_tests(fake.root, Timeouts(1, 1, 1))
        fake.mode["/api.json"] = "garbage"         # ok, status500, garbage, not_catalog, stall, huge, huge_chunked
        fake.body["/api/v1/models"] = b"..."       # or any body
        fake.requests                              # [(path, headers)] received
"""
from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from .server import shut_down

FIXTURES = Path(__file__).resolve().parent.parent / "catalog_fixtures"
PATHS = {"/api.json": "models.dev-api.json", "/api/v1/models": "openrouter-models.json"}
HUGE = 50 << 20


class FakeCatalog:
    def __init__(self):
        self.body = {path: (FIXTURES / name).read_bytes() for path, name in PATHS.items()}
        self.mode: dict[str, str] = {}
        self.requests: list[tuple[str, dict]] = []
        self._stop = threading.Event()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                fake.requests.append((self.path, {k.lower(): v for k, v in self.headers.items()}))
                fake.answer(self, self.path)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.root = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def answer(self, h: BaseHTTPRequestHandler, path: str) -> None:
        mode = self.mode.get(path, "ok")
        body = {"garbage": b"<html>Service Unavailable</html>", "not_catalog": b'{"hello": "world"}'}.get(
            mode, self.body.get(path, b""))
        if path not in self.body or mode == "status500":
            h.send_response(404 if path not in self.body else 500)
            h.send_header("Content-Length", "0")
            h.end_headers()
            return
        if mode == "stall":
            h.send_response(200)
            h.send_header("Content-Length", str(len(body)))
            h.end_headers()
            h.wfile.write(body[:10])
            h.wfile.flush()
            self._stop.wait(30)
            return
        if mode in ("huge", "huge_chunked"):
            self._huge(h, mode == "huge_chunked")
            return
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)

    def _huge(self, h: BaseHTTPRequestHandler, chunked: bool) -> None:
        """A 50 MB body, announced (Content-Length) or not (chunked), sent until the client hangs up."""
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.send_header("Transfer-Encoding" if chunked else "Content-Length", "chunked" if chunked else str(HUGE))
        h.end_headers()
        block = b" " * (1 << 20)
        try:
            for _ in range(HUGE >> 20):
                h.wfile.write((b"%x\r\n" % len(block) + block + b"\r\n") if chunked else block)
            if chunked:
                h.wfile.write(b"0\r\n\r\n")
        except OSError:
            pass

    def start(self) -> "FakeCatalog":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        shut_down(self.server)
        self.server.server_close()

    def __enter__(self) -> "FakeCatalog":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
