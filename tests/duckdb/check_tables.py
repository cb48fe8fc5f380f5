#!/usr/bin/env python3
"""Reads a built site's Parquet tables with DuckDB and holds them against
data/analysis.json (issue 37): every table's row count, and the query
docs/data-contract.md shows ("which endpoints of service X got slower than
1.15x in 2026") for every service, against the same answer worked out from
the JSON with Python's json module.

Usage: check_tables.py SITE. Exits 0 when everything matches, 1 with the
differences, 3 when `duckdb` cannot be imported (the Rust test says it
skipped, or fails when CI is set).
"""

import json
import pathlib
import sys

try:
    import duckdb
except ImportError as e:  # the caller decides whether that is a failure
    print(f"duckdb is not importable: {e}", file=sys.stderr)
    sys.exit(3)

DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs" / "data-contract.md"
MARKER = "-- perfdash: slower-in-2026"


def documented_query() -> str:
    """The 1.15x query exactly as docs/data-contract.md shows it, with its
    site path and service made parameters ($path, $service)."""
    text = DOCS.read_text()
    start = text.index("```sql\n" + MARKER)
    sql = text[start + len("```sql\n") : text.index("```", start + 6)]
    for literal, parameter in [
        ("'site/data/endpoint_runs.parquet'", "$path"),
        ("'orders'", "$service"),
    ]:
        if literal not in sql:
            raise SystemExit(f"{DOCS}: the query no longer has {literal}")
        sql = sql.replace(literal, parameter)
    return sql.strip().rstrip(";")


def main(site: pathlib.Path) -> int:
    data = site / "data"
    doc = json.loads((data / "analysis.json").read_text())
    endpoints = doc["endpoints"]
    rounds = 0
    for run in doc["runs"]:
        run_file = json.loads((data / "runs" / f"{run['slug']}.json").read_text())
        rounds += sum(len(r) for r in run_file["endpoints"].values())
    expected = {
        "endpoint_runs": sum(len(e["runs"]) + len(e["branch_runs"]) for e in endpoints),
        "rounds": rounds,
        "alarms": len(doc["alarms"]),
        "change_points": sum(len(e["change_points"]) for e in endpoints),
    }
    con = duckdb.connect()
    wrong = []
    for table, count in expected.items():
        path = str(data / f"{table}.parquet")
        (got,) = con.execute("SELECT count(*) FROM read_parquet(?)", [path]).fetchone()
        (version,) = con.execute(
            "SELECT decode(value) FROM parquet_kv_metadata(?) "
            "WHERE decode(key) = 'perfdash.tables_version'",
            [path],
        ).fetchone()
        print(f"{table}: {got} rows (analysis.json: {count}), tables_version {version}")
        if got != count:
            wrong.append(f"{table}: {got} rows, analysis.json has {count}")
        if version != "1":
            wrong.append(f"{table}: tables_version {version!r}")

    services = sorted({e["service"] for e in endpoints if e.get("service") is not None})
    if not services:
        wrong.append("the site has no services: the 1.15x query checks nothing")
    for service in services:
        from_json = sorted(
            {
                e["id"]
                for e in endpoints
                if e.get("service") == service
                for p in e["runs"]
                if p["ratio"] is not None
                and p["ratio"] > 1.15
                and p["started_at"].startswith("2026-")
            }
        )
        rows = con.execute(
            documented_query(),
            {"path": str(data / "endpoint_runs.parquet"), "service": service},
        ).fetchall()
        from_parquet = [r[0] for r in rows]
        print(f"service {service}: slower than 1.15x in 2026: {from_parquet}")
        if from_parquet != from_json:
            wrong.append(f"service {service}: DuckDB says {from_parquet}, analysis.json {from_json}")
    for w in wrong:
        print(f"MISMATCH {w}", file=sys.stderr)
    return 1 if wrong else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(pathlib.Path(sys.argv[1])))
