"""Domain pools for mutation: the same structure retold in another world.

Each pool entry names an entity, candidate feature columns, class/label names and a target.
The strategist draws one and picks names from it; nothing here is random by itself.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DomainPool:
    slug: str
    title: str
    entity: str
    features: tuple[str, ...]
    classes: tuple[str, ...]
    target: str
    unit: str = ""
    text_column: str = "text"
    series_column: str = "series"


TABULAR = (
    DomainPool(
        "bridge-inspection",
        "Bridge Inspection Triage",
        "bridge inspection",
        (
            "span_m",
            "deck_age",
            "load_index",
            "crack_density",
            "rust_score",
            "traffic_aadt",
            "salt_exposure",
            "joint_gap_mm",
            "vibration_hz",
            "rebar_cover",
            "humidity",
            "inspector_visits",
        ),
        ("sound", "monitor", "repair", "replace", "closed"),
        "repair_cost",
        "kEUR",
    ),
    DomainPool(
        "greenhouse-yield",
        "Greenhouse Yield Forecast",
        "greenhouse bay",
        (
            "lux_mean",
            "co2_ppm",
            "night_temp",
            "day_temp",
            "irrigation_l",
            "ec_ms",
            "ph",
            "leaf_area",
            "pollinators",
            "shade_pct",
            "substrate_age",
            "vent_hours",
        ),
        ("tomato", "pepper", "cucumber", "lettuce", "basil"),
        "yield_kg",
        "kg",
    ),
    DomainPool(
        "soil-moisture",
        "Soil Sensor Anomalies",
        "sensor reading",
        (
            "depth_cm",
            "clay_pct",
            "sand_pct",
            "rain_mm",
            "temp_c",
            "battery_v",
            "signal_db",
            "elevation",
            "slope_deg",
            "ndvi",
            "days_since_service",
            "probe_drift",
        ),
        ("normal", "drift", "flooded", "dry_fault", "tampered"),
        "moisture_pct",
        "%",
    ),
    DomainPool(
        "loan-desk",
        "Microloan Repayment",
        "loan application",
        (
            "income_k",
            "tenure_months",
            "loan_amount",
            "dependants",
            "savings_k",
            "age",
            "prior_loans",
            "late_payments",
            "branch_distance",
            "phone_score",
            "rent_k",
            "term",
        ),
        ("repaid", "late", "restructured", "written_off", "prepaid"),
        "loss_given_default",
        "%",
    ),
    DomainPool(
        "ferry-ops",
        "Ferry Crossing Delays",
        "ferry crossing",
        (
            "wind_kn",
            "wave_m",
            "passengers",
            "cars",
            "fuel_t",
            "crew",
            "visibility_km",
            "tide_m",
            "engine_hours",
            "berth_wait",
            "hull_age",
            "cargo_t",
        ),
        ("on_time", "short_delay", "long_delay", "cancelled", "diverted"),
        "delay_min",
        "minutes",
    ),
    DomainPool(
        "alloy-lab",
        "Alloy Property Prediction",
        "alloy sample",
        (
            "cr_pct",
            "ni_pct",
            "mo_pct",
            "c_pct",
            "anneal_c",
            "quench_s",
            "grain_um",
            "density",
            "hardness_hv",
            "cooling_rate",
            "porosity",
            "batch_size",
        ),
        ("ferritic", "austenitic", "martensitic", "duplex", "precipitation"),
        "yield_mpa",
        "MPa",
    ),
)
CATEGORY_NAMES = ("region", "shift", "supplier", "grade", "zone", "channel", "material")
CATEGORY_LEVELS = ("north", "south", "east", "west", "central", "coastal")

TEXT = (
    DomainPool(
        "support-tickets",
        "Support Ticket Routing",
        "support ticket",
        (),
        ("billing", "outage", "login", "shipping", "refund"),
        "",
        text_column="ticket",
    ),
    DomainPool(
        "field-notes",
        "Ranger Field Notes",
        "ranger note",
        (),
        ("wildlife", "fire_risk", "trail_damage", "poaching", "flooding"),
        "",
        text_column="note",
    ),
    DomainPool(
        "recipe-reviews",
        "Recipe Review Mining",
        "recipe review",
        (),
        ("too_salty", "burnt", "perfect", "bland", "undercooked"),
        "",
        text_column="review",
    ),
    DomainPool(
        "ship-logs",
        "Ship Log Classification",
        "log entry",
        (),
        ("engine", "weather", "cargo", "medical", "navigation"),
        "",
        text_column="entry",
    ),
)

IMAGE = (
    DomainPool(
        "road-damage",
        "Road Damage Detection",
        "road patch",
        (),
        ("pothole", "crack", "patch", "manhole", "marking", "debris"),
        "damage_fraction",
        "share",
    ),
    DomainPool(
        "cell-tiles",
        "Microscopy Cell Typing",
        "microscope tile",
        (),
        ("round_cell", "blocky_cell", "spiky_cell", "ring_cell", "rod_cell", "twin_cell"),
        "stain_fraction",
        "share",
    ),
    DomainPool(
        "sonar-frames",
        "Sonar Contact Detection",
        "sonar frame",
        (),
        ("whale_call", "engine_hum", "reef_noise", "school_fish", "buoy_ping", "echo"),
        "echo_energy",
        "share",
    ),
    DomainPool(
        "solar-panels",
        "Solar Panel Defects",
        "panel thermal image",
        (),
        ("hotspot", "cell_crack", "soiling", "shading", "bypass_fault", "delamination"),
        "defect_area",
        "share",
    ),
)

SERIES = (
    DomainPool(
        "kiosk-sales",
        "Kiosk Daily Sales",
        "kiosk day",
        ("promo",),
        (),
        "units",
        "units",
        series_column="kiosk",
    ),
    DomainPool(
        "pump-load",
        "Water Pump Load",
        "pump day",
        ("holiday",),
        (),
        "load_kwh",
        "kWh",
        series_column="pump",
    ),
    DomainPool(
        "library-visits",
        "Library Visits",
        "branch day",
        ("event",),
        (),
        "visits",
        "visits",
        series_column="branch",
    ),
)

POOLS: dict[str, tuple[DomainPool, ...]] = {
    "tabular": TABULAR,
    "text": TEXT,
    "image": IMAGE,
    "time-series": SERIES,
}
