//! `perfdash check --format markdown` (alias `comment`): the pull-request
//! comment, also fit for a GitHub step summary.
//!
//! Read on a pull request, so what is not folded must fit in one screen: a
//! hidden marker line (a CI step finds its previous comment by it and
//! updates it in place), a one-line verdict, a table of the endpoints that
//! moved — failures and regressions first — with median p99, baseline,
//! ratio, error rate, throughput (a figure over its line in bold, with the
//! line), the rounds' band, a text sparkline of the recent run medians and
//! the verdict, links to the site when `[site] url` is set, and everything
//! else (the quiet endpoints, p90, spread, each round, the reasons, every
//! problem) folded in a `<details>`.
//!
//! It takes the gate's [`CheckReport`] as it is (the verdicts are decided
//! there, never here) and reads only the rounds' band and the history of
//! run medians from the analysis. Pure and deterministic: the same archive
//! gives the same bytes.

use std::fmt::Write as _;

use super::check::{cannot_vouch_hints, environment_line, figure_cells, headline, rounds_cell};
use super::markdown_cell;
use crate::analyse::gate::{CapacityCheck, CheckReport, CheckStatus, EndpointCheck, Outcome};
use crate::analyse::verdict::Verdict;
use crate::analyse::{Analysis, RunPoint};

/// The first line of every comment: a CI step looks for it to update its
/// previous comment instead of adding one per push.
pub const MARKER: &str = "<!-- perfdash:check -->";

/// At most this many rows in the visible table; the rest are folded, so
/// a run where everything moved still fits in one screen.
const MAX_VISIBLE_ROWS: usize = 10;

/// At most this many problems in sight; all of them are in the fold.
const MAX_VISIBLE_PROBLEMS: usize = 3;

/// GitHub refuses comments over 65,536 characters; the comment stays
/// under this, folding what does not fit into a link to the site.
pub const MAX_COMMENT_CHARS: usize = 60_000;

/// How many run medians the text sparkline shows, the checked run last.
const SPARK_RUNS: usize = 12;

/// The sparkline's levels, lowest first.
const SPARK_LEVELS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// The statuses shown in the visible table: the ones a reviewer must act
/// on, then the ones worth knowing.
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

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn bold(s: String) -> String {
    format!("**{s}**")
}

fn ms(v: Option<f64>) -> String {
    v.map(|v| format!("{v:.1} ms"))
        .unwrap_or_else(|| "–".into())
}

fn rps(v: Option<f64>) -> String {
    v.map(|v| format!("{v:.1} req/s"))
        .unwrap_or_else(|| "–".into())
}

fn ratio(r: Option<f64>) -> String {
    r.map(|r| format!("×{r:.2}")).unwrap_or_else(|| "–".into())
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

/// The verdict cell of an endpoint: an early verdict says so.
fn endpoint_verdict_cell(e: &EndpointCheck) -> String {
    match e.early {
        Some(_) => format!("{} (early)", verdict_cell(e.status)),
        None => verdict_cell(e.status),
    }
}

/// Where the site lives, without a trailing `/`, when `[site] url` is set:
/// checked (`escape::check_url`) and percent-encoded for a Markdown link
/// destination ([`crate::escape::url`]), so no setting can end the link,
/// the table row or the comment.
fn site_root(analysis: &Analysis) -> Option<String> {
    let url = analysis.settings.site.url.as_deref()?;
    crate::escape::check_url(url).ok()?;
    Some(crate::escape::url(url.trim_end_matches('/')))
}

/// What the comment reads from the analysis besides the report.
struct Context<'a> {
    report: &'a CheckReport,
    analysis: &'a Analysis,
    /// The site's root and its page names, when `[site] url` is set.
    site: Option<(String, crate::render::Slugs)>,
}

impl Context<'_> {
    /// This endpoint's points up to and including the checked run. A
    /// branch run's history is the main history up to the main run it was
    /// judged after (its merge base), then the branch run itself.
    fn history(&self, endpoint: &str) -> Vec<&RunPoint> {
        let Some(e) = self.analysis.endpoints.iter().find(|e| e.id == endpoint) else {
            return Vec::new();
        };
        if let Some(i) = e.points.iter().position(|p| p.run == self.report.run) {
            return e.points[..=i].iter().collect();
        }
        let Some(branch_point) = e.branch_points.iter().find(|p| p.run == self.report.run) else {
            return Vec::new();
        };
        let anchor = self.report.branch.as_ref().and_then(|b| b.main_run_index);
        let before = match anchor {
            Some(a) => e.points.partition_point(|p| p.run_index <= a),
            None => 0,
        };
        e.points[..before]
            .iter()
            .chain(std::iter::once(branch_point))
            .collect()
    }

    fn name_cell(&self, e: &EndpointCheck) -> String {
        let name = markdown_cell(&e.name);
        match &self.site {
            Some((root, slugs)) if slugs.endpoints.contains_key(&e.endpoint) => format!(
                "[{name}]({root}/endpoints/{}.html)",
                slugs.endpoint(&e.endpoint)
            ),
            _ => name,
        }
    }
}

