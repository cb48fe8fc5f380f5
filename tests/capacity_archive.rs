//! Step-load files in an archive: read beside latency rounds or alone, a
//! JMeter CSV cut by `allThreads`, resources joined per step, bad inputs
//! reported with file and line, and the capacity page escaping names.

use std::io::Write as _;
use std::path::Path;

use perfdash::analyse::analyse;
use perfdash::analyse::verdict::CapacityVerdict;
use perfdash::ingest::load_archive;
use perfdash::model::LoadUnit;
use perfdash::render::render_site;

mod common;

/// A JMeter CSV (header, `allThreads`) with steps of `threads` lasting
/// 12 s each from `t0_ms`; per step, `rps` requests per second of latency
/// `ms` (every tenth 3 × `ms`) and every `fail_every`-th failed.
fn jmeter_steps(t0_ms: i64, steps: &[(u32, u32, u64, u32)]) -> Vec<u8> {
    let mut csv = String::from("timeStamp,elapsed,label,responseCode,success,allThreads\n");
    for (k, &(threads, rps, ms, fail_every)) in steps.iter().enumerate() {
        let start = t0_ms + k as i64 * 12_000;
        let n = rps as i64 * 12;
        for i in 0..n {
            let t = start + i * 1000 / rps as i64;
            let elapsed = if i % 10 == 9 { ms * 3 } else { ms };
            let ok = fail_every == 0 || i % fail_every as i64 != 0;
            csv.push_str(&format!(
                "{t},{elapsed},POST /reserve,{},{ok},{threads}\n",
                if ok { 200 } else { 503 }
            ));
        }
    }
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(csv.as_bytes()).unwrap();
    gz.finish().unwrap()
}

fn write(root: &Path, rel: &str, bytes: &[u8]) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

const T0_MS: i64 = 1_780_000_000_000;

