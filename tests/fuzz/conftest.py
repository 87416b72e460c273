"""The fuzz tier (issue 29): Hypothesis over every input surface, time-boxed for CI.

Each surface runs `FUZZ_EXAMPLES` examples (DESKTOP_MEMORY_FUZZ_EXAMPLES, default 40; raise it for a long local
hunt, e.g. 2000 overnight). Examples are random each run (a failure prints the example and how to replay it);
`--hypothesis-seed=N` replays a run.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

FUZZ_EXAMPLES = int(os.environ.get("DESKTOP_MEMORY_FUZZ_EXAMPLES", "40"))

settings.register_profile(
    "fuzz", max_examples=FUZZ_EXAMPLES, deadline=None, print_blob=True, database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large,
                           HealthCheck.filter_too_much],
)
FUZZ = settings.get_profile("fuzz")
