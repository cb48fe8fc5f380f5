//! `perfdash check` output: a short human summary, JSON, the Markdown
//! pull-request comment ([`super::pr_comment`], also a GitHub step
//! summary), or JUnit XML.

use std::fmt::Write as _;

use serde::Serialize;

use super::{json_text, junit_field, text_field};
use crate::analyse::Analysis;
use crate::analyse::environment::RunWideShift;
use crate::analyse::figures::{FigureSummary, rate_percent};
use crate::analyse::gate::{
    CannotVouch, CapacityCheck, CheckReport, CheckStatus, EndpointCheck, Outcome, RunWideCheck,
};
use crate::analyse::verdict::Figure;

/// How `perfdash check` prints its report (`--format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum CheckFormat {
    /// A short summary for the terminal.
    #[default]
    Text,
    /// The report as JSON (docs/alarms.md).
    Json,
    /// The pull-request comment, also a GitHub step summary (docs/ci.md).
    /// `comment` is accepted as another name for it.
    #[value(alias = "comment")]
    Markdown,
    /// JUnit XML, one test case per endpoint.
    Junit,
}

/// Renders the report in the chosen format. `exit_code` is the one the
/// CLI chose from the outcome (the JSON carries it); the Markdown comment
/// also reads the rounds' band, the run medians and the site's address
/// from `analysis`.
pub fn render(
    report: &CheckReport,
    analysis: &Analysis,
    format: CheckFormat,
    exit_code: u8,
) -> String {
    match format {
        CheckFormat::Text => text(report),
        CheckFormat::Json => json(report, exit_code),
        CheckFormat::Markdown => super::pr_comment::render(report, analysis),
        CheckFormat::Junit => junit(report),
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// The gate's verdict in one line, the first line of every format: what
/// failed, or why the gate cannot vouch for the run, or that nothing
/// regressed, and always how many endpoints could not be judged and how
/// many were judged by an early verdict (never a plain "no regression"
/// over endpoints nobody judged). Holds run ids and endpoint names as
/// they are: each format escapes it for its target.
pub fn headline(report: &CheckReport) -> String {
    let failed = report.count(CheckStatus::Failed);
    let regressions = report.count(CheckStatus::Regression);
    let capacity = report.capacity_count(CheckStatus::Regression);
    let mut line = match report.outcome {
        Outcome::Pass => format!(
            "no regression in run {} (policy {})",
            report.run, report.policy
        ),
        Outcome::Regression => {
            let mut parts = Vec::new();
            if failed > 0 {
                parts.push(format!("{failed} endpoint{} failed", plural(failed)));
            }
            if regressions > 0 {
                parts.push(format!(
                    "{regressions} endpoint{} regressed",
                    plural(regressions)
                ));
            }
            if capacity > 0 {
                parts.push(format!(
                    "{capacity} capacity regression{}",
                    plural(capacity)
                ));
            }
            if let Some(alarm) = report.run_wide_alarm.as_ref().filter(|a| a.fails) {
                parts.push(format!("a run-wide shift ({})", alarm.summary));
            }
            format!(
                "{} in run {} (policy {})",
                parts.join(" and "),
                report.run,
                report.policy
            )
        }
        Outcome::CannotVouch => format!(
            "run {} has {}: the gate cannot vouch for it (policy {})",
            report.run,
            report
                .cannot_vouch
                .iter()
                .map(CannotVouch::describe)
                .collect::<Vec<_>>()
                .join(" and "),
            report.policy
        ),
    };
    if let Some(unjudged) = not_judged(report) {
        line.push_str("; ");
        line.push_str(&unjudged);
    }
    let early = report
        .endpoints
        .iter()
        .filter(|e| e.early.is_some())
        .count();
    if early > 0 {
        line.push_str(&format!(
            "; {early} endpoint{} judged by an early verdict (too few earlier runs for a baseline)",
            plural(early)
        ));
    }
    line
}

/// "2 endpoints not judged (1 no-baseline, 1 missing)", when any endpoint
/// of the run could not be judged.
pub fn not_judged(report: &CheckReport) -> Option<String> {
    let skipped: Vec<CheckStatus> = report
        .endpoints
        .iter()
        .map(|e| e.status)
        .filter(|s| s.is_skipped())
        .collect();
    (!skipped.is_empty()).then(|| {
        format!(
            "{} endpoint{} not judged ({})",
            skipped.len(),
            plural(skipped.len()),
            status_counts(|status| skipped.iter().filter(|s| **s == status).count())
        )
    })
}

/// What to do about a run the gate cannot vouch for, one hint per kind
/// of reason.
pub(super) fn cannot_vouch_hints(report: &CheckReport) -> Vec<&'static str> {
    let mut hints: Vec<&'static str> = Vec::new();
    for hint in report.cannot_vouch.iter().filter_map(CannotVouch::hint) {
        if !hints.contains(&hint) {
            hints.push(hint);
        }
    }
    hints
}

/// "9 of 12 endpoints slower together (median ×1.20): likely the
/// environment, not the code".
pub(super) fn environment_line(shift: &RunWideShift) -> String {
    format!(
        "environment suspect: {}: likely the environment (a noisy neighbour, a slow host or load generator), not {} code changes; re-run it before you bisect",
        shift.describe(),
        shift.moved
    )
}

fn counts(report: &CheckReport) -> String {
    status_counts(|status| report.count(status))
}

fn capacity_counts(report: &CheckReport) -> String {
    status_counts(|status| report.capacity_count(status))
}

fn status_counts(count: impl Fn(CheckStatus) -> usize) -> String {
    let mut parts = Vec::new();
    for status in CheckStatus::ALL {
        let n = count(status);
        if n > 0 {
            parts.push(format!("{n} {}", status.as_str()));
        }
    }
    parts.join(", ")
}

fn ms(v: Option<f64>) -> String {
    v.map(|v| format!("{v:.1} ms"))
        .unwrap_or_else(|| "–".into())
}

fn rate(v: Option<f64>) -> String {
    v.map(rate_percent).unwrap_or_else(|| "–".into())
}

fn rps(v: Option<f64>) -> String {
    v.map(|v| format!("{v:.1} req/s"))
        .unwrap_or_else(|| "–".into())
}

/// The figures' cells: p99, p90, error rate, throughput, spread. A figure
/// over its line shows the line too and is decorated by `mark` (bold in
/// Markdown, a ✗ in text).
pub(super) fn figure_cells(f: &FigureSummary, mark: fn(String) -> String) -> [String; 5] {
    let over = |figure: Figure, text: String, line: Option<String>| {
        if f.regressed.contains(&figure) {
            mark(match line {
                Some(l) => format!("{text} (line {l})"),
                None => text,
            })
        } else {
            text
        }
    };
    [
        over(
            Figure::P99,
            ms(f.p99_ms),
            f.p99_line_ms.map(|l| ms(Some(l))),
        ),
        ms(f.p90_ms),
        over(
            Figure::ErrorRate,
            rate(f.error_rate),
            f.error_rate_line.map(rate_percent),
        ),
        over(
            Figure::Throughput,
            rps(f.throughput_rps),
            f.throughput_line_rps.map(|l| rps(Some(l))),
        ),
        f.spread
            .map(|s| format!("{:.1}%", s * 100.0))
            .unwrap_or_else(|| "–".into()),
    ]
}

/// The rounds' p99s, failed rounds marked with their error rate. Only
/// numbers perfdash wrote: safe in Markdown and XML as they are.
pub(super) fn rounds_cell(e: &EndpointCheck, failed_mark: fn(String) -> String) -> String {
    let Some(f) = &e.figures else {
        return "–".into();
    };
    if f.usable_rounds == 0 && !f.failed_rounds.is_empty() {
        let all = crate::analyse::RunFigures {
            failed_rounds: f.failed_rounds.clone(),
            ..Default::default()
        };
        return failed_mark(format!("all failed: {}", all.describe_failed_rounds()));
    }
    e.round_p99_ms
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let number = e.round_numbers.get(i).copied().unwrap_or(0);
            match f.failed_rounds.iter().find(|x| x.round == number) {
                Some(x) => failed_mark(match x.error_rate {
                    Some(rate) => format!("failed ({} errors)", rate_percent(rate)),
                    None => format!("failed ({r:.1})"),
                }),
                None => format!("{r:.1}"),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A short summary: the verdict, then only the endpoints worth a look,
/// each with its reason and its four figures. Every field from the data
/// is printed through [`text_field`].
pub fn text(report: &CheckReport) -> String {
    let mut out = String::new();
    let mark = match report.outcome {
        Outcome::Pass => "PASS",
        Outcome::Regression => "FAIL",
        Outcome::CannotVouch => "ERROR",
    };
    let _ = writeln!(out, "{mark}: {}", text_field(&headline(report)));
    for hint in cannot_vouch_hints(report) {
        let _ = writeln!(out, "  ({hint})");
    }
    if let Some(branch) = &report.branch {
        let _ = writeln!(
            out,
            "  {}",
            text_field(&branch.describe(report.main_branch.as_deref()))
        );
    }
    if let Some(shift) = &report.environment_suspect {
        let _ = writeln!(out, "  {}", environment_line(shift));
    }
    let notable: Vec<(&EndpointCheck, String)> = report
        .endpoints
        .iter()
        .filter(|e| {
            e.early.is_some() || !matches!(e.status, CheckStatus::Ok | CheckStatus::Improvement)
        })
        .map(|e| (e, text_field(&e.endpoint)))
        .collect();
    let width = notable
        .iter()
        .map(|(_, id)| id.chars().count())
        .max()
        .unwrap_or(0);
    // The status column: 16 wide, wider for a longer status
    // ("environment-suspect") so that the ids stay in one column.
    let status_width = notable
        .iter()
        .map(|(e, _)| e.status_label().chars().count())
        .max()
        .unwrap_or(0)
        .max(16);
    for (e, id) in notable {
        let _ = writeln!(
            out,
            "  {:<status_width$} {:<width$}  {}",
            e.status_label(),
            id,
            text_field(&e.reason)
        );
        if let Some(f) = &e.figures {
            let [p99, p90, errors, tput, spread] = figure_cells(f, |s| format!("{s} ✗"));
            let _ = writeln!(
                out,
                "  {:<status_width$} {:<width$}  p99 {p99} · p90 {p90} · errors {errors} · throughput {tput} · spread {spread}",
                "", ""
            );
        }
        // Frame names come from the profile files: escaped for the terminal.
        for p in &e.profiles {
            let _ = writeln!(
                out,
                "  {:<status_width$} {:<width$}  {} profile: {}",
                "",
                "",
                p.kind,
                crate::term::escape(&p.line)
            );
        }
    }
    for p in &report.problems {
        let _ = writeln!(out, "  problem: {}", text_field(p));
    }
    if !report.ignored.is_empty() {
        let _ = writeln!(
            out,
            "  ({} file(s) in this run are not read, e.g. {})",
            report.ignored.len(),
            text_field(&report.ignored[0])
        );
    }
    let _ = writeln!(
        out,
        "{} endpoint{}: {}",
        report.endpoints.len(),
        plural(report.endpoints.len()),
        counts(report)
    );
    if !report.capacity.is_empty() {
        for c in report
            .capacity
            .iter()
            .filter(|c| !matches!(c.status, CheckStatus::Ok | CheckStatus::Improvement))
        {
            let _ = writeln!(
                out,
                "  capacity {:<16} {}  {}",
                c.status.as_str(),
                text_field(&c.endpoint),
                text_field(&c.reason)
            );
        }
        let _ = writeln!(
            out,
            "{} step-load: {}",
            report.capacity.len(),
            capacity_counts(report)
        );
    }
    out
}

/// The JSON document of `perfdash check --format json` (docs/alarms.md):
/// the report with the exit code the CLI chose, its headline first.
#[derive(Serialize)]
struct CheckJson<'a> {
    headline: String,
    run: &'a str,
    started_at: &'a chrono::DateTime<chrono::Utc>,
    policy: crate::analyse::Policy,
    outcome: Outcome,
    exit_code: u8,
    #[serde(skip_serializing_if = "Option::is_none")]
    branch: &'a Option<crate::analyse::BranchBase>,
    cannot_vouch: &'a [CannotVouch],
    environment_suspect: &'a Option<RunWideShift>,
    run_wide_alarm: &'a Option<RunWideCheck>,
    endpoints: &'a [EndpointCheck],
    capacity: &'a [CapacityCheck],
    problems: &'a [String],
    ignored: &'a [String],
}

/// The report as JSON (documented in docs/alarms.md).
pub fn json(report: &CheckReport, exit_code: u8) -> String {
    let doc = CheckJson {
        headline: headline(report),
        run: &report.run,
        started_at: &report.started_at,
        policy: report.policy,
        outcome: report.outcome,
        exit_code,
        branch: &report.branch,
        cannot_vouch: &report.cannot_vouch,
        environment_suspect: &report.environment_suspect,
        run_wide_alarm: &report.run_wide_alarm,
        endpoints: &report.endpoints,
        capacity: &report.capacity,
        problems: &report.problems,
        ignored: &report.ignored,
    };
    let mut s = serde_json::to_string_pretty(&doc).expect("a check report always serialises");
    s.push('\n');
    json_text(s)
}

/// One JUnit test case: a failure for a regression or a failed run,
/// skipped when it was not judged, the status as output otherwise.
struct JunitCase<'a> {
    classname: &'a str,
    name: &'a str,
    status: &'a str,
    fails: bool,
    failed_run: bool,
    skipped: bool,
    reason: &'a str,
    failure_type: &'a str,
    failure_body: String,
}

fn junit_case(out: &mut String, case: JunitCase) {
    let _ = write!(
        out,
        "    <testcase classname=\"{}\" name=\"{}\" time=\"0\"",
        junit_field(case.classname),
        junit_field(case.name)
    );
    let detail = junit_field(&format!("{}: {}", case.status, case.reason));
    let _ = if case.fails {
        writeln!(
            out,
            ">\n      <failure type=\"{}\" message=\"{detail}\">{}</failure>\n    </testcase>",
            if case.failed_run {
                "failed"
            } else {
                case.failure_type
            },
            case.failure_body
        )
    } else if case.skipped {
        writeln!(
            out,
            ">\n      <skipped message=\"{detail}\"/>\n    </testcase>"
        )
    } else {
        writeln!(
            out,
            ">\n      <system-out>{detail}</system-out>\n    </testcase>"
        )
    };
}

/// JUnit XML: one test case per endpoint; regressions and failed runs are
/// failures, unjudged endpoints are skipped, and each reason the gate
/// cannot vouch for the run is an error. A run-wide alarm is one more test
/// case (`environment`), a failure when it fails the gate. The suite's name
/// carries the headline, so a viewer's first line says what was not judged.
pub fn junit(report: &CheckReport) -> String {
    let run_wide = report.run_wide_alarm.as_ref();
    let failures = report
        .endpoints
        .iter()
        .map(|e| e.status)
        .chain(report.capacity.iter().map(|c| c.status))
        .filter(|s| s.fails())
        .count()
        + usize::from(run_wide.is_some_and(|a| a.fails));
    let skipped = report
        .endpoints
        .iter()
        .map(|e| e.status)
        .chain(report.capacity.iter().map(|c| c.status))
        .filter(|s| s.is_skipped())
        .count();
    let errors = report.cannot_vouch.len();
    let tests =
        report.endpoints.len() + report.capacity.len() + errors + usize::from(run_wide.is_some());
    let mark = match report.outcome {
        Outcome::Pass => "PASS",
        Outcome::Regression => "FAIL",
        Outcome::CannotVouch => "ERROR",
    };
    let suite = format!("perfdash check: {mark}: {}", headline(report));
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"{}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\">",
        junit_field(&suite)
    );
    let _ = writeln!(
        out,
        "  <testsuite name=\"{}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\" timestamp=\"{}\">",
        junit_field(&format!(
            "perfdash check {} ({})",
            report.run, report.policy
        )),
        crate::calendar::junit_timestamp(report.started_at)
    );
    if let Some(shift) = &report.environment_suspect {
        let _ = writeln!(
            out,
            "    <properties>\n      <property name=\"environment_suspect\" value=\"{}\"/>\n    </properties>",
            junit_field(&environment_line(shift))
        );
    }
    let policy_class = format!("perfdash.{}", report.policy);
    for e in &report.endpoints {
        let figures = e
            .figures
            .as_ref()
            .map(|f| {
                let [p99, p90, errors, tput, spread] = figure_cells(f, |s| format!("{s} ✗"));
                format!(
                    "\np99 {p99}; p90 {p90}; errors {errors}; throughput {tput}; spread {spread}"
                )
            })
            .unwrap_or_default();
        let status = e.status_label();
        junit_case(
            &mut out,
            JunitCase {
                classname: &policy_class,
                name: &e.endpoint,
                status: &status,
                fails: e.status.fails(),
                failed_run: e.status == CheckStatus::Failed,
                skipped: e.status.is_skipped(),
                reason: &e.reason,
                failure_type: "regression",
                failure_body: format!(
                    "{} ({}): round p99s (ms) {}{}{}",
                    junit_field(&e.name),
                    junit_field(&e.endpoint),
                    rounds_cell(e, |s| s),
                    crate::escape::xml(&figures),
                    e.profiles
                        .iter()
                        .map(|p| format!(
                            "\n{}",
                            junit_field(&format!("{} profile: {}", p.kind, p.line))
                        ))
                        .collect::<String>()
                ),
            },
        );
    }
    for c in &report.capacity {
        junit_case(
            &mut out,
            JunitCase {
                classname: "perfdash.capacity",
                name: &c.endpoint,
                status: c.status.as_str(),
                fails: c.status.fails(),
                failed_run: c.status == CheckStatus::Failed,
                skipped: c.status.is_skipped(),
                reason: &c.reason,
                failure_type: "capacity-regression",
                failure_body: format!(
                    "{} ({}): {}",
                    junit_field(&c.name),
                    junit_field(&c.endpoint),
                    junit_field(&c.reason)
                ),
            },
        );
    }
    if let Some(alarm) = run_wide {
        let reason = format!(
            "{}: one alarm for the run, standing for {}",
            alarm.summary,
            alarm.endpoints.join(", ")
        );
        junit_case(
            &mut out,
            JunitCase {
                classname: &policy_class,
                name: "environment",
                status: if alarm.fails {
                    "regression"
                } else {
                    "environment-suspect"
                },
                fails: alarm.fails,
                failed_run: false,
                skipped: false,
                reason: &reason,
                failure_type: "run-wide-shift",
                failure_body: junit_field(&reason),
            },
        );
    }
    junit_cannot_vouch(&mut out, report);
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}

