"""Route handlers, one module per noun: each takes (Request, Bench) and returns a Response."""
