"""Optimal composition: dpplanner's certified bracket against Google's dp_accounting PLD.

Run: .venv/bin/python benchmarks/run.py optimal   (or `make bench` for every benchmark)

Per plan it prints our upper and lower bound, the width and the time, and dp_accounting's
pessimistic PLD estimate (one `from_privacy_parameters` distribution per distinct query, equal
queries `self_compose`d, all composed in a balanced tree) at d = 1e-3, 1e-4, 1e-5 with its time.
"gap<=" is dp_accounting's value minus our certified lower bound, an upper bound on its distance
to the exact optimum. The time ratio is taken at matched accuracy: the first d whose gap is no
larger than our width (or the finest d if none is). The cost-vs-k curve rows are in
optimal_curves.py. The issue's targets are printed with "met" / "NOT met". Nothing here is
asserted; numbers depend on the machine.
"""

from __future__ import annotations

import statistics
import time

import numpy as np

from dpplanner.engine import compose
import optimal_curves
from rows import target as page_target

try:
    from dp_accounting.pld import common as dp_common
    from dp_accounting.pld import privacy_loss_distribution as dp_pld
except ImportError:  # pragma: no cover - the bench extra is missing
    dp_pld = None

DP_STEPS = (1e-3, 1e-4, 1e-5)
#: dp_accounting runs longer than this (estimated from the previous step x 10) are skipped.
DP_SKIP_SECONDS = 60.0
TARGETS: list[tuple[str, str, bool]] = []


def target(what: str, measured: str, ok: bool, *, peer: str = "") -> None:
    TARGETS.append((what, measured, ok))
    page_target(what, measured, ok, peer=peer)      # a row of docs/performance.md


def timed(fn, repeat: int = 1):
    """(result of the last call, median seconds)."""
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return out, statistics.median(times)


def ours(eps, deltas, delta_g, eta, repeat=1):
    r, sec = timed(lambda: compose(list(eps), list(deltas), delta_g, theorem="optimal", eta=eta), repeat)
    return r, sec


def dp_accounting_eps(eps, deltas, delta_g, d):
    """dp_accounting's pessimistic PLD: group equal queries, self-compose, balanced tree."""
    groups: dict[tuple[float, float], int] = {}
    for e, dl in zip(eps, deltas):
        groups[(float(e), float(dl))] = groups.get((float(e), float(dl)), 0) + 1
    items = []
    for (e, dl), m in groups.items():
        p = dp_pld.from_privacy_parameters(dp_common.DifferentialPrivacyParameters(e, dl),
                                           value_discretization_interval=d)
        items.append(p.self_compose(m) if m > 1 else p)
    while len(items) > 1:
        nxt = [items[i].compose(items[i + 1]) for i in range(0, len(items) - 1, 2)]
        if len(items) % 2:
            nxt.append(items[-1])
        items = nxt
    return items[0].get_epsilon_for_delta(delta_g)


def run_plan(name, eps, deltas, delta_g, eta, *, repeat=1, dp_steps=DP_STEPS, matched=True):
    r, sec = ours(eps, deltas, delta_g, eta, repeat)
    lo = r.epsilon_lower if r.epsilon_lower is not None else r.epsilon
    width = r.epsilon - lo
    print(f"\n{name}  (k={len(eps)}, delta_g={delta_g:g}, eta={eta:g})")
    print(f"  ours         upper={r.epsilon:.9f} lower={lo:.9f} width={width:.2e} "
          f"(eta={eta:g}: {'within' if width <= eta else 'ABOVE'}) time={sec * 1e3:9.1f} ms  [{r.detail}]")
    rows = []
    if dp_pld is not None:
        prev = 0.0
        for d in dp_steps:
            if prev * 10 > DP_SKIP_SECONDS:
                print(f"  dp_accounting d={d:g}: skipped (the previous step took {prev:.1f} s; "
                      f"this one would take > {DP_SKIP_SECONDS:.0f} s)")
                continue
            val, dsec = timed(lambda: dp_accounting_eps(eps, deltas, delta_g, d))
            prev = dsec
            gap = val - lo
            rows.append((d, val, gap, dsec))
            print(f"  dp_accounting d={d:<6g} eps={val:.9f} gap<={gap:.2e} time={dsec * 1e3:9.1f} ms")
        if rows and matched:
            # the same accuracy on both sides: ours asked for eta = dp_accounting's gap
            for d, val, gap, dsec in rows:
                eta_m = max(gap, 1e-9)
                rm, msec = ours(eps, deltas, delta_g, eta_m)
                wm = rm.epsilon - (rm.epsilon_lower if rm.epsilon_lower is not None else rm.epsilon)
                print(f"  matched accuracy d={d:<6g}: ours with eta={eta_m:.1e} -> width {wm:.1e} in "
                      f"{msec * 1e3:.1f} ms; dp_accounting {dsec * 1e3:.1f} ms -> ratio {dsec / msec:.1f}x")
    return r, sec, width, rows


