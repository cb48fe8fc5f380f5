//! Archives for the site tests: a small "showcase" archive on disk with
//! everything a page has to cope with (colliding and hostile names,
//! insufficient runs, a skipped file, run metadata, regressions that
//! persist, an improvement), and a large in-memory history for the page
//! size budget.

use std::collections::BTreeMap;
use std::path::Path;

use chrono::{DateTime, Duration, NaiveDate, Utc};
use perfdash::config::Settings;
use perfdash::model::{Archive, EndpointRun, Round, RoundStats, Run, RunMeta, SourceFormat};

use super::k6_summary;

/// A tiny deterministic generator (xorshift64*), so archives are the
/// same on every machine without a dependency.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }
    /// Uniform in [0, 1).
    pub fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Endpoint folder names that slug to the same file name (`order-list`),
/// that carry markup, and a plain one. Display names come from
/// perfdash.toml for two of them.
pub const SHOWCASE_ENDPOINTS: &[&str] = &[
    "order-list",
    "Order List",
    "order_list",
    "inventory <img src=x onerror=alert(1)> & \"stock\"",
    "create-order",
    "index",
];

/// Two run ids that slug alike, so run pages collide too.
pub const COLLIDING_RUNS: [&str; 2] = ["2026-04-10_0300-nightly", "2026-04-10-0300-Nightly"];

/// Writes the showcase archive under `root` and returns its run ids in
/// time order.
pub fn showcase_archive(root: &Path) -> Vec<String> {
    std::fs::create_dir_all(root.join("runs")).unwrap();
    std::fs::write(
        root.join("perfdash.toml"),
        "[endpoints.order-list]\nname = \"GET /api/orders\"\n\n\
         [endpoints.create-order]\nname = \"POST /api/orders\"\nthreshold_ratio = 1.25\n",
    )
    .unwrap();
    let mut rng = Rng::new(7);
    let mut ids = Vec::new();
    let start = NaiveDate::from_ymd_opt(2026, 2, 2).unwrap(); // a Monday
    // Six weeks, Monday / Wednesday / Friday at 03:00 UTC.
    for week in 0..6i64 {
        for day in [0i64, 2, 4] {
            let date = start + Duration::days(week * 7 + day);
            ids.push(format!("{}T0300Z", date.format("%Y-%m-%d")));
        }
    }
    ids.extend(COLLIDING_RUNS.iter().map(|s| s.to_string()));
    for (i, id) in ids.iter().enumerate() {
        let run = root.join("runs").join(id);
        std::fs::create_dir_all(&run).unwrap();
        if i % 4 == 0 || i >= 18 {
            std::fs::write(
                run.join("run.toml"),
                format!(
                    "commit = \"{:07x}\"\nbranch = \"main\"\nnotes = \"nightly <run> & co\"\n",
                    0x1a2b3c0 + i
                ),
            )
            .unwrap();
        }
        let noisy_neighbour = i == 9;
        for (e, endpoint) in SHOWCASE_ENDPOINTS.iter().enumerate() {
            let mut base = 40.0 + 25.0 * e as f64;
            // order-list regresses from run 12 and stays regressed;
            // create-order improves from run 15.
            if *endpoint == "order-list" && i >= 12 {
                base *= 1.45;
            }
            if *endpoint == "create-order" && i >= 15 {
                base *= 0.7;
            }
            if noisy_neighbour {
                base *= 1.3;
            }
            // One run of one endpoint has only three rounds.
            let rounds = if *endpoint == "Order List" && i == 7 {
                3
            } else {
                5
            };
            let dir = run.join(endpoint);
            std::fs::create_dir_all(&dir).unwrap();
            for n in 1..=rounds {
                let gc_tail = rng.next() < 0.05;
                let p99 = base * (0.95 + 0.1 * rng.next()) * if gc_tail { 1.9 } else { 1.0 };
                std::fs::write(dir.join(format!("round-{n}.json")), k6_summary(p99)).unwrap();
            }
        }
    }
    // One unreadable round: skipped, named on the overview, run incomplete.
    std::fs::write(
        root.join("runs")
            .join(&ids[5])
            .join("index")
            .join("round-6.json"),
        "{ not json",
    )
    .unwrap();
    ids
}

