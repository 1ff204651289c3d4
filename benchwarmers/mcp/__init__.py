"""MCP for Benchwarmers: the tools (written once), one session's protocol, the stdio server (a client of the service)
and the sessions of the service's own /mcp transport (api/mcp.py)."""
