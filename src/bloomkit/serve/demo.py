"""Generated profiles of the report's Table 1 attributes (``bloomkit serve --demo``).

Table 1 of document 000: five text attributes (First Name, Last Name, University, Hobby,
Vocation) and five numeric ranges with their inserted range sizes: Age 10 (scope 1..120), Year
20 (1900..2100), Income 500 (0..5000), Longitude and Latitude 100 at four decimal places (0.01
degree; scopes -180..180 and -90..90). The schema file is ``table1.json`` beside this module.
Profiles are seeded: the same ``seed`` gives the same profiles.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

import numpy as np

from ..ranges import SchemaFile, schema_from_json

__all__ = ["TEXT_VALUES", "table1_profiles", "table1_schema"]

TEXT_VALUES: dict[str, list[str]] = {
    "First Name": ["Ming", "Wei", "Hua", "Mei", "Jun", "Ling", "Chen", "Yu", "An", "Xin", "Ana", "Li"],
    "Last Name": ["Chang", "Tsai", "Liao", "Yu", "Li", "Wang", "Lin", "Huang", "Chen", "Wu", "Kuo", "Hsu"],
    "University": ["NCTU", "NTU", "NTHU", "NCKU", "NCCU", "NYMU", "NSYSU", "NCU"],
    "Hobby": ["go", "hiking", "cycling", "music", "chess", "tennis", "reading", "cooking", "photography"],
    "Vocation": ["engineer", "teacher", "student", "doctor", "artist", "professor", "nurse", "farmer"],
}
"""The values the generator draws the text attributes from (uniformly)."""
# (name, scope lo, scope hi in scaled units, inserted range size n in scaled units, places)
_RANGES = (("Age", 1, 120, 10, 0), ("Year", 1900, 2100, 20, 0), ("Income", 0, 5000, 500, 0),
           ("Longitude", -1_800_000, 1_800_000, 100, 4), ("Latitude", -900_000, 900_000, 100, 4))


def table1_schema() -> SchemaFile:
    """The schema file of Table 1 (m = 512, the report's Section V)."""
    import json

    text = (resources.files("bloomkit.serve") / "table1.json").read_text(encoding="utf-8")
    return schema_from_json(json.loads(text))


def table1_profiles(n: int, seed: int = 0, *, region: tuple[float, float, float, float] | None = None) -> list[dict[str, Any]]:
    """``n`` random profiles of Table 1: every text attribute, and every numeric attribute as
    a range of Table 1's size at a uniform position of its scope (``region`` = (lon_lo, lon_hi,
    lat_lo, lat_hi) in degrees narrows the positions, so that a demo's searches find people).

    Complexity: O(n), vectorised."""
    rng = np.random.default_rng(seed)
    cols: dict[str, Any] = {name: rng.choice(np.array(vals), n).tolist() for name, vals in TEXT_VALUES.items()}
    for name, lo, hi, size, places in _RANGES:
        a, b = lo, hi - size + 1
        if region is not None and name in ("Longitude", "Latitude"):
            r = region[:2] if name == "Longitude" else region[2:]
            a, b = int(round(r[0] * 10**places)), int(round(r[1] * 10**places)) - size + 1
        start = rng.integers(a, b + 1, n)
        if places:
            cols[name] = [[s / 10**places, (s + size - 1) / 10**places] for s in start.tolist()]
        else:
            cols[name] = [[s, s + size - 1] for s in start.tolist()]
    names = list(cols)
    return [{k: cols[k][i] for k in names} for i in range(n)]
