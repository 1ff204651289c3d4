"""A fast fake upstream for benchmarks: asyncio, HTTP/1.1 keep-alive, every answer after a fixed delay.

    python benchmarks/fastfake.py [--delay 0.05] [--port 0] [--answer-chars N]   # prints its base URL (.../v1)

tests/fakes' FakeOpenAI is a ThreadingHTTPServer that records every request; at 64 concurrent panels (320
seat calls at once) it, not the gateway, would set the pace. This one does no bookkeeping: it reads a request,
waits `delay` seconds without holding a thread, and answers /v1/chat/completions whole or as SSE (chunked); the
other member protocols too, each whole or streamed its own way (fastprotocols.py): Anthropic's /v1/messages,
Gemini's /v1beta/models/M:generateContent and :streamGenerateContent, Ollama's /api/chat.
A served name `fault-<kind>` misbehaves instead (soak.py mixes them in): fault-429 (a per-model rate limit, retry
after 1 s), fault-500, fault-garbage (a 200 that is not JSON), fault-drop (a stream cut mid-answer), fault-hang
(headers never come), fault-slow (1 s before answering). A served name `referee-<any>` answers a panel's referee
prompt with one contested point (points.py --cost measures the referee's cost with it).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fastprotocols  # noqa: E402  (a sibling script, not a package)

USAGE = {"prompt_tokens": 12, "completion_tokens": 4, "total_tokens": 16}
STATS = {"connections": 0, "requests": 0}   # GET /stats: how many TCP connections the callers opened
PAD = [""]   # what --answer-chars adds to every OpenAI answer (record_scale.py writes answers of a realistic size)


def whole(model: str) -> bytes:
    return json.dumps({"id": "chatcmpl-fast", "object": "chat.completion", "created": 1700000000, "model": model,
                       "choices": [{"index": 0, "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": f"{model} says: fine.{PAD[0]}"}}],
                       "usage": USAGE}).encode()


def frames(model: str, usage: bool) -> bytes:
    base = {"id": "chatcmpl-fast", "object": "chat.completion.chunk", "created": 1700000000, "model": model}

    def chunk(delta: dict, finish: str | None = None) -> str:
        return "data: " + json.dumps(dict(base, choices=[{"index": 0, "delta": delta, "finish_reason": finish}]))

    out = [chunk({"role": "assistant", "content": ""}), chunk({"content": f"{model} says:"}),
           chunk({"content": " fine." + PAD[0]}), chunk({}, "stop")]
    if usage:
        out.append("data: " + json.dumps(dict(base, choices=[], usage=USAGE)))
    out.append("data: [DONE]")
    return ("\n\n".join(out) + "\n\n").encode()


def response(status: int, body: bytes, ctype: str, chunked: bool) -> bytes:
    head = f"HTTP/1.1 {status} {'OK' if status == 200 else 'Error'}\r\nContent-Type: {ctype}\r\n"
    if chunked:   # one data chunk and the terminator: a real upstream streams, the client must read chunked
        return (head + "Transfer-Encoding: chunked\r\n\r\n").encode() + b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
    return (head + f"Content-Length: {len(body)}\r\n\r\n").encode() + body


async def answer(path: str, body: bytes, delay: float) -> bytes:
    try:
        req = json.loads(body or b"{}")
    except ValueError:
        req = {}
    if path == "/stats":
        return response(200, json.dumps(STATS).encode(), "application/json", False)
    STATS["requests"] += 1
    if not isinstance(req, dict):
        req = {}
    other = fastprotocols.reply_for(path)
    if other:
        await asyncio.sleep(delay)
        return response(200, *other(path, req))
    if not path.startswith("/v1/chat/completions"):
        return response(404, b'{"error": {"message": "not found"}}', "application/json", False)
    model = str(req.get("model") or "m")
    if model.startswith("fault-"):
        return await fault(model[6:], model, bool(req.get("stream")))
    await asyncio.sleep(delay)
    if model.startswith("referee-"):
        return response(200, referee(model, req), "application/json", False)
    if req.get("stream"):
        usage = bool((req.get("stream_options") or {}).get("include_usage"))
        return response(200, frames(model, usage), "text/event-stream", True)
    return response(200, whole(model), "application/json", False)


SEAT_HEADING = re.compile(r"^## Seat (\d+)(?: \u00b7 .*)?$", re.M)    # `## Seat N`, or an older `## Seat N · model`


def referee(model: str, req: dict) -> bytes:
    """A served name `referee-<any>` answers as a panel's referee: one point over the seats its prompt shows (each
    under `## Seat N`), asserted by all but the last two and denied by those, each quoting its own answer's first
    sentence (a whole sentence, as the service asks): a contested point that the service's checks let stand."""
    prompt = " ".join(str(m.get("content") or "") for m in req.get("messages") or [] if isinstance(m, dict))
    body = prompt.split("\n## End of the answers", 1)[0]
    marks = list(SEAT_HEADING.finditer(body))
    said = {int(m.group(1)): body[m.end(): marks[i + 1].start() if i + 1 < len(marks) else len(body)].strip()
            for i, m in enumerate(marks)}
    seats = sorted(said)
    point = {"claim": "The answer is fine.", "assert": seats[:-2] or seats, "deny": seats[-2:] if len(seats) > 2
             else [], "quotes": {str(n): said[n].split(". ")[0].split("\n")[0].rstrip(".") for n in seats}}
    text = json.dumps({"points": [point]})
    return json.dumps({"id": "chatcmpl-fast", "object": "chat.completion", "created": 1700000000, "model": model,
                       "choices": [{"index": 0, "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": text}}],
                       "usage": {"prompt_tokens": len(prompt) // 4, "completion_tokens": len(text) // 4,
                                 "total_tokens": (len(prompt) + len(text)) // 4}}).encode()


DROP = b"<drop>"   # answer() asks serve_conn to cut the connection after what precedes it
HANG = b"<hang>"   # answer() asks serve_conn to send nothing until the caller gives up and closes


async def fault(kind: str, model: str, stream: bool) -> bytes:
    if kind == "429":
        head = ("HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\nretry-after: 1\r\n"
                "x-ratelimit-limit-requests: 60\r\nx-ratelimit-remaining-requests: 0\r\n"
                "x-ratelimit-reset-requests: 1s\r\n")
        body = b'{"error": {"message": "Rate limit reached for requests", "type": "requests"}}'
        return (head + f"Content-Length: {len(body)}\r\n\r\n").encode() + body
    if kind == "500":
        return response(500, b'{"error": {"message": "upstream exploded"}}', "application/json", False)
    if kind == "garbage":
        return response(200, b"<html>this is no API</html>", "text/html", False)
    if kind == "hang":
        return HANG
    if kind == "slow":
        await asyncio.sleep(1.0)
    if kind == "drop":
        head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
        part = frames(model, False)[:120]
        return head.encode() + b"%x\r\n%s\r\n" % (len(part), part) + DROP
    return response(200, frames(model, False) if stream else whole(model),
                    "text/event-stream" if stream else "application/json", stream)


async def serve_conn(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay: float) -> None:
    STATS["connections"] += 1
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            path = lines[0].split(" ")[1] if len(lines[0].split(" ")) > 1 else "/"
            length = 0
            for line in lines[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value.strip() or 0)
            body = await reader.readexactly(length) if length else b""
            reply = await answer(path, body, delay)
            if reply == HANG:
                while await reader.read(65536):   # hold the connection, answering nothing, until it is closed
                    pass
                break
            writer.write(reply.removesuffix(DROP))
            await writer.drain()
            if reply.endswith(DROP):
                break
    except (asyncio.IncompleteReadError, ConnectionError, ValueError, IndexError):
        pass
    finally:
        writer.close()


async def main_async(port: int, delay: float) -> None:
    server = await asyncio.start_server(lambda r, w: serve_conn(r, w, delay), "127.0.0.1", port, backlog=1024)
    print(f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1", flush=True)
    async with server:
        await server.serve_forever()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--delay", type=float, default=0.05, help="seconds before each answer (default 0.05)")
    ap.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: a free one)")
    ap.add_argument("--answer-chars", type=int, default=0, help="characters of filler added to each OpenAI answer")
    args = ap.parse_args()
    PAD[0] = (" The answer goes on with more detail." * (args.answer_chars // 37 + 1))[:max(0, args.answer_chars)]
    try:
        asyncio.run(main_async(args.port, args.delay))
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
