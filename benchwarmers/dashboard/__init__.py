"""The dashboard: server-rendered pages, each built from one dict that is also served as JSON."""