def peer_text(dp_rows) -> str:
    """dp_accounting's figures from this run: its gap to our lower bound and its time, per d."""
    return "; ".join(f"dp_accounting d={d:g}: gap {gap:.1e} in {dsec * 1e3:.0f} ms"
                     for d, _val, gap, dsec in dp_rows)


def peak_rss_k10000() -> float:
    """Peak resident memory (MB) of a fresh process that composes the k=10000 plan."""
    import subprocess
    import sys
    from pathlib import Path

    code = (
        "import resource, numpy as np\n"
        "from dpplanner.engine import compose\n"
        "rng = np.random.default_rng(20261103)\n"
        "eps = rng.uniform(0.0005, 0.05, 10000)\n"
        "compose(list(eps), [0.0] * 10000, 1e-6, theorem='optimal', eta=1e-2)\n"
        # VmHWM belongs to this exec'd image; ru_maxrss can carry the parent's peak over a fork
        "try:\n"
        "    hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1]\n"
        "except OSError:\n"
        "    hwm = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "print(hwm)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=str(Path(__file__).resolve().parents[1]))
    return int(out.stdout.strip().splitlines()[-1]) / 1024.0  # Linux reports KiB


def plan_k50():
    rng = np.random.default_rng(20261101)
    return rng.uniform(0.01, 0.5, 50)


def plan_k1000():
    rng = np.random.default_rng(20261102)
    eps = rng.uniform(0.001, 0.2, 1000)
    deltas = np.where(np.arange(1000) % 2 == 0, 1e-8, 0.0)
    return eps, deltas


def plan_k10000():
    rng = np.random.default_rng(20261103)
    return rng.uniform(0.0005, 0.05, 10000)


