//! A small fixed archive with one page of every kind, for the page golden
//! files (`tests/pages_golden.rs`): twelve runs over four weeks (Mon, Wed,
//! Fri from 2026-03-02), three rounds each, of a shop with
//!
//! - `orders`: steady at ~100 ms, then ×1.4 from run 9 (2026-03-23) on, a
//!   confirmed regression with CPU profiles in runs 8 and 9 (the method
//!   `PriceRules.apply` grew) and a triage label with an owner;
//! - `search`: steady at ~40 ms but for one noisy run (run 5, triaged
//!   noise);
//! - `reserve`: step-load only (JMeter CSV cut by `allThreads`) in runs
//!   2, 6 and 10, its knee falling in run 10 (a capacity regression);
//!
//! plus run metadata (commits, notes, releases 1.0.0 and 1.1.0, a host
//! change at run 6), two annotations and `[site]` links, and one run dated
//! 2099 (a clock set ahead: its time cannot be trusted, so the pages list
//! it apart and no chart or window stretches to it). Everything is written from
//! constants: the same bytes on every machine.

use std::path::Path;

use super::k6_summary;

/// Days after 2026-03-02 (a Monday) of the twelve runs.
const DAYS: [i64; 12] = [0, 2, 4, 7, 9, 11, 14, 16, 18, 21, 23, 25];

/// Run ids, oldest first.
pub fn run_ids() -> Vec<String> {
    DAYS.iter().map(|d| run_id(*d)).collect()
}

fn run_id(day: i64) -> String {
    let date = chrono::NaiveDate::from_ymd_opt(2026, 3, 2).unwrap() + chrono::Duration::days(day);
    format!("{}T0300Z", date.format("%Y-%m-%d"))
}

/// A fake but stable 40-hex commit for run `i`.
pub fn commit(i: usize) -> String {
    format!("{:08x}", 0x1a2b_3c4d_u32.wrapping_mul(i as u32 + 7)).repeat(5)
}

fn write(root: &Path, rel: &str, bytes: &[u8]) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

/// A JMeter CSV with 12-second steps of `(threads, requests/s, ms)`;
/// every tenth request takes 3 × `ms` (so a step's p99 is 3 × `ms`).
fn jmeter_steps(t0_ms: i64, steps: &[(u32, u32, u64)]) -> String {
    let mut csv = String::from("timeStamp,elapsed,label,responseCode,success,allThreads\n");
    for (k, &(threads, rps, ms)) in steps.iter().enumerate() {
        let start = t0_ms + k as i64 * 12_000;
        for i in 0..rps as i64 * 12 {
            let t = start + i * 1000 / rps as i64;
            let elapsed = if i % 10 == 9 { ms * 3 } else { ms };
            csv.push_str(&format!("{t},{elapsed},POST /reserve,200,true,{threads}\n"));
        }
    }
    csv
}

const PERFDASH_TOML: &str = r#"[analysis]
expected_rounds = 3
baseline_window = 5
min_baseline_runs = 3

[capacity]
settle_seconds = 2

[compare]
releases = true
latest_vs_release = false

[site]
commit_url = "https://git.example.com/shop/commit/{commit}"
compare_url = "https://git.example.com/shop/compare/{from}...{to}"

[endpoints.orders]
name = "POST /api/orders"

[endpoints.search]
name = "GET /api/search"

[endpoints.reserve]
name = "POST /api/reserve"
capacity_objective_p99_ms = 100
"#;

/// The stacks of one CPU profile: `PriceRules.apply` takes `grown`
/// samples, the rest stays put.
fn profile(grown: u32) -> String {
    format!(
        "java/lang/Thread.run;shop/OrderController.create;shop/PriceRules.apply {grown}\n\
         java/lang/Thread.run;shop/OrderController.create;shop/OrderRepository.save 300\n\
         java/lang/Thread.run;shop/OrderController.create;shop/Json.write 120\n\
         GC Thread#0;G1YoungGen 40\n"
    )
}

