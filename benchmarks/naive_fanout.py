"""The baseline: a short stdlib fan-out that asks five upstream seats at once, reuses connections, records nothing;
with --record, it records each panel and its seat calls as the service records them (through this checkout's
own store: a panel row, a call record and a usage-ledger line per seat, committed by the store's writer before it
answers), so what the service costs beyond it is the panel's own work, not the record's.

    python benchmarks/naive_fanout.py UPSTREAM_BASE_URL [PORT] [--record DB] [--seats N]   # prints its URL on stdout

--seats N asks N seats (m1 to mN) instead of five: seatcost.py measures what each call more costs.
"""
import http.client, json, queue, sys, time  # noqa: E401
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit


USAGE = "usage: naive_fanout.py UPSTREAM_BASE_URL [PORT] [--record DB] [--seats N]  (N: a whole number above 0)"


def option(name: str) -> str | None:
    """The value after `name` in the arguments; None when it is not there."""
    at = sys.argv.index(name) + 1 if name in sys.argv else 0
    if at >= len(sys.argv):
        print(USAGE, file=sys.stderr)
        sys.exit(2)
    return sys.argv[at] if at else None


DB, COUNT = option("--record"), option("--seats")
ARGS = [a for i, a in enumerate(sys.argv[1:], 1) if not a.startswith("--") and not sys.argv[i - 1].startswith("--")]
if not ARGS or not ARGS[0].startswith(("http://", "https://")) or not (COUNT or "5").isdigit() or int(COUNT or 5) < 1:
    print(USAGE, file=sys.stderr)
    sys.exit(2)
UP = urlsplit(ARGS[0])
SEATS = [f"m{i}" for i in range(1, int(COUNT or 5) + 1)]
POOL = ThreadPoolExecutor(512)       # never the bottleneck: every seat of every panel runs at once
IDLE: queue.LifoQueue = queue.LifoQueue()   # idle keep-alive connections to the upstream
RECORD = None
if DB:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from benchwarmers.store.calls import CallRecord, Calls  # noqa: E402
    from benchwarmers.store.db import Database  # noqa: E402
    from benchwarmers.store.ids import record_id  # noqa: E402
    from benchwarmers.store.ledger import Line  # noqa: E402
    RECORD = Calls(Database(Path(DB)))


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
    """The panel's row and each seat's call record and ledger line, waited for as the service waits for its own."""
    panel = record_id("p_")
    request = json.dumps({"messages": messages})
    RECORD.add_panel(panel, "five", "panel", len(seats), None, None, request)
    writes = []
    for n, (model, text, usage, seconds) in enumerate(seats, 1):
        call = record_id()
        tokens_in, tokens_out = usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0)
        writes.append(RECORD.add(CallRecord(
            id=call, model=model, status="ok", panel=panel, collection="five", endpoint="fake", served=model,
            kind="member", mode="panel", seat=n, prompt_hash=str(hash(request)), answer=text, seconds=seconds,
            input_tokens=tokens_in, output_tokens=tokens_out), Line("fake", model, "member", tokens_in, tokens_out,
                                                                     0, None, "five", call)))
    for write in writes:
        write.result(10)


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
