//! `perfdash compare` reports: a terminal table, a GitHub-flavoured
//! Markdown summary and the JSON document (docs/data-contract.md, compare
//! section). Strings only; the CLI prints them.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{json_text, markdown_cell, text_field};
use crate::analyse::compare::{Comparison, EndpointComparison, RunRef, Side, fmt_ratio};
use crate::analyse::verdict::{ComparisonVerdict, Figure};
use crate::render::format::ms;

fn fmt_opt(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map(f).unwrap_or_else(|| "–".to_string())
}

fn fmt_rps(v: f64) -> String {
    format!("{v:.1}")
}

fn fmt_percent(v: f64) -> String {
    format!("{:.2}%", v * 100.0)
}

fn fmt_interval(i: Option<[f64; 2]>) -> String {
    i.map(|[l, h]| format!("{}–{}", fmt_ratio(l), fmt_ratio(h)))
        .unwrap_or_else(|| "–".to_string())
}

/// The columns of the table and the Markdown summary.
const HEADERS: [&str; 14] = [
    "endpoint",
    "A p99 ms",
    "B p99 ms",
    "B/A",
    "rounds B/A",
    "A p90",
    "B p90",
    "A rps",
    "B rps",
    "A errors",
    "B errors",
    "A spread",
    "B spread",
    "verdict",
];

/// One endpoint's cells under [`HEADERS`]; the name and verdict come ready
/// for the target (escaped, emphasised), and `mark` decorates B's figures
/// that crossed their line.
fn row(
    e: &EndpointComparison,
    name: String,
    verdict: String,
    mark: fn(String) -> String,
) -> [String; 14] {
    let over = |f: Figure, text: String| {
        if e.regressed.contains(&f) {
            mark(text)
        } else {
            text
        }
    };
    let spread = |s: &Option<Side>| fmt_opt(s.as_ref().and_then(|s| s.spread), fmt_percent_1);
    // A side whose rounds all failed measured no latency.
    let median = |s: &Option<Side>| {
        fmt_opt(
            s.as_ref()
                .filter(|s| s.usable_rounds > 0)
                .map(|s| s.median_p99_ms),
            ms,
        )
    };
    [
        name,
        median(&e.a),
        over(Figure::P99, median(&e.b)),
        fmt_opt(e.ratio, fmt_ratio),
        fmt_interval(e.ratio_interval),
        fmt_opt(e.a.as_ref().and_then(|s| s.p90_ms), ms),
        fmt_opt(e.b.as_ref().and_then(|s| s.p90_ms), ms),
        fmt_opt(e.a.as_ref().and_then(|s| s.throughput_rps), fmt_rps),
        over(
            Figure::Throughput,
            fmt_opt(e.b.as_ref().and_then(|s| s.throughput_rps), fmt_rps),
        ),
        fmt_opt(e.a.as_ref().and_then(|s| s.error_rate), fmt_percent),
        over(
            Figure::ErrorRate,
            fmt_opt(e.b.as_ref().and_then(|s| s.error_rate), fmt_percent),
        ),
        spread(&e.a),
        spread(&e.b),
        verdict,
    ]
}

fn fmt_percent_1(v: f64) -> String {
    format!("{:.1}%", v * 100.0)
}

fn summary_line(c: &Comparison) -> String {
    let counts = c.counts();
    let parts: Vec<String> = counts.iter().map(|(v, n)| format!("{n} {v}")).collect();
    let n = c.endpoints.len();
    let s = if n == 1 { "" } else { "s" };
    let mut line = format!("{n} endpoint{s}: {}", parts.join(", "));
    // The same for every endpoint: it depends on the two runs' [load].
    if let Some(why) = c
        .endpoints
        .iter()
        .find_map(|e| e.throughput_not_judged.as_ref())
    {
        line.push_str(&format!(" (throughput not judged: {why})"));
    }
    line
}

