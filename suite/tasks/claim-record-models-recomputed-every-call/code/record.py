def __init__(self, db: Database, wrong_ratio: float = 0.5, ttl: float = 5.0):
    self.db = db
    self.wrong_ratio = wrong_ratio
    self.ttl = ttl
    self._cache: dict = {}
    self._lock = threading.Lock()


def models(self, collection: str | None = None) -> dict[str, dict]:
    key = collection or ""
    with self._lock:
        hit = self._cache.get(key)
        if hit and time.monotonic() - hit[0] < self.ttl:
            return hit[1]
    data = self._compute(collection)
    with self._lock:
        self._cache[key] = (time.monotonic(), data)
    return data


def invalidate(self) -> None:
    with self._lock:
        self._cache.clear()
