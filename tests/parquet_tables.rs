//! The history as Parquet (issue 37): `perfdash build` writes
//! `data/{endpoint_runs,rounds,alarms,change_points}.parquet`, read back
//! here with the `parquet` crate's own reader and held against
//! `data/analysis.json` and the runs' rounds files, value by value.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::Field;
use serde_json::{Value, json};

/// A table's rows as JSON objects (timestamps as analysis.json writes
/// them), and its footer's key-value metadata.
fn read_table(
    site: &Path,
    table: &str,
) -> (Vec<BTreeMap<String, Value>>, BTreeMap<String, String>) {
    let path = site.join("data").join(format!("{table}.parquet"));
    let file = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let reader = SerializedFileReader::new(file).unwrap();
    let metadata = reader
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .into_iter()
        .flatten()
        .map(|kv| (kv.key.clone(), kv.value.clone().unwrap_or_default()))
        .collect();
    let rows = reader
        .get_row_iter(None)
        .unwrap()
        .map(|row| {
            row.unwrap()
                .get_column_iter()
                .map(|(name, field)| (name.clone(), json_of(field)))
                .collect()
        })
        .collect();
    (rows, metadata)
}

fn json_of(field: &Field) -> Value {
    match field {
        Field::Null => Value::Null,
        Field::Bool(b) => json!(b),
        Field::Long(n) => json!(n),
        Field::Double(x) => json!(x),
        Field::Str(s) => json!(s),
        Field::TimestampMicros(t) => json!(perfdash::calendar::rfc3339(
            chrono::DateTime::from_timestamp_micros(*t).unwrap()
        )),
        other => panic!("a column type the tables do not use: {other:?}"),
    }
}

/// `row`'s values of `keys`, and `expected`'s, side by side.
fn pick(row: &BTreeMap<String, Value>, keys: &[&str]) -> Vec<(String, Value)> {
    keys.iter()
        .map(|k| {
            let v = row.get(*k).unwrap_or_else(|| panic!("no column {k}"));
            (k.to_string(), v.clone())
        })
        .collect()
}

fn fields(pairs: &[(&str, &Value)]) -> Vec<(String, Value)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), (*v).clone()))
        .collect()
}

