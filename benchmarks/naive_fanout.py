"""The baseline: a 40-line stdlib fan-out that asks five upstream seats at once, reuses connections, records nothing.

    python benchmarks/naive_fanout.py UPSTREAM_BASE_URL [PORT]    # prints its URL on stdout
"""
import http.client, json, queue, sys  # noqa: E401
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

UP = urlsplit(sys.argv[1])
SEATS = [f"m{i}" for i in range(1, 6)]
POOL = ThreadPoolExecutor(512)       # never the bottleneck: every seat of every panel runs at once
IDLE: queue.LifoQueue = queue.LifoQueue()   # idle keep-alive connections to the upstream


def ask(model: str, messages: list) -> str:
    try:
        conn = IDLE.get_nowait()
    except queue.Empty:
        conn = http.client.HTTPConnection(UP.hostname, UP.port, timeout=60)
    conn.request("POST", UP.path + "/chat/completions", json.dumps({"model": model, "messages": messages}),
                 {"Content-Type": "application/json"})
    data = json.loads(conn.getresponse().read())
    IDLE.put(conn)
    return f"## {model}\n\n{data['choices'][0]['message']['content']}\n\n"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True   # else the body, a second write, waits ~40 ms for the client's delayed ACK

    def do_POST(self):
        req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        text = "".join(POOL.map(lambda m: ask(m, req["messages"]), SEATS))
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
    server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[2]) if len(sys.argv) > 2 else 0), Handler)
    print(f"http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()
