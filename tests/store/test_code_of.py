"""How the loader finds a query's `$parameters`: string literals and `--` comments are blanked
out first, so a `$word` or an apostrophe inside them counts for nothing."""

from __future__ import annotations

import random

from seqk.store.sqlfiles import body_params, code_of


def scanned_by_hand(sql: str) -> str:
    """The rule, one character at a time (the loop code_of's regex replaced)."""
    out: list[str] = []
    i, n = 0, len(sql)
    while i < n:
        if sql.startswith("--", i):
            end = sql.find("\n", i)
            i = n if end < 0 else end
        elif sql[i] == "'":
            end = i + 1
            while end < n and not (sql[end] == "'" and not sql.startswith("''", end)):
                end += 2 if sql.startswith("''", end) else 1
            out.append("''")
            i = end + 1
        else:
            out.append(sql[i])
            i += 1
    return "".join(out)


def test_literals_and_comments_hide_their_parameters() -> None:
    sql = "SELECT 'it''s $not' AS a, $yes -- the run's $nor\nFROM t WHERE x = $also AND y = '$no'"
    assert code_of(sql) == "SELECT '' AS a, $yes \nFROM t WHERE x = $also AND y = ''"
    assert body_params(sql) == {"yes", "also"}
    assert code_of("x = 'left open $p") == "x = ''"
    assert code_of("'a''") == "''"  # an escaped quote at the end leaves the literal open


def test_the_regex_agrees_with_the_rule_on_random_text() -> None:
    rnd = random.Random(18)
    for _ in range(20_000):
        sql = "".join(rnd.choice("ab'-\n$x ") for _ in range(rnd.randint(0, 24)))
        assert code_of(sql) == scanned_by_hand(sql), repr(sql)
