def coerce(name: str, value: Any) -> Any:
    """Check a value against its declaration; raises BadRequest saying what is allowed."""
    s = SETTINGS.get(name)
    if s is None:
        raise BadRequest(f"Unknown setting {name!r}.", "Known settings: " + ", ".join(sorted(SETTINGS)))
    if value is None and s.default is None:
        return None
    try:
        if s.type is bool and not isinstance(value, bool):
            raise TypeError
        v = s.type(value) if not isinstance(value, s.type) else value
    except (TypeError, ValueError):
        raise BadRequest(f"Setting {name!r} must be a {s.type.__name__}, not {value!r}.", s.help) from None
    if not s.check(v):
        raise BadRequest(f"Setting {name!r} cannot be {value!r}.", s.help)
    return v


def effective(stored: dict) -> dict:
    """Defaults, overridden by settings.json."""
    out = {}
    for name, s in SETTINGS.items():
        value = stored.get(name, s.default)
        try:
            out[name] = coerce(name, value)
        except BadRequest:
            out[name] = s.default   # a bad hand edit falls back to the default for that one setting
    return out
