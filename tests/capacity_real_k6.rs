//! A real k6 step-load run made for perfdash
//! (tests/fixtures/capacity/README.md): perfdash finds the five ramping-vus
//! plateaus, measures each after settling, and finds the knee and limit
//! that an independent computation (`independent_steps.py`, plain Python
//! over the same file) printed:
//!
//! ```text
//! step 1: 2 VUs  28 requests  4.666801 req/s  p99 53.439313 ms  errors 0.0000
//! step 2: 4 VUs  60 requests  10.009193 req/s  p99 70.762594 ms  errors 0.0000
//! step 3: 8 VUs  121 requests  20.166344 req/s  p99 57.578281 ms  errors 0.0000
//! step 4: 16 VUs  219 requests  36.495000 req/s  p99 303.021987 ms  errors 0.0000
//! step 5: 32 VUs  186 requests  37.197292 req/s  p99 873.548753 ms  errors 0.0000
//! objective 100 ms: knee step 3 20.166344 req/s, limit 16.133075 req/s, break step 4
//! objective 350 ms: knee step 4 36.495000 req/s, limit 29.196000 req/s, break step 5
//! ```

use std::path::{Path, PathBuf};

use perfdash::analyse::capacity::{Objective, find_knee};
use perfdash::config::Settings;
use perfdash::ingest::capacity::steps_of_file;
use perfdash::model::LoadUnit;

fn file() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/capacity/steps.ndjson.gz")
}

/// (VUs, requests, req/s, p99 ms) per step, as printed by the script.
const INDEPENDENT: [(f64, u64, f64, f64); 5] = [
    (2.0, 28, 4.666801, 53.439313),
    (4.0, 60, 10.009193, 70.762594),
    (8.0, 121, 20.166344, 57.578281),
    (16.0, 219, 36.495000, 303.021987),
    (32.0, 186, 37.197292, 873.548753),
];

#[test]
fn the_real_step_load_run_has_the_independently_computed_steps() {
    let series = steps_of_file(&file(), &Settings::default()).unwrap();
    assert_eq!(series.unit, LoadUnit::Vus);
    assert_eq!(series.steps.len(), INDEPENDENT.len());
    for (step, &(vus, count, rps, p99)) in series.steps.iter().zip(&INDEPENDENT) {
        assert_eq!(step.load, vus);
        assert_eq!(step.count, count, "step {}", step.number);
        // The script prints 6 decimals.
        assert!(
            (step.throughput_rps - rps).abs() < 1e-6,
            "step {}: {}",
            step.number,
            step.throughput_rps
        );
        assert!(
            (step.p99_ms.unwrap() - p99).abs() < 1e-6,
            "step {}: {:?}",
            step.number,
            step.p99_ms
        );
        assert_eq!(step.error_rate, 0.0);
    }
    // Latency bends: the saturated steps' p99 is several times the light ones'.
    assert!(series.steps[4].p99_ms.unwrap() > 10.0 * series.steps[0].p99_ms.unwrap());
}

#[test]
fn the_knee_and_limit_match_the_independent_computation() {
    let series = steps_of_file(&file(), &Settings::default()).unwrap();
    let knee = |p99_ms| {
        find_knee(
            &series.steps,
            series.unit,
            &Objective {
                p99_ms,
                max_error_rate: 0.01,
                headroom: 0.2,
            },
        )
    };
    let tight = knee(100.0);
    assert_eq!(tight.knee_step, Some(3));
    assert_eq!(tight.break_step, Some(4));
    assert!((tight.knee_rps.unwrap() - 20.166344).abs() < 1e-6);
    assert!((tight.limit_rps.unwrap() - 16.133075).abs() < 1e-6);
    assert!(
        tight
            .reasoning
            .starts_with("knee 20.2 req/s at 8 VUs (step 3: p99 57.6 ms ≤ 100 ms objective"),
        "{}",
        tight.reasoning
    );

    let loose = knee(350.0);
    assert_eq!(loose.knee_step, Some(4));
    assert_eq!(loose.break_step, Some(5));
    assert!((loose.knee_rps.unwrap() - 36.495).abs() < 1e-6);
    assert!((loose.limit_rps.unwrap() - 29.196).abs() < 1e-6);
}

#[test]
fn inspect_steps_prints_the_steps_and_the_knee() {
    let out = assert_cmd::Command::cargo_bin("perfdash")
        .unwrap()
        .args(["inspect", "--steps", "--objective", "100"])
        .arg(file())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("  3      8 VUs"), "{text}");
    assert!(text.contains("knee 20.2 req/s at 8 VUs (step 3"), "{text}");
    assert!(
        text.contains("limit = 20.2 × (1 − 20%) = 16.1 req/s"),
        "{text}"
    );

    let json = assert_cmd::Command::cargo_bin("perfdash")
        .unwrap()
        .args([
            "inspect",
            "--steps",
            "--objective",
            "350",
            "--format",
            "json",
        ])
        .arg(file())
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(doc[0]["knee"]["knee_step"], 4);
    assert_eq!(doc[0]["series"]["steps"].as_array().unwrap().len(), 5);

    // A file whose load never steps up is refused with the reason.
    let flat =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/k6-real/round-1.ndjson.gz");
    let out = assert_cmd::Command::cargo_bin("perfdash")
        .unwrap()
        .args(["inspect", "--steps"])
        .arg(&flat)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not a step-load round"), "{err}");
}
