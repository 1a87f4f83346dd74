"""Hypothesis strategies for generated organisations (shared by the test modules)."""

from __future__ import annotations

from hypothesis import strategies as st

from hrsync.core.people import Person

# Few names, so display names (and team names from them) collide often.
FIRST_NAMES = ("Ada", "Ben", "Chen", "Dana", "Emeka", "Farah")
LAST_NAMES = ("Okafor", "Lee", "Rossi", "Khan")
DEPARTMENTS = (
    "Engineering",
    "Engineering/Platform",
    "Engineering/Platform/Infra",
    "Engineering/Product",
    "Engineering/Product/Payments",
    "Sales",
    "Sales/EMEA",
)


def make_person(
    employee_id: str,
    name: str,
    manager_id: str | None,
    department: str | None,
    *,
    email: str | None = None,
    title: str = "Engineer",
    extra: dict[str, str] | None = None,
) -> Person:
    """A validated Person as the readers would produce it from one CSV row."""
    email = email or f"{employee_id.lower()}@example.com"
    attributes = {
        "Employee ID": employee_id,
        "Full Name": name,
        "Work Email": email,
        "Manager ID": manager_id or "",
        "Department": department or "",
        "Status": "Active",
        "Title": title,
        **(extra or {}),
    }
    return Person(
        employee_id=employee_id,
        email=email,
        name=name,
        manager_id=manager_id,
        department=department,
        status="Active",
        at=f"people.csv row {employee_id}",
        row=attributes,
    )


@st.composite
def org_forests(
    draw: st.DrawFn, min_size: int = 1, max_size: int = 40, max_roots: int = 3
) -> list[Person]:
    """A valid forest of people: unique ids and e-mails, managers resolved, no cycles.

    Employee ids are a random permutation of the hierarchy order and the list comes
    shuffled, so nothing may rely on managers preceding their reports.
    """
    n = draw(st.integers(min_value=min_size, max_value=max_size))
    ids = draw(st.permutations([f"E{i:03d}" for i in range(n)]))
    roots = 1
    managers: list[str | None] = [None]
    for index in range(1, n):
        if roots < max_roots and draw(st.integers(0, 9)) == 0:
            roots += 1
            managers.append(None)
        else:
            managers.append(ids[draw(st.integers(0, index - 1))])
    people = [
        make_person(
            ids[index],
            f"{draw(st.sampled_from(FIRST_NAMES))} {draw(st.sampled_from(LAST_NAMES))}",
            managers[index],
            draw(st.one_of(st.none(), st.sampled_from(DEPARTMENTS))),
        )
        for index in range(n)
    ]
    shuffled: list[Person] = draw(st.permutations(people))
    return shuffled
