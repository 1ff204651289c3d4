def normalise_url(url: str) -> str:
    """Accept the service root with or without a trailing /v1 (what gateway clients are told to use)."""
    url = url.strip().rstrip("/")
    if url.endswith("/v1"):
        url = url[:-3]
    if "://" not in url:
        url = "http://" + url
    return url
