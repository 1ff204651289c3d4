def resolve(environ: dict | None = None, checkout: Path | None = None, platform: str | None = None,
            home: Path | None = None) -> Path:
    """BENCHWARMERS_HOME, then the checkout's .benchwarmers-home pointer, then the OS per-user folder."""
    env = os.environ if environ is None else environ
    if env.get("BENCHWARMERS_HOME"):
        return Path(env["BENCHWARMERS_HOME"]).expanduser().resolve()
    pointer = pointer_file(checkout)
    if (checkout or in_checkout()) and pointer.is_file():
        target = pointer.read_text(encoding="utf-8").strip()
        if target:
            path = Path(target).expanduser()
            return (path if path.is_absolute() else pointer.parent / path).resolve()
    return os_data_dir(platform, env, home)
