"""The optimal-composition engine (Murtagh-Vadhan): exact paths and a sound fast PLD path.

Internal API used by ``dpplanner.engine`` (compose, curve, privacy_profile, allocate). Inputs are
already validated and the per-query deltas already moved into delta_bar (formulas.md §4.1).

Modules: ``atoms`` (a loss distribution with error bounds; closed-form root and delta read-out),
``binomial`` (RR and binomial pmfs in log space), ``exact`` (homogeneous / grouped enumeration),
``two_sets`` (exact meet-in-the-middle of two enumerated halves), ``lattice`` (lattice pmfs, sound
convolution and truncation), ``pld`` (connect-the-dots and rounded-down lattice pmfs; the exact
common lattice; the older first-order bracket, kept as a fallback), ``spectral`` (a large smooth
plan's pmf from its characteristic function), ``split`` (the fast path: connect-the-dots with a
certified second-order error bound, ``hybrid_error``), ``refine`` (its refinement loop and
caps), ``bracket`` (path selection), ``profile`` (delta as a function of eps), ``prefix``
(incremental curve over plan prefixes; a small plan's in one pass, ``prefix_window``).
"""

from .. import lazy

_HOMES = {"optimal_bracket": "bracket", "homogeneous_bracket": "exact", "optimal_prefix_curve": "prefix",
          "optimal_delta": "profile", "Bracket": "result"}
__all__ = list(_HOMES)
# Imported when first read (engine/lazy.py): ``optimal.deadline`` alone needs no scipy.
__getattr__, __dir__ = lazy.exports(__name__, _HOMES)
