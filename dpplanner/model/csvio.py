"""CSV import and export of the statistics table.

Export writes the editable columns (the same names as in .dpplan files), then any unknown fields
the statistics carry (non-text values as JSON), then derived, read-only columns (delta_used,
functioning epsilon, error, units, explanation, and what implementing the statistic needs: data
type, sensitivities, noise kind, scale and lattice, divisor, rho; for a grouped statistic one
group's error, how many cells one individual moves, and the selection's threshold). Import reads
the editable columns, ignores the derived ones, and keeps any other column as an unknown field of the
statistic. Empty cells mean "not set". Every row goes through the same validation as the GUI.

Text cells (names, variables, descriptions, unknown text fields, the derived sentences) are written
so that no spreadsheet runs them as a formula (``safe_text.spreadsheet``: a leading apostrophe
before = + - @, a tab, a carriage return or an apostrophe); import takes that apostrophe off again,
so export then import gives back exactly the text the plan held.

The derived column ``n_used`` is the number of records a statistic's error was computed with (its
own ``n``, or the plan's dataset size where ``n`` is empty). Importing into a plan that has no
dataset size (a new plan) takes ``n`` from it where ``n`` is empty, so the statistics keep the
errors they had; a plan with a dataset size keeps "empty: the plan's".
"""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path
from typing import Optional, Sequence

from .fileio import read_regular_file
from .files import MAX_FILE_BYTES, PlanFileError, atomic_write_text
from .implementation import implementation
from .plan import Plan
from .safe_text import from_spreadsheet, spreadsheet
from .statistic import KIND_FIELDS, Kind, Mechanism, Noise, Statistic, field_names, parse_enum, preview
from .validation import MAX_STATISTICS, PlanError, read_as_another, too_close_to_zero, validate_statistic

EDITABLE_COLUMNS = field_names(Statistic)
DERIVED_COLUMNS = ("delta_used", "n_used", "functioning_epsilon", "functioning_delta", "error",
                   "units", "explanation", "data_type", "sensitivity_l1", "sensitivity_l2",
                   "noise_kind", "noise_scale", "lattice", "divisor", "rho", "error_one_group",
                   "cells_moved", "selection_threshold")
_FLOATS = ("epsilon", "delta", "weight", "target_error", "lower", "upper", "granularity", "selection_share")
_INTS = ("repetitions", "bins", "n", "groups", "max_groups", "max_rows")
#: Columns whose empty cell means "not set" (None) rather than the field's default.
_OPTIONAL = ("lower", "upper", "bins", "granularity", "n", "target_error", "groups", "max_groups", "max_rows")
_ENUMS = {"kind": Kind, "mechanism": Mechanism, "noise": Noise}
_FLAGS = ("held", "integer", "one_group_each", "select_groups")
_DERIVED_TEXT = ("units", "explanation", "data_type", "noise_kind", "lattice")
_TRUE = {"true", "yes", "1", "y", "x"}
_FALSE = {"false", "no", "0", "n", ""}


def export_csv(plan: Plan) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    extra_cols: list[str] = []
    for s in plan.statistics:
        extra_cols += [k for k in s.extra if k not in extra_cols and k not in EDITABLE_COLUMNS
                       and k not in DERIVED_COLUMNS]
    header = EDITABLE_COLUMNS + tuple(extra_cols) + DERIVED_COLUMNS
    writer.writerow([spreadsheet(col) for col in header])    # an unknown field's name is text too
    for s, p in zip(plan.statistics, plan.privacy_all()):
        row = []
        for col in EDITABLE_COLUMNS:
            v = getattr(s, col)
            if col in _ENUMS:
                v = v.value
            elif col in _FLAGS:
                v = "true" if v else "false"
            text = "" if v is None else repr(v) if isinstance(v, float) else str(v)
            row.append(spreadsheet(text) if isinstance(v, str) else text)
        for col in extra_cols:
            v = s.extra.get(col, "")
            row.append(spreadsheet(v) if isinstance(v, str) else json.dumps(v))
        n_used = s.n if s.n is not None else plan.budget.dataset_size
        row += [repr(p.delta), "" if n_used is None or "n" not in KIND_FIELDS[s.kind] else str(n_used),
                repr(p.functioning_epsilon), repr(p.functioning_delta),
                "" if p.error is None else repr(p.error), p.units, p.explanation or p.problem or ""]
        row += _implementation_cells(implementation(plan.budget, s, p))
        row += ["" if p.cell_error is None else repr(p.cell_error),
                "" if p.moves is None else str(p.moves.cells),
                "" if p.selection is None else repr(p.selection.threshold)]
        writer.writerow([spreadsheet(cell) if col in _DERIVED_TEXT else cell
                         for col, cell in zip(header, row)])
    return out.getvalue()


