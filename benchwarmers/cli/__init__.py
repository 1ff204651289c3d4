"""The `bench` / `benchwarmers` command: a client of the running service, plus serve, init and mcp."""