/// The recent run medians as block characters, the checked run last:
/// enough to see a step or a drift without opening the site. A failed run
/// (`None`: no latency to draw) is a `✕`, never a fast-looking low bar.
fn sparkline(medians: &[Option<f64>]) -> String {
    let recent = &medians[medians.len().saturating_sub(SPARK_RUNS)..];
    let drawn = || recent.iter().flatten().copied().filter(|v| v.is_finite());
    let (Some(lo), Some(hi)) = (drawn().reduce(f64::min), drawn().reduce(f64::max)) else {
        return if recent.is_empty() {
            "–".into()
        } else {
            "✕".repeat(recent.len())
        };
    };
    let top = (SPARK_LEVELS.len() - 1) as f64;
    recent
        .iter()
        .map(|v| match v {
            Some(v) if v.is_finite() => {
                let level = if hi > lo {
                    ((v - lo) / (hi - lo) * top).round() as usize
                } else {
                    SPARK_LEVELS.len() / 2
                };
                SPARK_LEVELS[level.min(SPARK_LEVELS.len() - 1)]
            }
            _ => '✕',
        })
        .collect()
}

/// The run medians the sparkline draws: none for a failed run.
fn drawn_medians(points: &[&RunPoint]) -> Vec<Option<f64>> {
    points
        .iter()
        .map(|p| (p.verdict != Verdict::Failed).then_some(p.median_p99_ms))
        .collect()
}

/// The rounds' p99 band (the site's `[min, max]` interval for the
/// median), with the failed rounds said in bold.
fn band_cell(e: &EndpointCheck, point: Option<&RunPoint>) -> String {
    if let Some(f) = &e.figures
        && f.usable_rounds == 0
        && !f.failed_rounds.is_empty()
    {
        return rounds_cell(e, bold);
    }
    let band = point
        .and_then(|p| p.evidence.band.as_ref())
        .map(|b| format!("{:.1}–{:.1}", b.low, b.high))
        .unwrap_or_else(|| "–".into());
    match e.figures.as_ref().map(|f| f.failed_rounds.len()) {
        Some(failed) if failed > 0 => format!("{band}, **{failed} failed**"),
        _ => band,
    }
}

/// The table of moved (or folded) endpoints.
fn endpoint_table(out: &mut String, rows: &[&EndpointCheck], cx: &Context) {
    let _ = writeln!(
        out,
        "| Endpoint | Median p99 | Baseline | Ratio | Errors | Throughput | Rounds p99 (ms) | Trend | Verdict |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---|---|---|");
    for e in rows {
        let history = cx.history(&e.endpoint);
        let [p99, _, errors, tput, _] = match &e.figures {
            Some(f) => figure_cells(f, bold),
            None => [
                ms(e.median_p99_ms),
                "–".into(),
                "–".into(),
                "–".into(),
                "–".into(),
            ],
        };
        // An early verdict has no baseline: it shows the earlier runs'
        // pooled rounds and its ratio to them.
        let (baseline, ratio_text) = match &e.early {
            Some(early) => (
                format!(
                    "{} (rounds of {} run{})",
                    ms(early.earlier_median_p99_ms),
                    early.runs.len(),
                    plural(early.runs.len())
                ),
                ratio(early.ratio),
            ),
            None => (ms(e.baseline_p99_ms), ratio(e.ratio)),
        };
        let _ = writeln!(
            out,
            "| {} | {p99} | {baseline} | {ratio_text} | {errors} | {tput} | {} | {} | {} |",
            cx.name_cell(e),
            band_cell(e, history.last().copied()),
            sparkline(&drawn_medians(&history)),
            endpoint_verdict_cell(e),
        );
    }
    out.push('\n');
}

/// Every endpoint's reason, p90, spread and rounds: what a reviewer opens
/// the fold for.
fn reasons_table(out: &mut String, report: &CheckReport) {
    let _ = writeln!(
        out,
        "| Endpoint | Verdict | p90 | Spread | Each round's p99 (ms) | Why |"
    );
    let _ = writeln!(out, "|---|---|---:|---:|---|---|");
    let mut rows: Vec<&EndpointCheck> = report.endpoints.iter().collect();
    rows.sort_by(|a, b| {
        a.status
            .cmp(&b.status)
            .then_with(|| a.endpoint.cmp(&b.endpoint))
    });
    for e in rows {
        let [_, p90, _, _, spread] = match &e.figures {
            Some(f) => figure_cells(f, bold),
            None => Default::default(),
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            markdown_cell(&e.name),
            e.status_label(),
            if p90.is_empty() { "–".into() } else { p90 },
            if spread.is_empty() {
                "–".into()
            } else {
                spread
            },
            rounds_cell(e, bold),
            markdown_cell(&e.reason)
        );
    }
    out.push('\n');
}