def _implementation_cells(impl) -> list[str]:
    """What implementing the statistic needs; sensitivities and the noise scale are those of the
    query that gets the noise (a mean's is the sum's: divide by ``divisor``)."""
    if impl is None:
        return [""] * 8
    return [impl.data_type, repr(impl.l1), repr(impl.l2), impl.noise_kind, repr(impl.scale),
            impl.lattice or "", repr(impl.divisor), "" if impl.rho is None else repr(impl.rho)]


def save_csv(plan: Plan, path: str | os.PathLike) -> Optional[str]:
    """Write the CSV; a note for the user (the old file's other hard links), or None."""
    try:
        return atomic_write_text(path, export_csv(plan))
    except OSError as exc:
        raise PlanFileError(f"{path}: cannot write the CSV file: {exc.strerror or exc}") from None


def _cell_number(value: str, col: str, line: int, integer: bool):
    text = value.strip()
    if text == "":
        return None
    try:
        number = float(text)
    except ValueError:
        raise PlanFileError(f"CSV line {line}: {col} = {preview(value)} is not a number") from None
    if read_as_another(text, number):
        raise PlanFileError(f"CSV line {line}: {too_close_to_zero(col, preview(value))}")
    if integer:
        if not number.is_integer():
            raise PlanFileError(f"CSV line {line}: {col} = {preview(value)} must be a whole number")
        return int(number)
    return number


def parse_csv(text: str, budget=None) -> list[Statistic]:
    """CSV text -> validated statistics (against ``budget`` if given). Raises PlanFileError."""
    if len(text) > MAX_FILE_BYTES:
        raise PlanFileError("the CSV file is too large")
    reader = csv.DictReader(io.StringIO(text))
    if not reader.fieldnames or "name" not in [f.strip() for f in reader.fieldnames]:
        raise PlanFileError("the CSV file needs a header row with at least a 'name' column; known "
                            f"columns: {', '.join(EDITABLE_COLUMNS)}")
    stats: list[Statistic] = []
    for row in reader:
        line = reader.line_num
        if len(stats) >= MAX_STATISTICS:
            raise PlanFileError(f"the CSV file has more than {MAX_STATISTICS} statistics")
        row = {from_spreadsheet((k or "").strip()): (v if isinstance(v, str) else "")
               for k, v in row.items()}
        if not any(v.strip() for v in row.values()):
            continue
        fields: dict = {"extra": {}}
        if not (row.get("n") or "").strip() and (budget is None or budget.dataset_size is None):
            row["n"] = row.get("n_used", "")     # the n its error was computed with (a new plan)
        for col, value in row.items():
            if col in DERIVED_COLUMNS or col == "":
                continue
            if col not in EDITABLE_COLUMNS:
                if value != "":
                    fields["extra"][col] = from_spreadsheet(value)
                continue
            if col in _FLOATS or col in _INTS:
                number = _cell_number(value, col, line, col in _INTS)
                if number is not None or col in _OPTIONAL:
                    fields[col] = number
            elif col in _FLAGS:
                flag = value.strip().lower()
                if flag not in _TRUE | _FALSE:
                    raise PlanFileError(f"CSV line {line}: {col} = {preview(value)} must be true or false")
                fields[col] = flag in _TRUE
            elif col in _ENUMS:
                if value.strip():
                    try:
                        fields[col] = parse_enum(_ENUMS[col], value.strip(), col)
                    except ValueError as exc:
                        raise PlanFileError(f"CSV line {line}: {exc}") from None
            else:
                fields[col] = from_spreadsheet(value)
        try:
            stats.append(validate_statistic(Statistic(**fields), len(stats), budget))
        except PlanError as exc:
            raise PlanFileError(f"CSV line {line}: {exc}") from None
    return stats


def load_csv(path: str | os.PathLike, budget=None) -> list[Statistic]:
    path = Path(path)
    try:      # a regular file only: a FIFO or a device is refused instead of blocking
        text = read_regular_file(path, MAX_FILE_BYTES).decode("utf-8-sig")
    except UnicodeDecodeError:
        raise PlanFileError(f"{path}: the file is not UTF-8 text") from None
    return parse_csv(text, budget)


def import_csv(plan: Plan, path: str | os.PathLike) -> Sequence[Statistic]:
    """Replace the plan's statistics with the CSV's (one "reset" event)."""
    stats = load_csv(path, plan.budget)
    try:
        plan.replace_all(stats)
    except PlanError as exc:
        raise PlanFileError(f"{path}: {exc}") from None
    return stats