#[test]
fn the_tables_hold_what_analysis_json_holds() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    common::site_archives::services_archive(&archive);
    let site = tmp.path().join("site");
    common::build_site(&archive, &site);
    let doc: Value =
        serde_json::from_slice(&std::fs::read(site.join("data/analysis.json")).unwrap()).unwrap();
    let runs: BTreeMap<&str, &Value> = doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["id"].as_str().unwrap(), r))
        .collect();

    // endpoint_runs: each endpoint's runs, then its branch runs.
    let (rows, metadata) = read_table(&site, "endpoint_runs");
    assert_eq!(
        metadata.get("perfdash.tables_version").map(String::as_str),
        Some("1")
    );
    let mut expected = Vec::new();
    for e in doc["endpoints"].as_array().unwrap() {
        for (branch_run, list) in [(false, "runs"), (true, "branch_runs")] {
            for p in e[list].as_array().unwrap() {
                let run = runs[p["run"].as_str().unwrap()];
                let suspect = !run["environment_suspect"].is_null();
                let service = e.get("service").cloned().unwrap_or(Value::Null);
                let f = &p["figures"];
                expected.push(fields(&[
                    ("run", &p["run"]),
                    ("started_at", &p["started_at"]),
                    ("commit", &run["commit"]),
                    ("branch", &run["branch"]),
                    (
                        "host",
                        run["environment"].get("host").unwrap_or(&Value::Null),
                    ),
                    ("endpoint", &e["id"]),
                    ("endpoint_name", &e["name"]),
                    ("endpoint_slug", &e["slug"]),
                    ("service", &service),
                    ("branch_run", &json!(branch_run)),
                    ("median_p99_ms", &p["median_p99_ms"]),
                    ("baseline_p99_ms", &p["baseline_p99_ms"]),
                    ("ratio", &p["ratio"]),
                    ("line_ratio", &p["line_ratio"]),
                    ("verdict", &p["verdict"]),
                    ("p90_ms", &f["p90_ms"]),
                    ("error_rate", &f["error_rate"]),
                    ("throughput_rps", &f["throughput_rps"]),
                    ("spread", &f["spread"]),
                    ("rounds", &f["rounds"]),
                    ("accepted_change", &p["accepted_change"]),
                    ("incomplete", &run["incomplete"]),
                    ("environment_suspect", &json!(suspect)),
                    ("rounds_file", &p["rounds_file"]),
                ]));
            }
        }
    }
    let keys: Vec<&str> = ["run", "started_at", "commit", "branch", "host", "endpoint"]
        .into_iter()
        .chain(["endpoint_name", "endpoint_slug", "service", "branch_run"])
        .chain([
            "median_p99_ms",
            "baseline_p99_ms",
            "ratio",
            "line_ratio",
            "verdict",
        ])
        .chain(["p90_ms", "error_rate", "throughput_rps", "spread", "rounds"])
        .chain([
            "accepted_change",
            "incomplete",
            "environment_suspect",
            "rounds_file",
        ])
        .collect();
    let got: Vec<_> = rows.iter().map(|r| pick(r, &keys)).collect();
    assert_eq!(got.len(), expected.len());
    for (g, e) in got.iter().zip(&expected) {
        assert_eq!(g, e);
    }
    // The archive has what the columns are for.
    let any = |key: &str, want: &dyn Fn(&Value) -> bool| rows.iter().any(|r| want(&r[key]));
    assert!(any("branch_run", &|v| v == &json!(true)));
    assert!(any("host", &|v| v == "perf-02"));
    assert!(any("service", &|v| v == "orders"));
    assert!(any("ratio", &|v| v.as_f64().is_some_and(|r| r > 1.15)));
    assert!(any("incomplete", &|v| v == &json!(true)));

    // rounds: each run's rounds file, in runs[] order.
    let (rows, _) = read_table(&site, "rounds");
    let mut expected = Vec::new();
    for run in doc["runs"].as_array().unwrap() {
        let file = site.join(format!("data/runs/{}.json", run["slug"].as_str().unwrap()));
        let rounds: Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
        for (endpoint, list) in rounds["endpoints"].as_object().unwrap() {
            for r in list.as_array().unwrap() {
                expected.push(fields(&[
                    ("run", &run["id"]),
                    ("started_at", &run["started_at"]),
                    ("endpoint", &json!(endpoint)),
                    ("number", &r["number"]),
                    ("source", &r["source"]),
                    ("format", &r["format"]),
                    ("p99_ms", &r["stats"]["p99_ms"]),
                    ("p90_ms", &r["stats"]["p90_ms"]),
                    ("count", &r["stats"]["count"]),
                    ("error_rate", &r["stats"]["error_rate"]),
                ]));
            }
        }
    }
    let keys = [
        "run",
        "started_at",
        "endpoint",
        "number",
        "source",
        "format",
        "p99_ms",
        "p90_ms",
        "count",
        "error_rate",
    ];
    let got: Vec<_> = rows.iter().map(|r| pick(r, &keys)).collect();
    assert_eq!(got.len(), expected.len());
    assert_eq!(got, expected);

    // alarms: analysis.json's `alarms`, in its order.
    let (rows, _) = read_table(&site, "alarms");
    let alarms = doc["alarms"].as_array().unwrap();
    assert!(!alarms.is_empty());
    let expected: Vec<_> = alarms
        .iter()
        .map(|a| {
            fields(&[
                ("policy", &a["policy"]),
                ("endpoint", &a["endpoint"]),
                ("run", &a["run"]),
                ("started_at", &a["started_at"]),
                ("first_over_run", &a["first_over_run"]),
                ("state", &a["state"]),
                ("raised_at", &a["raised_at"]),
                ("ratio", &a["ratio"]),
                ("verdict", &a["verdict"]),
                ("suspect_last_old_commit", &a["suspect"]["last_old_commit"]),
                ("suspect_first_new_run", &a["suspect"]["first_new_run"]),
                (
                    "suspect_first_new_commit",
                    &a["suspect"]["first_new_commit"],
                ),
            ])
        })
        .collect();
    let keys = [
        "policy",
        "endpoint",
        "run",
        "started_at",
        "first_over_run",
        "state",
        "raised_at",
        "ratio",
        "verdict",
        "suspect_last_old_commit",
        "suspect_first_new_run",
        "suspect_first_new_commit",
    ];
    let got: Vec<_> = rows.iter().map(|r| pick(r, &keys)).collect();
    assert_eq!(got, expected);

    // change_points: each endpoint's, oldest first.
    let (rows, _) = read_table(&site, "change_points");
    let mut expected = Vec::new();
    for e in doc["endpoints"].as_array().unwrap() {
        for c in e["change_points"].as_array().unwrap() {
            expected.push(fields(&[
                ("endpoint", &e["id"]),
                ("run", &c["run"]),
                ("started_at", &c["started_at"]),
                ("change", &c["change"]),
                ("direction", &c["direction"]),
                ("pvalue", &c["pvalue"]),
            ]));
        }
    }
    let keys = [
        "endpoint",
        "run",
        "started_at",
        "change",
        "direction",
        "pvalue",
    ];
    let got: Vec<_> = rows.iter().map(|r| pick(r, &keys)).collect();
    assert_eq!(got, expected);
}
