"""Route handlers, one module per noun: each takes (Request, Context) and returns a Response."""
