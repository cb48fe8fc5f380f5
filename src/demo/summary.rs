//! One round as k6 v1.x writes it: the `handleSummary(data)` object, as
//! `JSON.stringify(data)` gives it (compact, one line).
//!
//! The shape is the one k6 documents for `handleSummary()`
//! (<https://grafana.com/docs/k6/latest/results-output/end-of-test/custom-summary/>)
//! and real summaries show (k6-reporter's `simple.json`, the conformance
//! fixtures of tests/k6_fixtures.rs): `root_group`, `options`, `state` and
//! `metrics`, each metric with `type`, `contains`, `values` and, where the
//! script sets them, `thresholds`.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::rng::Rng;
use super::story::EndpointDef;

/// The figures of one measured round. Latencies are in ms and describe the
/// successful responses (`http_req_duration{expected_response:true}`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RoundFigures {
    pub min: f64,
    pub med: f64,
    pub avg: f64,
    pub p90: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
    /// All requests, failed ones included.
    pub count: u64,
    pub failed: u64,
    pub duration_ms: f64,
    pub vus_peak: u64,
    pub vus_max: u64,
    pub received_bytes: u64,
    pub sent_bytes: u64,
}

impl RoundFigures {
    /// The figures perfdash reads back from the rendered round file
    /// (`render`), so the generator can judge its own runs.
    pub(crate) fn stats(&self) -> crate::model::RoundStats {
        let secs = self.duration_ms / 1000.0;
        crate::model::RoundStats {
            count: Some(self.count),
            throughput_rps: Some(self.count as f64 / secs),
            mean_ms: Some(round6(self.avg)),
            stddev_ms: None,
            min_ms: Some(round6(self.min)),
            p50_ms: Some(round6(self.med)),
            p90_ms: Some(round6(self.p90)),
            p95_ms: Some(round6(self.p95)),
            p99_ms: round6(self.p99),
            max_ms: Some(round6(self.max)),
            error_rate: Some(if self.count == 0 {
                0.0
            } else {
                self.failed as f64 / self.count as f64
            }),
        }
    }
}

/// Rounds a latency to k6's resolution (durations are measured in ns and
/// reported in ms, so 6 decimals), which also keeps the files small.
pub(crate) fn round6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

/// JSON.stringify writes whole numbers without a fraction; so do we.
fn num(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 9.0e15 {
        Value::from(x as i64)
    } else {
        Value::from(x)
    }
}

#[derive(Serialize)]
struct Summary {
    root_group: Group,
    options: Options,
    state: State,
    metrics: BTreeMap<String, Metric>,
}

#[derive(Serialize)]
struct Group {
    name: &'static str,
    path: &'static str,
    id: &'static str,
    groups: Vec<Group>,
    checks: Vec<Check>,
}

