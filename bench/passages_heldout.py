#!/usr/bin/env python3
"""Long memories searched and shown by passage (issue 32), on texts written for this bench and kept out of tuning.

Each text below is one memory: a long AI answer, a meeting transcript, an article, a code walkthrough, notes in
German and French; the line that answers each question sits at some depth in its text, and the questions use other
words than the text. Short notes and other long texts on the same topics are stored with them as look-alikes.
Everything goes through the real CLI (`import`, `search - --json`, `context --budget`), in a fresh data folder.

It reports, over the questions:
  top5     the right memory among the first 5 hits
  passage  the hit's passage (for that memory) holds the answering line
  context  the answering line is inside the context built for the question within `--budget` tokens (300)

Usage: python bench/passages_heldout.py [--cli "python -m desktop_memory"] [--budget 300] [--json-out F]
Do not tune ranking or passage settings on these texts (LoCoMo sessions and your own sets are for that): they are
the held-out check that the method generalises.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DAY = 86400.0
T0 = 1_735_689_600.0  # 2025-01-01

# (title, source_app, paragraphs) -- one long memory each
TEXTS: list[tuple[str, str, list[str]]] = [
    ("Setting up a home server", "ChatGPT", [
        "Here is a complete plan for turning the old desktop into a home server. I'll go through hardware, the "
        "operating system, storage, networking, backups and the services you mentioned, in that order.",
        "Hardware first. Your i5-6500 with 16 GB of memory is plenty for file sharing, a media server and a few "
        "containers. Replace the spinning system disk with any SATA SSD; the two 4 TB drives stay for data. Make "
        "sure the BIOS is set to power on after a power loss, otherwise the machine stays off after an outage.",
        "For the operating system I'd pick Debian 12 without a desktop. During the installer, choose only 'SSH "
        "server' and 'standard system utilities'. Use the whole SSD with LVM so you can resize later.",
        "Storage: mirror the two data drives with ZFS rather than mdadm. Create the pool with ashift=12 and "
        "compression=lz4. A mirror loses half the capacity but survives one failed disk, and ZFS checks every block "
        "on read, so silent corruption is found during the monthly scrub.",
        "Schedule the scrub on the first Sunday of each month at 3 am with a systemd timer; Debian's zfsutils "
        "package already ships one, you only need to enable zfs-scrub-monthly@tank.timer for your pool name.",
        "Networking: give the server a fixed address by reserving 192.168.1.20 for its MAC address in your router's "
        "DHCP settings, rather than configuring a static IP on the server itself. That way, if you replace the "
        "router, the reservation is the only thing to redo.",
        "Remote access: do not forward ports. Install Tailscale on the server and on your phone and laptop; the "
        "services then answer on the tailnet address only. Turn on key expiry but disable it for the server node "
        "so it does not drop off the network after 180 days.",
        "Services: run Jellyfin for the media library, Samba for the Windows laptops and Syncthing for the phone "
        "photos. Put each one in its own Docker Compose project under /srv/compose so that an update of one never "
        "touches the others.",
        "Backups: the mirror is not a backup. Use restic to send the /tank/documents and /tank/photos datasets to "
        "the external USB disk every night at 1:30, and once a week to Backblaze B2. Keep 7 daily, 5 weekly and 12 "
        "monthly snapshots with restic forget --prune.",
        "Test a restore every quarter: pick a random folder, restore it to /tmp and compare it with diff -r. A "
        "backup you have never restored from is only a hope.",
        "Finally, monitoring: install smartmontools and let smartd email you when a disk reports reallocated "
        "sectors. Disks usually warn you weeks before they fail.",
    ]),
    ("Weekly product sync, 14 March", "Teams", [
        "Attendees: Priya (product), Marco (backend), Lena (design), Tom (support), Akira (mobile). Notes taken by "
        "Lena.",
        "Priya opened with the quarter's goal: reduce the time it takes a new customer to send their first invoice "
        "from four days to one. Current median from the analytics dashboard is 3.6 days.",
        "Marco reported that the bank-feed integration is still blocked on the provider's sandbox, which returns "
        "empty transaction lists for test accounts created after February. He has a ticket open with them since "
        "last Tuesday.",
        "Lena showed the new onboarding checklist. Feedback: the 'import your customers' step should come before "
        "'customise your invoice template', because people want to see their own data in the preview.",
        "Tom said support tickets about duplicated invoices went up 40 percent after the last mobile release. Akira "
        "confirmed the cause: the retry on a slow network sends the create request twice. The fix is an "
        "idempotency key on the create endpoint, which Marco will add on the backend first.",
        "Decision: the mobile release 5.2 is held back until the idempotency key ships. Akira will send the support "
        "team a short explanation they can paste into replies.",
        "Lena raised the accessibility audit. The invoice editor fails contrast checks in dark mode and the date "
        "picker cannot be used with a keyboard. Both go into the next sprint.",
        "Priya asked for a decision on the pricing page experiment. The team agreed to run the annual-plan-first "
        "variant for three weeks, starting on the 24th, with half of new visitors seeing it.",
        "Action items: Marco to escalate the sandbox ticket through the partner manager by Friday; Akira to prepare "
        "release 5.2.1 with the retry fix; Lena to reorder the onboarding steps; Tom to tag all duplicate-invoice "
        "tickets so the effect of the fix can be measured.",
        "Next sync moves to Wednesday because of the public holiday on Monday.",
    ]),
    ("Sourdough at high hydration", "Safari", [
        "Most home bakers stop at 70 percent hydration because wetter doughs feel unmanageable. With a few changes "
        "to the schedule, 80 percent is not much harder, and the crumb becomes open and glossy.",
        "Start with the flour. A strong bread flour with 13 percent protein holds water far better than an all "
        "purpose flour; replacing 10 percent of it with whole wheat adds flavour and helps fermentation.",
        "The levain should be used at its peak, when it has roughly tripled and the dome just starts to flatten. "
        "Used too early, the dough lacks strength; too late, it tastes sour and the gluten is already weakened.",
        "Autolyse for one hour: mix only flour and 90 percent of the water, cover, and leave it. The flour hydrates "
        "and gluten begins to form without any kneading, which shortens the later work considerably.",
        "Hold back the last 10 percent of the water and add it together with the salt after the levain is mixed "
        "in. This technique, called bassinage, lets the dough build strength before it becomes slack.",
        "During bulk fermentation, do four sets of coil folds, 30 minutes apart, then leave the dough alone. Bulk is "
        "finished when the dough has grown by about half and shows bubbles at the sides of a straight-walled "
        "container, which at 24 degrees takes around five hours.",
        "Shaping wet dough is easier with wet hands and a bench scraper than with flour. Pre-shape into a loose "
        "round, rest it for 20 minutes uncovered, then shape tightly.",
        "Retard the shaped loaf in the fridge overnight, 12 to 16 hours at 4 degrees. Cold dough is firm, scores "
        "cleanly and develops a deeper flavour.",
        "Bake in a Dutch oven preheated to 250 degrees for 45 minutes: 20 with the lid on to trap steam, then 25 "
        "with the lid off at 230 degrees until the crust is deep brown.",
        "Let it cool for at least two hours before cutting. The crumb is still setting, and cutting early makes it "
        "gummy.",
    ]),
    ("asyncio cancellation explained", "Claude", [
        "You asked why your worker keeps running after you press Ctrl+C. The short version: cancellation in "
        "asyncio is cooperative, and your code swallows it. Let me walk through the details.",
        "When a task is cancelled, asyncio throws CancelledError into the coroutine at its next await. The "
        "coroutine can clean up, but it is expected to let the exception propagate.",
        "Your loop looks like this:\n\n```python\nwhile True:\n    try:\n        job = await queue.get()\n"
        "        await handle(job)\n    except Exception:\n        log.exception('job failed')\n```\n\n"
        "Since Python 3.8 CancelledError derives from BaseException, so this particular handler does not catch it. "
        "But handle() calls a library that wraps everything in `except BaseException`.",
        "That library turns the cancellation into a logged error and returns normally, so your loop continues to "
        "the next job and the task never finishes. This is the reason Ctrl+C appears to do nothing.",
        "The fix is to make sure CancelledError always escapes. If you cannot change the library, wrap the call:\n\n"
        "```python\ntry:\n    await handle(job)\nexcept asyncio.CancelledError:\n    raise\n"
        "except Exception:\n    log.exception('job failed')\n```\n\nand check `asyncio.current_task().cancelling()` "
        "after the call returns; if it is non-zero, re-raise CancelledError yourself.",
        "For shutdown, use asyncio.TaskGroup (3.11+). When one task fails or the group is cancelled, it cancels "
        "the others and waits for them, so you no longer need the manual gather with return_exceptions.",
        "If a cleanup step itself must not be interrupted, for example flushing a file, shield it with "
        "asyncio.shield, but keep shielded work short: a shielded coroutine still runs after the caller is gone.",
        "Timeouts follow the same rules: asyncio.timeout(5) cancels the block after five seconds and converts the "
        "CancelledError into TimeoutError at the boundary, so code inside must not swallow cancellation either.",
        "Finally, to see which tasks are still alive at exit, call asyncio.all_tasks() in your signal handler and "
        "print each task's get_stack(); the one stuck in the library call will show up immediately.",
    ]),
    ("Mietvertrag: Notizen zur Wohnungsübergabe", "Obsidian", [
        "Diese Notizen fassen zusammen, was bei der Übergabe der Wohnung in der Lindenstraße besprochen wurde und "
        "welche Fristen gelten.",
        "Die Kaution beträgt drei Nettokaltmieten, also 2.370 Euro, und liegt auf einem Mietkautionskonto bei der "
        "Sparkasse. Sie wird nach dem Auszug erst zurückgezahlt, wenn die Nebenkostenabrechnung vorliegt.",
        "Im Übergabeprotokoll stehen zwei Mängel: ein Riss in der Badezimmerfliese neben der Dusche und ein "
        "klemmendes Fenster im Schlafzimmer. Beide waren schon vor dem Einzug vorhanden und dürfen uns nicht "
        "angerechnet werden.",
        "Schönheitsreparaturen: Die Klausel im Vertrag verlangt eine Renovierung nach festen Fristen. Solche "
        "starren Fristen sind laut Rechtsprechung des Bundesgerichtshofs unwirksam, wir müssen also beim Auszug "
        "nicht streichen.",
        "Die Kündigungsfrist beträgt für uns drei Monate zum Monatsende. Die Kündigung muss schriftlich mit "
        "Unterschrift beider Mieter erfolgen; eine E-Mail reicht nicht.",
        "Der Zählerstand für Strom war bei der Übergabe 48.213 kWh, für Gas 7.845 Kubikmeter. Fotos der Zähler "
        "liegen im Ordner Wohnung/Übergabe.",
        "Die Hausverwaltung ist montags bis donnerstags von 9 bis 12 Uhr telefonisch erreichbar; Notfälle wie ein "
        "Wasserrohrbruch gehen an den Hausmeister, Herrn Kowalski, unter der Nummer im Treppenhaus.",
        "Für die Waschmaschine im Keller gibt es einen eigenen Stromzähler, der uns zugeordnet ist. Der Schlüssel "
        "für den Kellerraum Nummer 7 hängt am Bund mit dem blauen Anhänger.",
        "Nächster Schritt: die Nebenkostenvorauszahlung prüfen, sie erscheint mit 210 Euro im Monat hoch für 68 "
        "Quadratmeter.",
    ]),
    ("Voyage au Japon : itinéraire de printemps", "Gemini", [
        "Voici un itinéraire de quinze jours pour un premier voyage au Japon fin mars, au moment des cerisiers en "
        "fleurs, en train avec le Japan Rail Pass.",
        "Jours 1 à 4 : Tokyo. Logez près de la gare d'Ueno, pratique pour l'arrivée depuis Narita avec le Skyliner. "
        "Le parc d'Ueno et les berges de la Sumida sont parmi les meilleurs endroits pour les cerisiers.",
        "Jour 5 : excursion à Nikko, à deux heures de Tokyo. Le sanctuaire Toshogu est très fréquenté ; arrivez "
        "avant neuf heures.",
        "Jours 6 et 7 : Hakone. Achetez le Hakone Free Pass, qui couvre le train de montagne, le téléphérique et le "
        "bateau sur le lac Ashi. Par temps clair, le mont Fuji est visible depuis le téléphérique.",
        "Jours 8 à 11 : Kyoto. Réservez au moins deux mois à l'avance, les hôtels sont pleins pendant la floraison. "
        "Le chemin de la Philosophie se parcourt mieux tôt le matin ; Fushimi Inari est ouvert toute la nuit et "
        "presque vide après vingt heures.",
        "Jour 12 : Nara, en train depuis Kyoto en quarante-cinq minutes. Les daims du parc sont habitués aux "
        "visiteurs ; gardez les cartes et les plans hors de leur portée, ils les mangent.",
        "Jours 13 et 14 : Osaka pour la cuisine de rue à Dotonbori et le château. Le Japan Rail Pass de sept jours "
        "ne couvre pas ces derniers jours : activez-le le jour 5, au départ pour Nikko, pour qu'il serve jusqu'au "
        "trajet vers Kyoto.",
        "Jour 15 : retour depuis l'aéroport du Kansai. Prévoyez de l'argent liquide, beaucoup de petits "
        "restaurants n'acceptent pas encore les cartes étrangères.",
        "Budget indicatif par personne, hors vols : environ 2 400 euros, dont 1 100 pour l'hébergement et 350 pour "
        "le pass.",
    ]),
    ("Postmortem: checkout outage on 2 June", "Confluence", [
        "Summary: for 47 minutes on 2 June, between 14:12 and 14:59 UTC, about 30 percent of checkout attempts "
        "failed with a generic error. No payments were taken twice and no card data was exposed.",
        "Impact: roughly 1,900 customers saw the error; 62 percent of them retried successfully within the hour. "
        "Estimated lost revenue is 18,000 euros.",
        "Timeline: at 13:55 a configuration change lowered the connection pool size of the payments service from "
        "50 to 5, as part of a cost review that was meant for the staging environment only.",
        "At 14:12 the lunchtime peak began and requests queued for a database connection. Requests waiting more "
        "than two seconds were dropped by the gateway, which returned the generic error.",
        "At 14:20 the on-call engineer was paged by the error-rate alert. The dashboards showed healthy database "
        "CPU, which pointed the investigation at the network first and cost about twenty minutes.",
        "At 14:51 the pool size was identified by comparing the running configuration with the previous release. "
        "The change was reverted at 14:55 and error rates returned to normal by 14:59.",
        "Root cause: the configuration repository has one file per environment, but the cost-review script "
        "resolved the environment from a variable that defaulted to production when unset.",
        "What went well: the alert fired within eight minutes, and the rollback itself took four minutes once the "
        "cause was known.",
        "What to improve: a configuration change to production must show the diff against the running values and "
        "require a second approver; the pool-wait metric will get its own alert at 500 milliseconds; the script "
        "will refuse to run without an explicit environment.",
        "Owners: the platform team for the approval step by 30 June, payments for the new alert by 16 June.",
    ]),
    ("Choosing a used electric car", "ChatGPT", [
        "Buying a used electric car is mostly about the battery, the charging you can do at home, and the car's "
        "software support. Here is what to check, roughly in order of importance.",
        "Battery health: ask for a state-of-health report. Many dealers can read it with a diagnostic tool; for a "
        "Nissan Leaf the LeafSpy app shows it directly. Below 80 percent, expect noticeably shorter range, "
        "especially in winter.",
        "Range in practice: take the official figure and subtract about 30 percent for motorway driving at 120 "
        "km/h in cold weather. If your longest regular trip fits comfortably in what remains, the car will work "
        "for you.",
        "Charging at home matters more than fast charging. A wallbox at 11 kW fills most cars overnight; a normal "
        "socket at 2.3 kW adds only about 15 km of range per hour, which is fine if you drive less than 50 km a "
        "day.",
        "Check the fast-charging port type. Older Leafs use CHAdeMO, which is disappearing from new stations in "
        "Europe; CCS is the safe choice.",
        "Heat pump: cars with a heat pump lose much less range in winter. On some models, like the early Kona "
        "Electric, it was an option, so check the equipment list rather than assuming.",
        "Warranty: most manufacturers guarantee the battery for eight years or 160,000 km against falling below "
        "70 percent capacity. The warranty usually transfers to the next owner, but confirm the start date on the "
        "service record.",
        "Software: ask whether the car still receives updates and whether the app service is still offered. Some "
        "older models lost their connected services when the 3G networks were switched off.",
        "Test drive: listen for a humming from the rear axle at 60 km/h and check that the car accepts a fast "
        "charge at a reasonable rate; a car that charges very slowly on a fast charger may have a cell problem.",
    ]),
]

# (question, index into TEXTS, the line that answers it: a part of one paragraph, word for word)
QUESTIONS: list[tuple[str, int, str]] = [
    ("how often should the ZFS pool be checked for corruption", 0, "first Sunday of each month at 3 am"),
    ("which address does the home server get and where is it set", 0, "reserving 192.168.1.20 for its MAC address"),
    ("how long are the nightly backup snapshots kept", 0, "Keep 7 daily, 5 weekly and 12"),
    ("how do I check that my backups actually work", 0, "Test a restore every quarter"),
    ("why were customers getting double invoices", 1, "the retry on a slow network sends the create request twice"),
    ("when does the pricing page test start", 1, "starting on the 24th"),
    ("what is wrong with the bank sandbox", 1, "returns empty transaction lists for test accounts"),
    ("what did the accessibility audit find about the date picker", 1,
     "the date picker cannot be used with a keyboard"),
    ("when is bulk fermentation done", 2, "grown by about half and shows bubbles"),
    ("what is bassinage", 2, "Hold back the last 10 percent of the water"),
    ("how long and how hot to bake the loaf", 2, "preheated to 250 degrees for 45 minutes"),
    ("why does pressing ctrl c not stop my asyncio worker", 3, "turns the cancellation into a logged error"),
    ("how to protect a file flush from being cancelled", 3, "shield it with asyncio.shield"),
    ("what does asyncio.timeout raise when it expires", 3, "converts the CancelledError into TimeoutError"),
    ("wie hoch ist die Kaution für die Wohnung", 4, "2.370 Euro"),
    ("müssen wir beim Auszug die Wände streichen", 4, "wir müssen also beim Auszug"),
    ("wie lange ist die Kündigungsfrist", 4, "drei Monate zum Monatsende"),
    ("Zählerstand Gas bei der Übergabe", 4, "7.845 Kubikmeter"),
    ("quand activer le Japan Rail Pass", 5, "activez-le le jour 5"),
    ("que couvre le Hakone Free Pass", 5, "qui couvre le train de montagne"),
    ("à quelle heure visiter Fushimi Inari sans la foule", 5, "presque vide après vingt heures"),
    ("what caused the checkout outage", 6, "defaulted to production when unset"),
    ("why did the investigation lose twenty minutes", 6, "pointed the investigation at the network first"),
    ("what alert will be added for the pool", 6, "alert at 500 milliseconds"),
    ("how much range does a normal wall socket add per hour", 7, "adds only about 15 km of range per hour"),
    ("how long is an EV battery guaranteed", 7, "eight years or 160,000 km"),
    ("which fast charging plug should a used EV have", 7, "CCS is the safe choice"),
    ("how much range is lost on the motorway in winter", 7, "subtract about 30 percent for motorway driving"),
]

# Look-alikes: short notes on the same topics (answers that are not the ones asked for)
SHORT: list[str] = [
    "ZFS tip: never use dedup on a home server, it needs far too much memory.",
    "Router admin password is in the password manager under 'Fritzbox'.",
    "Jellyfin transcoding works better with the Intel Quick Sync option enabled.",
    "restic backups of the laptop go to the NAS share every evening.",
    "Bank feed provider support email is in the partner portal, response time two days.",
    "Invoice template colours: use the brand blue #1F4E79 for headers.",
    "Mobile release checklist: bump version, update changelog, run the smoke tests on a real device.",
    "Support macro for duplicated charges: apologise, refund the second charge, link to the status page.",
    "Rye flour ferments faster than wheat; reduce the levain for rye-heavy loaves.",
    "Pizza dough: 65 percent hydration, 48 hours in the fridge.",
    "The Dutch oven lid handle is not oven safe above 200 degrees; replace it with a steel knob.",
    "Python 3.12 deprecates the get_event_loop behaviour without a running loop.",
    "Use trio if structured concurrency matters more than the ecosystem.",
    "Mietspiegel Berlin 2024: durchschnittlich 7,21 Euro pro Quadratmeter.",
    "Hausratversicherung kündigen: drei Monate vor Ablauf.",
    "Tokyo : le musée Ghibli se réserve le 10 du mois précédent.",
    "Kyoto : louer un vélo coûte environ 1 000 yens par jour.",
    "Incident review template: summary, impact, timeline, root cause, action items.",
    "Connection pool sizing: start with twice the CPU cores of the database server.",
    "EV insurance is often cheaper in the first years; compare quotes.",
    "Heat pump for the house: the installer quoted 14,000 euros before subsidies.",
    "Tesla Model 3 used prices fell 20 percent last year.",
]


def noise(short: int, long: int) -> list[dict]:
    """Generated notes (bench/speed.py's text: a ~2,800-word vocabulary, code-like lines, names and dates), and long
    texts made of 15-45 of them: what a real folder holds besides the texts asked about."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from speed import TextGenerator

    gen = TextGenerator(32)
    out = [{"content": gen.memory_text(), "created_at": iso(T0 + 30 * DAY + k * 600)} for k in range(short)]
    for k in range(long):
        parts = [gen.memory_text() for _ in range(gen.rng.randint(15, 45))]
        out.append({"content": "\n\n".join(parts), "created_at": iso(T0 + 60 * DAY + k * 3600)})
    return out


def iso(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts, dt.UTC).isoformat()


def cli_run(cli: list[str], data: Path, *args: str, stdin: str | None = None) -> str:
    env = {**os.environ, "DESKTOP_MEMORY_ENCRYPTION": os.environ.get("DESKTOP_MEMORY_ENCRYPTION", "off")}
    done = subprocess.run([*cli, "--data-dir", str(data), *args], input=stdin, capture_output=True, text=True,
                          env=env, check=False)
    if done.returncode != 0:
        sys.exit(f"{' '.join(args[:1])} failed ({done.returncode}): {done.stderr.strip()[-400:]}")
    return done.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", default=f"{sys.executable} -m desktop_memory")
    ap.add_argument("--budget", type=int, default=300)
    ap.add_argument("--noise", type=int, default=1500, help="generated short notes stored with the texts")
    ap.add_argument("--noise-long", type=int, default=60, help="generated long texts (3-10 KB) stored with them")
    ap.add_argument("--json-out")
    a = ap.parse_args()
    cli = shlex.split(a.cli)
    for q, i, line in QUESTIONS:
        assert line in "\n\n".join(TEXTS[i][2]), (q, line)
    with tempfile.TemporaryDirectory(prefix="dm-passages-") as tmp:
        data = Path(tmp) / "data"
        records = [{"content": "\n\n".join(paras), "title": title, "source_app": app, "created_at": iso(T0 + k * DAY),
                    "metadata": {"text": k}} for k, (title, app, paras) in enumerate(TEXTS)]
        records += [{"content": s, "created_at": iso(T0 + 20 * DAY + k * 3600), "metadata": {"short": k}}
                    for k, s in enumerate(SHORT)]
        records += noise(a.noise, a.noise_long)
        feed = Path(tmp) / "texts.jsonl"
        feed.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
        started = time.monotonic()
        cli_run(cli, data, "import", str(feed))
        lines = cli_run(cli, data, "search", "-", "--json", "--limit", "5",
                        stdin="".join(q + "\n" for q, _, _ in QUESTIONS)).splitlines()
        rows = []
        for (q, i, line), out in zip(QUESTIONS, lines, strict=True):
            hits = json.loads(out)
            ranks = [r for r, h in enumerate(hits) if (h.get("metadata") or {}).get("text") == i]
            hit = hits[ranks[0]] if ranks else None
            passage = ((hit or {}).get("passage") or {}).get("text") or ""
            ctx = cli_run(cli, data, "context", q, "--budget", str(a.budget))
            rows.append({"question": q, "rank": ranks[0] + 1 if ranks else None, "passage": line in passage,
                         "context": line in ctx})
        took = time.monotonic() - started
    n = len(rows)
    result = {
        "questions": n, "budget": a.budget, "seconds": round(took, 1),
        "top5": round(sum(r["rank"] is not None for r in rows) / n, 3),
        "passage": round(sum(r["passage"] for r in rows) / n, 3),
        "context": round(sum(r["context"] for r in rows) / n, 3),
    }
    for r in rows:
        print(f"{'rank ' + str(r['rank']) if r['rank'] else 'missed':8} passage={'y' if r['passage'] else '-'} "
              f"context={'y' if r['context'] else '-'}  {r['question']}")
    print(json.dumps(result))
    if a.json_out:
        Path(a.json_out).write_text(json.dumps({"summary": result, "rows": rows}, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
