"""Exports by configuration alone: templates in [source.fields], null values,
manager by display name, unknown managers as top, optional department/status (pure)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrsync.config.loading import ConfigError, load_settings
from hrsync.core.export.filters import closest_name
from hrsync.core.export.rows import RowValues, SourceRow
from hrsync.core.export.templates import COLUMN_FILTERS, FILTERS, Template
from hrsync.core.people import Directory, name_key, read_people
from hrsync.core.settings import DEFAULT_NULL_VALUES, FieldSettings, FilterSettings, Settings

COLUMNS = ("ID", "First_Name", "Last_Name", "EMAIL", "Manager", "Boss ID", "State")


def rows(data: Sequence[Sequence[str]], columns: Sequence[str] = COLUMNS) -> list[SourceRow]:
    index = {c: i for i, c in enumerate(columns)}
    return [
        SourceRow(f"hr.csv line {n + 2}", RowValues(index, tuple(cells)))
        for n, cells in enumerate(data)
    ]


def read(
    data: Sequence[Sequence[str]],
    fields: FieldSettings,
    *,
    columns: Sequence[str] = COLUMNS,
    unknown_manager: str = "refuse",
    null_values: Sequence[str] = DEFAULT_NULL_VALUES,
    as_dicts: bool = False,
) -> Directory:
    source = rows(data, columns)
    if as_dicts:
        source = [SourceRow(r.location, dict(r.values)) for r in source]
    return read_people(
        "hr.csv",
        columns,
        source,
        fields,
        FilterSettings(),
        null_values=null_values,
        unknown_manager=unknown_manager,
    )


SPLIT = FieldSettings(
    employee_id="ID",
    name="{First_Name} {Last_Name}",
    email="{First_Name|ascii|lower}.{Last_Name|ascii|nospace|lower}@example.com",
    manager_id="Boss ID",
)

# ---------------------------------------------------------------- templates


@pytest.mark.parametrize(
    ("template", "values", "expected"),
    [
        ("{First_Name} {Last_Name}", {"First_Name": "Ada", "Last_Name": "Okafor"}, "Ada Okafor"),
        ("{First_Name} {Last_Name}", {"First_Name": "", "Last_Name": "Okafor"}, "Okafor"),
        ("{EMAIL|lower}@example.com", {"EMAIL": "SKING"}, "sking@example.com"),
        (
            "{F|ascii|lower}.{L|ascii|nospace|lower}@x.org",
            {"F": "Zoë", "L": "Van Der Berg"},
            "zoe.vanderberg@x.org",
        ),
        ("{N|first}", {"N": "  Mary  Ann "}, "Mary"),
        ("{N|last}", {"N": "Mary Ann Smith"}, "Smith"),
        ("{N|initial}{L|lower}", {"N": "brandon", "L": "LeBlanc"}, "bleblanc"),
        ("{N|initial|upper}", {"N": ""}, ""),
        ("{N|upper|strip}", {"N": " tomás "}, "TOMÁS"),
        ("{N | lower}", {"N": "ABC"}, "abc"),
        ("{{literal}} {N}", {"N": "x"}, "{literal} x"),
        (
            "{Mgr First|ascii|lower}.{Mgr Last|ascii|lower}@example.com",
            {"Mgr First": "José", "Mgr Last": "Núñez"},
            "jose.nunez@example.com",
        ),
    ],
)
def test_templates_render_the_same_by_name_and_over_columns(
    template: str, values: dict[str, str], expected: str
) -> None:
    compiled = Template(template)
    assert compiled.render(lambda name: values.get(name, "")) == expected
    # The same row three times over: every row of a column renders alike.
    assert compiled.on_columns(lambda name: [values.get(name, "")] * 3, 3) == [expected] * 3


@pytest.mark.parametrize(("name", "value", "expected"), [
    ("lower", "ÀB", "àb"),
    ("upper", "àb", "ÀB"),
    ("strip", "  a b ", "a b"),
    ("ascii", "Zoë Ångström ß", "Zoe Angstrom "),
    ("nospace", " a b\tc ", "abc"),
    ("first", "a b c", "a"),
    ("last", "a b c", "c"),
    ("first", "", ""),
    ("initial", "zoe", "z"),
    # "Last, First", as many HR lists write names, read as "First Last".
    ("natural", "Schmidt, Anna", "Anna Schmidt"),
    ("natural", "van der Berg,Jan Peter", "Jan Peter van der Berg"),
    ("natural", "Anna Schmidt", "Anna Schmidt"),
    ("natural", "Smith, Jr., John", "Smith, Jr., John"),  # two commas: not that order
    ("natural", "Schmidt,", "Schmidt,"),
    ("natural", ", Anna", ", Anna"),
    # A suffix after the comma is no first name; one after the first name goes last.
    ("natural", "John Smith, Jr.", "John Smith, Jr."),
    ("natural", "Martin Luther King, Jr.", "Martin Luther King, Jr."),
    ("natural", "Smith, John Jr.", "John Smith Jr."),
    ("natural", "Smith, John III", "John Smith III"),
    ("natural", "Kim, Daniel PhD", "Daniel Kim PhD"),
])  # fmt: skip
def test_each_filter(name: str, value: str, expected: str) -> None:
    assert FILTERS[name](value) == expected
    assert COLUMN_FILTERS[name]([value, "", value]) == [expected, FILTERS[name](""), expected]


@given(st.lists(st.text(alphabet="aZé ß\t\u00a0\u3000.-,|", max_size=8), max_size=6))
def test_every_column_filter_equals_its_filter_value_by_value(values: list[str]) -> None:
    for name, column_filter in COLUMN_FILTERS.items():
        assert column_filter(values) == [FILTERS[name](v) for v in values], name


# U+00A8 decomposes to a space and a combining mark: `ascii` turns it into a space.
cell_text = st.text(alphabet="aZé ß\t.-,\u00a0\u00a8Σİ", max_size=8)


@given(
    st.lists(st.lists(cell_text, min_size=3, max_size=3), max_size=5),
    st.sampled_from(
        [
            "{A|last}",
            "{A|first} {B|last}",
            "{A}.{B|nospace|lower}@x {C|initial}",
            "{A|ascii|upper} x{B}.{C|strip|lower}",
            # Words only: collapsed without the whitespace pass unless a value is empty.
            "{A|first|lower}.{B|last|ascii|nospace|lower}@x",
            "{A|initial}{B|nospace|upper} {C|last|ascii}",
            " {A|first}  {B|last} ",
            # Σ lower-cases by its neighbours, İ into two characters.
            "{A|lower}.{B|upper|lower}-{C|first|lower}",
            "{A|lower}X{B|lower}",
            "{A|lower}{B|lower}",
            "{A|lower|ascii}.{B|upper|lower|last}",
            "{A|nospace}{B|strip|first}-{C}",
            "no placeholder",
        ]
    ),
    st.booleans(),
    st.booleans(),
)
def test_a_template_over_columns_equals_it_rendered_row_by_row(
    rows: list[list[str]], text: str, blank_if_empty: bool, told_words: bool
) -> None:
    template = Template(text)
    columns = {name: [row[i] for row in rows] for i, name in enumerate("ABC")}
    by_row = [
        template.render(
            dict(zip("ABC", row, strict=True)).__getitem__, blank_if_empty=blank_if_empty
        )
        for row in rows
    ]

    def words(name: str) -> bool:
        # Told truly which columns hold no whitespace, as the people reader tells it.
        return all(value.isprintable() and " " not in value for value in columns[name])

    on_columns = template.on_columns(
        columns.__getitem__,
        len(rows),
        blank_if_empty=blank_if_empty,
        words=words if told_words else None,
    )
    assert on_columns == by_row
    if template.lower_case:
        assert all(text == text.lower() for text in by_row)


@pytest.mark.parametrize(
    ("text", "lower_case"),
    [
        ("{A|lower}", True),
        ("{A|upper|lower|first|nospace}.x@y", True),
        ("{A|lower|ascii}", False),  # U+1D2C is no letter case of its own, and gives "A"
        ("{A|lower|upper}", False),
        ("{A|lower}X", False),
        ("{A}", False),
        ("{A|lower}{B}", False),
    ],
)
def test_a_template_is_lower_case_when_each_placeholder_is_lower_cased_last(
    text: str, lower_case: bool
) -> None:
    assert Template(text).lower_case is lower_case


def test_split_names_build_the_name_and_the_email() -> None:
    directory = read(
        [
            ("1", "Zoë", "Van Der Berg", "", "", "", ""),
            ("2", "Ann", "Lee", "", "", "1", ""),
        ],
        SPLIT,
    )
    assert directory.ok, [str(p) for p in directory.problems]
    assert [(p.name, p.email, p.manager_id) for p in directory.people] == [
        ("Zoë Van Der Berg", "zoe.vanderberg@example.com", None),
        ("Ann Lee", "ann.lee@example.com", "1"),
    ]


def test_templates_work_on_json_records_too() -> None:
    directory = read([("1", "Zoë", "Lee", "", "", "", "")], SPLIT, as_dicts=True)
    assert [p.email for p in directory.people] == ["zoe.lee@example.com"]


def test_a_mailbox_only_column_becomes_an_address() -> None:
    fields = FieldSettings(
        employee_id="ID", name="{First_Name} {Last_Name}", email="{EMAIL|lower}@example.com",
        manager_id="Boss ID",
    )  # fmt: skip
    directory = read([("1", "Steven", "King", "SKING", "", "", "")], fields)
    assert [p.email for p in directory.people] == ["sking@example.com"]


def test_a_template_naming_a_missing_column_is_an_error_naming_it() -> None:
    fields = FieldSettings(
        employee_id="ID", name="{First_Name} {Last_Name}", email="{Mail|lower}@example.com",
        manager_id="Boss ID",
    )  # fmt: skip
    directory = read([("1", "A", "B", "", "", "", "")], fields)
    (problem,) = directory.problems
    text = str(problem)
    assert "'Mail'" in text
    assert "source.fields.email '{Mail|lower}@example.com'" in text
    assert directory.people == ()


def test_a_template_with_an_unknown_filter_is_an_error() -> None:
    fields = FieldSettings(employee_id="ID", name="{First_Name|lowr}", email="EMAIL")
    directory = read([("1", "A", "B", "a@example.com", "", "", "")], fields)
    assert any("'lowr'" in str(p) and "did you mean lower" in str(p) for p in directory.problems)


def test_an_invalid_derived_email_names_the_template_and_the_row() -> None:
    fields = FieldSettings(
        employee_id="ID",
        name="{First_Name}",
        email="{First_Name|lower}.{Last_Name|lower}@example.com",
        manager_id="Boss ID",
    )
    directory = read([("1", "Ann", "van der Berg", "", "", "", "")], fields)
    (problem,) = directory.problems
    text = str(problem)
    assert text.startswith("hr.csv line 2: source.fields.email '{First_Name|lower}.")
    assert "ann.van der berg@example.com" in text


# ---------------------------------------------------------------- null values


@pytest.mark.parametrize(
    "word",
    # SuccessFactors writes NO_MANAGER as the manager of the top of the org.
    ["NULL", "null", "None", "N/A", "n/a", "#N/A", "-", " NULL ", "NO_MANAGER"],
)
def test_a_null_word_is_no_manager(word: str) -> None:
    directory = read([("1", "A", "B", "", "", word, ""), ("2", "C", "D", "", "", "1", "")], SPLIT)
    assert directory.ok, [str(p) for p in directory.problems]
    assert [p.manager_id for p in directory.people] == [None, "1"]


def test_null_values_are_configurable_and_can_name_a_pseudo_manager() -> None:
    data = [("1", "A", "B", "", "", "Board of Directors", ""), ("2", "C", "D", "", "", "1", "")]
    assert not read(data, SPLIT).ok
    directory = read(data, SPLIT, null_values=["Board of Directors"])
    assert directory.ok
    assert [p.manager_id for p in directory.people] == [None, "1"]


def test_with_no_null_values_a_dash_is_a_value() -> None:
    directory = read([("1", "A", "B", "", "", "-", "")], SPLIT, null_values=())
    assert not directory.ok
    assert "'-'" in str(directory.problems[0])


# ---------------------------------------------------------------- names


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Brandon R. LeBlanc", "LeBlanc, Brandon  R"),
        ("brandon r leblanc", "  BRANDON   R. LEBLANC "),
        ("Mary-Ann O'Neil", "O'Neil, Mary-Ann"),
        ("Ada Okafor", "Okafor,Ada"),
        ("Jean de la Tour", "de la Tour, Jean"),
    ],
)
def test_name_keys_match(a: str, b: str) -> None:
    assert name_key(a) == name_key(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [("Ada Okafor", "Okafor Ada"), ("Ann Lee", "Anne Lee"), ("Zoë Lee", "Zoe Lee")],
)
def test_name_keys_differ(a: str, b: str) -> None:
    assert name_key(a) != name_key(b)


@given(st.text(alphabet="abcAB .,'-\t", max_size=20))
def test_name_key_is_idempotent_without_commas(value: str) -> None:
    key = name_key(value)
    assert "," not in key
    assert name_key(key) == key
    assert key == key.strip() and "  " not in key


BY_NAME = FieldSettings(
    employee_id="ID", name="{First_Name} {Last_Name}", email="EMAIL", manager_id="",
    manager_name="Manager",
)  # fmt: skip


def test_manager_by_display_name_in_another_form() -> None:
    directory = read(
        [
            ("1", "Brandon R.", "LeBlanc", "b@example.com", "", "", ""),
            ("2", "Ann", "Lee", "a@example.com", "LeBlanc, Brandon  R", "", ""),
        ],
        BY_NAME,
    )
    assert directory.ok, [str(p) for p in directory.problems]
    assert [p.manager_id for p in directory.people] == [None, "1"]


def test_a_manager_name_held_by_two_people_names_both_lines() -> None:
    data = [
        ("1", "Ann", "Lee", "a1@example.com", "", "", ""),
        ("2", "ann", "lee", "a2@example.com", "", "", ""),
        ("3", "Bo", "Ek", "b@example.com", "Lee, Ann", "", ""),
    ]
    directory = read(data, BY_NAME)
    (problem,) = directory.problems
    text = str(problem)
    assert text.startswith("hr.csv line 4: Manager must name one person, but it matches 2")
    assert "hr.csv line 2" in text and "hr.csv line 3" in text


def test_two_people_with_one_name_are_fine_when_the_id_is_given_too() -> None:
    data = [
        ("1", "Ann", "Lee", "a1@example.com", "", "", ""),
        ("2", "ann", "lee", "a2@example.com", "", "", ""),
        ("3", "Bo", "Ek", "b@example.com", "Lee, Ann", "2", ""),
    ]
    fields = FieldSettings(
        employee_id="ID", name="{First_Name} {Last_Name}", email="EMAIL", manager_id="Boss ID",
        manager_name="Manager",
    )  # fmt: skip
    directory = read(data, fields)
    assert directory.ok, [str(p) for p in directory.problems]
    assert [p.manager_id for p in directory.people] == [None, None, "2"]


# ---------------------------------------------------------------- unknown managers


UNKNOWN = [
    ("1", "A", "B", "", "", "", ""),
    ("2", "C", "D", "", "", "99", ""),
    ("3", "E", "F", "", "", "99", ""),
    ("4", "G", "H", "", "", "77", ""),
    ("5", "I", "J", "", "", "2", ""),
]


def test_an_unknown_manager_is_refused_by_default_and_says_how_to_proceed() -> None:
    directory = read(UNKNOWN, SPLIT)
    assert len(directory.problems) == 3
    # Three of the four managers named are nobody: no stray board member, so the export
    # is suspected, not source.unknown_manager = "top" offered (it would flatten the org).
    told = str(directory.problems[0])
    assert "3 of 4 references to managers match nobody" in told
    assert 'source.unknown_manager = "top"' not in told
    stray = [("3", "E", "F", "", "", "1", ""), ("4", "G", "H", "", "", "1", "")]
    one = read([*UNKNOWN[:2], *stray, UNKNOWN[4]], SPLIT)  # 1 of 4: a board member
    assert len(one.problems) == 1
    assert 'source.unknown_manager = "top"' in str(one.problems[0])


def test_unknown_manager_top_makes_them_top_with_one_warning_per_value() -> None:
    directory = read(UNKNOWN, SPLIT, unknown_manager="top")
    assert directory.ok
    assert [p.manager_id for p in directory.people] == [None, None, None, None, "2"]
    assert [(u.value, u.reports, u.first) for u in directory.unknown_managers] == [
        ("99", 2, "hr.csv line 3"),
        ("77", 1, "hr.csv line 5"),
    ]
    warnings = [str(w) for w in directory.warnings]
    assert len(warnings) == 2
    (ninety_nine,) = [w for w in warnings if "'99'" in w]
    assert "Boss ID matches nobody in the export; 2 people naming it are top" in ninety_nine


# ---------------------------------------------------------------- optional fields


def test_department_and_status_are_unset_by_default() -> None:
    assert FieldSettings().department == ""
    assert FieldSettings().status == ""


def test_an_export_without_department_or_status_reads_with_the_defaults() -> None:
    columns = ("employee_id", "email", "name", "manager_id")
    directory = read(
        [("1", "a@example.com", "A", ""), ("2", "b@example.com", "B", "1")],
        FieldSettings(),
        columns=columns,
    )
    assert directory.ok
    assert [p.status for p in directory.people] == [None, None]


def test_a_configured_department_that_is_missing_stays_an_error_without_a_far_hint() -> None:
    columns = ("employee_id", "email", "name", "manager_id", "Dept_State")
    directory = read(
        [("1", "a@example.com", "A", "", "CA")],
        FieldSettings(department="department"),
        columns=columns,
    )
    (problem,) = directory.problems
    assert "'department' (source.fields.department)" in str(problem)
    assert "did you mean" not in str(problem)


@pytest.mark.parametrize(
    ("name", "candidates", "expected"),
    [
        ("department", ["Dept_State", "State"], None),
        ("departmnet", ["department", "State"], "department"),
        ("Work Email", ["work_email", "Name"], "work_email"),
        ("email", ["Mail", "Name"], "Mail"),
        ("status", ["State", "Stats"], "Stats"),
        ("status", ["State", "Station"], None),
    ],
)
def test_did_you_mean_only_when_close(
    name: str, candidates: list[str], expected: str | None
) -> None:
    assert closest_name(name, candidates) == expected


def test_the_manager_email_from_split_manager_columns() -> None:
    columns = ("ID", "First", "Last", "Mgr First", "Mgr Last")
    fields = FieldSettings(
        employee_id="ID",
        name="{First} {Last}",
        email="{First|ascii|lower}.{Last|ascii|lower}@example.com",
        manager_id="",
        manager_email="{Mgr First|ascii|lower}.{Mgr Last|ascii|lower}@example.com",
    )
    directory = read(
        [("1", "José", "Núñez", "", ""), ("2", "Ann", "Lee", "JOSÉ", "Núñez")],
        fields,
        columns=columns,
    )
    assert directory.ok, [str(p) for p in directory.problems]
    assert [p.manager_id for p in directory.people] == [None, "1"]


@pytest.mark.parametrize(
    ("values", "expected"),
    [({"A": "", "B": ""}, ""), ({"A": "x", "B": ""}, "x.@example.com"), ({}, "")],
)
def test_a_field_template_over_empty_cells_is_empty(values: dict[str, str], expected: str) -> None:
    # Without this the top person's manager_email would read ".@example.com".
    template = Template("{A|lower}.{B|lower}@example.com")
    assert template.render(lambda n: values.get(n, ""), blank_if_empty=True) == expected
    column = {name: [values.get(name, "")] for name in "AB"}
    assert template.on_columns(column.__getitem__, 1, blank_if_empty=True) == [expected]
    assert template.render(lambda n: values.get(n, "")).endswith("@example.com")


def test_an_unset_status_beside_a_status_column_is_a_warning_not_silence() -> None:
    columns = ("employee_id", "email", "name", "manager_id", "Employment_Status")
    directory = read(
        [("1", "a@example.com", "A", "", "Terminated")], FieldSettings(), columns=columns
    )
    assert directory.ok and len(directory.people) == 1
    (warning,) = [str(w) for w in directory.warnings]
    assert "source.fields.status is not set" in warning
    assert 'source.fields.status = "Employment_Status"' in warning


@pytest.mark.parametrize("count", range(7))
def test_filter_chains_of_any_length_apply_left_to_right(count: int) -> None:
    names = ["strip", "ascii", "upper", "nospace", "lower", "first", "initial"][:count]
    template = Template("{N" + "".join(f"|{n}" for n in names) + "}@x")
    expected = " Zoë  Ann "
    for name in names:
        expected = FILTERS[name](expected)
    expected = " ".join(f"{expected}@x".split())
    assert template.on_columns(lambda _: [" Zoë  Ann "], 1) == [expected]
    assert template.render(lambda _: " Zoë  Ann ") == expected
    assert template.render(lambda _: " Zoë  Ann ") == expected


# ---------------------------------------------------------------- config


def load(tmp_path: Path, extra: str) -> Settings:
    path = tmp_path / "hrsync.toml"
    path.write_text(
        '[dx]\nbase_url = "https://api.getdx.com"\n[source]\npath = "people.csv"\n' + extra
    )
    return load_settings(path, {"HRSYNC_DX_TOKEN": "tok-1234567890"})


def test_the_config_takes_templates_null_values_and_unknown_manager(tmp_path: Path) -> None:
    settings = load(
        tmp_path,
        'null_values = ["Board of Directors"]\nunknown_manager = "top"\n'
        '[source.fields]\nemail = "{EMAIL|lower}@example.com"\nmanager_id = ""\n'
        'manager_name = "Supervisor"\n',
    )
    assert settings.source.null_values == ("Board of Directors",)
    assert settings.source.unknown_manager == "top"
    assert settings.source.fields.email == "{EMAIL|lower}@example.com"
    assert settings.source.path == tmp_path / "people.csv"  # beside the config file


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ('email = "{EMAIL|lowr}@example.com"', "did you mean lower?"),
        ('email = "{EMAIL@example.com"', "source.fields.email '{EMAIL@example.com' is not a valid"),
        ('department_lead = "{Lead}"', "source.fields.department_lead '{Lead}' must name a column"),
        ('manager_id = ""', "manager_id, manager_email or manager_name must name a column"),
    ],
)
def test_the_config_refuses_bad_field_templates(tmp_path: Path, fields: str, expected: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, f"[source.fields]\n{fields}\n")
    assert expected in str(caught.value)


def test_unknown_manager_takes_only_refuse_or_top(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, 'unknown_manager = "ignore"\n')
    assert "source.unknown_manager must be one of 'refuse', 'top'" in str(caught.value)


def test_unknown_manager_top_still_doubts_an_export_whose_managers_are_mostly_absent() -> None:
    # Half the managers on a page never read: under "top" they would all be top of the
    # org, so each warning says the export may be missing pages.
    org = [("1", "A", "B", "", "", "", "")]
    org += [(str(n), f"C{n}", "D", "", "", "1", "") for n in range(2, 11)]
    org += [(str(n), f"E{n}", "F", "", "", str(n + 20), "") for n in range(11, 21)]
    directory = read(org, SPLIT, unknown_manager="top")
    assert directory.ok and len(directory.unknown_managers) == 10
    warnings = [str(w) for w in directory.warnings]
    assert len(warnings) == 10
    assert all("; but 10 of 19 references to managers match nobody" in w for w in warnings)
    assert all("pages of the export may be missing" in w for w in warnings)
    # One stray stays a plain warning.
    stray = read([*org[:10], ("11", "E", "F", "", "", "99", "")], SPLIT, unknown_manager="top")
    (one,) = [str(w) for w in stray.warnings]
    assert 'source.unknown_manager = "top")' in one and "; but" not in one
