//! Generates large, realistic raw load-test outputs for benchmarks:
//! k6 `--out json` NDJSON (every metric k6 writes per request, like a real
//! run) or a JMeter 5.x JTL CSV. Deterministic (fixed seed).
//!
//! ```sh
//! cargo run --release --example gen_raw -- ndjson 300 /tmp/big.ndjson   # ≥ 300 MB
//! cargo run --release --example gen_raw -- ndjson-shuffled 300 /tmp/shuffled.ndjson
//! cargo run --release --example gen_raw -- jtl 300 /tmp/big.jtl
//! cargo run --release --example gen_raw -- hey-rows 50000000 /tmp/big.csv      # rows, not MB
//! cargo run --release --example gen_raw -- folded-frames 2000000 /tmp/flame.txt  # distinct frames
//! cargo run --release --example gen_raw -- k6-urls 150000 /tmp/urls.ndjson       # distinct URL names
//! ```
//!
//! The last three are the memory benchmark's inputs (scripts/bench-memory.sh):
//! a hey CSV of N requests, a folded profile of N distinct frames (two per
//! stack, Java-like names), and a k6 NDJSON whose requests carry N
//! different URLs as their `name` tag (k6's default for unnamed requests).
//!
//! `ndjson-shuffled` writes the very same records as `ndjson`, every Point
//! line (all 13 metrics) with its keys in another order: rotated or reversed as a JSON tool re-serialising the
//! file may leave them, sorted as `jq -S -c` writes them, or sorted with a
//! space after every colon and comma as Python's `json.dumps(sort_keys=True)`
//! writes them. The records are the same as in `ndjson` (the file ends at
//! the size asked for, so it holds a few fewer of them).

use std::io::{BufWriter, Write};

/// xorshift64*: deterministic and dependency-free.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// A latency in ms: log-normal-ish body plus a rare slow tail.
    fn latency(&mut self) -> f64 {
        let body = 5.0 * (1.0 + self.unit()) * (1.0 + self.unit());
        if self.unit() < 0.01 { body * 8.0 } else { body }
    }
}

const ENDPOINTS: [&str; 4] = [
    "GET /api/orders",
    "GET /api/orders/{id}",
    "POST /api/orders",
    "GET /api/inventory/{sku}",
];

fn rfc3339(ns: u64) -> String {
    // 2026-05-04T03:00:00 UTC + ns, written as k6 does (local offset +01:00).
    let base = 1_777_863_600u64; // 2026-05-04T03:00:00Z
    let secs = base + ns / 1_000_000_000 + 3600;
    let (day_secs, days) = (secs % 86_400, secs / 86_400);
    let (y, m, d) = civil(days as i64);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:09}+01:00",
        day_secs / 3600,
        day_secs / 60 % 60,
        day_secs % 60,
        ns % 1_000_000_000
    )
}