/// Plain text for a terminal: a table, then each endpoint's rounds.
pub fn format_table(c: &Comparison) -> String {
    let headers = HEADERS;
    let rows: Vec<[String; 14]> = c
        .endpoints
        .iter()
        .map(|e| {
            row(e, text_field(&e.name), e.verdict.to_string(), |s| {
                format!("{s} ✗")
            })
        })
        .collect();
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &[String]| -> String {
        let mut s = String::new();
        for (i, (cell, w)) in cells.iter().zip(&widths).enumerate() {
            let pad = w - cell.chars().count();
            // Names and verdicts read left-aligned, numbers right-aligned.
            if i == 0 || i == cells.len() - 1 {
                s.push_str(cell);
                s.push_str(&" ".repeat(pad));
            } else {
                s.push_str(&" ".repeat(pad));
                s.push_str(cell);
            }
            s.push_str("  ");
        }
        s.trim_end().to_string() + "\n"
    };
    let mut out = format!(
        "A: {}\nB: {}\n\n",
        text_field(&c.a.label()),
        text_field(&c.b.label())
    );
    out.push_str(&line(&headers.map(String::from)));
    out.push_str(&line(
        &widths.iter().map(|w| "-".repeat(*w)).collect::<Vec<_>>(),
    ));
    for row in &rows {
        out.push_str(&line(row));
    }
    out.push('\n');
    out.push_str(&text_field(&summary_line(c)));
    out.push_str("\n\nrounds (p99 ms) and why:\n");
    for e in &c.endpoints {
        let rounds = |s: &Option<Side>| rounds_text(s, " ");
        out.push_str(&format!(
            "  {}: A [{}]  B [{}]  {}: {}\n",
            text_field(&e.name),
            rounds(&e.a),
            rounds(&e.b),
            e.verdict,
            text_field(&e.reason)
        ));
    }
    for (side, r) in [("A", &c.a), ("B", &c.b)] {
        if !r.problems.is_empty() {
            out.push_str(&format!(
                "\nrun {side} ({}) is incomplete: {} problem(s) while reading it\n",
                text_field(&r.run),
                r.problems.len()
            ));
        }
    }
    out
}

/// Markdown for a GitHub step summary (`>> $GITHUB_STEP_SUMMARY`).
pub fn format_markdown(c: &Comparison) -> String {
    let mut out = format!(
        "### perfdash compare: {} → {}\n\n{}\n\n",
        markdown_cell(&c.a.label()),
        markdown_cell(&c.b.label()),
        markdown_cell(&summary_line(c))
    );
    out.push_str(&format!("| {} |\n", HEADERS.join(" | ")));
    out.push_str("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|\n");
    for e in &c.endpoints {
        let verdict = match e.verdict {
            ComparisonVerdict::Regression | ComparisonVerdict::Failed => {
                format!("**{}**", e.verdict)
            }
            v => v.to_string(),
        };
        out.push_str(&format!(
            "| {} |\n",
            row(e, markdown_cell(&e.name), verdict, |s| format!("**{s}**")).join(" | ")
        ));
    }
    out.push_str("\n<details><summary>Rounds (p99 ms) and reasons</summary>\n\n");
    for e in &c.endpoints {
        let rounds = |s: &Option<Side>| rounds_text(s, ", ");
        out.push_str(&format!(
            "- {}: A [{}], B [{}]: {}\n",
            markdown_cell(&e.name),
            rounds(&e.a),
            rounds(&e.b),
            markdown_cell(&e.reason)
        ));
    }
    out.push_str(
        "\nB/A is the ratio of median p99s; \"rounds B/A\" is the Hodges–Lehmann interval over the pairwise \
         round ratios (84.9% at 5 vs 5 rounds). Errors are the median of the rounds' error rates; spread is \
         (max − min) ÷ median of the rounds' p99; failed rounds are left out of the medians. B's figures in \
         bold crossed their line against A's.\n\n</details>\n",
    );
    out
}

/// The JSON document of `perfdash compare --format json`, described in
/// docs/data-contract.md (compare section).
#[derive(Serialize)]
struct CompareJson<'a> {
    format_version: u32,
    a: &'a RunRef,
    b: &'a RunRef,
    /// Verdict → count, only verdicts that occur.
    summary: BTreeMap<&'static str, usize>,
    endpoints: &'a [EndpointComparison],
}

/// Pretty-printed JSON with a trailing newline.
pub fn format_json(c: &Comparison) -> String {
    let doc = CompareJson {
        format_version: 2,
        a: &c.a,
        b: &c.b,
        summary: c
            .counts()
            .into_iter()
            .map(|(v, n)| (v.as_str(), n))
            .collect(),
        endpoints: &c.endpoints,
    };
    let mut s = serde_json::to_string_pretty(&doc)
        .expect("comparison serializes: plain data, finite floats");
    s.push('\n');
    json_text(s)
}

/// A side's round p99s for the text and Markdown reports, or `–` when the
/// endpoint is missing from that run.
fn rounds_text(side: &Option<Side>, separator: &str) -> String {
    side.as_ref()
        .map(|s| {
            let mut text = s
                .round_p99_ms
                .iter()
                .map(|v| ms(*v))
                .collect::<Vec<_>>()
                .join(separator);
            if !s.failed_rounds.is_empty() {
                text.push_str(&format!(
                    "; failed: {}",
                    crate::analyse::RunFigures {
                        failed_rounds: s.failed_rounds.clone(),
                        ..Default::default()
                    }
                    .describe_failed_rounds()
                ));
            }
            text
        })
        .unwrap_or_else(|| "–".to_string())
}