fn capacity_table(out: &mut String, rows: &[CapacityCheck]) {
    let _ = writeln!(
        out,
        "| Step load | Knee | Baseline knee | Ratio | Recommended limit | Verdict |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---|");
    for c in rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            markdown_cell(&c.name),
            rps(c.knee_rps),
            rps(c.baseline_knee_rps),
            ratio(c.ratio),
            rps(c.limit_rps),
            verdict_cell(c.status)
        );
    }
    out.push('\n');
}

/// "3 ok, 1 no-baseline": the statuses of `statuses`, in status order.
fn status_counts(statuses: impl Iterator<Item = CheckStatus>) -> String {
    let mut counts: std::collections::BTreeMap<CheckStatus, usize> = Default::default();
    for s in statuses {
        *counts.entry(s).or_default() += 1;
    }
    counts
        .iter()
        .map(|(s, n)| format!("{n} {}", s.as_str()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The one-line verdict, then what qualifies it (why the gate cannot
/// vouch, a run-wide shift that looks like the environment).
fn verdict_lines(out: &mut String, report: &CheckReport) {
    let icon = match report.outcome {
        Outcome::Pass => "✅",
        Outcome::Regression => "❌",
        Outcome::CannotVouch => "⚠️",
    };
    let _ = writeln!(
        out,
        "{icon} **perfdash check**: {}\n",
        markdown_cell(&headline(report))
    );
    for hint in cannot_vouch_hints(report) {
        let _ = writeln!(out, "{}\n", markdown_cell(&format!("To fix: {hint}.")));
    }
    // A pull request's run: say which main baseline it was judged against.
    if let Some(branch) = &report.branch {
        let _ = writeln!(
            out,
            "Run {}: {}.\n",
            markdown_cell(&report.run),
            markdown_cell(&branch.describe(report.main_branch.as_deref()))
        );
    }
    if let Some(shift) = &report.environment_suspect {
        let _ = writeln!(out, "> **{}**\n", markdown_cell(&environment_line(shift)));
    }
}

/// The endpoints that moved, regressions first, then by how far.
fn moved_endpoints(report: &CheckReport) -> Vec<&EndpointCheck> {
    let mut shown: Vec<&EndpointCheck> = report
        .endpoints
        .iter()
        .filter(|e| moved(e.status))
        .collect();
    shown.sort_by(|a, b| {
        a.status
            .cmp(&b.status)
            .then_with(|| {
                let far = |e: &EndpointCheck| e.ratio.map(|r| r.ln().abs()).unwrap_or(0.0);
                far(b).total_cmp(&far(a))
            })
            .then_with(|| a.endpoint.cmp(&b.endpoint))
    });
    shown
}

fn links_line(out: &mut String, cx: &Context) {
    if let Some((root, _)) = &cx.site {
        let run_link = run_page(cx)
            .map(|page| format!("[run page]({page}) · "))
            .unwrap_or_default();
        let _ = writeln!(out, "{run_link}[site]({root}/index.html)\n");
    }
}

/// The fold: the endpoints not in sight, every endpoint's reasons, the
/// step-load table when nothing moved there, every problem, the files
/// not read.
fn details(out: &mut String, rest: &[&EndpointCheck], cx: &Context, capacity_in_sight: bool) {
    let report = cx.report;
    let _ = writeln!(
        out,
        "<details><summary>Details of {} endpoint{}: {}</summary>\n",
        report.endpoints.len(),
        plural(report.endpoints.len()),
        status_counts(report.endpoints.iter().map(|e| e.status))
    );
    if !rest.is_empty() {
        endpoint_table(out, rest, cx);
    }
    reasons_table(out, report);
    if !report.capacity.is_empty() && !capacity_in_sight {
        capacity_table(out, &report.capacity);
    }
    if report.problems.len() > MAX_VISIBLE_PROBLEMS {
        let _ = writeln!(out, "**Problems**\n");
        for p in &report.problems {
            let _ = writeln!(out, "- {}", markdown_cell(p));
        }
        out.push('\n');
    }
    if !report.ignored.is_empty() {
        let _ = writeln!(
            out,
            "{} file{} in this run {} not read, e.g. {}\n",
            report.ignored.len(),
            plural(report.ignored.len()),
            if report.ignored.len() == 1 {
                "is"
            } else {
                "are"
            },
            markdown_cell(&report.ignored[0])
        );
    }
    let _ = writeln!(out, "</details>");
}

/// The checked run's page on the site, when `[site] url` is set.
fn run_page(cx: &Context) -> Option<String> {
    let (root, slugs) = cx.site.as_ref()?;
    let slug = slugs.runs.get(&cx.report.run)?;
    Some(format!("{root}/runs/{slug}.html"))
}

/// The pull-request comment (and step summary) for one checked run, under
/// [`MAX_COMMENT_CHARS`]: when the whole would be longer, the lines that
/// do not fit are left out (an open `<details>` is closed) and a last line
/// says how many and where the rest is. Every line from the data is
/// bounded (`report::MAX_FIELD_CHARS` per field), so the cut always
/// leaves the verdict and the first rows.
pub fn render(report: &CheckReport, analysis: &Analysis) -> String {
    let cx = Context {
        report,
        analysis,
        site: site_root(analysis).map(|root| (root, crate::render::Slugs::new(analysis))),
    };
    fit(whole(&cx), &cx)
}

/// `comment` cut to [`MAX_COMMENT_CHARS`] (see [`render`]).
fn fit(comment: String, cx: &Context) -> String {
    if comment.chars().count() <= MAX_COMMENT_CHARS {
        return comment;
    }
    let rest = match (run_page(cx), &cx.site) {
        (Some(page), _) => format!("the [run page]({page}) has everything"),
        (None, Some((root, _))) => format!("the [site]({root}/index.html) has everything"),
        (None, None) => format!(
            "`perfdash check --run {} --format text` prints everything",
            markdown_cell(&cx.report.run)
        ),
    };
    // Room for the closing tag and the last line.
    let budget = MAX_COMMENT_CHARS - 200 - rest.chars().count();
    let lines: Vec<&str> = comment.lines().collect();
    let mut kept = String::new();
    let mut used = 0;
    let mut in_details = false;
    let mut shown = 0;
    for line in &lines {
        let n = line.chars().count() + 1;
        if used + n > budget {
            break;
        }
        if line.starts_with("<details>") {
            in_details = true;
        }
        if line.starts_with("</details>") {
            in_details = false;
        }
        kept.push_str(line);
        kept.push('\n');
        used += n;
        shown += 1;
    }
    if in_details {
        kept.push_str("\n</details>\n");
    }
    let _ = writeln!(
        kept,
        "\n… {} more lines are left out to keep this comment under {MAX_COMMENT_CHARS} characters; {rest}.",
        lines.len() - shown
    );
    kept
}

/// The whole comment, before [`fit`].
fn whole(cx: &Context) -> String {
    let report = cx.report;
    let mut out = String::new();
    let _ = writeln!(out, "{MARKER}");
    verdict_lines(&mut out, report);

    let mut shown = moved_endpoints(report);
    let overflow = shown.split_off(shown.len().min(MAX_VISIBLE_ROWS));
    if shown.is_empty() {
        let _ = writeln!(out, "No endpoint moved beyond its line.\n");
    } else {
        endpoint_table(&mut out, &shown, cx);
    }
    // Step-load verdicts: in sight when one is not ok, folded otherwise.
    let capacity_in_sight = report.capacity.iter().any(|c| c.status != CheckStatus::Ok);
    if capacity_in_sight {
        capacity_table(&mut out, &report.capacity);
    }
    if !report.problems.is_empty() {
        for p in report.problems.iter().take(MAX_VISIBLE_PROBLEMS) {
            let _ = writeln!(out, "- ⚠️ {}", markdown_cell(p));
        }
        if report.problems.len() > MAX_VISIBLE_PROBLEMS {
            let _ = writeln!(
                out,
                "- … and {} more problems (below)",
                report.problems.len() - MAX_VISIBLE_PROBLEMS
            );
        }
        out.push('\n');
    }
    links_line(&mut out, cx);

    let mut rest: Vec<&EndpointCheck> = overflow;
    rest.extend(report.endpoints.iter().filter(|e| !moved(e.status)));
    rest.sort_by(|a, b| a.endpoint.cmp(&b.endpoint));
    details(&mut out, &rest, cx, capacity_in_sight);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparkline_scales_from_lowest_to_highest_and_keeps_the_last_runs() {
        let some = |v: &[f64]| v.iter().copied().map(Some).collect::<Vec<_>>();
        assert_eq!(sparkline(&some(&[100.0, 100.0, 150.0, 200.0])), "▁▁▅█");
        assert_eq!(sparkline(&some(&[50.0; 3])), "▅▅▅");
        assert_eq!(sparkline(&[Some(10.0), None, Some(20.0)]), "▁✕█");
        assert_eq!(sparkline(&[None, None]), "✕✕");
        let many: Vec<Option<f64>> = (0..20).map(|i| Some(f64::from(i))).collect();
        // The last runs, the checked one last: 8..=19 rising to the top.
        assert_eq!(sparkline(&many), "▁▂▂▃▄▄▅▅▆▇▇█");
        assert_eq!(sparkline(&[]), "–");
    }
}