/// A history of `weeks` weeks with three runs a week for `endpoints`
/// endpoints, five rounds each, with drift, GC tails, a noisy-neighbour
/// run now and then and regressions that persist for a few weeks: the
/// shape of the bundled archive, only longer. Built in memory, because
/// what is measured is the rendered pages, not reading.
pub fn large_archive(weeks: usize, endpoints: usize) -> Archive {
    let mut rng = Rng::new(2026);
    let names = [
        "order-list",
        "order-detail",
        "create-order",
        "cancel-order",
        "inventory-lookup",
        "inventory-reserve",
        "price-quote",
        "cart-view",
        "cart-update",
        "checkout",
        "customer-profile",
        "shipment-status",
    ];
    let ids: Vec<String> = (0..endpoints)
        .map(|i| match names.get(i) {
            Some(n) => n.to_string(),
            None => format!("endpoint-{i}"),
        })
        .collect();
    let start: DateTime<Utc> = NaiveDate::from_ymd_opt(2023, 6, 5)
        .unwrap()
        .and_hms_opt(3, 0, 0)
        .unwrap()
        .and_utc();
    let mut level: Vec<f64> = (0..endpoints).map(|i| 30.0 + 17.0 * i as f64).collect();
    let mut runs = Vec::new();
    // Its own stream, so that the latency history is what it was before
    // step-load rounds were added.
    let mut capacity_rng = Rng::new(9);
    for week in 0..weeks {
        for day in [0i64, 2, 4] {
            let started_at = start + Duration::days(week as i64 * 7 + day);
            let id = started_at.format("%Y-%m-%dT%H%MZ").to_string();
            let neighbour = rng.next() < 0.03;
            let mut eps = BTreeMap::new();
            for (e, endpoint) in ids.iter().enumerate() {
                // Drift, and now and then a step that stays (a regression
                // or a fix).
                level[e] *= 1.0 + (rng.next() - 0.5) * 0.02;
                if rng.next() < 0.01 {
                    level[e] *= if rng.next() < 0.6 { 1.35 } else { 0.8 };
                }
                let rounds = (1..=5)
                    .map(|n| {
                        let tail = if rng.next() < 0.04 { 1.9 } else { 1.0 };
                        let p99 = level[e]
                            * (0.94 + 0.12 * rng.next())
                            * tail
                            * if neighbour { 1.25 } else { 1.0 };
                        Round {
                            number: n,
                            label: None,
                            source: format!("runs/{id}/{endpoint}/round-{n}.json"),
                            format: SourceFormat::K6HandleSummary,
                            stats: RoundStats {
                                count: Some(6000),
                                throughput_rps: Some(100.0),
                                mean_ms: Some(p99 / 3.0),
                                stddev_ms: Some(p99 / 8.0),
                                min_ms: Some(p99 / 10.0),
                                p50_ms: Some(p99 / 4.0),
                                p90_ms: Some(p99 / 2.0),
                                p95_ms: Some(p99 / 1.5),
                                p99_ms: p99,
                                max_ms: Some(p99 * 1.4),
                                error_rate: Some(0.0),
                            },
                            warmup_s: None,
                            cross_check: None,
                        }
                    })
                    .collect();
                eps.insert(
                    endpoint.clone(),
                    EndpointRun {
                        rounds,
                        ..EndpointRun::default()
                    },
                );
            }
            // Every other Friday, three endpoints get a step-load round.
            let mut capacity = BTreeMap::new();
            if day == 4 && week % 2 == 0 {
                for endpoint in ids.iter().take(3) {
                    capacity.insert(
                        endpoint.clone(),
                        step_series(
                            &mut capacity_rng,
                            &format!("runs/{id}/{endpoint}/steps.csv.gz"),
                        ),
                    );
                }
            }
            runs.push(Run {
                capacity,
                id,
                started_at,
                meta: RunMeta {
                    commit: Some(format!("{:07x}", (rng.next() * 2.0f64.powi(28)) as u64)),
                    branch: Some("main".into()),
                    ..RunMeta::default()
                },
                endpoints: eps,
                problems: Vec::new(),
                untrusted_time: None,
            });
        }
    }
    Archive {
        root: "large-archive".into(),
        settings: Settings::default(),
        runs,
        triage: Vec::new(),
        annotations: Vec::new(),
    }
}

