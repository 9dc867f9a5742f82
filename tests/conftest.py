"""Every test: results that do not depend on how fast or busy the machine is."""

from hypothesis import HealthCheck, settings

# Hypothesis times each example (a 200 ms deadline) and the generation of its data ("too slow"):
# on a busy machine both fail tests that are right. Properties here are checked, never timed.
settings.register_profile("dpplanner", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("dpplanner")
