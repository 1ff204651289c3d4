"""`benchwarmers mcp`: an MCP server on stdio (JSON-RPC 2.0, one message a line) whose tools ask the running service."""
from __future__ import annotations

import json
import logging
import sys
import threading

from .. import __version__, strictjson
from .protocol import INVALID_REQUEST, PARSE_ERROR, Session, batch_refusal, error_reply, is_request, valid_id
from .reach import HttpReach
from .tools import Tools

log = logging.getLogger("benchwarmers.mcp")


class McpServer:
    """Reads messages from `inp` (binary lines), writes replies to `out`; tool calls run on worker threads."""

    def __init__(self, inp, out, tools: Tools | None = None):
        self.inp, self.out = inp, out
        self.session = Session(tools or Tools(HttpReach()))
        self._write_lock = threading.Lock()
        self._workers: list[threading.Thread] = []

    # -- the loop ------------------------------------------------------------------------------
    def serve(self) -> int:
        """Until stdin ends; then let in-flight tool calls answer, and exit 0."""
        log.info("benchwarmers MCP server %s on stdio; tools ask %s", __version__, self.session.tools.reach.describe())
        for raw in self.inp:
            line = raw.strip()
            if line:
                self.handle_line(line)
        for t in list(self._workers):
            t.join()
        return 0

    def handle_line(self, line: bytes) -> None:
        try:
            msg = strictjson.loads(line.decode("utf-8"))
        except (ValueError, UnicodeDecodeError, RecursionError) as e:
            self.write(error_reply(None, PARSE_ERROR, f"Parse error: {e}"))
            return
        if isinstance(msg, list):
            refusal = batch_refusal(msg)     # the cap HTTP's /mcp holds to: one line cannot start unbounded work
            if refusal:
                self.write(error_reply(None, INVALID_REQUEST, refusal))
            else:
                self._spawn(self._run_batch, msg)
            return
        if is_request(msg) and msg["method"] == "tools/call" and valid_id(msg["id"]):
            self._spawn(self._run_one, msg)
            return
        reply = self.session.respond(msg)
        if reply is not None:
            self.write(reply)

    def write(self, obj) -> None:
        """One message, one line; ensure_ascii=False keeps it UTF-8 and json never emits a raw newline."""
        data = json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"
        with self._write_lock:
            try:
                self.out.write(data)
                self.out.flush()
            except (BrokenPipeError, OSError, ValueError):
                log.debug("stdout is closed; dropping a reply")

    # -- workers -------------------------------------------------------------------------------
    def _spawn(self, target, *args) -> None:
        t = threading.Thread(target=target, args=args, daemon=True, name="mcp-call")
        self._workers = [w for w in self._workers if w.is_alive()]
        self._workers.append(t)
        t.start()

    def _run_one(self, msg: dict) -> None:
        reply = self.session.answer(msg, self.write)
        if reply is not None:
            self.write(reply)

    def _run_batch(self, batch: list) -> None:
        """A JSON-RPC batch (2025-03-26) is answered by one array of the replies, in order."""
        replies = [r for r in (self.session.answer(msg, self.write) for msg in batch) if r is not None]
        if replies:
            self.write(replies)


def run(url: str | None = None) -> int:
    """Serve on this process's stdin and stdout; anything else that prints goes to stderr, not the protocol."""
    out = sys.stdout.buffer
    sys.stdout = sys.stderr
    try:
        return McpServer(sys.stdin.buffer, out, Tools(HttpReach(url=url))).serve()
    except KeyboardInterrupt:
        return 130
