"""The onboarding queue: models wait in SQLite and one worker thread per service onboards them, one at a time.

An item goes queued -> probing (the probe, then a quick speed measure) -> (suite, for a full onboarding) -> done or
failed (with the reason); while in `suite`, `progress` says how far its suite run is; `suite` says what became of
the suite for the model (onboard.Onboarding.suite). An item queued without an endpoint names the one found to
serve it from the probing step on. Two services on one data folder share the queue: claiming an
item is one transaction, and nothing is claimed while another item is running with a fresh heartbeat. An item whose
worker stopped beating (a crash) or that was running when the service stopped is retried once, then failed; one cut
off after its model was registered resumes at the suite step (the suite run itself keeps what was answered). Each
item's log is a file under the data folder's runs/. The steps themselves are the bench's Onboarding (onboard.py),
run here one by one.
"""
from __future__ import annotations

import json
import logging
import threading
import time
from pathlib import Path

from ..errors import BadRequest, BenchError, ConfigError, Conflict, NotFound, UpstreamFailed
from ..redaction import redact
from ..store.ids import new_id
from . import health, onboard
from .onboardrequest import parse

log = logging.getLogger("benchwarmers.onboard")

QUEUED, PROBING, SUITE, DONE, FAILED = "queued", "probing", "suite", "done", "failed"
FINISHED = (DONE, FAILED)
IS_OPEN = f"state IN ({QUEUED!r}, {PROBING!r}, {SUITE!r})"      # SQL made of constants only
IS_RUNNING = f"state IN ({PROBING!r}, {SUITE!r})"
BEAT, STALE, POLL = 5.0, 30.0, 2.0     # seconds: heartbeat, a heartbeat this old means its worker is gone, poll
MAX_ATTEMPTS = 2                        # an interrupted item is retried once
FIELDS = ("id", "served", "endpoint", "via", "alias", "mode", "state", "reason", "model", "suite", "attempts",
          "created", "started", "finished")
PROGRESS = ("done", "total", "failed")       # of the item's suite run (and its id, "run"), kept while it plays
REBUILT = (BadRequest, NotFound, Conflict, ConfigError)   # the refusals a step raises, besides upstream faults


class Stopping(Exception):
    """The service is stopping while an item runs: the item stays on the queue."""


def view(row) -> dict:
    d = {k: row[k] for k in FIELDS}
    try:
        d["progress"] = json.loads(row["progress"]) if row["progress"] else None
    except ValueError:
        d["progress"] = None
    d["log"] = f"runs/onboard-{row['id']}.log"
    return d


def insert(conn, specs: list[dict], mode: str) -> list[dict]:
    """In one transaction: refuse what is already queued, then queue the rest in order."""
    open_items = conn.execute(f"SELECT id, served, endpoint, alias FROM onboard_queue WHERE {IS_OPEN}").fetchall()
    for spec in specs:
        for row in open_items:
            same_place = None in (spec["endpoint"], row["endpoint"]) or row["endpoint"] == spec["endpoint"]
            if onboard.same_name(row["served"], spec["served"]) and same_place:
                raise Conflict(f"{spec['served']!r} is already queued (item {row['id']}).",
                               f"Follow it with `bench onboard --wait` or GET /bench/onboard/{row['id']}.")
            if spec["alias"] and row["alias"] == spec["alias"]:
                raise Conflict(f"The alias {spec['alias']!r} is taken by queued item {row['id']}.",
                               "Pick another alias.")
    now, ids = time.time(), []
    for spec in specs:
        ids.append(conn.execute("INSERT INTO onboard_queue (served, endpoint, via, alias, mode, state, created) "
                                "VALUES (?, ?, ?, ?, ?, ?, ?)", (spec["served"], spec["endpoint"], spec["via"],
                                                                  spec["alias"], mode, QUEUED, now)).lastrowid)
    marks = ", ".join("?" * len(ids))
    return [view(r) for r in conn.execute(f"SELECT * FROM onboard_queue WHERE id IN ({marks}) ORDER BY id", ids)]


def stored_error(error: BenchError) -> str:
    """A step's fault as JSON, so a later caller can answer with the same status and code (keys redacted)."""
    refusal = next((c.__name__ for c in REBUILT if isinstance(error, c)), None)
    return json.dumps({"class": refusal, "kind": getattr(error, "kind", None),
                       "upstream_status": getattr(error, "upstream_status", None),
                       "message": redact(error.message), "hint": redact(error.hint or "") or None})


