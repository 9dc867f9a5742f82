# --- groups selected privately ----------------------------------------------------------------

def distinct_counts(stat: dict, records: list[str], ids: list, position: int) -> dict:
    """Each group's count of distinct individuals, the selection's input: one row per individual
    per group, from the records bounded to the plan's L0 groups per individual (bound_groups), so
    that one individual moves at most L0 groups' counts (2 L0 when replaced), each by at most 1.
    Without an ID column every row counts: that is the count of distinct individuals only when
    the data guarantee at most one row per individual in a group (L_inf = 1)."""
    if not ids or ids[0] is None:
        if stat["max_rows"] != 1:
            raise Refused(f"statistic {stat['name']!r} selects its groups by their counts of distinct "
                          f"individuals, and the plan allows {stat['max_rows']} rows per individual in a "
                          "group: set ID_COLUMN (or --id-column) so that each is counted once")
        ids = range(len(records))
    counts = {}
    for key in {(who, record.split(SEPARATOR)[position]) for record, who in zip(records, ids)}:
        if key[1] != OUTSIDE:
            counts[key[1]] = counts.get(key[1], 0) + 1
    return counts


def selector(dp, stat: dict):
    """(OpenDP's make_laplace_threshold at the plan's scale b and integer threshold T, the scale
    used): discrete Laplace noise on each group's count, the group kept when its noisy count is
    at least T. The scale is raised only as far as OpenDP's rounding needs for its map's epsilon
    at (K, K, 1) to stay within the plan's eps_s."""
    chosen = stat["selection"]
    domain = dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=dp.i64))
    metric = dp.l01inf_distance(dp.absolute_distance(T=dp.i64))
    scale = chosen["scale"]
    for _ in range(64):
        measurement = dp.m.make_laplace_threshold(domain, metric, scale=scale, threshold=chosen["threshold"])
        if measurement.map(tuple(chosen["d_in"]))[0] <= chosen["epsilon"]:
            break
        scale = math.nextafter(scale, math.inf)
    return measurement, scale


def check_selection(stat: dict, measurement, scale: float) -> list[str]:
    """The selection against the plan: its scale, OpenDP's privacy map at (K, K, 1) within the
    plan's (eps_s, delta_s), and the plan's own bound on delta_s re-derived: a group held by one
    individual alone is kept with probability p^(T-1) / (1 + p), p = exp(-1/b), for each of the
    K groups one individual moves (OpenDP 0.16's map states one step less, K p^T / (1 + p))."""
    chosen, where = stat["selection"], f"statistic {stat['name']!r}, its selection of groups"
    failures = []
    if not chosen["scale"] <= scale <= chosen["scale"] * (1 + SCALE_RAISE_LIMIT):
        failures.append(f"{where}: the noise scale {scale!r} is not the plan's {chosen['scale']!r}")
    eps, delta = measurement.map(tuple(chosen["d_in"]))
    if eps > chosen["epsilon"] or delta > chosen["delta"]:
        failures.append(f"{where}: OpenDP's privacy map gives (epsilon, delta) = ({eps!r}, {delta!r}) "
                        f"at d_in = {tuple(chosen['d_in'])}, above the plan's ({chosen['epsilon']!r}, "
                        f"{chosen['delta']!r})")
    keys, p = chosen["d_in"][0], math.exp(-1.0 / scale)
    if keys * p ** (chosen["threshold"] - 1) / (1 + p) > chosen["delta"]:
        failures.append(f"{where}: a group held by one individual is kept with probability above "
                        f"delta_s / K at the threshold {chosen['threshold']!r} (was it lowered?)")
    return failures


def select_groups(dp, plan: dict, stat: dict, cells_built: list, counts: dict, space, columns: dict,
                  categories: dict) -> list:
    """The statistic's cells for the groups its selection keeps (in sorted order), after the
    selection itself (built and checked with the rest): each cell built as the one checked for
    EACH_GROUP, and checked again."""
    selection = cells_built[0]
    kept = sorted(selection[2](counts))
    out = [cell(dp, plan, stat, space, columns, categories, key) for key in kept]
    failures = []
    for key, transformation, measurement, scale in out:
        failures += check_cell(plan, stat, key, transformation, measurement, scale, space, categories)
    if failures:
        raise Refused("\n".join(f"  - {f}" for f in failures))
    return [selection] + out


def selected_line(plan: dict, stat: dict, rows: list[dict]) -> str:
    """The record's line on a selection: how many groups it kept, and by which rule."""
    chosen, name = stat["selection"], stat["name"]
    labels = {name} | {f"{name} #{r}" for r in range(1, stat["repetitions"] + 1)}
    kept = len({row["group"] for row in rows if row["statistic"] in labels})
    return (f"Groups of {name!r} selected privately: {kept} kept, those whose count of distinct "
            f"individuals (one {plan['unit']} each) plus discrete Laplace noise of scale "
            f"{chosen['scale']!r} reached the threshold {chosen['threshold']!r} (epsilon_s = "
            f"{chosen['epsilon']!r}, delta_s = {chosen['delta']!r}).\n")