def main() -> int:
    print("optimal composition benchmark (timings on this machine; nothing is asserted)")
    if dp_pld is None:
        print("dp_accounting is not installed: `pip install -e '.[bench]'`; only our side is timed")

    eps = plan_k50()
    r, sec, width, dp_rows = run_plan("k=50 heterogeneous, eps~U[0.01,0.5]", eps, np.zeros(50), 1e-6, 1e-4,
                                      repeat=3)
    from timing import wall_and_cpu
    _, wall, cpu = wall_and_cpu(lambda: compose(list(eps), [0.0] * 50, 1e-6, theorem="optimal", eta=1e-4), 5)
    target("k=50: width <= 1e-4 in <= 50 ms", f"width {width:.1e} in {wall * 1e3:.1f} ms wall / "
           f"{cpu * 1e3:.1f} ms CPU (median of 5)", width <= 1e-4 and wall <= 0.05, peer=peer_text(dp_rows))

    eps, deltas = plan_k1000()
    r, sec, width, rows = run_plan("k=1000 heterogeneous, eps~U[0.001,0.2], half delta_i=1e-8",
                                   eps, deltas, 1e-5, 1e-3)
    faster = ""
    ok_ratio = False
    if rows:
        # ">= 25x faster than dp_accounting at 5x tighter": compare with its d=1e-5 run
        fine = [row for row in rows if row[0] == 1e-5]
        if fine:
            d, val, gap, dsec = fine[0]
            ok_ratio = dsec / sec >= 25 and width * 5 <= gap * 1.0001 + 1e-12
            faster = (f"; dp_accounting d=1e-5: gap {gap:.1e} in {dsec:.1f} s -> {dsec / sec:.1f}x, "
                      f"width ratio {gap / width:.1f}x")
    target("k=1000: width <= 1e-3 in <= 0.3 s (>= 25x faster than dp_accounting at 5x tighter)",
           f"width {width:.1e} in {sec:.2f} s{faster}", width <= 1e-3 and sec <= 0.3 and ok_ratio)

    eps = plan_k10000()
    r, sec, width, _ = run_plan("k=10000 heterogeneous, eps~U[0.0005,0.05]", eps, np.zeros(10000), 1e-6, 1e-2,
                                matched=False)
    target("k=10000: width <= 1e-2 in <= 1.5 s", f"width {width:.1e} in {sec:.2f} s",
           width <= 1e-2 and sec <= 1.5)
    peak = peak_rss_k10000()
    target("peak memory for k=10000 <= 500 MB",
           f"{peak:.0f} MB peak RSS of a fresh process (incl. interpreter)",
           peak <= 500)

    geps = [0.05] * 300 + [0.1] * 200 + [0.3] * 50
    r, sec, width, _ = run_plan("grouped 0.05x300 + 0.1x200 + 0.3x50", geps, [0.0] * 550, 1e-6, 1e-3,
                                repeat=5, dp_steps=(1e-3, 1e-4), matched=False)
    target("grouped 550 queries, 3 distinct eps: exact in <= 50 ms",
           f"{r.detail}, width {width:.1e} in {sec * 1e3:.1f} ms",
           r.detail.startswith("exact") and sec <= 0.05)

    for k in (10, 100, 1000, 10000):
        r, sec, width, _ = run_plan(f"homogeneous eps=0.1 x {k}", [0.1] * k, [0.0] * k, 1e-6, 1e-3, repeat=5,
                                    dp_steps=(1e-3, 1e-4) if k <= 1000 else (1e-3,), matched=False)
        if k == 10000:
            from dpplanner.engine.optimal import homogeneous_bracket as hb
            _, csec = timed(lambda: hb(0.1, 10000, 1e-6), 5)
            target("homogeneous k=10^4 exact in <= 20 ms",
                   f"width {width:.1e}: core {csec * 1e3:.1f} ms, public compose() {sec * 1e3:.1f} ms",
                   csec <= 0.02)
    from dpplanner.engine.optimal import homogeneous_bracket
    b, sec = timed(lambda: homogeneous_bracket(0.1, 10**6, 1e-6), 3)
    print(f"\nhomogeneous eps=0.1 x 10^6 (core)  upper={b.upper:.9f} lower={b.lower:.9f} "
          f"width={b.upper - b.lower:.1e} time={sec * 1e3:.0f} ms")
    target("homogeneous k=10^6 in <= 1 s", f"width {b.upper - b.lower:.1e} in {sec:.2f} s", sec <= 1.0)

    bench_homogeneous_million_peer()
    bench_k2000_draws()
    bench_k100000()
    optimal_curves.run(target, *plan_k1000())
    bench_issue13()

    print("\n=== targets (issue 3) ===")
    for what, measured, ok in TARGETS:
        print(f"  [{'met' if ok else 'NOT met'}] {what}: {measured}")
    return 0


#: dp_accounting d=1e-5 on k=2000 distinct queries takes seconds per draw: it runs on this many of
#: the ten draws (its time hardly depends on the draw: the same k, d and range of epsilons), and the
#: median of those runs is the peer time every draw's ratio is taken against.
K2000_PEER_DRAWS = 3