/// One JUnit error per reason the gate cannot vouch for the run, with the
/// problems behind it.
fn junit_cannot_vouch(out: &mut String, report: &CheckReport) {
    let unreadable = report
        .cannot_vouch
        .iter()
        .map(|c| match c {
            CannotVouch::UnreadableInputs { count } => *count,
            _ => 0,
        })
        .sum::<usize>();
    let lines = |items: Vec<&String>| {
        items
            .into_iter()
            .map(|p| junit_field(p))
            .collect::<Vec<_>>()
            .join("\n")
    };
    for reason in &report.cannot_vouch {
        let (kind, name, body) = match reason {
            CannotVouch::UnreadableInputs { count } => (
                "bad-input",
                format!("inputs of run {}", report.run),
                lines(report.problems.iter().take(*count).collect()),
            ),
            CannotVouch::DoubtfulInputs { count } => (
                "doubtful-input",
                format!("doubtful inputs of run {}", report.run),
                // After the unreadable ones (the gate lists them first).
                lines(
                    report
                        .problems
                        .iter()
                        .skip(unreadable)
                        .take(*count)
                        .collect(),
                ),
            ),
            CannotVouch::TooFewRounds { endpoint, .. } => (
                "too-few-rounds",
                format!("rounds of {endpoint} in run {}", report.run),
                reason.hint().unwrap_or_default().to_string(),
            ),
            CannotVouch::UntrustedTime { runs } => (
                "untrusted-time",
                format!("times of the runs beside {}", report.run),
                lines(
                    report
                        .problems
                        .iter()
                        .filter(|p| runs.iter().any(|r| p.contains(r.as_str())))
                        .collect(),
                ),
            ),
            CannotVouch::NoBaseline { .. } => (
                "no-baseline",
                format!("baselines of run {}", report.run),
                reason.hint().unwrap_or_default().to_string(),
            ),
            CannotVouch::EarlyInconclusive { .. } => (
                "early-inconclusive",
                format!("early verdicts of run {}", report.run),
                reason.hint().unwrap_or_default().to_string(),
            ),
            CannotVouch::NewLoadProfile { .. } => (
                "new-load-profile",
                format!("load profile of run {}", report.run),
                reason.hint().unwrap_or_default().to_string(),
            ),
        };
        let _ = writeln!(
            out,
            "    <testcase classname=\"perfdash.input\" name=\"{}\" time=\"0\">\n      <error type=\"{kind}\" message=\"cannot vouch: {}\">{body}</error>\n    </testcase>",
            junit_field(&name),
            junit_field(&reason.describe()),
        );
    }
}