#[test]
fn step_load_files_are_read_alone_or_beside_rounds_and_judged() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "perfdash.toml",
        b"[capacity]\nsettle_seconds = 2\n\n[endpoints.reserve]\nname = \"<b>reserve</b>\"\ncapacity_objective_p99_ms = 100\n",
    );
    // Two runs with latency rounds and a step-load file: knee at 30
    // threads (p99 = 3 × 30 ms = 90 ms; 40 threads: 150 ms).
    let healthy = [
        (10, 10, 20, 0),
        (20, 20, 25, 0),
        (30, 30, 30, 0),
        (40, 35, 50, 0),
        (50, 36, 80, 0),
    ];
    for (i, run) in ["2026-06-01T0300Z", "2026-06-03T0300Z"].iter().enumerate() {
        write(
            root,
            &format!("runs/{run}/reserve/round-1.json"),
            common::k6_summary(40.0).as_bytes(),
        );
        write(
            root,
            &format!("runs/{run}/reserve/steps.csv.gz"),
            &jmeter_steps(T0_MS + i as i64 * 172_800_000, &healthy),
        );
    }
    // A capacity-only run: errors of 2% from 20 threads on (the error
    // ceiling breaks it), so the knee is step 1 and capacity regresses;
    // its resources.csv gives CPU per step; a bad row is reported.
    let broken = [
        (10, 10, 20, 0),
        (20, 20, 25, 50),
        (30, 30, 30, 50),
        (40, 35, 50, 50),
    ];
    let t2 = T0_MS + 4 * 86_400_000;
    write(
        root,
        "runs/2026-06-05T0300Z/reserve/steps.csv.gz",
        &jmeter_steps(t2, &broken),
    );
    let mut resources = String::from("time,cpu,memory\n");
    for s in 0..48 {
        let t = t2 / 1000 + s;
        resources.push_str(&format!("{t},{},{}\n", 10 + (s / 12) * 20, 1000 + s));
    }
    write(
        root,
        "runs/2026-06-05T0300Z/reserve/resources.csv",
        resources.as_bytes(),
    );
    // Not a step-load round: one level only.
    write(
        root,
        "runs/2026-06-05T0300Z/flat/steps.csv.gz",
        &jmeter_steps(t2, &[(10, 10, 20, 0)]),
    );
    // A bad resource file beside a good step-load file.
    write(
        root,
        "runs/2026-06-03T0300Z/reserve/resources.csv",
        b"time,cpu\nnoon,5\n",
    );

    let loaded = load_archive(root).unwrap();
    let messages: Vec<String> = loaded.diagnostics.iter().map(|d| d.to_string()).collect();
    assert!(
        messages
            .iter()
            .any(|m| m.starts_with("runs/2026-06-05T0300Z/flat/steps.csv.gz")
                && m.contains("not a step-load round")),
        "{messages:#?}"
    );
    assert!(
        messages.iter().any(
            |m| m.starts_with("runs/2026-06-03T0300Z/reserve/resources.csv:2")
                && m.contains("resource readings ignored")
        ),
        "{messages:#?}"
    );
    let archive = &loaded.archive;
    assert_eq!(archive.runs.len(), 3, "the capacity-only run is kept");
    assert!(archive.runs[2].endpoints.is_empty());
    let series = &archive.runs[2].capacity["reserve"];
    assert_eq!(series.unit, LoadUnit::Threads);
    let loads: Vec<f64> = series.steps.iter().map(|s| s.load).collect();
    assert_eq!(loads, [10.0, 20.0, 30.0, 40.0]);
    // Window: 12 s step − 2 s settling; 10 req/s → 100 requests.
    assert_eq!(series.steps[0].count, 100);
    assert_eq!(series.steps[0].window_s, 10.0);
    // CPU readings within each step's window: 10, 30, 50, 70 %.
    let cpu: Vec<f64> = series.steps.iter().map(|s| s.cpu_pct.unwrap()).collect();
    assert_eq!(cpu, [10.0, 30.0, 50.0, 70.0]);
    assert!(archive.runs[1].capacity["reserve"].resources.is_none());

    let analysis = analyse(archive, loaded.diagnostics);
    let e = &analysis.capacity[0];
    let knees: Vec<Option<u32>> = e.runs.iter().map(|p| p.knee.knee_step).collect();
    assert_eq!(knees, [Some(3), Some(3), Some(1)]);
    assert_eq!(e.runs[2].knee.break_step, Some(2));
    assert!(
        e.runs[2].knee.reasoning.contains("errors 2% ≥ 1%"),
        "{}",
        e.runs[2].knee.reasoning
    );
    // The knee's CPU reading is part of the reasoning.
    assert!(
        e.runs[2].knee.reasoning.contains("errors 0%, CPU 10%)"),
        "{}",
        e.runs[2].knee.reasoning
    );
    let verdicts: Vec<CapacityVerdict> = e.runs.iter().map(|p| p.verdict).collect();
    assert_eq!(
        verdicts,
        [
            CapacityVerdict::NoBaseline,
            CapacityVerdict::NoBaseline,
            CapacityVerdict::Regression
        ]
    );
    // The latency history is untouched: one endpoint, two runs.
    assert_eq!(analysis.endpoints.len(), 1);
    assert_eq!(analysis.endpoints[0].points.len(), 2);

    let site = render_site(&analysis).unwrap();
    let page = String::from_utf8(site.get("capacity/reserve.html").unwrap().to_vec()).unwrap();
    assert!(!page.contains("<b>reserve</b>"), "names are escaped");
    assert!(page.contains("&lt;b&gt;reserve&lt;/b&gt;"));
    assert!(page.contains("capacity-history"));
    assert!(
        page.contains("capacity-cpu"),
        "the CPU chart is drawn when resources exist"
    );
    let overview = String::from_utf8(site.get("index.html").unwrap().to_vec()).unwrap();
    assert!(overview.contains("href=\"capacity/reserve.html\""));
    let endpoint = String::from_utf8(site.get("endpoints/reserve.html").unwrap().to_vec()).unwrap();
    assert!(endpoint.contains("href=\"../capacity/reserve.html\""));
    let json: serde_json::Value =
        serde_json::from_slice(site.get("data/analysis.json").unwrap()).unwrap();
    assert_eq!(
        json["capacity"]["endpoints"][0]["runs"][2]["verdict"],
        "regression"
    );
    assert_eq!(
        json["capacity"]["endpoints"][0]["page"],
        "capacity/reserve.html"
    );

    // With the cache: step-load results are cached too (errors are not),
    // and a cached load gives the same steps.
    let cache_dir = tempfile::tempdir().unwrap();
    let load_cached = || {
        let opts = perfdash::ingest::LoadOptions {
            cache: Some(perfdash::cache::Store::new(cache_dir.path())),
            ..Default::default()
        };
        let loaded = perfdash::ingest::load_archive_with(root, &opts).unwrap();
        opts.cache.as_ref().unwrap().save(None);
        loaded
    };
    let first = load_cached();
    // The runs' records.
    let cache_files: Vec<Vec<u8>> = std::fs::read_dir(cache_dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("run-"))
        .map(|p| std::fs::read(p).unwrap())
        .collect();
    assert!(
        cache_files.len() <= first.archive.runs.len(),
        "one file per run at most"
    );
    // A file entry starts with its kind, which postcard writes as its
    // length (one byte here) and its bytes.
    let entries_of = |kind: &str| {
        let mut tag = vec![kind.len() as u8];
        tag.extend_from_slice(kind.as_bytes());
        cache_files
            .iter()
            .map(|f| f.windows(tag.len()).filter(|w| *w == tag).count())
            .sum::<usize>()
    };
    assert_eq!(
        (entries_of("round"), entries_of("steps")),
        (2, 3),
        "2 round files and 3 good step-load files"
    );
    let second = load_cached();
    assert_eq!(second.counts.cached, 2);
    for (a, b) in first.archive.runs.iter().zip(&second.archive.runs) {
        assert_eq!(a.capacity, b.capacity);
    }
    assert_eq!(second.archive.runs[2].capacity, archive.runs[2].capacity);
}

