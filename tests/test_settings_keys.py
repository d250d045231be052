"""A settings key is named once, by its field: the "did you mean" hints read the keys
off the settings models (settings/schema.py ``known_keys``), sections included."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from agent_tui.settings import load_settings
from agent_tui.settings.schema import KNOWN_KEYS, SettingsFile, known_keys


class GardenSection(BaseModel):
    water_every: int | None = Field(default=None, alias="waterEvery")
    shade: bool = False


class GardenSettings(SettingsFile):
    garden: GardenSection | None = None
    plot_size: int | None = Field(default=None, alias="plotSize")


def test_a_new_field_is_a_known_key_and_so_is_its_section_s() -> None:
    keys = known_keys(GardenSettings)
    assert {"garden", "plotSize"} <= set(keys[()])
    assert keys[("garden",)] == ["waterEvery", "shade"]
    assert {k: v for k, v in keys.items() if k != ("garden",)} == {
        **KNOWN_KEYS, (): [*KNOWN_KEYS[()], "garden", "plotSize"]}


def test_every_section_of_the_settings_has_its_keys_known() -> None:
    assert set(KNOWN_KEYS) == {(), ("permissions",), ("limits",), ("sandbox",), ("webFetch",),
                               ("webSearch",)}
    assert "allowWrite" in KNOWN_KEYS[("sandbox",)] and "$schema" in KNOWN_KEYS[()]


def test_a_misspelt_sandbox_key_is_told_the_field_it_resembles(tmp_path: Path) -> None:
    user = tmp_path / "user"
    user.mkdir()
    (user / "settings.json").write_text('{"sandbox": {"allowWrites": []}}')
    ws = tmp_path / "ws"
    ws.mkdir()
    [problem] = load_settings(ws, user_dir=user, trusted=True).problems
    assert 'sandbox.allowWrites (did you mean "allowWrite"?)' in problem
