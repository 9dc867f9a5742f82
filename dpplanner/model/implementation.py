"""What implementing one statistic needs, in one place: data type, clamping bounds, sensitivities,
the noise (kind, scale, lattice), delta_i and, for a Gaussian, rho_i.

The inspector, the table's tooltips, the CSV export, the HTML report and ``dpplanner-cli compose /
allocate --json`` all show these rows, so the numbers a depositor reads anywhere are the ones the
release script uses (for OpenDP noise) or the textbook mechanism needs (continuous noise).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Optional

from . import accuracy as acc
from . import display
from .opendp_sensitivity import missing_value
from .privacy import StatisticPrivacy
from .statistic import WHOLE_NUMBER_KINDS, Budget, Kind, Mechanism, Noise, Statistic


@dataclass(frozen=True)
class Implementation:
    """The release of one statistic as it must be implemented. Sensitivities and scales are in
    the units of the query that gets the noise (``divisor`` turns them into the released
    statistic's: a mean is a noisy sum over the public n)."""

    noise: Noise
    data_type: str
    bounds: Optional[tuple[float, float]]
    missing: Optional[float]
    d_in: Optional[int]
    l1: float
    l2: float
    divisor: float
    noise_kind: str
    scale: float
    lattice: Optional[str]
    shift: Optional[int]
    epsilon: float
    delta: float
    rho: Optional[float]
    note: str = ""

    def rows(self) -> list[tuple[str, str]]:
        """(label, text) rows for the inspector, a tooltip or a report; sensitivities and scales
        in full (they are what an implementation is given)."""
        per = f" (the sum's; released over n = {display.count(int(self.divisor))})" if self.divisor != 1 else ""
        out = [("Noise implemented by", self.noise.label), ("Data type", self.data_type)]
        if self.bounds is not None:
            out.append(("Clamped to", f"[{display.exact(self.bounds[0])}, {display.exact(self.bounds[1])}]"))
        if self.missing is not None:
            out.append(("Missing values count as", display.exact(self.missing)))
        sens = f"L1 {display.exact(self.l1)}, L2 {display.exact(self.l2)}{per}"
        if self.d_in is not None:
            sens += f" at d_in = {self.d_in}"
        out.append(("Sensitivity", sens))
        gaussian = "Gaussian" in self.noise_kind
        # The idealised noise in the words the table's noise column and the report use
        # (display.noise); ``noise_kind`` stays the JSON's and the CSV's machine value.
        words = display.noise(gaussian, ideal=True) if self.noise is Noise.CONTINUOUS else self.noise_kind
        noise = f"{words}, {'σ' if gaussian else 'b'} = {display.exact(self.scale)}{per}"
        if self.lattice:
            noise += f", on {self.lattice}"
        out.append(("Noise", noise))
        out.append(("δ_i", display.upper(self.delta, 3) if self.delta else "0"))
        if self.rho is not None:
            out.append(("ρ_i (zCDP)", display.upper(self.rho, 4)))
        if self.note:
            out.append(("Note", self.note))
        return out

    def as_dict(self) -> dict:
        """JSON-ready (``dpplanner-cli ... --json``)."""
        return {"noise": self.noise.value, "data_type": self.data_type,
                "bounds": list(self.bounds) if self.bounds else None, "missing": self.missing,
                "d_in": self.d_in, "sensitivity_l1": self.l1, "sensitivity_l2": self.l2,
                "divisor": self.divisor, "noise_kind": self.noise_kind, "scale": self.scale,
                "lattice": self.lattice, "shift": self.shift, "epsilon": self.epsilon,
                "delta": self.delta, "rho": self.rho, "note": self.note}


def implementation(budget: Budget, stat: Statistic, p: StatisticPrivacy) -> Optional[Implementation]:
    """None for custom statistics and for a statistic that cannot be released as set up."""
    if stat.kind is Kind.CUSTOM or p.problem or p.scale is None:
        return None
    bounds = ((float(stat.lower), float(stat.upper))
              if stat.kind in (Kind.SUM, Kind.MEAN, Kind.QUANTILE) else None)
    if p.opendp is not None:
        o, cert = p.opendp, p.opendp.certified
        return Implementation(Noise.OPENDP, cert.data_type, bounds,
                              missing_value(stat) if bounds else None, cert.d_in, cert.l1, cert.l2,
                              cert.divisor, o.label, o.scale, o.lattice_text(), o.shift,
                              o.epsilon, o.delta, o.rho, cert.note)
    sens = acc.sensitivity(stat, budget.neighbouring, budget.dataset_size, budget.contributions)
    gaussian = stat.mechanism is Mechanism.GAUSSIAN
    rho = _up_rho(sens.l2, p.scale) if gaussian else None
    data = ("whole numbers" if stat.integer else "real numbers") if stat.kind in WHOLE_NUMBER_KINDS \
        else {Kind.COUNT: "records", Kind.PROPORTION: "0/1 values", Kind.HISTOGRAM: "categories",
              Kind.QUANTILE: "real numbers, counted in grid cells"}[stat.kind]
    return Implementation(Noise.CONTINUOUS, data, bounds, None, None,
                          sens.l1, sens.l2, 1.0, f"continuous {stat.mechanism.label}", p.scale,
                          None, None, p.functioning_epsilon, p.functioning_delta, rho,
                          "idealised noise: no library adds exactly this; export needs OpenDP noise")


def _up_rho(l2: float, sigma: float) -> float:
    """A continuous Gaussian's zCDP rho = l2^2 / (2 sigma^2), rounded up."""
    exact = Fraction(l2) ** 2 / (2 * Fraction(sigma) ** 2)
    r = float(exact)
    return r if Fraction(r) >= exact else math.nextafter(r, math.inf)
