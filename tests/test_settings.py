"""Settings: each declared once; values checked against the declaration; file, then environment, override."""
from __future__ import annotations

import pytest

from benchwarmers import settings
from benchwarmers.errors import BadRequest


def test_every_setting_is_declared_with_help_and_a_valid_default():
    for name, s in settings.SETTINGS.items():
        assert s.name == name
        assert s.help.strip().endswith(".")
        assert settings.coerce(name, s.default) == s.default


def test_coerce_converts_and_checks():
    assert settings.coerce("seat_timeout", "12.5") == 12.5
    assert settings.coerce("panel_workers", 8) == 8
    assert settings.coerce("keepalive_seconds", 3) == 3.0
    assert settings.coerce("merge_model", None) is None


@pytest.mark.parametrize("name,value", [("seat_timeout", 0), ("seat_timeout", "soon"), ("panel_workers", -1),
                                        ("keepalive_seconds", "often"), ("pin_idle_minutes", -1),
                                        ("max_body_mb", None)])
def test_coerce_refuses_with_the_help_text(name, value):
    with pytest.raises(BadRequest) as err:
        settings.coerce(name, value)
    assert settings.SETTINGS[name].help in str(err.value)


def test_unknown_setting_lists_the_known_ones():
    with pytest.raises(BadRequest) as err:
        settings.coerce("seat_timout", 5)
    assert "seat_timeout" in str(err.value)


def test_effective_layers_defaults_and_the_file():
    out = settings.effective({"seat_timeout": 42, "merge_model": "alpha"})
    assert out["seat_timeout"] == 42.0 and out["merge_model"] == "alpha"
    assert out["max_body_mb"] == settings.SETTINGS["max_body_mb"].default
    assert set(out) == set(settings.SETTINGS)


def test_a_bad_stored_value_falls_back_to_its_default_alone():
    out = settings.effective({"seat_timeout": -3, "panel_workers": 4})
    assert out["seat_timeout"] == settings.SETTINGS["seat_timeout"].default
    assert out["panel_workers"] == 4
