"""The pieces of a plan: enums, sensitivity presets, the immutable Statistic and the Budget.

Both Statistic and Budget are frozen dataclasses: an edit makes a new value with ``replace(...)``,
so an undo stack only has to remember the old value. Neither checks its fields here; the rules live
in ``dpplanner.model.validation`` and every Plan method runs them before changing anything.
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from dpplanner.engine.theorems import DEFAULT_THEOREM

from .display import IDEAL, count, exact, noise


class Kind(str, enum.Enum):
    """What a statistic releases. The value is the name used in files and on the command line."""

    COUNT = "count"
    SUM = "sum"
    MEAN = "mean"
    PROPORTION = "proportion"
    HISTOGRAM = "histogram"
    QUANTILE = "quantile"
    CUSTOM = "custom"

    @property
    def label(self) -> str:
        return _KIND_LABELS[self]


_KIND_LABELS = {
    Kind.COUNT: "Count", Kind.SUM: "Sum", Kind.MEAN: "Mean", Kind.PROPORTION: "Proportion",
    Kind.HISTOGRAM: "Histogram", Kind.QUANTILE: "Quantile / CDF", Kind.CUSTOM: "Custom (ε, δ)",
}

#: Which metadata each kind needs (the GUI greys out the others; validation requires these).
KIND_FIELDS: dict[Kind, tuple[str, ...]] = {
    Kind.COUNT: (),
    Kind.SUM: ("lower", "upper"),
    Kind.MEAN: ("lower", "upper", "n"),
    Kind.PROPORTION: ("n",),
    Kind.HISTOGRAM: ("bins",),
    Kind.QUANTILE: ("lower", "upper", "granularity"),
    Kind.CUSTOM: ("delta",),
}


class Mechanism(str, enum.Enum):
    LAPLACE = "laplace"
    GAUSSIAN = "gaussian"

    @property
    def label(self) -> str:
        return "Laplace" if self is Mechanism.LAPLACE else "Gaussian"


class Noise(str, enum.Enum):
    """How a statistic's noise is implemented, which decides what the plan certifies.

    ``opendp``: exactly the noise OpenDP 0.16 adds for the statistic's data type (discrete Laplace
    or Gaussian on whole numbers; on real numbers the same on a lattice of spacing 2^k, with
    OpenDP's rounding margin), at the sensitivity OpenDP's transformation certifies; this is what
    an exported release script adds. ``continuous``: the idealised continuous Laplace/Gaussian
    noise of the textbook formulas (plans written before the choice existed).
    """

    OPENDP = "opendp"
    CONTINUOUS = "continuous"

    @property
    def label(self) -> str:
        return "OpenDP 0.16" if self is Noise.OPENDP else f"continuous ({IDEAL})"


class Neighbouring(str, enum.Enum):
    """Which datasets count as neighbours; it changes the sensitivities by up to 2x."""

    ADD_REMOVE = "add-remove"
    REPLACE_ONE = "replace-one"

    @property
    def label(self) -> str:
        return "add / remove one individual" if self is Neighbouring.ADD_REMOVE else "replace one individual"

    def of(self, unit: str, contributions: int) -> str:
        """The relation in the plan's words: an individual is one ``unit`` with all of their rows
        (up to c), so with c > 1 the neighbours are not one record apart."""
        rows = "one row" if contributions == 1 else f"all of their rows, at most c = {contributions}"
        verb = "add / remove" if self is Neighbouring.ADD_REMOVE else "replace"
        return f"{verb} one {unit} ({rows})"


@dataclass(frozen=True)
class SensitivityTier:
    """A global-budget preset by data sensitivity, as data repositories tier their holdings."""

    key: str
    label: str
    epsilon: float
    delta: float


#: The tiers used by the PSI tool and data repositories; "custom" is any other budget.
SENSITIVITY_TIERS: tuple[SensitivityTier, ...] = (
    SensitivityTier("no-harm", "No risk of material harm", 1.0, 1e-5),
    SensitivityTier("material-harm", "Risk of material harm", 0.25, 1e-6),
    SensitivityTier("serious-harm", "Risk of serious harm", 0.05, 1e-7),
)
TIERS_BY_KEY: dict[str, SensitivityTier] = {t.key: t for t in SENSITIVITY_TIERS}
CUSTOM_TIER = "custom"


def tier_for(epsilon: float, delta: float) -> str:
    """The key of the preset matching (epsilon, delta) exactly, else "custom"."""
    for t in SENSITIVITY_TIERS:
        if t.epsilon == epsilon and t.delta == delta:
            return t.key
    return CUSTOM_TIER


@dataclass(frozen=True)
class Statistic:
    """One release in the plan.

    ``epsilon`` is the statistic's budget share (under redistribution the plan rescales it for free
    statistics). ``target_error`` is an error the user asked for: the statistic is pinned
    (``held``) and its epsilon is whatever that error needs as the plan changes (``targets.py``;
    None: no target, and a statistic that is not held has none). ``delta`` is typed by the user
    only for CUSTOM statistics; a Gaussian statistic
    gets its delta from the plan's delta split, a Laplace one has delta 0. ``repetitions`` releases
    the same statistic that many times (each with this epsilon). ``n`` is the public number of
    records the statistic is computed over (None: the plan's dataset size). ``noise`` says how the
    noise is implemented (``Noise``); ``integer`` that the variable's values are whole numbers
    (sums and means: OpenDP then sums integers exactly and adds integer noise). ``extra`` holds
    fields a newer file carried that this version does not know, so they survive a round trip.
    """

    name: str
    variable: str = ""
    kind: Kind = Kind.COUNT
    mechanism: Mechanism = Mechanism.LAPLACE
    epsilon: float = 0.1
    delta: float = 0.0
    weight: float = 1.0
    held: bool = False
    target_error: Optional[float] = None
    repetitions: int = 1
    lower: Optional[float] = None
    upper: Optional[float] = None
    bins: Optional[int] = None
    granularity: Optional[float] = None
    n: Optional[int] = None
    description: str = ""
    noise: Noise = Noise.OPENDP
    integer: bool = False
    group_by: str = ""
    groups: Optional[int] = None
    group_keys: str = ""
    one_group_each: bool = False
    max_groups: Optional[int] = None
    max_rows: Optional[int] = None
    select_groups: bool = False
    selection_share: float = 0.5
    extra: Mapping[str, Any] = field(default_factory=dict, hash=False, compare=True)

    def __post_init__(self) -> None:
        _coerce(self, "kind", Kind)
        _coerce(self, "mechanism", Mechanism)
        _coerce(self, "noise", Noise)

    def replace(self, **changes) -> "Statistic":
        """A copy with some fields changed (kind/mechanism may be given as their string values)."""
        if "kind" in changes and not isinstance(changes["kind"], Kind):
            changes["kind"] = parse_enum(Kind, changes["kind"], "kind")
        if "mechanism" in changes and not isinstance(changes["mechanism"], Mechanism):
            changes["mechanism"] = parse_enum(Mechanism, changes["mechanism"], "mechanism")
        if "noise" in changes and not isinstance(changes["noise"], Noise):
            changes["noise"] = parse_enum(Noise, changes["noise"], "noise")
        return dataclasses.replace(self, **changes)


#: The kinds whose data type decides OpenDP's noise: sums and means of whole numbers are summed as
#: integers and get integer noise; of real numbers, float sums with lattice noise. Counts,
#: proportions (0/1 values), histograms and quantile/CDF cells are counts: always whole numbers.
WHOLE_NUMBER_KINDS = (Kind.SUM, Kind.MEAN)


@dataclass(frozen=True)
class Budget:
    """The plan-wide settings.

    ``delta_split`` is the fraction of ``delta`` given to the Gaussian statistics; the rest is slack
    for the composition theorem. ``reserve`` is the fraction of ``epsilon`` kept for future
    releases: redistribution spends (1 - reserve) * epsilon. ``population`` (N > dataset_size n)
    turns on secrecy-of-the-sample amplification. ``extra`` keeps unknown file fields.

    The unit of privacy: ``unit`` is what one protected individual is, in the plan's words (a
    person, a household); each contributes at most ``contributions`` (c) rows; ``truncate``: the
    release keeps at most c rows per individual (False: the data already guarantee it).
    """

    epsilon: float = 1.0
    delta: float = 1e-5
    delta_split: float = 0.5
    confidence: float = 0.95
    eta: float = 1e-3
    theorem: str = DEFAULT_THEOREM
    redistribute: bool = True
    neighbouring: Neighbouring = Neighbouring.ADD_REMOVE
    dataset_size: Optional[int] = None
    population: Optional[int] = None
    reserve: float = 0.0
    unit: str = "person"
    contributions: int = 1
    truncate: bool = False
    extra: Mapping[str, Any] = field(default_factory=dict, hash=False, compare=True)

    def __post_init__(self) -> None:
        _coerce(self, "neighbouring", Neighbouring)

    def replace(self, **changes) -> "Budget":
        if "neighbouring" in changes and not isinstance(changes["neighbouring"], Neighbouring):
            changes["neighbouring"] = parse_enum(Neighbouring, changes["neighbouring"], "neighbouring")
        return dataclasses.replace(self, **changes)

    @property
    def tier(self) -> str:
        return tier_for(self.epsilon, self.delta)

    @property
    def spendable_epsilon(self) -> float:
        """What redistribution spends: epsilon minus the reserve."""
        return self.epsilon * (1.0 - self.reserve)

    @property
    def delta_to_statistics(self) -> float:
        return self.delta * self.delta_split

    @property
    def delta_slack(self) -> float:
        return self.delta - self.delta_to_statistics

    @property
    def beta(self) -> float:
        return 1.0 - self.confidence


def field_names(cls) -> tuple[str, ...]:
    """The fields a Statistic or Budget stores in a file or a CSV row, in declaration order
    (``extra`` holds unknown keys and is not one of them)."""
    return tuple(f.name for f in dataclasses.fields(cls) if f.name != "extra")


def noise_words(stat: Statistic) -> str:
    """The noise ``stat`` adds, in the one wording of ``display.noise`` ("Laplace (ideal)")."""
    return noise(stat.mechanism is Mechanism.GAUSSIAN, ideal=stat.noise is Noise.CONTINUOUS)


def assumptions(stat: Statistic, dataset_size: Optional[int] = None) -> str:
    """What the statistic's noise is calibrated to, in words ("values in [0, 100], over the plan's
    1,000 records"): bounds, bins, grid step and the number of records its kind uses."""
    used = KIND_FIELDS[stat.kind]
    parts = []
    if "lower" in used and stat.lower is not None and stat.upper is not None:
        parts.append(f"values in [{exact(stat.lower)}, {exact(stat.upper)}]")
    if "bins" in used and stat.bins is not None:
        parts.append(f"{count(stat.bins)} bins")
    if "granularity" in used and stat.granularity is not None:
        parts.append(f"grid step {exact(stat.granularity)}")
    if "n" in used:
        if stat.n is not None:
            parts.append(f"over {count(stat.n)} records")
        elif dataset_size is not None:
            parts.append(f"over the plan's {count(dataset_size)} records")
    return ", ".join(parts)


