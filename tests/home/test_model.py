"""The home as typed data: plain data read once at the edge, written back the same."""

from __future__ import annotations

from homeassist.home import HomeDevice, HomeModel, home_model, index_of


def test_plain_data_is_read_into_a_frozen_model_and_written_back() -> None:
    data = {
        "devices": [
            {"name": "Porch Light", "area": "Porch", "type": "light", "aliases": ["front light"]},
            {"name": "Coffee Maker", "area": None, "type": "switch"},
            {"name": "", "area": "Hall", "type": "light"},  # no name: no device
        ],
        "areas": ["Garden"],
        "floors": ["Upstairs"],
    }
    model = home_model(data)
    assert model is not None
    assert model.devices == (
        HomeDevice("Porch Light", "Porch", "light", ("front light",)),
        HomeDevice("Coffee Maker", "", "switch"),
    )
    assert model.areas == ("Garden", "Porch") and model.floors == ("Upstairs",)
    assert model.snapshot() == {
        "devices": [
            {"name": "Porch Light", "area": "Porch", "type": "light", "aliases": ["front light"]},
            {"name": "Coffee Maker", "area": None, "type": "switch"},
        ],
        "areas": ["Garden", "Porch"],
        "floors": ["Upstairs"],
    }
    assert home_model(model.snapshot()) == model
    assert home_model(model) is model and home_model(None) is None
    assert home_model({}) == HomeModel()


def test_the_index_is_built_once_per_home_content() -> None:
    first = home_model({"devices": [{"name": "Lamp", "area": "Den", "type": "light"}]})
    second = HomeModel.of((HomeDevice("Lamp", "Den", "light"),))
    assert first == second and hash(first) == hash(second)
    assert index_of(first) is index_of(second) is index_of(first.snapshot() if first else None)
    assert [d.name for d in index_of(first).devices] == ["Lamp"]
