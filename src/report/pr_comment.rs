//! `perfdash check --format comment`: the pull-request comment.
//!
//! Read on a pull request, so it must fit in one screen: a hidden marker
//! line (a CI step finds its previous comment by it and updates it in
//! place), a one-line verdict, a table of the endpoints that moved —
//! regressions first — with median p99, baseline, ratio, error rate,
//! throughput, the rounds' band and the verdict, links to the site when
//! `[site] url` is set, and everything else folded in a `<details>`.
//!
//! It takes the gate's [`CheckReport`] as it is (the verdicts are decided
//! there, never here) and reads the rounds' error rate and throughput from
//! the analysis. Pure and deterministic: the same archive gives the same
//! bytes.

use std::fmt::Write as _;

use super::markdown_cell;
use crate::analyse::Analysis;
use crate::analyse::gate::{CheckReport, CheckStatus, EndpointCheck, Outcome};

/// The first line of every comment: a CI step looks for it to update its
/// previous comment instead of adding one per push.
pub const MARKER: &str = "<!-- perfdash:check -->";

/// At most this many rows in the visible table; the rest are folded, so
/// a run where everything moved still fits in one screen.
const MAX_VISIBLE_ROWS: usize = 10;

/// The statuses shown in the visible table, in this order: the ones a
/// reviewer must act on, then the ones worth knowing.
fn moved(status: CheckStatus) -> bool {
    matches!(
        status,
        CheckStatus::Failed
            | CheckStatus::Regression
            | CheckStatus::Pending
            | CheckStatus::EnvironmentSuspect
            | CheckStatus::TriagedNoise
            | CheckStatus::TriagedAccepted
            | CheckStatus::Improvement
            | CheckStatus::Missing
    )
}

/// The figures of one endpoint in the checked run that the gate's report
/// does not carry: medians over the rounds, and the rounds' p99 band.
#[derive(Debug, Default)]
struct RunFigures {
    error_rate: Option<f64>,
    throughput_rps: Option<f64>,
    band: Option<(f64, f64)>,
}

fn figures(analysis: &Analysis, run: &str, endpoint: &str) -> RunFigures {
    let Some(point) = analysis
        .endpoints
        .iter()
        .find(|e| e.id == endpoint)
        .and_then(|e| e.points.iter().find(|p| p.run == run))
    else {
        return RunFigures::default();
    };
    let of = |f: fn(&crate::model::RoundStats) -> Option<f64>| {
        let values: Vec<f64> = point.rounds.iter().filter_map(|r| f(&r.stats)).collect();
        crate::stats::median(&values)
    };
    let band = point
        .round_p99_ms
        .iter()
        .fold(None, |acc: Option<(f64, f64)>, &v| match acc {
            None => Some((v, v)),
            Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
        });
    RunFigures {
        error_rate: of(|s| s.error_rate),
        throughput_rps: of(|s| s.throughput_rps),
        band,
    }
}

fn ms(v: Option<f64>) -> String {
    v.map(|v| format!("{v:.1} ms"))
        .unwrap_or_else(|| "–".into())
}

fn percent(v: Option<f64>) -> String {
    v.map(|v| format!("{:.2} %", v * 100.0))
        .unwrap_or_else(|| "–".into())
}

fn rps(v: Option<f64>) -> String {
    v.map(|v| format!("{v:.1} req/s"))
        .unwrap_or_else(|| "–".into())
}

fn verdict_cell(status: CheckStatus) -> String {
    match status {
        CheckStatus::Failed => "❌ **failed**".into(),
        CheckStatus::Regression => "❌ **regression**".into(),
        CheckStatus::Improvement => "✅ improvement".into(),
        CheckStatus::Pending => "⏳ pending".into(),
        s => s.as_str().into(),
    }
}

/// Where the site lives, without a trailing `/`, when `[site] url` is set.
fn site_root(analysis: &Analysis) -> Option<&str> {
    analysis
        .settings
        .site
        .url
        .as_deref()
        .map(|u| u.trim_end_matches('/'))
}

fn table(
    out: &mut String,
    rows: &[&EndpointCheck],
    report: &CheckReport,
    analysis: &Analysis,
    slugs: Option<&crate::render::Slugs>,
) {
    let _ = writeln!(
        out,
        "| Endpoint | Median p99 | Baseline | Ratio | Errors | Throughput | Rounds p99 | Verdict |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---|---|");
    for e in rows {
        let f = figures(analysis, &report.run, &e.endpoint);
        let name = markdown_cell(&e.name);
        let name = match (site_root(analysis), slugs) {
            (Some(root), Some(slugs)) if slugs.endpoints.contains_key(&e.endpoint) => {
                format!(
                    "[{name}]({root}/endpoints/{}.html)",
                    slugs.endpoint(&e.endpoint)
                )
            }
            _ => name,
        };
        let band = f
            .band
            .map(|(lo, hi)| format!("{lo:.1}–{hi:.1}"))
            .unwrap_or_else(|| "–".into());
        let _ = writeln!(
            out,
            "| {name} | {} | {} | {} | {} | {} | {band} | {} |",
            ms(e.median_p99_ms),
            ms(e.baseline_p99_ms),
            e.ratio
                .map(|r| format!("×{r:.2}"))
                .unwrap_or_else(|| "–".into()),
            percent(f.error_rate),
            rps(f.throughput_rps),
            verdict_cell(e.status),
        );
    }
}

