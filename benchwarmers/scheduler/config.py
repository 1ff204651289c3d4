"""The scheduler's settings: the "scheduler" object of settings.json (off, each job on at its time by default)."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import BadRequest, ConfigError
from .when import At

FILE, SECTION = "settings.json", "scheduler"


@dataclass
class JobSettings:
    on: bool
    at: At


@dataclass
class Settings:
    enabled: bool = False
    jobs: dict = field(default_factory=dict)        # name -> JobSettings, for the jobs this version has
    problems: list = field(default_factory=list)    # hand edits that could not be used, each with what serves


def _section(data) -> dict:
    value = data.get(SECTION) if isinstance(data, dict) else None
    return value if isinstance(value, dict) else {}


def load(config, jobs: dict, save: bool = True) -> Settings:
    """The settings as they stand; a job with no time yet gets an early-morning one, chosen once and saved
    (with `save`: the scheduler's tick leaves the file alone while the scheduler is off)."""
    try:
        data = config.view(FILE)
    except ConfigError as e:
        out = _parse({}, jobs)
        out.problems.append(f"{e.message} The scheduler stays off until it is fixed.")
        return out
    missing = [j for j in jobs.values() if j.available and "at" not in _job_raw(data, j.name)]
    if missing and save and _writable(data):
        _save_times(config, missing)
        data = config.view(FILE)
    return _parse(data, jobs)


def _job_raw(data, name: str) -> dict:
    raw = _section(data).get("jobs")
    entry = raw.get(name) if isinstance(raw, dict) else None
    return entry if isinstance(entry, dict) else {}


def _writable(data) -> bool:
    """Only shapes we can add to without overwriting anything the user wrote."""
    section = data.get(SECTION, {})
    return isinstance(section, dict) and isinstance(section.get("jobs", {}), dict) and all(
        isinstance(v, dict) for v in section.get("jobs", {}).values())


def _save_times(config, missing: list) -> None:
    def change(data):
        if not _writable(data):
            return
        entries = data.setdefault(SECTION, {}).setdefault("jobs", {})
        for job in missing:
            entries.setdefault(job.name, {}).setdefault("at", At.pick(job.weekly).text())
    try:
        config.update(FILE, change)
    except (ConfigError, OSError):
        pass     # nothing saved: the next read tries again; load() reports a broken file itself


def _parse(data, jobs: dict) -> Settings:
    section, out = _section(data), Settings()
    if SECTION in data and not isinstance(data[SECTION], dict):
        out.problems.append(f"settings.json: {SECTION!r} must be an object; the scheduler stays off.")
    enabled = section.get("enabled", False)
    if not isinstance(enabled, bool):
        out.problems.append(f"settings.json: scheduler.enabled must be true or false, not {enabled!r}; "
                            "the scheduler stays off.")
    out.enabled = enabled is True
    for job in jobs.values():
        if not job.available:
            continue
        raw = _job_raw(data, job.name)
        on = raw.get("on", job.on_by_default)
        if not isinstance(on, bool):
            on = job.on_by_default
            out.problems.append(f"settings.json: scheduler.jobs.{job.name}.on must be true or false, not "
                                f"{raw['on']!r}; taken as {'on' if on else 'off'}.")
        try:
            at = At.parse(raw["at"], job.weekly, job.name) if "at" in raw else job.fallback   # not saved yet
        except BadRequest:
            at = job.fallback
            out.problems.append(f"settings.json: scheduler.jobs.{job.name}.at {raw.get('at')!r} is not a time; "
                                f"{at.text()} serves until it is fixed.")
        out.jobs[job.name] = JobSettings(on, at)
    return out


def update(config, jobs: dict, body: dict) -> None:
    """Apply {"enabled"?, "jobs"?: {name: {"on"?, "at"?}}} after checking all of it; 400 says what to fix."""
    extra = sorted(set(body) - {"enabled", "jobs"})
    if extra:
        raise BadRequest(f"Unknown field(s): {', '.join(extra)}.", "The scheduler takes enabled and jobs.")
    if "enabled" in body and not isinstance(body["enabled"], bool):
        raise BadRequest("enabled must be true or false.")
    changes = body.get("jobs") or {}
    if not isinstance(changes, dict):
        raise BadRequest("jobs must be an object: {\"probe\": {\"on\": true, \"at\": \"04:37\"}}.")
    clean = {name: _job_change(jobs, name, change) for name, change in changes.items()}

    def change(data):
        section = data.get(SECTION)
        if not isinstance(section, dict):
            section = data[SECTION] = {}
        if "enabled" in body:
            section["enabled"] = body["enabled"]
        if clean and not isinstance(section.get("jobs"), dict):
            section["jobs"] = {}
        for name, values in clean.items():
            entry = section["jobs"].get(name)
            if not isinstance(entry, dict):
                entry = section["jobs"][name] = {}
            entry.update(values)
    config.update(FILE, change)


def _job_change(jobs: dict, name: str, change) -> dict:
    job = jobs.get(name)
    if job is None:
        raise BadRequest(f"There is no job named {name!r}.", "Jobs: " + ", ".join(jobs) + ".")
    if not job.available:
        raise BadRequest(f"The {name} job is not available: {job.why_not}.")
    if not isinstance(change, dict) or set(change) - {"on", "at"}:
        raise BadRequest(f"jobs.{name} takes on (true or false) and at (a time).")
    out: dict[str, bool | str] = {}
    if "on" in change:
        if not isinstance(change["on"], bool):
            raise BadRequest(f"jobs.{name}.on must be true or false.")
        out["on"] = change["on"]
    if "at" in change:
        out["at"] = At.parse(change["at"], job.weekly, name).text()
    return out
