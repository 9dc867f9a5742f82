# --- checks -----------------------------------------------------------------------------------

def cells(plan: dict, built):
    """(statistic, group key, transformation, measurement, scale) of every cell; a statistic by
    group first once with key None (its groups are checked then)."""
    for stat in plan["statistics"]:
        if "group_by" in stat and "selection" not in stat:    # (a selection is its own first cell)
            yield stat, None, None, None, None
        for key, transformation, measurement, scale in built[stat["name"]]:
            yield stat, key, transformation, measurement, scale


def check_groups(stat: dict, keys: list) -> list[str]:
    """The groups given are the plan's: as many as its g, distinct, its listed keys if it lists them."""
    where = f"statistic {stat['name']!r}"
    if stat["group_keys"] and list(keys) != stat["group_keys"]:
        return [f"{where}: the groups given are not the plan's keys {stat['group_keys']!r}"]
    if len(keys) != stat["groups"] or len(set(keys)) != len(keys):
        return [f"{where}: {len(keys)} group key(s) given ({len(set(keys))} distinct); the plan has "
                f"g = {stat['groups']}: set GROUPS (or --groups) to its keys"]
    return []


def check_all(dp, plan: dict, expected: str, records, space, built, categories, customs,
              groups=None) -> list[str]:
    """Every check, in order; returns the failures (an empty list: everything matches)."""
    failures, groups = [], groups or {}
    if digest(plan) != expected:
        failures.append("the PLAN block was edited: its digest differs from the one dpplanner wrote "
                        "(export the script again from the plan)")
    got = installed_version("opendp")
    if not got.startswith(plan["opendp"]):
        failures.append(f"OpenDP {got} is installed; this script was written for OpenDP {plan['opendp']}*")
    if plan["size"] is not None and len(records) != plan["size"]:
        failures.append(f"the data has {len(records)} records; the plan's relation (replace one "
                        f"record) fixes the dataset size at {plan['size']}")
    if plan["size"] is None and plan["size_limit"] is not None and len(records) > plan["size_limit"]:
        failures.append(f"the data has more than {plan['size_limit']} records, the most the plan's "
                        "real-valued sums read (OpenDP would drop records at random)")
    for stat, key, transformation, measurement, scale in cells(plan, built):
        if key is None and "selection" in stat:
            failures += check_selection(stat, measurement, scale)
        elif key is None and "group_by" in stat:
            failures += check_groups(stat, groups.get(stat["name"], []))
        else:
            failures += check_cell(plan, stat, key, transformation, measurement, scale, space, categories)
    for item in plan["custom"]:
        failures += check_custom(item, customs.get(item["name"]), plan["d_in"], space)
    return failures


def check_cell(plan: dict, stat: dict, key, transformation, measurement, scale, space,
               categories) -> list[str]:
    """One cell's measurement against the plan: its input domain, sensitivity, shift, scale and
    privacy map at the cell's d_in (and a histogram's categories, a sum's domain size)."""
    name, failures = stat["name"], []
    where = f"statistic {name!r}" + ("" if key is None else f", group {key!r}")
    d_in = stat["d_in"]
    if measurement.input_domain != space[0] or measurement.input_metric != space[1]:
        failures.append(f"{where}: its measurement does not start from the dataset's input domain")
    if stat["kind"] == "histogram" and len(categories.get(name) or []) != stat["cells"]:
        failures.append(f"{where}: {len(categories.get(name) or [])} categories given; the plan "
                        f"has {stat['cells']} bins")
    sensitivity = transformation.map(d_in)
    sensitivity = max(sensitivity) if isinstance(sensitivity, (list, tuple)) else sensitivity
    if sensitivity > stat["sensitivity"]:
        failures.append(f"{where}: OpenDP certifies sensitivity {sensitivity!r} at d_in = {d_in}, "
                        f"above the plan's {stat['sensitivity']!r} (bounds or size changed?)")
    lattice = 1.0 if stat["k"] is None else math.ldexp(1.0, stat["k"])
    margin = 0.0 if stat["k"] is None else lattice
    if (sensitivity + margin) / lattice > stat["shift"] * (1 + 2 ** -50):
        failures.append(f"{where}: the noised value moves by {(sensitivity + margin) / lattice!r} "
                        f"lattice units, more than the shift {stat['shift']} the total was certified for")
    if not stat["scale"] <= scale <= stat["scale"] * (1 + SCALE_RAISE_LIMIT):
        failures.append(f"{where}: the noise scale {scale!r} is not the plan's {stat['scale']!r}")
    spent = measurement.map(d_in)
    what = "rho" if stat["noise"] == "gaussian" else "epsilon"
    if spent > stat["map_bound"]:
        failures.append(f"{where}: OpenDP's privacy map gives {what} = {spent!r} at d_in = {d_in}, "
                        f"above the plan's {stat['map_bound']!r} (was a scale lowered?)")
    if stat.get("bounds") and stat["kind"] != "histogram":
        domain = str(transformation.input_domain)
        if "size=" in domain and f"size={plan['size']}" not in domain:
            failures.append(f"{where}: the input domain's size is not the plan's {plan['size']}")
    return failures


def check_custom(item: dict, measurement, d_in: int, space) -> list[str]:
    where = f"custom statistic {item['name']!r}"
    if measurement is None:
        return [f"{where} is not filled in: write its function in the CUSTOM block (it must return "
                "an OpenDP measurement on the dataset's input domain)"]
    if measurement.input_domain != space[0] or measurement.input_metric != space[1]:
        return [f"{where}: its measurement does not start from the dataset's input domain"]
    spent = measurement.map(d_in)
    eps, delta = (spent, 0.0) if not isinstance(spent, (tuple, list)) else spent
    if "ZeroConcentrated" in str(measurement.output_measure):
        return [f"{where}: give an (epsilon, delta) or pure-DP measurement, not zCDP"]
    if eps > item["epsilon"] or delta > item["delta"]:
        return [f"{where}: its map gives ({eps!r}, {delta!r}), above the plan's "
                f"({item['epsilon']!r}, {item['delta']!r})"]
    return []