#[derive(Serialize)]
struct Check {
    name: &'static str,
    path: &'static str,
    id: &'static str,
    passes: u64,
    fails: u64,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Options {
    summary_trend_stats: [&'static str; 7],
    summary_time_unit: &'static str,
    no_color: bool,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct State {
    #[serde(rename = "isStdOutTTY")]
    is_std_out_tty: bool,
    #[serde(rename = "isStdErrTTY")]
    is_std_err_tty: bool,
    test_run_duration_ms: f64,
}

#[derive(Serialize)]
struct Metric {
    #[serde(rename = "type")]
    kind: &'static str,
    contains: &'static str,
    values: BTreeMap<&'static str, Value>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    thresholds: BTreeMap<String, Threshold>,
}

#[derive(Serialize)]
struct Threshold {
    ok: bool,
}

/// Trend stats in the order of `summaryTrendStats`.
const TREND_STATS: [&str; 7] = ["avg", "min", "med", "max", "p(90)", "p(95)", "p(99)"];

/// (avg, min, med, max, p90, p95, p99) → a trend metric.
fn trend(contains: &'static str, s: [f64; 7]) -> Metric {
    Metric {
        kind: "trend",
        contains,
        values: TREND_STATS
            .iter()
            .zip(s)
            .map(|(k, v)| (*k, num(round6(v))))
            .collect(),
        thresholds: BTreeMap::new(),
    }
}

fn counter(contains: &'static str, count: u64, secs: f64) -> Metric {
    Metric {
        kind: "counter",
        contains,
        values: [
            ("count", num(count as f64)),
            ("rate", num(count as f64 / secs)),
        ]
        .into_iter()
        .collect(),
        thresholds: BTreeMap::new(),
    }
}

fn rate(passes: u64, fails: u64) -> Metric {
    let total = passes + fails;
    let r = if total == 0 {
        0.0
    } else {
        passes as f64 / total as f64
    };
    Metric {
        kind: "rate",
        contains: "default",
        values: [
            ("rate", num(r)),
            ("passes", num(passes as f64)),
            ("fails", num(fails as f64)),
        ]
        .into_iter()
        .collect(),
        thresholds: BTreeMap::new(),
    }
}

fn gauge(value: u64, min: u64, max: u64) -> Metric {
    Metric {
        kind: "gauge",
        contains: "default",
        values: [
            ("value", num(value as f64)),
            ("min", num(min as f64)),
            ("max", num(max as f64)),
        ]
        .into_iter()
        .collect(),
        thresholds: BTreeMap::new(),
    }
}

/// The latency objective the k6 script sets as a threshold on p(99): a
/// round number about 2.5 × the endpoint's usual p99.
pub(crate) fn slo_ms(def: &EndpointDef) -> u32 {
    const STEPS: [u32; 14] = [
        50, 100, 150, 200, 250, 300, 400, 500, 600, 750, 800, 1000, 1200, 1500,
    ];
    let want = def.base_p99_ms * 2.5;
    STEPS
        .into_iter()
        .find(|s| f64::from(*s) >= want)
        .unwrap_or(2000)
}

/// Renders one round file. `rng` supplies the small jitter of the timing
/// components that perfdash does not judge (blocked, sending, …).
pub(crate) fn render(def: &EndpointDef, f: &RoundFigures, rng: &mut Rng) -> Vec<u8> {
    let secs = f.duration_ms / 1000.0;
    let ok_count = f.count - f.failed;
    let ok = [f.avg, f.min, f.med, f.max, f.p90, f.p95, f.p99];

    // All responses: failed requests are quick 5xx answers, so they pull
    // the low end and the mean down a little and leave the tail alone.
    let fail_share = f.failed as f64 / f.count.max(1) as f64;
    let all = [
        f.avg * (1.0 - 0.6 * fail_share),
        if f.failed > 0 { f.min * 0.55 } else { f.min },
        f.med,
        f.max,
        f.p90,
        f.p95,
        f.p99,
    ];

    // Sending and receiving are small and roughly constant; waiting is the rest.
    let j = |rng: &mut Rng| rng.factor(0.08).max(0.5);
    let send_base = 0.012 + def.request_bytes / 80_000.0;
    let send = [
        send_base * 1.35 * j(rng),
        send_base * 0.35 * j(rng),
        send_base * j(rng),
        send_base * 22.0 * j(rng),
        send_base * 1.9,
        send_base * 2.6,
        send_base * 5.5 * j(rng),
    ];
    let recv_base = 0.045 + def.response_bytes / 60_000.0;
    let recv = [
        recv_base * 1.6 * j(rng),
        recv_base * 0.3 * j(rng),
        recv_base * j(rng),
        recv_base * 45.0 * j(rng),
        recv_base * 2.2,
        recv_base * 3.4,
        recv_base * 8.0 * j(rng),
    ];
    let send = monotone(send);
    let recv = monotone(recv);
    let wait: [f64; 7] = std::array::from_fn(|i| {
        (ok[i] - send[i].min(ok[i] * 0.2) - recv[i].min(ok[i] * 0.2)).max(0.0)
    });
    let wait = monotone(wait);

    // New connections only at the start: blocked/connecting have a long max
    // and a near-zero body.
    let conn_max = 0.18 + 0.3 * rng.uniform();
    let blocked_max = conn_max + 0.4 + 1.6 * rng.uniform();
    let new_conns = f.vus_peak as f64 / f.count.max(1) as f64;
    let blocked = monotone([
        0.0031 * j(rng) + blocked_max * new_conns,
        0.0009 * j(rng),
        0.0027 * j(rng),
        blocked_max,
        0.0043 * j(rng),
        0.0058 * j(rng),
        0.0139 * j(rng),
    ]);
    let connecting = [conn_max * new_conns, 0.0, 0.0, conn_max, 0.0, 0.0, 0.0];
    let iteration_overhead = 0.09 + 0.05 * rng.uniform();
    let iteration: [f64; 7] = std::array::from_fn(|i| all[i] + iteration_overhead);

    let slo = slo_ms(def);
    let mut duration = trend("time", all);
    duration.thresholds.insert(
        format!("p(99)<{slo}"),
        Threshold {
            ok: f.p99 < f64::from(slo),
        },
    );
    let mut failed = rate(f.failed, ok_count);
    failed.thresholds.insert(
        "rate<0.01".to_string(),
        Threshold {
            ok: fail_share < 0.01,
        },
    );

    let mut metrics: BTreeMap<String, Metric> = BTreeMap::new();
    metrics.insert("checks".into(), rate(ok_count, f.failed));
    metrics.insert(
        "data_received".into(),
        counter("data", f.received_bytes, secs),
    );
    metrics.insert("data_sent".into(), counter("data", f.sent_bytes, secs));
    metrics.insert("http_req_blocked".into(), trend("time", blocked));
    metrics.insert("http_req_connecting".into(), trend("time", connecting));
    metrics.insert("http_req_duration".into(), duration);
    metrics.insert(
        "http_req_duration{expected_response:true}".into(),
        trend("time", ok),
    );
    metrics.insert("http_req_failed".into(), failed);
    metrics.insert("http_req_receiving".into(), trend("time", recv));
    metrics.insert("http_req_sending".into(), trend("time", send));
    metrics.insert("http_req_tls_handshaking".into(), trend("time", [0.0; 7]));
    metrics.insert("http_req_waiting".into(), trend("time", wait));
    metrics.insert("http_reqs".into(), counter("default", f.count, secs));
    metrics.insert("iteration_duration".into(), trend("time", iteration));
    metrics.insert("iterations".into(), counter("default", f.count, secs));
    metrics.insert("vus".into(), gauge(1 + f.vus_peak / 4, 1, f.vus_peak));
    metrics.insert("vus_max".into(), gauge(f.vus_max, f.vus_max, f.vus_max));

    let summary = Summary {
        root_group: Group {
            name: "",
            path: "",
            id: "d41d8cd98f00b204e9800998ecf8427e", // md5("")
            groups: Vec::new(),
            checks: vec![Check {
                name: "status is 2xx",
                path: "::status is 2xx",
                id: "625da780c1868b693c9052f10511e6a0", // md5("::status is 2xx"), as k6 computes it
                passes: ok_count,
                fails: f.failed,
            }],
        },
        options: Options {
            summary_trend_stats: TREND_STATS,
            summary_time_unit: "",
            no_color: false,
        },
        state: State {
            is_std_out_tty: false,
            is_std_err_tty: false,
            test_run_duration_ms: f.duration_ms,
        },
        metrics,
    };
    let mut bytes = serde_json::to_vec(&summary).expect("a summary always serialises");
    bytes.push(b'\n');
    bytes
}

/// Makes (avg, min, med, max, p90, p95, p99) consistent:
/// min ≤ med ≤ p90 ≤ p95 ≤ p99 ≤ max and min ≤ avg ≤ max.
fn monotone(s: [f64; 7]) -> [f64; 7] {
    let [avg, min, med, max, p90, p95, p99] = s;
    let med = med.max(min);
    let p90 = p90.max(med);
    let p95 = p95.max(p90);
    let p99 = p99.max(p95);
    let max = max.max(p99);
    [avg.clamp(min, max), min, med, max, p90, p95, p99]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotone_orders_the_quantiles() {
        let s = monotone([5.0, 1.0, 0.5, 3.0, 2.0, 1.5, 4.0]);
        let [avg, min, med, max, p90, p95, p99] = s;
        assert!(min <= med && med <= p90 && p90 <= p95 && p95 <= p99 && p99 <= max);
        assert!(min <= avg && avg <= max);
    }

    #[test]
    fn integers_are_written_like_javascript() {
        assert_eq!(num(0.0).to_string(), "0");
        assert_eq!(num(878.0).to_string(), "878");
        assert_eq!(num(1.25).to_string(), "1.25");
    }
}