fn civil(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

fn ndjson(
    out: &mut impl Write,
    target: u64,
    rng: &mut Rng,
    shuffled: bool,
) -> std::io::Result<u64> {
    let mut written = 0u64;
    // Its own draws, so that the records are the same either way.
    let mut layout = Rng(7);
    let mut t_ns = 0u64;
    let mut first = true;
    let mut line = String::with_capacity(512);
    while written < target {
        t_ns += 2_000_000 + rng.next() % 3_000_000;
        let name = ENDPOINTS[(rng.next() % 4) as usize];
        let status = if rng.unit() < 0.005 { 500 } else { 200 };
        let ok = status == 200;
        let tags = format!(
            "{{\"expected_response\":\"{ok}\",\"group\":\"\",\"method\":\"GET\",\"name\":\"{name}\",\"proto\":\"HTTP/1.1\",\"scenario\":\"default\",\"status\":\"{status}\",\"url\":\"http://127.0.0.1:8080/api/orders/{}\"}}",
            rng.next() % 10_000
        );
        let time = rfc3339(t_ns);
        let duration = rng.latency();
        let metrics: [(&str, &str, f64); 11] = [
            ("http_reqs", "counter", 1.0),
            ("http_req_duration", "trend", duration),
            ("http_req_blocked", "trend", rng.unit() * 0.01),
            ("http_req_connecting", "trend", 0.0),
            ("http_req_tls_handshaking", "trend", 0.0),
            ("http_req_sending", "trend", rng.unit() * 0.05),
            ("http_req_waiting", "trend", duration * 0.95),
            ("http_req_receiving", "trend", duration * 0.05),
            ("http_req_failed", "rate", if ok { 0.0 } else { 1.0 }),
            ("data_sent", "counter", 98.0),
            ("data_received", "counter", 531.0),
        ];
        for (metric, kind, value) in metrics {
            line.clear();
            if first {
                line.push_str(&format!(
                    "{{\"type\":\"Metric\",\"data\":{{\"name\":\"{metric}\",\"type\":\"{kind}\",\"contains\":\"time\",\"thresholds\":[],\"submetrics\":null}},\"metric\":\"{metric}\"}}\n"
                ));
            }
            let point = if shuffled {
                point_in_another_order(metric, &time, value, &tags, layout.next())
            } else {
                format!(
                    "{{\"metric\":\"{metric}\",\"type\":\"Point\",\"data\":{{\"time\":\"{time}\",\"value\":{value},\"tags\":{tags}}}}}\n"
                )
            };
            line.push_str(&point);
            out.write_all(line.as_bytes())?;
            written += line.len() as u64;
        }
        first = false;
        let iter_tags = "{\"group\":\"\",\"scenario\":\"default\"}";
        line.clear();
        for (metric, value) in [("iteration_duration", duration + 0.3), ("iterations", 1.0)] {
            line.push_str(&if shuffled {
                point_in_another_order(metric, &time, value, iter_tags, layout.next())
            } else {
                format!(
                    "{{\"metric\":\"{metric}\",\"type\":\"Point\",\"data\":{{\"time\":\"{time}\",\"value\":{value},\"tags\":{iter_tags}}}}}\n"
                )
            });
        }
        out.write_all(line.as_bytes())?;
        written += line.len() as u64;
    }
    Ok(written)
}

/// One Point line in one of five key orders other than k6's, `pick`
/// choosing which.
fn point_in_another_order(metric: &str, time: &str, value: f64, tags: &str, pick: u64) -> String {
    match pick % 5 {
        0 => format!(
            "{{\"type\":\"Point\",\"data\":{{\"tags\":{tags},\"value\":{value},\"time\":\"{time}\"}},\"metric\":\"{metric}\"}}\n"
        ),
        1 => format!(
            "{{\"data\":{{\"value\":{value},\"time\":\"{time}\",\"tags\":{tags}}},\"metric\":\"{metric}\",\"type\":\"Point\"}}\n"
        ),
        2 => format!(
            "{{\"metric\":\"{metric}\",\"data\":{{\"time\":\"{time}\",\"tags\":{tags},\"value\":{value}}},\"type\":\"Point\"}}\n"
        ),
        // jq -S -c: keys sorted at every level (the tags already are).
        3 => format!(
            "{{\"data\":{{\"tags\":{tags},\"time\":\"{time}\",\"value\":{value}}},\"metric\":\"{metric}\",\"type\":\"Point\"}}\n"
        ),
        // Python json.dumps(sort_keys=True).
        _ => {
            let tags = tags.replace("\":", "\": ").replace("\",\"", "\", \"");
            format!(
                "{{\"data\": {{\"tags\": {tags}, \"time\": \"{time}\", \"value\": {value}}}, \"metric\": \"{metric}\", \"type\": \"Point\"}}\n"
            )
        }
    }
}

fn jtl(out: &mut impl Write, target: u64, rng: &mut Rng) -> std::io::Result<u64> {
    let header = "timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success,failureMessage,bytes,sentBytes,grpThreads,allThreads,URL,Latency,IdleTime,Connect\n";
    out.write_all(header.as_bytes())?;
    let mut written = header.len() as u64;
    let mut ts = 1_777_863_600_000u64;
    let mut line = String::with_capacity(256);
    while written < target {
        ts += rng.next() % 4;
        let label = ENDPOINTS[(rng.next() % 4) as usize];
        let elapsed = rng.latency().round() as u64;
        let ok = rng.unit() >= 0.005;
        line.clear();
        line.push_str(&format!(
            "{ts},{elapsed},{label},{},{},Thread Group 1-{},text,{ok},{},531,98,20,20,http://127.0.0.1:8080/api/orders,{},0,{}\n",
            if ok { 200 } else { 500 },
            if ok { "OK" } else { "Internal Server Error" },
            rng.next() % 20 + 1,
            if ok { "" } else { "\"Test failed: code expected to be 200, was 500\"" },
            elapsed * 9 / 10,
            rng.next() % 2
        ));
        out.write_all(line.as_bytes())?;
        written += line.len() as u64;
    }
    Ok(written)
}

/// hey `-o csv`: `rows` requests, one row each, 50 a second.
fn hey_rows(out: &mut impl Write, rows: u64, rng: &mut Rng) -> std::io::Result<u64> {
    let header = "response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read,status-code,offset\n";
    out.write_all(header.as_bytes())?;
    let mut written = header.len() as u64;
    let mut line = String::with_capacity(96);
    for i in 0..rows {
        let s = rng.latency() / 1000.0;
        line.clear();
        line.push_str(&format!(
            "{s:.4},0.0000,0.0000,0.0000,{s:.4},0.0001,{},{:.4}\n",
            if rng.unit() < 0.005 { 500 } else { 200 },
            i as f64 / 50.0
        ));
        out.write_all(line.as_bytes())?;
        written += line.len() as u64;
    }
    Ok(written)
}

/// Folded stacks holding `frames` distinct frames, two per stack under a
/// shared root (a generated-code service: every class its own frame).
fn folded_frames(out: &mut impl Write, frames: u64, rng: &mut Rng) -> std::io::Result<u64> {
    let mut written = 0u64;
    for i in 0..frames / 2 {
        let line = format!(
            "java/lang/Thread.run;org/apache/tomcat/util/threads/TaskThread$WrappingRunnable.run;com/acme/generated/Handler{i}.handle;com/acme/generated/Repository{i}.findAll {}\n",
            1 + rng.next() % 5
        );
        out.write_all(line.as_bytes())?;
        written += line.len() as u64;
    }
    Ok(written)
}

/// k6 NDJSON of `urls` requests to as many URLs, named by k6's default
/// `name` tag (the URL).
fn k6_urls(out: &mut impl Write, urls: u64, rng: &mut Rng) -> std::io::Result<u64> {
    let metric = "{\"type\":\"Metric\",\"data\":{\"name\":\"http_req_duration\",\"type\":\"trend\",\"contains\":\"time\",\"thresholds\":[],\"submetrics\":null},\"metric\":\"http_req_duration\"}\n";
    out.write_all(metric.as_bytes())?;
    let mut written = metric.len() as u64;
    for i in 0..urls {
        let line = format!(
            "{{\"metric\":\"http_req_duration\",\"type\":\"Point\",\"data\":{{\"time\":\"{}\",\"value\":{:.6},\"tags\":{{\"expected_response\":\"true\",\"group\":\"\",\"method\":\"GET\",\"name\":\"http://127.0.0.1:8080/api/orders/{i}\",\"proto\":\"HTTP/1.1\",\"scenario\":\"default\",\"status\":\"200\",\"url\":\"http://127.0.0.1:8080/api/orders/{i}\"}}}}}}\n",
            rfc3339(i * 2_000_000),
            rng.latency()
        );
        out.write_all(line.as_bytes())?;
        written += line.len() as u64;
    }
    Ok(written)
}

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 4 {
        eprintln!(
            "usage: gen_raw ndjson|ndjson-shuffled|jtl MEGABYTES OUT, or hey-rows|folded-frames|k6-urls COUNT OUT"
        );
        std::process::exit(2);
    }
    let target: u64 = args[2].parse::<u64>().expect("MEGABYTES is a number") * 1_000_000;
    let mut out = BufWriter::with_capacity(1 << 20, std::fs::File::create(&args[3])?);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let written = match args[1].as_str() {
        "ndjson" => ndjson(&mut out, target, &mut rng, false)?,
        "ndjson-shuffled" => ndjson(&mut out, target, &mut rng, true)?,
        "jtl" => jtl(&mut out, target, &mut rng)?,
        "hey-rows" => hey_rows(&mut out, target / 1_000_000, &mut rng)?,
        "folded-frames" => folded_frames(&mut out, target / 1_000_000, &mut rng)?,
        "k6-urls" => k6_urls(&mut out, target / 1_000_000, &mut rng)?,
        other => {
            eprintln!("unknown format {other}: ndjson, ndjson-shuffled or jtl");
            std::process::exit(2);
        }
    };
    out.flush()?;
    eprintln!("wrote {written} bytes to {}", args[3]);
    Ok(())
}