def bench_k2000_draws():
    """k = 2000, eps ~ U[0.002, 0.1], delta_g = 1e-7, eta = 1e-3, ten seeded draws: >= 20x faster
    than dp_accounting's pessimistic PLD at d = 1e-5 (looser than our width) on the worst draw."""
    from timing import wall_and_cpu

    print("\n=== k=2000, eps~U[0.002,0.1], delta_g=1e-7, eta=1e-3: ten seeded draws ===")
    ours_rows, peer = [], []
    for seed in range(10):
        eps = np.random.default_rng(20261110 + seed).uniform(0.002, 0.1, 2000)
        r, wall, cpu = wall_and_cpu(lambda: compose(list(eps), [0.0] * 2000, 1e-7, theorem="optimal", eta=1e-3), 1)
        width = r.epsilon - r.epsilon_lower
        line = (f"  draw {seed}: [{r.epsilon_lower:.6f}, {r.epsilon:.6f}] width {width:.1e} in {wall:.2f} s "
                f"wall / {cpu:.2f} s CPU  [{r.detail}]")
        if dp_pld is not None and seed < K2000_PEER_DRAWS:
            val, dsec = timed(lambda: dp_accounting_eps(eps, np.zeros(2000), 1e-7, 1e-5))
            peer.append(dsec)
            line += f"; dp_accounting d=1e-5: {val:.6f} (gap {val - r.epsilon_lower:.1e}) in {dsec:.2f} s"
        print(line)
        ours_rows.append((seed, width, wall, cpu))
    worst = max(ours_rows, key=lambda t: t[2])
    widest = max(t[1] for t in ours_rows)
    if peer:
        peer_sec = statistics.median(peer)
        ratio = peer_sec / worst[2]
        target("k=2000, eta=1e-3, ten seeded draws: >= 20x dp_accounting d=1e-5 on the worst draw",
               f"worst draw {worst[0]}: {worst[2]:.2f} s wall / {worst[3]:.2f} s CPU -> {ratio:.1f}x; "
               f"widest bracket {widest:.1e}",
               ratio >= 20 and widest <= 1e-3,
               peer=f"dp_accounting d=1e-5: median {peer_sec:.1f} s over draws 0-{len(peer) - 1} "
                    f"(run on {len(peer)} of the 10 draws to bound the bench's time)")
    else:
        target("k=2000, eta=1e-3, ten seeded draws: >= 20x dp_accounting d=1e-5 on the worst draw",
               f"worst draw {worst[0]}: {worst[2]:.2f} s (dp_accounting not installed: no ratio)", False)


def bench_homogeneous_million_peer():
    """Homogeneous k = 10^6 (eps = 0.001, delta_g = 1e-6) through the public compose(), beside
    dp_accounting at d = 1e-3 (one distribution self-composed 10^6 times). eps = 0.001 keeps the
    peer's lattice at ~10^6 points (at eps = 0.1 it needs ~10^8 and minutes)."""
    from timing import wall_and_cpu

    r, wall, cpu = wall_and_cpu(lambda: compose([0.001], [0.0], 1e-6, theorem="optimal", eta=1e-3,
                                                 multiplicities=[10**6]), 3)
    print(f"\nhomogeneous eps=0.001 x 10^6 (compose): [{r.epsilon_lower:.9f}, {r.epsilon:.9f}] in "
          f"{wall * 1e3:.0f} ms wall / {cpu * 1e3:.0f} ms CPU  [{r.detail}]")
    if dp_pld is None:
        return
    def peer():
        one = dp_pld.from_privacy_parameters(dp_common.DifferentialPrivacyParameters(0.001, 0.0),
                                             value_discretization_interval=1e-3)
        return one.self_compose(10**6).get_epsilon_for_delta(1e-6)

    val, dsec = timed(peer)
    print(f"  dp_accounting d=1e-3: {val:.9f} (gap {val - r.epsilon_lower:.1e}) in {dsec * 1e3:.0f} ms")
    target("homogeneous eps=0.001 x 10^6 (compose): faster than dp_accounting d=1e-3",
           f"width {r.epsilon - r.epsilon_lower:.1e} in {wall * 1e3:.0f} ms wall / {cpu * 1e3:.0f} ms CPU "
           f"-> {dsec / wall:.1f}x", wall < dsec,
           peer=f"dp_accounting d=1e-3: gap {val - r.epsilon_lower:.1e} in {dsec * 1e3:.0f} ms")