/// Writes the archive under `root`.
pub fn write_golden_archive(root: &Path) {
    write(root, "perfdash.toml", PERFDASH_TOML.as_bytes());
    for (i, &day) in DAYS.iter().enumerate() {
        let id = run_id(day);
        let dir = format!("runs/{id}");
        write(root, &format!("{dir}/run.toml"), run_toml(i).as_bytes());
        let orders = if i >= 9 { 140.0 } else { 100.0 } + (i % 3) as f64;
        let search = if i == 5 { 52.0 } else { 40.0 + (i % 2) as f64 };
        for (endpoint, level) in [("orders", orders), ("search", search)] {
            for (n, wobble) in [1.0, 1.02, 0.99].iter().enumerate() {
                write(
                    root,
                    &format!("{dir}/{endpoint}/round-{}.json", n + 1),
                    k6_summary(level * wobble).as_bytes(),
                );
            }
        }
        if i == 8 || i == 9 {
            let grown = if i == 9 { 420 } else { 100 };
            write(
                root,
                &format!("{dir}/orders/flame.cpu.collapsed"),
                profile(grown).as_bytes(),
            );
        }
        if [2, 6, 10].contains(&i) {
            let steps: &[(u32, u32, u64)] = if i == 10 {
                &[(10, 10, 20), (20, 20, 40), (30, 30, 50), (40, 40, 60)]
            } else {
                &[(10, 10, 20), (20, 20, 25), (30, 30, 30), (40, 40, 50)]
            };
            let t0 = 1_772_420_400_000 + day * 86_400_000;
            write(
                root,
                &format!("{dir}/reserve/steps.csv"),
                jmeter_steps(t0, steps).as_bytes(),
            );
        }
    }
    write_future_run(root);
    let ids = run_ids();
    write(root, "annotations/ops.toml", ANNOTATIONS.as_bytes());
    write(
        root,
        "triage/search-noise.toml",
        format!(
            "run = \"{}\"\nendpoint = \"search\"\nlabel = \"noise\"\nnote = \"index rebuild on the test database\"\nauthor = \"Ana\"\ndate = 2026-03-18\n",
            ids[5]
        )
        .as_bytes(),
    );
    write(
        root,
        "triage/orders-price-rules.toml",
        format!(
            "run = \"{}\"\nendpoint = \"orders\"\nlabel = \"real\"\nnote = \"PR #41 applies every price rule per line item\"\nauthor = \"Ben\"\ndate = 2026-03-24\n\
             owner = \"Ben\"\nissue = \"https://issues.example.com/SHOP-41\"\nstatus = \"investigating\"\n",
            ids[9]
        )
        .as_bytes(),
    );
}

const ANNOTATIONS: &str = r#"[[annotation]]
date = 2026-03-19T14:30:00Z
text = "Database moved to the new storage class"
link = "https://wiki.example.com/ops/42"

[[annotation]]
run = "2026-03-23T0300Z"
text = "Price rules service deployed with PR #41"
endpoints = ["orders"]
"#;

/// A run whose `started_at` says 2099: never the latest run.
fn write_future_run(root: &Path) {
    let dir = "runs/2099-03-30T0300Z";
    write(
        root,
        &format!("{dir}/run.toml"),
        format!(
            "started_at = 2099-03-30T03:00:00Z\ncommit = \"{}\"\nbranch = \"main\"\n",
            commit(DAYS.len())
        )
        .as_bytes(),
    );
    for (endpoint, level) in [("orders", 141.0), ("search", 40.0)] {
        for n in 1..=3 {
            write(
                root,
                &format!("{dir}/{endpoint}/round-{n}.json"),
                k6_summary(level).as_bytes(),
            );
        }
    }
}

fn run_toml(i: usize) -> String {
    let mut s = format!("commit = \"{}\"\nbranch = \"main\"\n", commit(i));
    match i {
        4 => s.push_str("release = \"1.0.0\"\n"),
        9 => s.push_str("notes = \"PR #41: price rules per line item\"\n"),
        10 => s.push_str("release = \"1.1.0\"\nticket = \"PERF-7\"\n"),
        _ => {}
    }
    let host = if i >= 6 { "perf-02" } else { "perf-01" };
    s.push_str(&format!(
        "\n[environment]\nhost = \"{host}\"\njvm_flags = \"-Xmx2g -XX:+UseG1GC\"\n\n[load]\nexecutor = \"constant-arrival-rate\"\nrate = \"100/s\"\nduration = \"60s\"\n"
    ));
    s
}
