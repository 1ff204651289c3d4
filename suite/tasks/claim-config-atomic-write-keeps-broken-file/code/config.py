def parse(path: Path) -> dict:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: not UTF-8 text ({e.reason}).", "Save the file as UTF-8.") from None
    try:
        data = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as e:
        raise ConfigError(f"{path}:{e.lineno}:{e.colno}: {e.msg}.",
                          "Fix the file by hand; Benchwarmers will not overwrite it while it is broken.") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}:1:1: the file must hold a JSON object, not {type(data).__name__}.",
                          "Fix the file by hand.")
    return data


def atomic_write(path: Path, data: dict) -> None:
    """Temp file in the same folder, fsync, then os.replace: a crash leaves the old file or the new, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        parse(path)   # refuse to replace a file the user broke by hand: their edit is not ours to lose
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    with open(tmp, "w", encoding="utf-8", newline="\n") as f:
        json.dump(data, f, indent=2, ensure_ascii=False)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
