"""The fuzz tier (issue 29): Hypothesis over every input surface, time-boxed for CI.

Each surface runs `FUZZ_EXAMPLES` examples (DESKTOP_MEMORY_FUZZ_EXAMPLES, default 40). The test command's run is
derandomized: the same examples every time, so a red CI run means a change broke something, not a lucky draw.
Setting DESKTOP_MEMORY_FUZZ_EXAMPLES makes it a hunt: new random examples each run (e.g. 2000 overnight; a failure
prints the example and how to replay it; `--hypothesis-seed=N` replays a run). What a hunt finds is fixed and kept
as an ordinary test.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

FUZZ_EXAMPLES = int(os.environ.get("DESKTOP_MEMORY_FUZZ_EXAMPLES", "40"))
HUNT = "DESKTOP_MEMORY_FUZZ_EXAMPLES" in os.environ

settings.register_profile(
    "fuzz", max_examples=FUZZ_EXAMPLES, deadline=None, print_blob=True, database=None, derandomize=not HUNT,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large,
                           HealthCheck.filter_too_much],
)
FUZZ = settings.get_profile("fuzz")
