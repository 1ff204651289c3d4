"""Job times: parsing 'HH:MM' and 'DAY HH:MM', and the windows they make in local time (daylight saving too)."""
from __future__ import annotations

import random
from datetime import datetime

import pytest

from benchwarmers.errors import BadRequest
from benchwarmers.scheduler.when import At
from tests.helpers.clock import FakeClock


@pytest.mark.parametrize("text, weekly, minute, day", [
    ("04:37", False, 277, None), ("4:05", False, 245, None), (" 23:59 ", False, 1439, None),
    ("sun 05:12", True, 312, 6), ("Monday 00:00", True, 0, 0), ("FRI 9:30", True, 570, 4),
])
def test_times_parse(text, weekly, minute, day):
    at = At.parse(text, weekly)
    assert (at.minute, at.weekday) == (minute, day)
    assert At.parse(at.text(), weekly) == at


@pytest.mark.parametrize("text, weekly", [("24:00", False), ("4pm", False), ("sun 05:12", False), ("05:12", True),
                                          ("someday 05:12", True), ("", False), (None, False), (437, False)])
def test_bad_times_say_what_is_wanted(text, weekly):
    with pytest.raises(BadRequest) as err:
        At.parse(text, weekly, "probe")
    assert ("'DAY HH:MM'" if weekly else "'HH:MM'") in str(err.value)


def test_picked_defaults_are_early_morning():
    rng = random.Random(7)
    for _ in range(200):
        at = At.pick(True, rng)
        assert 120 <= at.minute < 360 and 0 <= at.weekday < 7
    assert At.pick(False, rng).weekday is None


def test_daily_and_weekly_windows():
    clock = FakeClock(datetime(2025, 3, 5, 10, 0))           # a Wednesday
    daily, weekly = At(4 * 60 + 30), At(5 * 60, 6)
    assert clock.local(daily.latest(clock, clock.now())) == datetime(2025, 3, 5, 4, 30)
    assert clock.local(daily.after(clock, clock.now())) == datetime(2025, 3, 6, 4, 30)
    assert clock.local(weekly.latest(clock, clock.now())) == datetime(2025, 3, 2, 5, 0)
    assert clock.local(weekly.after(clock, clock.now())) == datetime(2025, 3, 9, 5, 0)
    exact = clock.epoch(datetime(2025, 3, 5, 4, 30))
    assert daily.latest(clock, exact) == exact and daily.after(clock, exact) == exact + 86400


def test_windows_keep_their_local_time_across_daylight_saving():
    zoneinfo = pytest.importorskip("zoneinfo")
    try:
        zone = zoneinfo.ZoneInfo("Europe/Berlin")
    except zoneinfo.ZoneInfoNotFoundError:
        pytest.skip("no time zone data on this system")

    class Berlin(FakeClock):
        def local(self, t):
            return datetime.fromtimestamp(t, zone).replace(tzinfo=None)

        def epoch(self, local):
            return local.replace(tzinfo=zone).timestamp()

    clock = Berlin()
    clock.to(datetime(2025, 3, 29, 12, 0))                   # the clocks go forward the next night
    at = At(4 * 60 + 30)
    nxt = at.after(clock, clock.now())
    assert clock.local(nxt) == datetime(2025, 3, 30, 4, 30) and nxt - at.latest(clock, clock.now()) == 23 * 3600
