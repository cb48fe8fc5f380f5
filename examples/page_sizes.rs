//! Page sizes for a long history, as reported in BENCHMARKS.md
//! ("## Page sizes"): generates the demo archive with WEEKS weeks
//! (default 156 = three years, 12 endpoints, 3 runs a week, 5 rounds),
//! builds the site and prints the size of the overview, the largest
//! endpoint, run and capacity pages, and the list pages.
//!
//! ```text
//! cargo run --release --example page_sizes            # 156 weeks
//! cargo run --release --example page_sizes -- 26      # the bundled length
//! ```

use std::path::Path;

use perfdash::demo::{DemoOptions, generate};
use perfdash::pipeline::{BuildOptions, build};

fn largest(dir: &Path, skip: &str) -> (u64, String) {
    std::fs::read_dir(dir)
        .expect("a built site folder")
        .map(|e| e.expect("a readable entry"))
        .filter(|e| e.file_name() != skip)
        .map(|e| {
            let len = e.metadata().expect("metadata").len();
            (len, e.file_name().to_string_lossy().into_owned())
        })
        .max()
        .unwrap_or_default()
}

fn main() -> anyhow::Result<()> {
    let weeks: u32 = match std::env::args().nth(1) {
        Some(w) => w.parse()?,
        None => 156,
    };
    let tmp = tempfile::tempdir()?;
    let archive = tmp.path().join("archive");
    let site = tmp.path().join("site");
    generate(
        &archive,
        &DemoOptions {
            weeks,
            ..DemoOptions::default()
        },
    )?;
    let report = build(&BuildOptions {
        archive,
        out: site.clone(),
        ..Default::default()
    })?;
    let size = |p: &str| {
        std::fs::metadata(site.join(p))
            .map(|m| m.len())
            .unwrap_or(0)
    };
    let (endpoint, endpoint_name) = largest(&site.join("endpoints"), "");
    let (run, run_name) = largest(&site.join("runs"), "index.html");
    let (capacity, capacity_name) = largest(&site.join("capacity"), "");
    println!(
        "{weeks} weeks: {} runs, {} endpoints, {} pages, {} bytes in all",
        report.runs, report.endpoints, report.pages, report.bytes
    );
    println!(
        "index.html                 {:>9} bytes (budget 300 000)",
        size("index.html")
    );
    println!(
        "largest endpoint page      {endpoint:>9} bytes (budget 500 000) endpoints/{endpoint_name}"
    );
    println!("largest run page           {run:>9} bytes runs/{run_name}");
    println!("largest capacity page      {capacity:>9} bytes capacity/{capacity_name}");
    for page in ["runs/index.html", "weekly.html", "history.html"] {
        println!("{page:<26} {:>9} bytes", size(page));
    }
    println!(
        "data/analysis.json         {:>9} bytes",
        size("data/analysis.json")
    );
    Ok(())
}
