def check_origin(req: Request) -> None:
    """A state-changing request from another site's page is refused (CSRF); non-browser clients send no Origin."""
    if req.method in SAFE_METHODS:
        return
    if req.headers.get("sec-fetch-site", "").lower() == "cross-site":
        raise Forbidden("Cross-site requests are refused.", "Call the service from its own pages or a client.",
                        code="cross_origin")
    own = req.headers.get("host", "").lower()
    for header in ("origin", "referer"):
        value = req.headers.get(header)
        if not value:
            continue
        if value == "null" or urlsplit(value).netloc.lower() != own:
            raise Forbidden(f"Requests from {value!r} are refused: it is not this server's own origin.",
                            "Call the service from its own pages or a non-browser client.", code="cross_origin")
        return
