class Config:
    """Cached by mtime, so the hot path reads memory; a broken file is reported, never overwritten."""

    def __init__(self, folder: Path):
        self.dir = Path(folder) / "config"
        self.dir.mkdir(parents=True, exist_ok=True)
        self._lock = FileLock(self.dir / ".lock")
        self._cache: dict[str, tuple[float, int, dict]] = {}
        self._mem = threading.Lock()
        self.version = 0             # bumped on every write seen, so callers can cache derived data

    def path(self, name: str) -> Path:
        return self.dir / name

    def read(self, name: str) -> dict:
        """A deep copy of the file's data (callers may change it freely)."""
        return copy.deepcopy(self._load(name))

    def view(self, name: str) -> dict:
        """The cached data itself: read-only use on the hot path."""
        return self._load(name)

    def _load(self, name: str) -> dict:
        path = self.path(name)
        try:
            st = path.stat()
        except FileNotFoundError:
            return copy.deepcopy(DEFAULTS.get(name, {}))
        key = (st.st_mtime_ns, st.st_size)
        with self._mem:
            hit = self._cache.get(name)
            if hit and hit[:2] == key:
                return hit[2]
        data = parse(path)
        with self._mem:
            self._cache[name] = (*key, data)
            self.version += 1
        return data

    def write(self, name: str, data: dict) -> None:
        with self._lock:
            atomic_write(self.path(name), data)
        with self._mem:
            self._cache.pop(name, None)
            self.version += 1

    def update(self, name: str, change: Callable[[dict], object]):
        """Read, change and write one file under the lock; returns what `change` returned."""
        with self._lock:
            data = copy.deepcopy(self._load(name))
            result = change(data)
            atomic_write(self.path(name), data)
        with self._mem:
            self._cache.pop(name, None)
            self.version += 1
        return result

    def check_all(self) -> list[str]:
        """Every config file that cannot be read, as 'file:line:col: message'."""
        problems = []
        for name in DEFAULTS:
            try:
                self._load(name)
            except ConfigError as e:
                problems.append(e.message)
        return problems