/// "3 ok, 1 no-baseline": the statuses of `rows`, in status order.
fn status_counts(rows: &[&EndpointCheck]) -> String {
    let mut counts: std::collections::BTreeMap<CheckStatus, usize> = Default::default();
    for e in rows {
        *counts.entry(e.status).or_default() += 1;
    }
    counts
        .iter()
        .map(|(s, n)| format!("{n} {}", s.as_str()))
        .collect::<Vec<_>>()
        .join(", ")
}

fn capacity_table(out: &mut String, report: &CheckReport) {
    let _ = writeln!(
        out,
        "| Step load | Knee | Baseline knee | Ratio | Recommended limit | Verdict |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---|");
    for c in &report.capacity {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            markdown_cell(&c.name),
            rps(c.knee_rps),
            rps(c.baseline_knee_rps),
            c.ratio
                .map(|r| format!("×{r:.2}"))
                .unwrap_or_else(|| "–".into()),
            rps(c.limit_rps),
            verdict_cell(c.status)
        );
    }
    out.push('\n');
}

/// The pull-request comment for one checked run.
pub fn render(report: &CheckReport, analysis: &Analysis) -> String {
    let slugs = site_root(analysis).map(|_| crate::render::Slugs::new(analysis));
    let mut out = String::new();
    let _ = writeln!(out, "{MARKER}");
    let regressions =
        report.count(CheckStatus::Regression) + report.capacity_count(CheckStatus::Regression);
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    let verdict = match report.outcome {
        Outcome::Pass => format!(
            "✅ **perfdash: no regression** in run `{}` ({} endpoint{}, policy {})",
            report.run,
            report.endpoints.len(),
            plural(report.endpoints.len()),
            report.policy
        ),
        Outcome::Regression => format!(
            "❌ **perfdash: {regressions} regression{}** in run `{}` (policy {})",
            plural(regressions),
            report.run,
            report.policy
        ),
        Outcome::CannotVouch => format!(
            "⚠️ **perfdash cannot vouch** for run `{}` (policy {}): `perfdash check --run {}` says why",
            report.run, report.policy, report.run
        ),
    };
    let _ = writeln!(out, "{verdict}\n");

    // Moved endpoints: regressions first, then by how far they moved.
    let mut shown: Vec<&EndpointCheck> = report
        .endpoints
        .iter()
        .filter(|e| moved(e.status))
        .collect();
    shown.sort_by(|a, b| {
        a.status
            .cmp(&b.status)
            .then_with(|| {
                let far = |e: &EndpointCheck| e.ratio.map(|r| (r.ln()).abs()).unwrap_or(0.0);
                far(b).total_cmp(&far(a))
            })
            .then_with(|| a.endpoint.cmp(&b.endpoint))
    });
    let overflow = shown.split_off(shown.len().min(MAX_VISIBLE_ROWS));
    if shown.is_empty() {
        let _ = writeln!(out, "No endpoint moved beyond its line.\n");
    } else {
        table(&mut out, &shown, report, analysis, slugs.as_ref());
        out.push('\n');
    }
    for p in report.problems.iter().take(3) {
        let _ = writeln!(out, "- ⚠️ {}", markdown_cell(p));
    }
    if report.problems.len() > 3 {
        let _ = writeln!(out, "- … and {} more problems", report.problems.len() - 3);
    }
    if let Some(root) = site_root(analysis) {
        let run_link = slugs
            .as_ref()
            .and_then(|s| s.runs.get(&report.run))
            .map(|slug| format!("[run page]({root}/runs/{slug}.html) · "))
            .unwrap_or_default();
        let _ = writeln!(out, "{run_link}[site]({root}/index.html)\n");
    }

    let mut rest: Vec<&EndpointCheck> = overflow;
    rest.extend(report.endpoints.iter().filter(|e| !moved(e.status)));
    rest.sort_by(|a, b| a.endpoint.cmp(&b.endpoint));
    let capacity_moved = report
        .capacity
        .iter()
        .filter(|c| c.status != CheckStatus::Ok)
        .count();
    // Step-load verdicts: in sight when one is not ok, folded otherwise.
    if capacity_moved > 0 {
        capacity_table(&mut out, report);
    }
    if !rest.is_empty() || (!report.capacity.is_empty() && capacity_moved == 0) {
        let _ = writeln!(
            out,
            "<details><summary>{} more endpoint{}{}</summary>\n",
            rest.len(),
            plural(rest.len()),
            if rest.is_empty() {
                String::new()
            } else {
                format!(": {}", status_counts(&rest))
            }
        );
        if !rest.is_empty() {
            table(&mut out, &rest, report, analysis, slugs.as_ref());
            out.push('\n');
        }
        if !report.capacity.is_empty() && capacity_moved == 0 {
            capacity_table(&mut out, report);
        }
        let _ = writeln!(out, "</details>");
    }
    out
}
