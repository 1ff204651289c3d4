"""bench mcp: run the MCP server on stdio (for Claude Code and other MCP clients)."""
from __future__ import annotations

from .parsers import command


def register(sub, parent) -> None:
    command(sub, parent, "mcp", "run the MCP server on stdio (for MCP clients)", run, needs_client=False,
            description="An MCP server on stdio with four tools: list_collections, ask, verdict and pending_verdicts. "
                        "It is a client of the running service, so start that first (`benchwarmers`). stdout carries "
                        "only protocol messages; logs go to stderr. Clients that connect to a URL use the service's "
                        "own /mcp instead.",
            example=("benchwarmers mcp",
                     "BENCHWARMERS_URL=http://192.168.1.5:8122 BENCHWARMERS_KEY=... benchwarmers mcp"),
            after="\n\nan MCP client's config (USAGE.md, under MCP, has the forms for a checkout and over HTTP):\n"
                  '  {"mcpServers": {"benchwarmers": {"command": "benchwarmers", "args": ["mcp"]}}}')


def run(args, client) -> int:
    from ..mcp.server import run as serve_mcp
    return serve_mcp(getattr(args, "url", None))
