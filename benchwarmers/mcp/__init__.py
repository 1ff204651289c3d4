"""The MCP server on stdio (server) and its three tools (tools), a client of the running service."""
