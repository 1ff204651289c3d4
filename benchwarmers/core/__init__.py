"""The core between formats and providers: seating, the panel, route mode, the record, calling one member."""
