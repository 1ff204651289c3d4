"""The baseline: a short stdlib fan-out that asks five upstream seats at once, reuses connections, records nothing;
with --record, it records each panel (its request) and its five seat calls (each answer, tokens and time) in
SQLite, one transaction a panel committed before it answers, as a plain app that keeps a record would.

    python benchmarks/naive_fanout.py UPSTREAM_BASE_URL [PORT] [--record DB]    # prints its URL on stdout
"""
import http.client, json, queue, sqlite3, sys, threading, time, uuid  # noqa: E401
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

DB = sys.argv[sys.argv.index("--record") + 1] if "--record" in sys.argv else None
ARGS = [a for a in sys.argv[1:] if not a.startswith("--") and a != DB]
UP = urlsplit(ARGS[0])
SEATS = [f"m{i}" for i in range(1, 6)]
POOL = ThreadPoolExecutor(512)       # never the bottleneck: every seat of every panel runs at once
IDLE: queue.LifoQueue = queue.LifoQueue()   # idle keep-alive connections to the upstream
LOCK = threading.Lock()              # one connection to the record, one writer at a time
SCHEMA = ("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; CREATE TABLE IF NOT EXISTS panels (id TEXT PRIMARY "
          "KEY, request TEXT, created REAL); CREATE TABLE IF NOT EXISTS calls (id TEXT PRIMARY KEY, panel TEXT, "
          "model TEXT, answer TEXT, tokens_in INT, tokens_out INT, seconds REAL, created REAL); CREATE INDEX IF NOT "
          "EXISTS calls_panel ON calls (panel); CREATE INDEX IF NOT EXISTS calls_model ON calls (model, created)")


def ask(model: str, messages: list) -> tuple:
    try:
        conn = IDLE.get_nowait()
    except queue.Empty:
        conn = http.client.HTTPConnection(UP.hostname, UP.port, timeout=60)
    started = time.monotonic()
    conn.request("POST", UP.path + "/chat/completions", json.dumps({"model": model, "messages": messages}),
                 {"Content-Type": "application/json"})
    data = json.loads(conn.getresponse().read())
    IDLE.put(conn)
    return model, data["choices"][0]["message"]["content"], data.get("usage") or {}, time.monotonic() - started


def record(messages: list, seats: list) -> None:
    """The panel and its seats, committed before the answer goes out."""
    now, panel = time.time(), uuid.uuid4().hex
    calls = [(uuid.uuid4().hex, panel, m, text, u.get("prompt_tokens", 0), u.get("completion_tokens", 0), s, now)
             for m, text, u, s in seats]
    with LOCK, RECORD:
        RECORD.execute("INSERT INTO panels VALUES (?, ?, ?)", (panel, json.dumps(messages), now))
        RECORD.executemany("INSERT INTO calls VALUES (?, ?, ?, ?, ?, ?, ?, ?)", calls)


RECORD = sqlite3.connect(DB, check_same_thread=False) if DB else None
if RECORD is not None:
    RECORD.executescript(SCHEMA)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True   # else the body, a second write, waits ~40 ms for the client's delayed ACK

    def do_POST(self):
        req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        seats = list(POOL.map(lambda m: ask(m, req["messages"]), SEATS))
        if DB:
            record(req["messages"], seats)
        text = "".join(f"## {m}\n\n{answer}\n\n" for m, answer, _, _ in seats)
        body = json.dumps({"object": "chat.completion", "model": req.get("model"), "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    ThreadingHTTPServer.daemon_threads, ThreadingHTTPServer.request_queue_size = True, 1024
    server = ThreadingHTTPServer(("127.0.0.1", int(ARGS[1]) if len(ARGS) > 1 else 0), Handler)
    print(f"http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()
