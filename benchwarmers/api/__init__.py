"""Route handlers, one module per noun: each takes (Request, the parts of the Bench it uses) and returns a Response;
the parts are a Protocol in the module (or shared, in parts.py), checked by tests/test_parts.py."""