def rebuilt_error(stored: dict, reason: str) -> BenchError:
    """The error stored_error kept; an internal error when none was kept (the worker itself failed)."""
    message, hint = stored.get("message") or reason, stored.get("hint")
    if stored.get("kind"):
        return UpstreamFailed(stored["kind"], message, hint, upstream_status=stored.get("upstream_status"))
    cls = next((c for c in REBUILT if c.__name__ == stored.get("class")), BenchError)
    return cls(message, hint)


class OnboardQueue:
    """The service's one onboarding queue: started with the service, stopped before its database closes."""

    def __init__(self, onboarding: onboard.Onboarding, db, runs: Path):
        self.onboarding, self.db = onboarding, db
        self.owner = new_id("w_")
        self.runs = runs
        self._wake, self._stop = threading.Event(), threading.Event()
        self._changed = threading.Condition()
        self._lock = threading.Lock()          # between the worker finishing an item and stop() putting it back
        self._file_lock = threading.Lock()
        self._current: int | None = None
        self._cancelled = False
        self._started = False

    # -- the API's side ------------------------------------------------------------------------
    def enqueue(self, body: dict) -> list[dict]:
        specs, mode = parse(body)
        for spec in specs:
            self.onboarding.check_new(spec["served"], spec["endpoint"], spec["alias"], spec["via"])
        items = self.db.call(lambda c: insert(c, specs, mode))
        for item in items:
            where = f" on {item['endpoint']}" if item["endpoint"] else ""
            self.log_line(item["id"], f"queued: {item['served']}{where}, mode {mode}")
        self.start()
        self._wake.set()
        return items

    def items(self, limit: int = 50, ids: list[int] | None = None) -> list[dict]:
        if ids:
            marks = ", ".join("?" * len(ids))
            rows = self.db.query(f"SELECT * FROM onboard_queue WHERE id IN ({marks}) ORDER BY id", tuple(ids))
        else:
            rows = self.db.query("SELECT * FROM onboard_queue ORDER BY id DESC LIMIT ?", (limit,))
        return [view(r) for r in rows]

    def item(self, item_id: int) -> dict:
        row = self.db.one("SELECT * FROM onboard_queue WHERE id = ?", (item_id,))
        if row is None:
            raise NotFound(f"No onboarding item {item_id}.", "GET /bench/onboard lists recent items.")
        d = view(row)
        d["log_lines"] = self.read_log(item_id)
        return d

    def error_of(self, item_id: int) -> BenchError | None:
        """A failed item's fault as the error it was, so a caller can answer with its status and code."""
        row = self.db.one("SELECT reason, error FROM onboard_queue WHERE id = ?", (item_id,))
        if row is None or not row["reason"]:
            return None
        return rebuilt_error(json.loads(row["error"]) if row["error"] else {}, row["reason"])

    def wait(self, ids: list[int], timeout: float) -> list[dict]:
        """The items once every one has finished, or as they are when `timeout` passes or the service stops."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                items = self.items(ids=ids)
                left = deadline - time.monotonic()
                if all(i["state"] in FINISHED for i in items) or left <= 0 or self._stop.is_set():
                    return items
                self._changed.wait(min(left, 1.0))   # also notices items finished by another process

    # -- the log file --------------------------------------------------------------------------
    def log_path(self, item_id: int) -> Path:
        return self.runs / f"onboard-{item_id}.log"

    def log_line(self, item_id: int, text: str) -> None:
        line = time.strftime("%Y-%m-%d %H:%M:%S") + "  " + health.one_line(text, 2000) + "\n"
        try:
            with self._file_lock:
                self.runs.mkdir(parents=True, exist_ok=True)
                with open(self.log_path(item_id), "a", encoding="utf-8") as f:
                    f.write(line)
        except OSError as e:
            log.warning("could not write the onboarding log of item %s: %s", item_id, e)

    def read_log(self, item_id: int, last: int = 200) -> list[str]:
        try:
            return self.log_path(item_id).read_text(encoding="utf-8").splitlines()[-last:]
        except OSError:
            return []

    # -- the worker ----------------------------------------------------------------------------
    def start(self) -> None:
        with self._lock:
            if self._started or self._stop.is_set():
                return
            self._started = True
        for target, name in ((self._loop, "bench-onboard"), (self._beat, "bench-onboard-beat")):
            threading.Thread(target=target, name=name, daemon=True).start()

    def stop(self) -> None:
        """Stop taking items; the one running goes back on the queue (or fails, if this was its retry)."""
        self._stop.set()
        self._wake.set()
        with self._lock:
            if self._current is not None and not self._cancelled:
                self._cancelled = True
                self._interrupted(self._current, "the service stopped")
        with self._changed:
            self._changed.notify_all()

    close = stop

    def _loop(self) -> None:
        while not self._stop.is_set():
            self._wake.clear()
            try:
                item = self._next()
            except Exception:
                if not self._stop.is_set():       # while stopping, the database may be closing under it
                    log.exception("the onboarding queue could not take its next item")
                item = None
            if item is None:
                self._wake.wait(POLL)
            else:
                self._run(item)

    def _beat(self) -> None:
        while not self._stop.wait(BEAT):
            current = self._current
            if current is not None:
                self.db.submit(lambda c: c.execute("UPDATE onboard_queue SET heartbeat = ? WHERE id = ? AND owner = ?",
                                                   (time.time(), current, self.owner)))

    def _next(self) -> dict | None:
        if not self.db.one(f"SELECT 1 FROM onboard_queue WHERE {IS_OPEN} LIMIT 1"):
            return None
        recovered, item = self.db.call(self._claim)
        for row_id, attempts in recovered:
            self.log_line(row_id, "interrupted: its service stopped answering while it ran; "
                          + ("it runs again" if attempts < MAX_ATTEMPTS else "not retried a second time"))
        return item

    def _claim(self, conn) -> tuple[list, dict | None]:
        """One transaction: give up on items whose worker is gone, then take the next, unless one is running."""
        now = time.time()
        stale = conn.execute(f"SELECT id, attempts FROM onboard_queue WHERE {IS_RUNNING} AND "
                             "(heartbeat IS NULL OR heartbeat < ?)", (now - STALE,)).fetchall()
        for row in stale:
            self._requeue_or_fail(conn, row["id"], row["attempts"], "its service stopped while it ran")
        if conn.execute(f"SELECT 1 FROM onboard_queue WHERE {IS_RUNNING} LIMIT 1").fetchone():
            return [(r["id"], r["attempts"]) for r in stale], None
        row = conn.execute("SELECT id FROM onboard_queue WHERE state = ? ORDER BY id LIMIT 1", (QUEUED,)).fetchone()
        item = None
        if row:
            conn.execute("UPDATE onboard_queue SET state = ?, owner = ?, heartbeat = ?, started = ?, "
                         "attempts = attempts + 1 WHERE id = ?", (PROBING, self.owner, now, now, row["id"]))
            item = view(conn.execute("SELECT * FROM onboard_queue WHERE id = ?", (row["id"],)).fetchone())
        return [(r["id"], r["attempts"]) for r in stale], item

    @staticmethod
    def _requeue_or_fail(conn, item_id: int, attempts: int, why: str) -> None:
        """Back on the queue, or, the second time, failed; one whose model is registered is done, its suite
        run left open to resume."""
        if attempts < MAX_ATTEMPTS:
            conn.execute("UPDATE onboard_queue SET state = ?, owner = NULL, heartbeat = NULL WHERE id = ?",
                         (QUEUED, item_id))
            return
        row = conn.execute("SELECT model FROM onboard_queue WHERE id = ?", (item_id,)).fetchone()
        if row and row["model"]:
            suite = (f"interrupted twice ({why}); the suite run stays open: the scheduler's suite job or `bench suite "
                     f"run --model {row['model']}` resumes it")
            conn.execute("UPDATE onboard_queue SET state = ?, suite = ?, finished = ?, owner = NULL WHERE id = ?",
                         (DONE, suite, time.time(), item_id))
            return
        conn.execute("UPDATE onboard_queue SET state = ?, reason = ?, finished = ? WHERE id = ?",
                     (FAILED, f"interrupted twice ({why}); not retried again. Queue it again to retry.",
                      time.time(), item_id))

    def _interrupted(self, item_id: int, why: str) -> None:
        """Called with the lock held, while stopping."""
        try:
            row = self.db.one("SELECT attempts FROM onboard_queue WHERE id = ?", (item_id,))
            self.db.call(lambda c: self._requeue_or_fail(c, item_id, row["attempts"] if row else MAX_ATTEMPTS, why))
            again = row and row["attempts"] < MAX_ATTEMPTS
            self.log_line(item_id, f"interrupted: {why}; " + ("it runs again when the service is back" if again
                                                              else "not retried a second time"))
        except Exception:   # the database may already be closing; the heartbeat check catches it next time
            log.warning("could not put onboarding item %s back on the queue", item_id, exc_info=True)

    def _run(self, item: dict) -> None:
        with self._lock:
            self._current, self._cancelled = item["id"], False
        try:
            self._steps(item)
        except Stopping:
            pass
        except BenchError as e:
            self._fail(item["id"], health.one_line(str(e)), e)
        except Exception as e:
            if self._stop.is_set():   # stopping: the database may close under a suite step; the item is requeued
                return
            log.exception("onboarding item %s failed", item["id"])
            self._fail(item["id"], f"internal error ({type(e).__name__}); the service log has details")
        finally:
            with self._lock:
                self._current = None
            with self._changed:
                self._changed.notify_all()

    def _steps(self, item: dict) -> None:
        item_id, mode = item["id"], item["mode"]
        self.log_line(item_id, f"started (attempt {item['attempts']}): finding the endpoint that serves "
                               f"{item['served']}")
        alias = self._registered(item) or self._register(item)
        if self.onboarding.runs_suite(alias, mode):
            self.db.call(lambda c: c.execute("UPDATE onboard_queue SET state = ? WHERE id = ?", (SUITE, item_id)))
            self.log_line(item_id, f"running the suite for {alias}")
        suite = self.onboarding.suite(alias, mode, progress=lambda run, _: self._progress(item_id, run))
        with self._lock:
            if self._cancelled:
                raise Stopping()
            self.log_line(item_id, "suite: " + suite)
            self._write_end(item_id, DONE, None, None, alias, suite)

    def _registered(self, item: dict) -> str | None:
        """The alias an earlier attempt registered (it was cut off in the suite step), or None."""
        alias = item.get("model")
        if alias and alias in self.onboarding.registry.models():
            self.log_line(item["id"], f"{alias} was registered by the earlier attempt: on to the suite step")
            return alias
        return None

    def _register(self, item: dict) -> str:
        """Find, name, probe, time and register the model; the item keeps its alias (a retry resumes after this)."""
        item_id, served, mode = item["id"], item["served"], item["mode"]
        steps = self.onboarding
        served = steps.through_hub(served, item["endpoint"], item.get("via"), lambda line: self.log_line(item_id, line))
        found, entry = steps.locate(served, item["endpoint"])
        if not item["endpoint"]:      # queued without one: the item now names the endpoint found, so its progress
            self.db.call(lambda c: c.execute(      # shows on that endpoint's row alone
                "UPDATE onboard_queue SET endpoint = ? WHERE id = ? AND endpoint IS NULL", (found.name, item_id)))
        alias = steps.pick_alias(served, found.name, item["alias"])
        listed = f" {entry['id']}" if entry.get("id") != served else ""   # its `:latest`, as the endpoint lists it
        self.log_line(item_id, f"found{listed} on endpoint {found.name} ({found.api}); probing it as {alias}")
        model, probe = steps.probe(found, entry, alias, mode == "adhoc")
        self.log_line(item_id, f"probe answered {probe.answer!r} in {probe.seconds:.1f} s "
                               f"({probe.input_tokens}+{probe.output_tokens} tokens)")
        if not probe.followed:
            self.log_line(item_id, f"its answer is not the word {health.PROBE_WORD!r} it was asked for: the model "
                                   "answers, but may not follow instructions (its suite run will tell)")
        figure, said = steps.measure(model, mode)
        self.log_line(item_id, said)
        with self._lock:
            if self._cancelled:
                raise Stopping()
            steps.register(model, probe, figure)
            self.log_line(item_id, f"registered as {alias}" + (" (ad hoc)" if model.ad_hoc else ""))
            self.db.call(lambda c: c.execute("UPDATE onboard_queue SET model = ? WHERE id = ?", (alias, item_id)))
        return alias

    def _progress(self, item_id: int, run: dict) -> None:
        """The item's suite run after each of its items, for the API's progress view."""
        if self._stop.is_set():
            return                    # stopping: the database may be closing; the item is back on the queue
        progress = json.dumps({"run": run["id"], **{k: run[k] for k in PROGRESS}})
        self.db.submit(lambda c: c.execute("UPDATE onboard_queue SET progress = ? WHERE id = ? AND state = ?",
                                           (progress, item_id, SUITE)))

    def _fail(self, item_id: int, reason: str, error: BenchError | None = None) -> None:
        with self._lock:
            if self._cancelled:
                return
            self.log_line(item_id, f"failed: {reason}")
            self._write_end(item_id, FAILED, reason, stored_error(error) if error else None, None, None)

    def _write_end(self, item_id: int, state: str, reason, error, model, suite) -> None:
        self.db.call(lambda c: c.execute(
            "UPDATE onboard_queue SET state = ?, reason = ?, error = ?, model = ?, suite = ?, finished = ?, "
            "owner = NULL WHERE id = ?", (state, reason, error, model, suite, time.time(), item_id)))

