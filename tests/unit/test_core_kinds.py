"""What kind of thing a copied text is (core/kinds.py): realistic copies of each kind and the look-alikes that are
not (prose that mentions git, an email address in a sentence, German and Chinese text)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from desktop_memory.core.kinds import KINDS, LANGUAGES, Kind, classify

COMMANDS = [
    "rsync -avz ./build/ deploy@10.0.4.17:/srv/www/",
    "ssh -i ~/.ssh/id_ed25519 ubuntu@203.0.113.9",
    "scp backup.tar.gz admin@nas.local:/volume1/backups/",
    "git rebase -i HEAD~5  # squash the fixups before opening the pull request",
    "git push",
    "git log --oneline --graph --decorate -20",
    "curl -fsSL https://get.docker.com | sh",
    "docker compose up -d --build",
    "docker run --rm -p 8080:80 nginx:alpine",
    "kubectl -n staging rollout restart deployment/api",
    "make rotate-db ENV=staging",
    "make test",
    "$ npm install --save-dev vitest",
    "sudo apt-get install -y ripgrep fd-find",
    "pip install -e '.[dev]'",
    "find . -name '*.pyc' -delete",
    "tar -xzf node-v20.11.0-linux-x64.tar.gz -C /opt",
    "PGPASSWORD=secret psql -h localhost -U app -d orders",
    "cd ~/projects/app && git pull && make",
    "journalctl -u nginx --since today",
    "./gradlew assembleRelease",
    "ffmpeg -i talk.mov -vf scale=1280:-2 -c:v libx264 talk.mp4",
    "$ git status\nOn branch main\nnothing to commit, working tree clean",
    "docker build -t app:latest . \\\n  --build-arg VERSION=1.2.3",
]
NOTES = [
    "I should finally learn git properly, everybody at work uses it.",
    "git is a version control system that Linus wrote in 2005.",
    "Make sure to water the plants on Friday.",
    "find the receipt for the bike repair",
    "Docker is eating all my disk space again, clean it up after the release.",
    "Write to priya@example.com about the offsite budget before Thursday.",
    "Die Rechnung Nr. 4471 ist seit 14 Tagen überfällig, bitte mit der Buchhaltung klären.",
    "明天下午三点在会议室讨论新版本的发布计划,记得带上测试报告。",
    "Meet at 5; bring the slides;",
    "C++ has std::vector and std::map, which the course covers next week.",
    "The arrow => means 'implies' in the logic notes.",
    "Remember: return the library books by Friday",
    "if it rains: take the bus",
    "Flight LH 1839 Lisbon to Munich, Thu 4 Dec 07:05, seat 14C, booking ref QX7PLM",
    "To rotate the staging database password run: make rotate-db ENV=staging",
    "Idea: the search window could group look-alike invoices and show +N similar instead of five rows.",
    "Note to self: call the dentist at 10:30 about the appointment.",
    "The meeting went well. Sam will send the slides. We agreed to revisit the budget in March.",
]


@pytest.mark.parametrize("text", COMMANDS)
def test_shell_commands(text: str) -> None:
    assert classify(text).name == "command", text


@pytest.mark.parametrize("text", NOTES)
def test_prose_that_looks_a_bit_like_something_else_is_a_note(text: str) -> None:
    assert classify(text).name == "note", (text, classify(text))


@pytest.mark.parametrize(("text", "language"), [
    ("def retry(fn, attempts=3):\n    for i in range(attempts):\n        try:\n            return fn()\n"
     "        except OSError:\n            time.sleep(2 ** i)", "python"),
    ("import pandas as pd\n\ndf = pd.read_csv('orders.csv')\nprint(df.head())", "python"),
    ("const total = items.reduce((a, b) => a + b, 0);\nconsole.log(total);", "javascript"),
    ("export interface User {\n  id: string;\n  name: string;\n  admin?: boolean;\n}", "typescript"),
    ("SELECT customer_id, sum(total) AS spent\nFROM orders\nWHERE created_at >= '2026-01-01'\n"
     "GROUP BY customer_id\nORDER BY spent DESC\nLIMIT 20;", "sql"),
    ("#!/usr/bin/env bash\nset -euo pipefail\nfor f in *.log; do\n  gzip \"$f\"\ndone", "shell"),
    ("fn main() {\n    let mut total = 0;\n    for x in vec![1, 2, 3] {\n        total += x;\n    }\n"
     "    println!(\"{}\", total);\n}", "rust"),
    ("package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hello\")\n}", "go"),
    ("public class Main {\n    public static void main(String[] args) {\n        System.out.println(\"hi\");\n"
     "    }\n}", "java"),
    ("#include <stdio.h>\n\nint main(void) {\n    printf(\"hello\\n\");\n    return 0;\n}", "c"),
    ("#include <vector>\n#include <iostream>\n\nint main() {\n    std::vector<int> v{1, 2};\n"
     "    std::cout << v.size() << std::endl;\n}", "cpp"),
    ("<!DOCTYPE html>\n<html>\n  <body>\n    <div class=\"card\">Hi</div>\n  </body>\n</html>", "html"),
    ("<?xml version=\"1.0\"?>\n<project xmlns=\"http://maven.apache.org/POM/4.0.0\">\n  <version>1.0</version>\n"
     "</project>", "xml"),
    (".card {\n  display: flex;\n  padding: 8px 12px;\n}\n@media (max-width: 600px) {\n  .card { display: block; }\n}",
     "css"),
])
def test_code_and_its_language(text: str, language: str) -> None:
    assert classify(text) == Kind("code", language)


@pytest.mark.parametrize(("text", "want"), [
    ("https://docs.python.org/3/library/asyncio-task.html#asyncio.TaskGroup", "link"),
    ("www.example.org/some/page", "link"),
    ("https://github.com/example/app/releases/tag/v0.8.2 - release notes of the previous beta", "link"),
    ('{"name": "desktop-memory", "version": "0.9.0", "private": true}', "json"),
    ('[\n  {"id": 1, "done": false},\n  {"id": 2, "done": true}\n]', "json"),
    ("server:\n  port: 8080\n  host: 0.0.0.0\ndatabase:\n  url: postgres://db/app\n  pool: 5", "yaml"),
    ("services:\n  web:\n    image: nginx:alpine\n    ports:\n      - \"80:80\"", "yaml"),
    ("---\ntitle: Release notes\ndate: 2026-11-24\ntags: [release, beta]\n---", "yaml"),
    ("name: CI\non: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest", "yaml"),
    ('Traceback (most recent call last):\n  File "app.py", line 12, in <module>\n    main()\n'
     '  File "app.py", line 8, in main\n    1 / 0\nZeroDivisionError: division by zero', "trace"),
    ("Exception in thread \"main\" java.lang.NullPointerException\n\tat com.example.App.run(App.java:42)\n"
     "\tat com.example.App.main(App.java:10)", "trace"),
    ("TypeError: Cannot read properties of undefined (reading 'map')\n    at render (/app/src/List.js:14:22)\n"
     "    at processChild (/app/node_modules/react-dom/server.js:3204:14)", "trace"),
    ("thread 'main' panicked at 'index out of bounds', src/main.rs:4:5", "trace"),
    ("- [ ] book the retro room\n- [x] send the release notes\n- [ ] renew the signing certificate", "list"),
    ("Packing list\n- passport\n- charger\n- rain jacket\n- headphones", "list"),
    ("1. Preheat the oven to 200 °C\n2. Slice the potatoes\n3. Bake for 35 minutes", "list"),
    ("• Milch\n• Eier\n• Brot", "list"),
    ("Shopping: oat milk, 6 eggs, sourdough, basil, parmesan, lemons, dish soap, coffee beans", "list"),
    ("From: Maria Gonzalez <maria.gonzalez@northwind.example>\nSubject: Invoice 4471 overdue\n\nHi Sam, the "
     "invoice is overdue. Thanks, Maria", "email"),
    ("Hi Priya,\n\nthe release build for the beta is green; can you send the notes to the beta list today?\n\n"
     "Thanks,\nMarco", "email"),
    ("[09:41] alex: did the deploy go out?\n[09:42] jordan: yes, 2.4.1 is live on prod\n"
     "[09:42] alex: great, closing the incident", "chat"),
    ("[12.11.26, 09:41:12] Anna: Bist du schon da?\n[12.11.26, 09:42:03] Ben: 5 Minuten noch", "chat"),
    ("Alex: are we still on for lunch?\nSam: yes, 12:30 at the usual place\nAlex: great\nSam: see you", "chat"),
    ("王伟: 明天的会议改到下午三点\n李娜: 好的,我通知大家\n王伟: 谢谢", "chat"),
    ("Via Garibaldi 14\n10122 Torino TO\nItaly", "address"),
    ("Musterstraße 12\n10115 Berlin", "address"),
    ("221B Baker Street\nLondon NW1 6XE\nUnited Kingdom", "address"),
    ("1600 Amphitheatre Parkway Way, Mountain View, CA 94043", "address"),
    ("Dr. Elena Rossi\nVia Garibaldi 14\n10122 Torino TO\nItaly\n+39 011 555 0142", "person"),
    ("Priya Shah\npriya.shah@example.com\n+44 20 7946 0958", "person"),
    ("priya@example.com", "person"),
    ("Priya Shah <priya@example.com>", "person"),
    ("BEGIN:VCARD\nVERSION:3.0\nFN:Priya Shah\nEND:VCARD", "person"),
])
def test_each_kind(text: str, want: str) -> None:
    assert classify(text).name == want, (text, classify(text))


def test_yaml_front_matter_over_a_long_document_is_the_document() -> None:
    text = ("---\ntitle: Trip\n---\n\nWe left Lisbon early. The train was late, so we had coffee by the river.\n"
            "In the afternoon we walked up to the castle and watched the ships.\nDinner was grilled sardines.\n"
            "Tomorrow we take the bus to Sintra and come back by evening.")
    assert classify(text).name == "note"


def test_a_config_line_in_prose_is_not_yaml() -> None:
    assert classify("Status: waiting for the landlord to call back about the heating.").name == "note"


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=3000))
def test_any_text_has_a_kind(text: str) -> None:
    kind = classify(text)
    assert kind.name in KINDS and (kind.language is None or kind.language in LANGUAGES)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(["git", "rsync", "the", "is", "-v", "a@b.c", "{", "}", ":", "- ", "\n", "x=1",
                                 "def", "SELECT", "12345", "Berlin", "[09:41]", "Traceback", "  "]), max_size=60))
def test_any_mix_of_look_alike_pieces_has_a_kind(pieces: list[str]) -> None:
    assert classify(" ".join(pieces)).name in KINDS
