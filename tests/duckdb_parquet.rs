//! The Parquet tables as DuckDB reads them (issue 37): builds a site and
//! runs `tests/duckdb/check_tables.py`, which counts every table's rows
//! with DuckDB, holds them against `data/analysis.json`, and runs the
//! 1.15× query of docs/data-contract.md against the answer the JSON gives.
//!
//! Without `python3` or its `duckdb` module the test says "skipped" and
//! passes on a developer's machine; with `CI` set it fails, because CI
//! must really run it (`.ci/run` installs duckdb with pip).

mod common;

use std::path::Path;
use std::process::Command;

fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && v != "false")
}

/// The script's exit code when `import duckdb` fails.
const NO_DUCKDB: i32 = 3;

#[test]
fn duckdb_counts_what_analysis_json_lists() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    common::site_archives::services_archive(&archive);
    let site = tmp.path().join("site");
    perfdash::pipeline::build(&perfdash::pipeline::BuildOptions {
        archive: archive.clone(),
        out: site.clone(),
        ..Default::default()
    })
    .unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/duckdb/check_tables.py");
    let output = match Command::new("python3").arg(&script).arg(&site).output() {
        Ok(output) => output,
        Err(e) => return skip(&format!("python3 cannot be run: {e}")),
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    if output.status.code() == Some(NO_DUCKDB) {
        return skip(stderr.trim());
    }
    println!("{stdout}");
    assert!(
        output.status.success(),
        "check_tables.py found differences:\n{stdout}\n{stderr}"
    );
}

fn skip(why: &str) {
    assert!(
        !in_ci(),
        "CI is set but the DuckDB test cannot run: {why} (`.ci/run` installs it with `pip install duckdb`)"
    );
    eprintln!("skipped: {why} (install it with `pip install duckdb`)");
}
