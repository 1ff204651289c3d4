"""python mcp_server.py -> the Benchwarmers MCP server on stdio (see --help)."""
import sys

from benchwarmers.cli.main import main

if __name__ == "__main__":
    sys.exit(main(["mcp", *sys.argv[1:]]))
