"""Generate a realistic HR export of N people, for benchmarks and demos.

    python benchmarks/generator.py 10000 --seed 7 --out /tmp/org-10k.csv
    python benchmarks/generator.py 10000 --out /tmp/org-10k.json   # Workday-style JSON

Shape: one CEO; managers with 3 to 12 direct reports; a depth of 6 to 9 levels for
large orgs (fewer for tiny ones); departments as paths ``Division/Group/Team`` that
follow the manager tree; about 3% terminated rows (leaves, as a real export keeps them
for a while); rows shuffled, as exports rarely come in hierarchy order. A few rows are
odd but valid, as real exports are: stray spaces in names and ids, upper-case e-mails,
and a ``Contractor`` or ``Leave`` status on people without reports. The CSV columns
are those of config/sample-org.csv.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import random
import sys
from pathlib import Path


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


COLUMNS = ("Employee ID", "Full Name", "Work Email", "Manager ID", "Department", "Status", "Title")

_FIRST = _words(
    "Ada Aisha Akira Alejandro Amara Ana Anders Arjun Ayumi Beatriz Ben Chen Chloe Dmitri "
    "Elena Emeka Emma Farah Felix Fatima Gabriel Grace Hana Hassan Ines Ivan Jamal Jana "
    "Javier Jin Kofi Laila Lars Leila Lucas Maya Mei Mohammed Nadia Nikhil Noor Olga "
    "Omar Priya Rafael Rania Ravi Sakura Samuel Sara Sven Tariq Thandiwe Tomas Uma Wei "
    "Yara Yusuf Zanele Zoe"
)
_LAST = _words(
    "Abara Adeyemi Ahmed Alvarez Andersson Bakr Banerjee Becker Carvalho Chen Costa Dlamini "
    "Dubois Eriksen Fernandes Fischer Garcia Gupta Haddad Hansen Hoang Ibrahim Ivanova "
    "Jansen Kato Khan Kim Kowalski Larsen Lopez Mahlangu Martin Mensah Moreau Murphy Nakamura "
    "Nguyen Novak Okafor Okeke Olsen Park Patel Petrov Quispe Rahman Rossi Sato Schmidt "
    "Silva Singh Suzuki Tanaka Torres Usman Virtanen Wang Weber Yamamoto Zhang"
)
_UNITS = _words(
    "Platform Payments Search Mobile Growth Data Security Identity Billing Checkout "
    "Infrastructure Reliability Messaging Analytics Insights Onboarding Marketplace Logistics "
    "Content Media Voice Maps Ads Risk Compliance Storage Networking Observability Tooling "
    "Frontend Backend API Integrations Partners Pricing Catalog Recommendations Discovery"
)
_IC_TITLES = (
    "Software Engineer",
    "Senior Software Engineer",
    "Staff Software Engineer",
    "Site Reliability Engineer",
    "Data Engineer",
    "QA Engineer",
    "Product Designer",
)


def _manager_title(level: int) -> str:
    return {0: "Chief Executive Officer", 1: "Vice President", 2: "Director"}.get(
        level, "Engineering Manager"
    )


def generate_org(n: int, seed: int) -> list[dict[str, str]]:
    """`n` rows (people, terminated ones included), deterministic for a given seed."""
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    rng = random.Random(seed)
    terminated = round(n * 0.03) if n >= 20 else 0
    active = n - terminated
    # Large orgs get 6 to 9 levels; a tiny one cannot be that deep with spans of 3 or more.
    needed = math.ceil(math.log(max(active / 8, 1), 8)) + 2
    max_depth = max(2, min(rng.randint(max(6, needed), 9), int(math.log(max(active, 2), 3)) + 1))
    width = len(str(n)) + 1
    rows: list[dict[str, str]] = []
    emails: set[str] = set()

    def new_person(manager: str, level: int, department: str, is_manager: bool) -> str:
        index = len(rows) + 1
        employee_id = f"E{index:0{width}d}"
        first, last = rng.choice(_FIRST), rng.choice(_LAST)
        local = f"{first}.{last}".lower()
        email = f"{local}@example.com"
        suffix = 2
        while email in emails:
            email = f"{local}{suffix}@example.com"
            suffix += 1
        emails.add(email)
        title = _manager_title(level) if is_manager else rng.choice(_IC_TITLES)
        rows.append(
            {
                "Employee ID": employee_id,
                "Full Name": f"{first} {last}",
                "Work Email": email,
                "Manager ID": manager,
                "Department": department,
                "Status": "Active",
                "Title": title,
            }
        )
        return employee_id

    unit_counter = 0

    def sub_department(parent: str, level: int) -> str:
        nonlocal unit_counter
        if level == 0 or level > 3:
            return parent or "Company"
        unit_counter += 1
        name = f"{rng.choice(_UNITS)} {unit_counter}"
        return name if level == 1 else f"{parent}/{name}"

    # Work list: (employee id, subtree size including the person, level, department).
    root_id = new_person("", 0, "Company", active > 1)
    work: list[tuple[str, int, int, str]] = [(root_id, active, 0, "Company")]
    managers: list[str] = []
    while work:
        person, size, level, department = work.pop()
        below = size - 1
        if below == 0:
            continue
        managers.append(person)
        levels_left = max_depth - level - 1
        if levels_left <= 1 and below > 12:
            levels_left = 2  # too many for one manager: go a level deeper than planned
        if levels_left <= 1 or below <= 3:
            for _ in range(below):
                new_person(person, level + 1, department, False)
            continue
        # Sub-managers per level such that, `levels_left - 1` levels down, managers have
        # about 8 reports each; jitter keeps the tree irregular.
        target = max(1.0, below / 8) ** (1 / (levels_left - 1))
        sub_managers = round(target * rng.uniform(0.8, 1.3))
        sub_managers = max(1, min(sub_managers, 12, below // 4))
        max_ics = min(12 - sub_managers, below - 4 * sub_managers)
        ics = rng.randint(max(0, 3 - sub_managers), max(max(0, 3 - sub_managers), max_ics))
        ics = min(ics, below - sub_managers)
        for _ in range(ics):
            new_person(person, level + 1, department, False)
        budget = below - ics
        weights = [rng.uniform(0.5, 1.5) for _ in range(sub_managers)]
        total = sum(weights)
        sizes = [max(4, int(budget * w / total)) for w in weights]
        sizes[-1] += budget - sum(sizes)
        while sizes[-1] < 4 and len(sizes) > 1:  # rounding starved the last one: merge it
            extra = sizes.pop()
            sizes[-1] += extra
        for sub_size in sizes:
            child_department = sub_department(department if level else "", level + 1)
            child = new_person(person, level + 1, child_department, sub_size > 1)
            work.append((child, sub_size, level + 1, child_department))

    manager_set = set(managers)
    leaves = [row for row in rows if row["Employee ID"] not in manager_set]
    for _ in range(terminated):
        manager = rng.choice(managers) if managers else root_id
        boss = rows[int(manager[1:]) - 1]
        new_person(manager, 5, boss["Department"], False)
        rows[-1]["Status"] = "Terminated"
    _oddities(rng, rows, leaves)
    rng.shuffle(rows)
    return rows


def _oddities(rng: random.Random, rows: list[dict[str, str]], leaves: list[dict[str, str]]) -> None:
    """Odd but valid rows: what real exports contain and readers must take in stride."""
    count = max(1, len(rows) // 200)
    for row in rng.sample(rows, min(count, len(rows))):
        row["Full Name"] = "  " + row["Full Name"].replace(" ", "   ") + " "
    for row in rng.sample(rows, min(count, len(rows))):
        row["Work Email"] = row["Work Email"].upper()
    for row in rng.sample(rows, min(count, len(rows))):
        if row["Manager ID"]:
            row["Manager ID"] = f" {row['Manager ID']} "
    active_leaves = [row for row in leaves if row["Status"] == "Active"]
    for row in rng.sample(active_leaves, min(count, len(active_leaves))):
        row["Status"] = rng.choice(("Contractor", "Leave"))


def write_csv(rows: list[dict[str, str]], path: Path) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def workday_entry(row: dict[str, str]) -> dict[str, object]:
    """One generated person as a Workday RaaS report entry."""
    entry: dict[str, object] = {
        "Employee_ID": row["Employee ID"],
        "Worker": row["Full Name"],
        "Email_-_Work": row["Work Email"],
    }
    if row["Manager ID"].strip():
        entry["Manager"] = {"ID": row["Manager ID"]}
    entry["Supervisory_Organization"] = row["Department"]
    entry["Worker_Status"] = row["Status"]
    entry["Business_Title"] = row["Title"]
    return entry


def write_json(rows: list[dict[str, str]], path: Path) -> None:
    """Workday RaaS shape, like config/sample-org.json."""
    entries = [workday_entry(row) for row in rows]
    with path.open("w", encoding="utf-8") as fh:
        json.dump({"Report_Entry": entries}, fh, ensure_ascii=False)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Generate an HR export of N people.")
    parser.add_argument("n", type=int, help="number of rows")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, required=True, help="output .csv or .json")
    args = parser.parse_args(argv)
    rows = generate_org(args.n, args.seed)
    if args.out.suffix.lower() == ".json":
        write_json(rows, args.out)
    else:
        write_csv(rows, args.out)
    print(f"wrote {len(rows)} rows to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