#: The k = 10^5 composition is given this time limit (its target is 2 s; the limit only bounds the
#: bench on a heavily loaded machine, and the detail says when it bites).
K100000_CAP_SECONDS = 60.0


def bench_k100000():
    """The issue's k = 10^5 plan (eps ~ U[0.0005, 0.004], delta_g = 1e-6) at eta = 1e-3; no peer
    runs this size in the bench (dp_accounting would take minutes)."""
    from timing import wall_and_cpu

    eps = np.random.default_rng(20261105).uniform(0.0005, 0.004, 100_000)
    # (a time limit bounds the bench on a busy machine; the detail says when it bites)
    r, wall, cpu = wall_and_cpu(lambda: compose(list(eps), [0.0] * eps.size, 1e-6, theorem="optimal",
                                                eta=1e-3, time_limit=K100000_CAP_SECONDS), 1)
    width = r.epsilon - r.epsilon_lower
    print(f"\nk=100000, eps~U[0.0005,0.004], eta=1e-3: [{r.epsilon_lower:.6f}, {r.epsilon:.6f}] width "
          f"{width:.1e} in {wall:.2f} s wall / {cpu:.2f} s CPU  [{r.detail}]")
    target("k=10^5, eta=1e-3: width <= 1e-3 in <= 2 s", f"width {width:.1e} in {wall:.2f} s wall / {cpu:.2f} s CPU",
           width <= 1e-3 and wall <= 2.0)


def bench_issue13():
    """The hard plans of issue 13: achieved width beside eta, and the time."""
    rng = np.random.default_rng(13)
    near = np.concatenate([2.1234567891 * (1 + 1e-12 * rng.standard_normal(884)),
                           2.7654321987 * (1 + 1e-12 * rng.standard_normal(891))])
    plans = [
        ("two near-equal groups 2.12 x 884, 2.77 x 891", near, [0.0] * near.size, 3.43e-5, 0.1, None),
        ("8937 values 0.369(1 + 1e-9 i/m)", [0.36925816267351436 * (1 + 1e-9 * i / 8937) for i in range(8937)],
         [0.0] * 8937, 1.12e-12, 1e-4, None),
        ("13 releases eps 2..2.12, delta_g 1e-12", [2.0 + 0.01 * i for i in range(13)], [0.0] * 13, 1e-12, 1e-3,
         None),
        ("lattice 4 x 300 (k/4096), delta_g 1e-14", [809 / 4096, 1845 / 4096, 1001 / 4096, 1377 / 4096], [0.0] * 4,
         1e-14, 0.01, [300] * 4),
        ("lattice 0.2..0.5 x ~170, eta 1e-6", [0.2, 0.25, 0.3, 0.4, 0.5], [0.0] * 5, 1e-6, 1e-6,
         [139, 116, 189, 208, 197]),
        ("own deltas use up delta_g: 0.407 x 100", [0.4068463862751918], [3.850252529329472e-14],
         3.850252529341023e-12, 1e-3, [100]),
    ]
    print("\n=== issue 13 plans: achieved width beside eta ===")
    for name, eps, deltas, dg, eta, mult in plans:
        r, sec = timed(lambda: compose(list(eps), list(deltas), dg, theorem="optimal", eta=eta, multiplicities=mult))
        width = r.epsilon - r.epsilon_lower
        print(f"  {name}: [{r.epsilon_lower:.9g}, {r.epsilon:.9g}] width {width:.2e} vs eta {eta:g} "
              f"({'within' if width <= eta else 'ABOVE'}) in {sec:.2f} s  [{r.detail}]")


if __name__ == "__main__":
    raise SystemExit(main())
