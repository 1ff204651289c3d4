"""One module a dashboard page; each builds a dict (served as /.json) and renders it."""