def parse_enum(cls, value, what: str):
    """Turn a string (or member) into an enum member, or raise ValueError listing what is allowed."""
    if isinstance(value, cls):
        return value
    for member in cls:
        if value == member.value or (isinstance(value, str) and value.lower() == member.name.lower()):
            return member
    allowed = ", ".join(m.value for m in cls)
    raise ValueError(f"{what} = {preview(value)} is not allowed; use one of: {allowed}")


#: Messages show at most this many characters of an offending value (a file may hold megabytes).
PREVIEW_CHARS = 100


def preview(value: Any) -> str:
    """repr(value) cut to PREVIEW_CHARS, for error messages (a long text is cut before repr)."""
    if isinstance(value, str) and len(value) > PREVIEW_CHARS:
        return f"{repr(value[:PREVIEW_CHARS])[:PREVIEW_CHARS]}… ({len(value)} characters)"
    text = repr(value)
    return text if len(text) <= PREVIEW_CHARS else f"{text[:PREVIEW_CHARS]}…"


def _coerce(obj, name: str, cls) -> None:
    """Turn a valid string value (e.g. mechanism="gaussian") into its enum member; anything else
    is left for validation, which names the field and what is allowed."""
    value = getattr(obj, name)
    if not isinstance(value, cls):
        try:
            object.__setattr__(obj, name, parse_enum(cls, value, name))
        except ValueError:
            pass
