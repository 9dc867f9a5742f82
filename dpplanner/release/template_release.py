# --- releasing --------------------------------------------------------------------------------

def release(plan: dict, built, categories, records, customs, bounded=None) -> list[dict]:
    """Every cell released once per repetition (``bounded``: a statistic by group's records, with
    rows beyond its bounds moved out of every group)."""
    rows = []
    for stat, key, _, measurement, scale in cells(plan, built):
        if measurement is None or key is None and "group_by" in stat:   # (a selection: not a value)
            continue
        data = (bounded or {}).get(stat["name"], records)
        for repetition in range(1, stat["repetitions"] + 1):
            label = stat["name"] + (f" #{repetition}" if stat["repetitions"] > 1 else "")
            for row in shaped(stat, label, measurement(data), scale, categories.get(stat["name"])):
                # a group's value carries one group's error, as the plan's table shows it
                rows.append(row if key is None else dict(row, group=key, error=stat["error_one_group"]))
    for item in plan["custom"]:
        rows.append({"statistic": item["name"], "kind": "custom", "coordinate": "",
                     "value": customs[item["name"]](records), "error": None, "noise": "custom", "scale": None})
    return rows


def shaped(stat: dict, label: str, raw, scale: float, categories) -> list[dict]:
    """Released rows: a mean or proportion is the noisy sum over the public n; a quantile's cells
    become the CDF (running sums) at each grid point."""
    common = {"statistic": label, "kind": stat["kind"], "error": stat["error"],
              "noise": stat["noise"], "scale": scale / stat["divisor"]}
    if stat["kind"] == "histogram":
        return [dict(common, coordinate=str(c), value=int(v)) for c, v in zip(categories, raw)]
    if stat["kind"] == "quantile":
        total, out = 0, []
        for j, v in enumerate(raw):
            total += int(v)
            out.append(dict(common, coordinate=f"<= {stat['grid'][j]!r}", value=total))
        return out
    value = raw / stat["divisor"] if stat["divisor"] != 1 else raw
    return [dict(common, coordinate="", value=value)]


def write_outputs(folder: Path, plan: dict, rows: list[dict]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    fields = ["statistic", "group", "kind", "coordinate", "value", "error", "confidence", "noise", "scale"]
    with open(folder / "release.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields, restval="")
        writer.writeheader()
        for row in rows:
            writer.writerow(dict(row, confidence=plan["confidence"]))
    (folder / "release.json").write_text(json.dumps(
        {"plan": plan["title"], "confidence": plan["confidence"], "released": rows}, indent=1) + "\n")
    totals = "\n".join(f"  {name}: epsilon = {eps!r}, delta = {delta!r}"
                       for name, (eps, delta) in plan["totals"].items())
    (folder / "release-record.txt").write_text(
        f"Released: {plan['title']}\nDate: {datetime.datetime.now(datetime.timezone.utc).isoformat()}\n"
        f"OpenDP: {installed_version('opendp')}\nNeighbouring datasets: {plan['neighbouring']}\n"
        f"Unit of privacy: one {plan['unit']}, at most {plan['contributions']} row(s) each"
        f"{' (truncated by this script)' if plan['truncate'] else ''}\n"
        f"Global budget: epsilon = {plan['epsilon']!r}, delta = {plan['delta']!r} under {plan['theorem']}\n"
        f"Totals of the plan for exactly this noise, under every theorem:\n{totals}\n"
        f"Statistics released: {len(plan['statistics']) + len(plan['custom'])}; each value's error holds "
        f"with probability {plan['confidence']!r} (all coordinates of a statistic at once; a statistic by "
        f"group: all coordinates of one group).\n"
        + "".join(selected_line(plan, stat, rows) for stat in plan["statistics"] if "selection" in stat))
