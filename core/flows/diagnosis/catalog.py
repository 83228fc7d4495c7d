"""The sample vehicles, their owner's manuals, photos and warning-light icons (core/samples/diagnosis)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from core.flows.diagnosis.constants import SAMPLES_DIR


@dataclass(frozen=True)
class Vehicle:
    """One sample vehicle (fictional make and model)."""

    vehicle_id: str
    make: str
    model: str
    year: int
    body: str
    photo: str
    manual: str
    powertrain: str
    # an electric car: the urgency rules written for one (a flood) count for it (urgency_rules.VEHICLE_KINDS)
    electric: bool = False

    @property
    def label(self) -> str:
        return f"{self.make} {self.model}（{self.year}年式）"

    @property
    def kind(self) -> str:
        """The kind of car its own urgency rules are written for ("electric"), or "" for every other car."""
        return "electric" if self.electric else ""


def vehicle_kind(vehicle_id: str) -> str:
    """The kind of the catalog's car `vehicle_id` (Vehicle.kind); "" for a car the catalog does not hold."""
    vehicle = get_vehicle(vehicle_id) if vehicle_id else None
    return vehicle.kind if vehicle is not None else ""


@cache
def load_vehicles(samples_dir: Path = SAMPLES_DIR) -> tuple[Vehicle, ...]:
    """Every sample vehicle, in catalog order."""
    data = json.loads((samples_dir / "vehicles.json").read_text(encoding="utf-8"))
    return tuple(Vehicle(**item) for item in data)


def get_vehicle(vehicle_id: str, samples_dir: Path = SAMPLES_DIR) -> Vehicle | None:
    return next((v for v in load_vehicles(samples_dir) if v.vehicle_id == vehicle_id), None)


def find_vehicle(make: str, model: str, year: int, samples_dir: Path = SAMPLES_DIR) -> Vehicle | None:
    """The vehicle with this make, model and year, if it is in the catalog."""
    return next(
        (v for v in load_vehicles(samples_dir) if (v.make, v.model, v.year) == (make, model, int(year))),
        None,
    )


@cache
def load_manual(vehicle_id: str, samples_dir: Path = SAMPLES_DIR) -> tuple[dict[str, Any], ...]:
    """The manual chunks of one vehicle (id, vehicle_id, page, chapter, section, content_type, has_warning, text)."""
    vehicle = get_vehicle(vehicle_id, samples_dir)
    if vehicle is None:
        raise KeyError(vehicle_id)
    return tuple(json.loads((samples_dir / vehicle.manual).read_text(encoding="utf-8")))


def sample_path(relative: str, samples_dir: Path = SAMPLES_DIR) -> Path:
    """Absolute path of a photo or icon given relative to the samples dir (no escaping it)."""
    path = (samples_dir / relative).resolve()
    if samples_dir.resolve() not in path.parents:
        raise ValueError(relative)
    return path
