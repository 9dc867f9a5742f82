"""From a plan to a release: the OpenDP release script (export) and its check against a plan.

No Qt and no OpenDP here: exporting needs neither; the script needs OpenDP 0.16 to run.
"""

from .check import check_script
from .export import ExportError, export_script, render_script, script_plan

__all__ = ["ExportError", "check_script", "export_script", "render_script", "script_plan"]