/// `perfdash check` fails a run whose knee dropped, in every format, and
/// passes it once a human labels the drop `accepted`.
#[test]
fn a_capacity_regression_fails_the_gate_until_it_is_triaged() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "perfdash.toml",
        b"[capacity]\nsettle_seconds = 2\n\n[endpoints.reserve]\ncapacity_objective_p99_ms = 100\n",
    );
    // Knee at 30 req/s in three runs, then 20 req/s (p99 150 ms from 30
    // threads on): a third lower, below the ×0.85 line.
    let healthy = [
        (10, 10, 20, 0),
        (20, 20, 25, 0),
        (30, 30, 30, 0),
        (40, 35, 50, 0),
    ];
    let slower = [
        (10, 10, 20, 0),
        (20, 20, 25, 0),
        (30, 30, 50, 0),
        (40, 35, 60, 0),
    ];
    let runs = [
        "2026-06-01T0300Z",
        "2026-06-03T0300Z",
        "2026-06-05T0300Z",
        "2026-06-08T0300Z",
    ];
    for (i, run) in runs.iter().enumerate() {
        let steps: &[(u32, u32, u64, u32)] = if i < 3 { &healthy } else { &slower };
        write(
            root,
            &format!("runs/{run}/reserve/steps.csv.gz"),
            &jmeter_steps(T0_MS + i as i64 * 172_800_000, steps),
        );
    }
    let check = |format: &str| {
        let out = assert_cmd::Command::cargo_bin("perfdash")
            .unwrap()
            .args(["check", "--format", format, "--archive"])
            .arg(root)
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8(out.stdout).unwrap())
    };
    let (code, text) = check("text");
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.starts_with("FAIL: 1 capacity regression in run 2026-06-08T0300Z"),
        "{text}"
    );
    assert!(
        text.contains("knee 20.0 req/s vs baseline 30.0 req/s (×0.67, line ×0.85)"),
        "{text}"
    );
    let (_, json) = check("json");
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    let reserve = &json["capacity"][0];
    assert_eq!(reserve["endpoint"], "reserve");
    assert_eq!(reserve["status"], "regression");
    assert_eq!(reserve["knee_rps"], 20.0);
    assert_eq!(reserve["limit_rps"], 16.0);
    let (_, junit) = check("junit");
    assert!(
        junit.contains("failures=\"1\"") && junit.contains("type=\"capacity-regression\""),
        "{junit}"
    );
    let (_, markdown) = check("markdown");
    assert!(
        markdown.contains(
            "| reserve | 20.0 req/s | 30.0 req/s | ×0.67 | 16.0 req/s | ❌ **regression** |"
        ),
        "{markdown}"
    );
    // Earlier runs pass.
    let out = assert_cmd::Command::cargo_bin("perfdash")
        .unwrap()
        .args(["check", "--run", "2026-06-05T0300Z", "--archive"])
        .arg(root)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    // An intended change, triaged: the gate passes and says why.
    write(
        root,
        "triage/2026-06-08T0300Z--reserve.toml",
        b"run = \"2026-06-08T0300Z\"\nendpoint = \"reserve\"\nlabel = \"accepted\"\nnote = \"fraud check added\"\nauthor = \"test\"\ndate = 2026-06-09\n",
    );
    let (code, text) = check("text");
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("triaged-accepted"), "{text}");
}
