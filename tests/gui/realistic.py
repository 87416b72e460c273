"""Twelve realistic memories (the kinds a person copies in a day), for the search window's tests and probes."""

from __future__ import annotations

from typing import Any

ARTICLE = (
    "The Eddystone Lighthouse stands on the treacherous Eddystone Rocks, 14 kilometres south of Rame Head in "
    "Cornwall. The present tower, designed by James Douglass, is the fourth to be built on the site; it was "
    "completed in 1882 and is still in use.\n\n"
    "Built in 1870, its predecessor by John Smeaton was a landmark of civil engineering: interlocking granite "
    "blocks and hydraulic lime that set under water. When the rock beneath it began to erode, the upper part "
    "was taken down and rebuilt on Plymouth Hoe as a memorial, where visitors can still climb it today.\n\n"
    "The keepers left in 1982 when the light was automated. A helipad above the lantern now lets engineers "
    "reach it in any weather, and the light can be seen 17 nautical miles away on a clear night."
)

REALISTIC: list[dict[str, Any]] = [
    {"content": "Weekly sync 12 Nov\n- Priya: beta ships March 3rd, release notes by Friday\n- Gonzalo: "
                "migrate the billing cron to the new queue\n- Decision: freeze the API on Feb 20\nAction items: "
                "Tom books the retro room", "source": "clipboard", "source_app": "Obsidian", "tags": ["work"]},
    {"content": "def retry(fn, attempts=3, delay=0.5):\n    for i in range(attempts):\n        try:\n"
                "            return fn()\n        except OSError:\n            time.sleep(delay * 2 ** i)\n"
                "    raise TimeoutError(\"gave up\")", "source": "clipboard", "source_app": "code"},
    {"content": "https://docs.python.org/3/library/asyncio-task.html#asyncio.TaskGroup", "source": "clipboard",
     "source_app": "firefox"},
    {"content": "From: Maria Gonzalez <maria.gonzalez@northwind.example>\nSubject: Invoice 4471 overdue\n\n"
                "Hi Sam, the invoice for the October consulting work is now 14 days overdue. Could you check "
                "with accounts? Thanks, Maria", "source": "clipboard", "source_app": "thunderbird"},
    {"content": ARTICLE, "source": "clipboard", "source_app": "firefox",
     "source_url": "https://en.wikipedia.org/wiki/Eddystone_Lighthouse"},
    {"content": "[09:41] alex: did the deploy go out?\n[09:42] jordan: yes, 2.4.1 is live on prod\n"
                "[09:42] alex: great, closing the incident\n[09:43] jordan: I'll write the postmortem tomorrow",
     "source": "clipboard", "source_app": "slack"},
    {"content": "Shopping: oat milk, 6 eggs, sourdough, basil, parmesan, lemons, dish soap, coffee beans",
     "source": "clipboard", "source_app": "keep"},
    {"content": "Dr. Elena Rossi\nVia Garibaldi 14\n10122 Torino TO\nItaly\n+39 011 555 0142", "source": "clipboard",
     "source_app": "contacts"},
    {"content": "SELECT customer_id, sum(total) AS spent\nFROM orders\nWHERE created_at >= '2026-01-01'\n"
                "GROUP BY customer_id\nORDER BY spent DESC\nLIMIT 20;", "source": "clipboard", "source_app": "dbeaver"},
    {"content": "Flight LH 1839 Lisbon to Munich, Thu 4 Dec 07:05, seat 14C, booking ref QX7PLM",
     "source": "clipboard", "source_app": "firefox"},
    {"content": "Idea: the search window could group look-alike invoices and show +N similar instead of five rows "
                "that differ by one number.", "source": "manual", "tags": ["ideas"]},
    {"content": "git rebase -i HEAD~5  # squash the fixups before opening the pull request", "source": "clipboard",
     "source_app": "terminal"},
]
