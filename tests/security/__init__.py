"""The security suite, one module per attack class; it enumerates the route table, so a new route is attacked too."""
