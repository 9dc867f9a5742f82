"""The optimal-composition engine (Murtagh-Vadhan): exact paths and a sound fast PLD path.

Internal API used by ``dpplanner.engine`` (compose, curve, privacy_profile, allocate). Inputs are
already validated and the per-query deltas already moved into delta_bar (formulas.md §4.1).

Modules: ``atoms`` (a loss distribution with error bounds; closed-form root and delta read-out),
``binomial`` (RR and binomial pmfs in log space), ``exact`` (homogeneous / grouped enumeration),
``two_sets`` (exact meet-in-the-middle of two enumerated halves), ``lattice`` (lattice pmfs, sound
convolution and truncation), ``pld`` (connect-the-dots and rounded-down lattice pmfs; the exact
common lattice; the older first-order bracket, kept as a fallback), ``split`` (the fast path:
connect-the-dots with a certified second-order error bound), ``refine`` (its refinement loop and
caps), ``bracket`` (path selection), ``profile`` (delta as a function of eps), ``prefix``
(incremental curve over plan prefixes).
"""

from .bracket import optimal_bracket
from .exact import homogeneous_bracket
from .prefix import optimal_prefix_curve
from .profile import optimal_delta
from .result import Bracket

__all__ = ["Bracket", "optimal_bracket", "homogeneous_bracket", "optimal_delta", "optimal_prefix_curve"]