/// A nine-step JMeter step-load round whose latency bends at about 2,600
/// req/s, with CPU readings.
fn step_series(rng: &mut Rng, source: &str) -> perfdash::model::StepSeries {
    let steps = (0..9)
        .map(|k| {
            let threads = 50.0 * (k + 1) as f64;
            let rps = 3200.0 * (1.0 - 1.0 / (1.0 + threads / 250.0)) * (0.97 + 0.06 * rng.next());
            let p99 = 60.0 + 2.0 * (threads / 100.0) * (threads / 100.0) * 20.0;
            perfdash::model::Step {
                number: k + 1,
                label: None,
                load: threads,
                start_s: 15.0 * k as f64,
                duration_s: 15.0,
                window_s: 10.0,
                count: (rps * 10.0) as u64,
                throughput_rps: rps,
                p99_ms: Some(p99),
                p50_ms: Some(p99 / 3.0),
                mean_ms: Some(p99 / 2.5),
                error_rate: 0.0,
                concurrency: Some(rps * p99 / 2500.0),
                cpu_pct: Some(10.0 + 9.0 * (k + 1) as f64),
                memory: Some(1000.0 + 20.0 * k as f64),
            }
        })
        .collect();
    perfdash::model::StepSeries {
        source: source.to_string(),
        format: SourceFormat::JmeterCsv,
        unit: perfdash::model::LoadUnit::Threads,
        settle_s: 5.0,
        origin_unix_us: 0,
        steps,
        resources: Some(source.replace("steps.csv.gz", "resources.csv")),
    }
}

/// The showcase archive with services (`order-list` and `create-order`
/// in `orders`, `Order List` in `catalogue`, the rest ungrouped) and one
/// branch run on another host after the main history: what the Parquet
/// tables carry beside the points themselves.
pub fn services_archive(root: &Path) -> Vec<String> {
    let mut ids = showcase_archive(root);
    std::fs::write(
        root.join("perfdash.toml"),
        "[endpoints.order-list]\nname = \"GET /api/orders\"\nservice = \"orders\"\n\n\
         [endpoints.create-order]\nname = \"POST /api/orders\"\nthreshold_ratio = 1.25\n\
         service = \"orders\"\n\n[endpoints.\"Order List\"]\nservice = \"catalogue\"\n",
    )
    .unwrap();
    let branch_run = "2026-03-20T0300Z";
    let run = root.join("runs").join(branch_run);
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(
        run.join("run.toml"),
        "commit = \"f00ba47\"\nbranch = \"feature-x\"\n\n[environment]\nhost = \"perf-02\"\n",
    )
    .unwrap();
    for (e, endpoint) in SHOWCASE_ENDPOINTS.iter().enumerate() {
        let dir = run.join(endpoint);
        std::fs::create_dir_all(&dir).unwrap();
        for n in 1..=5 {
            let p99 = (40.0 + 25.0 * e as f64) * (1.0 + n as f64 / 100.0);
            std::fs::write(dir.join(format!("round-{n}.json")), k6_summary(p99)).unwrap();
        }
    }
    ids.push(branch_run.to_string());
    ids
}
