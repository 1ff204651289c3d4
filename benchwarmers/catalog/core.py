"""The service's catalog: each model's facts with their sources, its roles, and holds; cached until anything changes."""
from __future__ import annotations

import threading
from pathlib import Path

from ..errors import Conflict, NotHeld
from ..store import Config
from . import overrides, roles as roles_mod, sources, store, watch
from .merge import Indexed, merge
from .vendors import APP_ONLY, match


class Catalog:
    def __init__(self, home: Path, config: Config, registry):
        self.home = Path(home)
        self.config = config
        self.registry = registry            # the roster's Registry: endpoints(), models() and model() are read
        self.copies = store.Copies(self.home)
        self._lock = threading.RLock()
        self._refreshing = threading.Lock()
        self._key: tuple | None = None
        self._ix: Indexed | None = None
        self._ix_version = -1
        self._cache: dict = {}
        self._watch: dict | None = None
        self._watched = False

    # ---- state ------------------------------------------------------------------------------------
    def state(self) -> tuple[Indexed, dict]:
        """The indexed copies and the overrides, rebuilding the caches when a copy or any config file changed;
        looked at once in a Config.steady() block (one request, and its panel's seats)."""
        return self.config.kept(self, self._state)

    def _state(self) -> tuple[Indexed, dict]:
        data = overrides.read(self.config)            # these reads notice hand edits (and bump the version)
        self.registry.models()
        copies = self.copies.get()
        key = (self.copies.version, self.config.version)
        if key == self._key and self._ix is not None:   # nothing changed: no lock (every seat comes through here)
            return self._ix, data
        with self._lock:
            if key != self._key:
                if self._ix_version != self.copies.version:
                    self._ix, self._ix_version = Indexed(copies), self.copies.version
                self._cache, self._key, self._watched = {}, key, False
            assert self._ix is not None      # made once the key is
            return self._ix, data

    def provider_of(self, endpoint) -> str | None:
        ix, data = self.state()
        if endpoint is None:
            return None
        return overrides.endpoint_provider(data, endpoint.name) or match(endpoint.base_url, ix.pairs)

    def lookup(self, endpoint, served: str, listed: dict | None = None, own: dict | None = None) -> tuple:
        """(provider id, {fact: {"value", "source"}}) for `served` at `endpoint`, on the bench or not yet."""
        ix, _ = self.state()
        pid = self.provider_of(endpoint)
        return pid, merge(ix, pid, served, listed or {}, own or {})

    def sourced(self, model) -> tuple[str | None, dict]:
        """lookup() for a model on the bench, with the user's overrides; cached."""
        return self._cached(model)[:2]

    def facts(self, model) -> dict:
        """The merged values alone: what seating and route mode check (cached: read-only)."""
        memo = self.config.memo()   # _cached()'s hit, one step less (every seat asks): the request's state() seen
        if memo is not None and self in memo:
            key, cache = (model.alias, model.endpoint, model.served), self._cache
            if key in cache:    # (a cache is replaced, never emptied: no other thread can take the key away)
                return cache[key][2]
        return self._cached(model)[2]

    def _cached(self, model) -> tuple[str | None, dict, dict, tuple]:
        """(provider id, sourced facts, their values, its price()) for a model on the bench, kept until anything
        changes: every seat reads them several times."""
        _, data = self.state()
        key = (model.alias, model.endpoint, model.served)
        cache = self._cache
        if key in cache:
            return cache[key]
        own = overrides.facts_of(overrides.for_model(data, model.alias))
        pid, sourced = self.lookup(self.registry.endpoints().get(model.endpoint), model.served, model.facts, own)
        pin, pout = sourced.get("price_in"), sourced.get("price_out")
        price = ((pin or {}).get("value"), (pout or {}).get("value"), (pout or pin or {}).get("source"))
        hit = (pid, sourced, {k: v["value"] for k, v in sourced.items()}, price)
        with self._lock:   # into the cache it was looked for in: one rebuilt meanwhile must not keep it
            cache[key] = hit
        return hit

    def roles(self, model) -> tuple[list[str], str]:
        """(roles, "user" or "auto")."""
        _, data = self.state()
        chosen = overrides.roles_of(overrides.for_model(data, model.alias))
        if chosen:
            return chosen, "user"
        return roles_mod.auto(model.served, self.facts(model)), "auto"

    def unfit(self, model, purpose: str) -> str | None:
        """Why the model does not fit the purpose, or None: its roles, and for "vision" its reading images (a
        general model fits every purpose by its role, but not one about images unless it sees them)."""
        reason = roles_mod.unfit(self.roles(model)[0], purpose)
        if reason is None and purpose == "vision" and self.facts(model).get("vision") is not True:
            return "it does not read images (no source says it does), and purpose 'vision' needs that"
        return reason

    def price(self, model) -> tuple[float | None, float | None, str | None]:
        """(USD per million input tokens, per million output tokens, where that came from)."""
        memo = self.config.memo()   # as facts()
        if memo is not None and self in memo:
            key, cache = (model.alias, model.endpoint, model.served), self._cache
            if key in cache:
                return cache[key][3]
        return self._cached(model)[3]

    def describe(self, model) -> dict:
        """What the roster shows: provider, each fact with its source, roles, and a hold."""
        pid, facts = self.sourced(model)
        roles, chosen = self.roles(model)
        return {"provider": pid, "facts": facts, "roles": roles, "roles_set_by": chosen,
                "held": self.held(model.alias)}

    # ---- free models only their own app can use -----------------------------------------------------
    def app_only(self) -> list[dict]:
        """The providers whose free models work only in their own app, each with the user's switch."""
        data = self.state()[1]
        return [{"provider": a.id, "name": a.name, "app": a.app, "why": a.why, "doc": a.doc,
                 "use_free": overrides.uses_free(data, a.id)} for a in APP_ONLY.values()]

    def app_only_free(self, provider: str | None, free: bool | None) -> str | None:
        """Why a free model of `provider` is left out (its free models work only in the provider's app and the
        user has not switched them on), or None."""
        found = APP_ONLY.get(provider or "")
        if not found or not free or overrides.uses_free(self.state()[1], found.id):
            return None
        return f"its provider's free models work only in {found.app} (Settings: switch {found.id} on to use them)"

    def app_only_reason(self, model) -> str | None:
        """app_only_free() for a model on the bench: explore seats pass it over. With no price known, a served
        name ending in '-free' (OpenCode Zen's way of naming them) counts as free."""
        pid, facts = self.sourced(model)
        free = watch.is_free(facts, model.served)
        return self.app_only_free(pid, model.served.endswith("-free") if free is None else free)

    # ---- holds ------------------------------------------------------------------------------------
    def _watch_state(self) -> dict:
        self.state()   # (kept in the request's memo: one look a request)
        if self._watched and self._watch is not None:   # up to date since the last change: no lock
            return self._watch
        with self._lock:
            if self._watch is None:
                self._watch = watch.load(self.home)
            if not self._watched:
                current = {m.alias: (m.served, self.sourced(m)[1]) for m in self.registry.models().values()}
                if watch.update(self._watch, current):
                    watch.save(self.home, self._watch)
                self._watched = True
            return self._watch

    def held(self, alias: str) -> dict | None:
        return (self._watch_state()["models"].get(alias) or {}).get("held")

    def holds(self) -> list[dict]:
        return [{"model": alias, **entry["held"]} for alias, entry in sorted(self._watch_state()["models"].items())
                if entry.get("held")]

    def confirm(self, alias: str) -> dict:
        model = self.registry.model(alias)
        with self._lock:
            state = self._watch_state()
            if not (state["models"].get(alias) or {}).get("held"):
                raise NotHeld(f"{alias!r} is not held.", "Only a free model that turned paid is held: bench status "
                              "lists them.")
            lifted = watch.confirm(state, alias, model.served)
            watch.save(self.home, state)
        assert lifted is not None     # it was held: there is a hold to lift
        return lifted

    # ---- copies -----------------------------------------------------------------------------------
    def refresh(self) -> dict:
        """Fetch every source now; a failed fetch keeps the last good copy. One refresh at a time."""
        if not self._refreshing.acquire(blocking=False):
            raise Conflict("A catalog refresh is already running.", "Wait for it to finish.")
        try:
            results = sources.refresh(self.home, self.copies.get(force=True))
            self.copies.get(force=True)
            memo = self.config.memo()
            if memo is not None:
                memo.pop(self, None)   # this request sees the copies it just fetched
            return {"sources": results, "held": self.holds()}
        finally:
            self._refreshing.release()

    def status(self) -> dict:
        fetched = store.read_status(self.home)
        copies = self.copies.get()
        out = []
        for name in store.SOURCES:
            copy = copies.get(name)
            row = copy.describe() if copy else {"source": name, "from": None, "models": 0}
            attempt = fetched.get(name) or {}
            row["fetch"] = {k: attempt.get(k) for k in ("last_attempt", "ok", "error", "last_success")} \
                if attempt else None
            row["fetched_from"] = next((s.url for s in sources.FETCHED if s.name == name), None)
            out.append(row)
        return {"sources": out, "held": self.holds()}
