def host_name(value: str) -> str:
    """The name part of a Host header, lower-cased, without the port."""
    value = (value or "").strip().lower()
    if value.startswith("["):
        return value[: value.find("]") + 1] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value
