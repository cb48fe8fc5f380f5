//! Throughput of the raw parsers (see BENCHMARKS.md for method and numbers).
//!
//! Inputs are built once per process in a temp folder: the project's own
//! real k6 run (tests/fixtures/k6-real) repeated to ~64 MB of NDJSON, the
//! same with every record's keys shuffled (as a JSON tool re-serialising
//! the file may leave them), the same gzipped, and ~64 MB of JMeter 5.x
//! CSV rows.
//!
//! `cargo bench --bench raw` (divan prints MB/s per benchmark).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use divan::Bencher;
use divan::counter::BytesCount;
use perfdash::ingest::raw::{ReadOptions, read_file};

const TARGET: usize = 64 << 20;

struct Inputs {
    _dir: tempfile::TempDir,
    ndjson: PathBuf,
    ndjson_shuffled: PathBuf,
    ndjson_gz: PathBuf,
    jtl: PathBuf,
}

static INPUTS: LazyLock<Inputs> = LazyLock::new(|| {
    let dir = tempfile::tempdir().unwrap();
    let real =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/k6-real/round-1.ndjson.gz");
    let mut one_run = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(real).unwrap())
        .read_to_end(&mut one_run)
        .unwrap();
    let mut ndjson = Vec::with_capacity(TARGET + one_run.len());
    while ndjson.len() < TARGET {
        ndjson.extend_from_slice(&one_run);
    }
    let ndjson_path = dir.path().join("big.ndjson");
    std::fs::write(&ndjson_path, &ndjson).unwrap();
    let mut shuffled = Vec::with_capacity(TARGET + 2 * one_run.len());
    let mut salt = 0usize;
    while shuffled.len() < TARGET {
        for line in one_run.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            let value: serde_json::Value = serde_json::from_slice(line).unwrap();
            shuffled.extend_from_slice(reordered(&value, salt).as_bytes());
            shuffled.push(b'\n');
            salt += 1;
        }
    }
    let shuffled_path = dir.path().join("shuffled.ndjson");
    std::fs::write(&shuffled_path, &shuffled).unwrap();
    let gz_path = dir.path().join("big.ndjson.gz");
    let mut enc = flate2::write::GzEncoder::new(
        std::fs::File::create(&gz_path).unwrap(),
        flate2::Compression::default(),
    );
    enc.write_all(&ndjson).unwrap();
    enc.finish().unwrap();

    let mut jtl = String::from(
        "timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success,failureMessage,bytes,sentBytes,grpThreads,allThreads,URL,Latency,IdleTime,Connect\n",
    );
    let mut i = 0u64;
    while jtl.len() < TARGET {
        let ok = !i.is_multiple_of(200);
        jtl.push_str(&format!(
            "{},{},GET /api/orders/{{id}},{},{},Thread Group 1-{},text,{ok},{},531,98,20,20,http://127.0.0.1:8080/api/orders,{},0,1\n",
            1_777_863_600_000 + i * 3,
            5 + (i * 7919) % 97,
            if ok { 200 } else { 500 },
            if ok { "OK" } else { "Internal Server Error" },
            i % 20 + 1,
            if ok { "" } else { "\"Test failed: code expected to be 200, was 500\"" },
            4 + (i * 7919) % 90,
        ));
        i += 1;
    }
    let jtl_path = dir.path().join("big.jtl");
    std::fs::write(&jtl_path, jtl).unwrap();
    Inputs {
        _dir: dir,
        ndjson: ndjson_path,
        ndjson_shuffled: shuffled_path,
        ndjson_gz: gz_path,
        jtl: jtl_path,
    }
});

/// `value` as JSON with the keys of every object rotated by `salt` (and
/// reversed every other time): a deterministic shuffle, never k6's order
/// for a Point record.
fn reordered(value: &serde_json::Value, salt: usize) -> String {
    match value {
        serde_json::Value::Object(map) => {
            let mut parts: Vec<String> = map
                .iter()
                .map(|(k, v)| {
                    format!(
                        "{}:{}",
                        serde_json::to_string(k).unwrap(),
                        reordered(v, salt / 3)
                    )
                })
                .collect();
            let n = parts.len().max(1);
            parts.rotate_left(salt % n);
            if salt % 2 == 1 {
                parts.reverse();
            }
            if parts.first().is_some_and(|p| p.starts_with("\"metric\"")) && parts.len() > 1 {
                parts.swap(0, 1);
            }
            format!("{{{}}}", parts.join(","))
        }
        serde_json::Value::Array(items) => format!(
            "[{}]",
            items
                .iter()
                .map(|v| reordered(v, salt))
                .collect::<Vec<_>>()
                .join(",")
        ),
        other => other.to_string(),
    }
}

fn plain_len(path: &Path) -> u64 {
    if path.extension().is_some_and(|e| e == "gz") {
        std::fs::metadata(&INPUTS.ndjson).unwrap().len()
    } else {
        std::fs::metadata(path).unwrap().len()
    }
}

