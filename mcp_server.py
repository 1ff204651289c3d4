"""python mcp_server.py -> the Benchwarmers MCP server on stdio (see --help)."""
import sys

from benchwarmers.cli.main import run

if __name__ == "__main__":
    run(["mcp", *sys.argv[1:]])