fn bench_file(bencher: Bencher, path: &Path, split: Option<&str>) {
    let opts = ReadOptions {
        metric: "http_req_duration".into(),
        split_tag: split.map(str::to_string),
        limits: Default::default(),
    };
    bencher
        .counter(BytesCount::new(plain_len(path)))
        .bench(|| read_file(path, path, &opts).unwrap());
}

fn main() {
    divan::main();
}

/// k6 NDJSON, one group (the whole file is one endpoint's round).
#[divan::bench(sample_count = 10)]
fn k6_ndjson(bencher: Bencher) {
    bench_file(bencher, &INPUTS.ndjson, None);
}

/// k6 NDJSON with every record's keys shuffled (not k6's order): read by
/// the typed JSON reader on the lines of the metric only.
#[divan::bench(sample_count = 10)]
fn k6_ndjson_shuffled_keys(bencher: Bencher) {
    bench_file(bencher, &INPUTS.ndjson_shuffled, None);
}

/// The same, split by the `name` tag.
#[divan::bench(sample_count = 10)]
fn k6_ndjson_shuffled_keys_split_by_name(bencher: Bencher) {
    bench_file(bencher, &INPUTS.ndjson_shuffled, Some("name"));
}

/// k6 NDJSON split by the `name` tag (a run-level file).
#[divan::bench(sample_count = 10)]
fn k6_ndjson_split_by_name(bencher: Bencher) {
    bench_file(bencher, &INPUTS.ndjson, Some("name"));
}

/// k6 NDJSON, gzipped (counted in uncompressed bytes).
#[divan::bench(sample_count = 5)]
fn k6_ndjson_gz(bencher: Bencher) {
    bench_file(bencher, &INPUTS.ndjson_gz, None);
}

/// JMeter 5.x JTL CSV split by label.
#[divan::bench(sample_count = 10)]
fn jmeter_csv(bencher: Bencher) {
    bench_file(bencher, &INPUTS.jtl, Some("label"));
}

/// Percentiles of 1 M samples by selection (what a round costs after parsing).
#[divan::bench(sample_count = 10)]
fn percentiles_1m(bencher: Bencher) {
    let values: Vec<f64> = (0..1_000_000u64)
        .map(|i| ((i * 2_654_435_761) % 1_000_003) as f64 / 1000.0)
        .collect();
    bencher.bench(|| {
        let mut v = values.clone();
        perfdash::stats::percentiles(
            &mut v,
            &[50.0, 90.0, 95.0, 99.0],
            perfdash::stats::PercentileMethod::Linear,
        )
    });
}

/// One k6 `handleSummary()` file of the bundled archive (2.8 KB), as a
/// round is read from it: the typed reader.
#[divan::bench(sample_count = 100)]
fn k6_summary_typed(bencher: Bencher) {
    let bytes = summary_bytes();
    let path = Path::new("round-1.json");
    bencher
        .counter(BytesCount::new(bytes.len()))
        .bench(|| perfdash::ingest::k6_summary::parse(&bytes, path, "http_req_duration").unwrap());
}

/// The yardstick it replaced: the same file parsed into a
/// `serde_json::Value` (the old reader did this, then walked the tree).
#[divan::bench(sample_count = 100)]
fn k6_summary_as_json_value(bencher: Bencher) {
    let bytes = summary_bytes();
    bencher
        .counter(BytesCount::new(bytes.len()))
        .bench(|| serde_json::from_slice::<serde_json::Value>(&bytes).unwrap());
}

fn summary_bytes() -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("archive/runs/2026-06-01T0306Z/order-list/round-1.json"),
    )
    .unwrap()
}

/// ~64 MB of Gatling binary `simulation.log` written as Gatling writes it
/// (11 request names, 1 KO in 200, a user record every 10 requests).
static GATLING_BINARY: LazyLock<(tempfile::TempDir, PathBuf)> = LazyLock::new(|| {
    use perfdash::ingest::raw::gatling_binary::LogWriter;
    const NAMES: [&str; 11] = [
        "Home",
        "Home Redirect 1",
        "Search",
        "Select",
        "Page 0",
        "Page 1",
        "Page 2",
        "Page 3",
        "Form",
        "Post",
        "Post Redirect 1",
    ];
    let start = 1_777_863_600_000;
    let mut log = LogWriter::new("3.14.3", start, &["Users", "Admins"]);
    let mut i = 0i64;
    while log.bytes().len() < TARGET {
        let t = start + i * 3;
        if i % 10 == 0 {
            log.user((i % 2) as i32, true, t);
        }
        let ok = i % 200 != 0;
        let message = if ok {
            ""
        } else {
            "status.find.is(201), but actually found 200"
        };
        log.request(
            &[],
            NAMES[i as usize % NAMES.len()],
            t,
            t + 5 + (i * 7919) % 97,
            ok,
            message,
        );
        i += 1;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("simulation.log");
    std::fs::write(&path, log.bytes()).unwrap();
    (dir, path)
});

/// Gatling binary simulation.log split by request name.
#[divan::bench(sample_count = 10)]
fn gatling_binary(bencher: Bencher) {
    bench_file(bencher, &GATLING_BINARY.1, Some("name"));
}
