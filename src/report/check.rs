//! `perfdash check` output: a short human summary, JSON, GitHub step
//! summary Markdown, or JUnit XML.

use std::fmt::Write as _;
use std::str::FromStr;

use super::{markdown_cell, xml_escape};
use crate::analyse::gate::{CapacityCheck, CheckReport, CheckStatus, EndpointCheck, Outcome};

/// How `perfdash check` prints its report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CheckFormat {
    #[default]
    Text,
    Json,
    Markdown,
    Junit,
}

impl FromStr for CheckFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<CheckFormat, String> {
        match s {
            "text" => Ok(CheckFormat::Text),
            "json" => Ok(CheckFormat::Json),
            "markdown" => Ok(CheckFormat::Markdown),
            "junit" => Ok(CheckFormat::Junit),
            other => Err(format!(
                "unknown format '{other}' (expected one of: text, json, markdown, junit)"
            )),
        }
    }
}

/// Renders the report in the chosen format.
pub fn render(report: &CheckReport, format: CheckFormat) -> String {
    match format {
        CheckFormat::Text => text(report),
        CheckFormat::Json => json(report),
        CheckFormat::Markdown => markdown(report),
        CheckFormat::Junit => junit(report),
    }
}

fn headline(report: &CheckReport) -> String {
    let regressions = report.count(CheckStatus::Regression);
    let capacity = report.capacity_count(CheckStatus::Regression);
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    match report.outcome {
        Outcome::Pass => format!(
            "no regression in run {} (policy {})",
            report.run, report.policy
        ),
        Outcome::Regression => {
            let mut parts = Vec::new();
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
            format!(
                "{} in run {} (policy {})",
                parts.join(" and "),
                report.run,
                report.policy
            )
        }
        Outcome::BadInput => format!(
            "run {} has {} unreadable input{}: the gate cannot vouch for it (policy {})",
            report.run,
            report.problems.len(),
            if report.problems.len() == 1 { "" } else { "s" },
            report.policy
        ),
    }
}

fn counts(report: &CheckReport) -> String {
    status_counts(|status| report.count(status))
}

fn capacity_counts(report: &CheckReport) -> String {
    status_counts(|status| report.capacity_count(status))
}

fn status_counts(count: impl Fn(CheckStatus) -> usize) -> String {
    let mut parts = Vec::new();
    for status in [
        CheckStatus::Regression,
        CheckStatus::Pending,
        CheckStatus::TriagedNoise,
        CheckStatus::TriagedAccepted,
        CheckStatus::Ok,
        CheckStatus::Improvement,
        CheckStatus::NoBaseline,
        CheckStatus::NotComparable,
        CheckStatus::Insufficient,
        CheckStatus::Missing,
    ] {
        let n = count(status);
        if n > 0 {
            parts.push(format!("{n} {}", status.as_str()));
        }
    }
    parts.join(", ")
}

/// A short summary: the verdict, then only the endpoints worth a look.
pub fn text(report: &CheckReport) -> String {
    let mut out = String::new();
    let mark = match report.outcome {
        Outcome::Pass => "PASS",
        Outcome::Regression => "FAIL",
        Outcome::BadInput => "ERROR",
    };
    let _ = writeln!(out, "{mark}: {}", headline(report));
    let notable: Vec<&EndpointCheck> = report
        .endpoints
        .iter()
        .filter(|e| !matches!(e.status, CheckStatus::Ok | CheckStatus::Improvement))
        .collect();
    let width = notable
        .iter()
        .map(|e| e.endpoint.chars().count())
        .max()
        .unwrap_or(0);
    for e in notable {
        let _ = writeln!(
            out,
            "  {:<16} {:<width$}  {}",
            e.status.as_str(),
            e.endpoint,
            e.reason
        );
    }
    for p in &report.problems {
        let _ = writeln!(out, "  problem: {p}");
    }
    if !report.ignored.is_empty() {
        let _ = writeln!(
            out,
            "  ({} file(s) in this run are not read, e.g. {})",
            report.ignored.len(),
            report.ignored[0]
        );
    }
    let _ = writeln!(
        out,
        "{} endpoints: {}",
        report.endpoints.len(),
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
                c.endpoint,
                c.reason
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

/// The report as JSON (documented in docs/alarms.md).
pub fn json(report: &CheckReport) -> String {
    let mut s = serde_json::to_string_pretty(report).expect("a check report always serialises");
    s.push('\n');
    s
}

fn ms(v: Option<f64>) -> String {
    v.map(|v| format!("{v:.1} ms"))
        .unwrap_or_else(|| "–".into())
}

fn ratio(r: Option<f64>) -> String {
    r.map(|r| format!("×{r:.2}")).unwrap_or_else(|| "–".into())
}

/// A status cell; regressions in bold so they stand out in a long table.
fn markdown_status(status: CheckStatus) -> String {
    match status {
        CheckStatus::Regression => "**regression**".to_string(),
        s => s.as_str().to_string(),
    }
}

/// A GitHub step summary (`>> $GITHUB_STEP_SUMMARY`).
pub fn markdown(report: &CheckReport) -> String {
    let mut out = String::new();
    let icon = match report.outcome {
        Outcome::Pass => "✅",
        Outcome::Regression => "❌",
        Outcome::BadInput => "⚠️",
    };
    let _ = writeln!(
        out,
        "### {icon} perfdash check: {}\n",
        markdown_cell(&headline(report))
    );
    let _ = writeln!(out, "{}\n", markdown_cell(&counts(report)));
    let _ = writeln!(
        out,
        "| Endpoint | Status | Median p99 | Baseline | Ratio | Rounds p99 (ms) |"
    );
    let _ = writeln!(out, "|---|---|---:|---:|---:|---|");
    let mut rows: Vec<&EndpointCheck> = report.endpoints.iter().collect();
    // Failures first, so a long table still shows them above the fold.
    rows.sort_by_key(|e| (e.status, e.endpoint.clone()));
    for e in rows {
        let rounds: Vec<String> = e.round_p99_ms.iter().map(|r| format!("{r:.1}")).collect();
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            markdown_cell(&e.name),
            markdown_status(e.status),
            ms(e.median_p99_ms),
            ms(e.baseline_p99_ms),
            ratio(e.ratio),
            rounds.join(", ")
        );
    }
    if !report.capacity.is_empty() {
        let _ = writeln!(
            out,
            "\n**Capacity (step load)**: {}\n",
            markdown_cell(&capacity_counts(report))
        );
        let _ = writeln!(
            out,
            "| Endpoint | Status | Knee | Baseline knee | Ratio | Limit |"
        );
        let _ = writeln!(out, "|---|---|---:|---:|---:|---:|");
        let mut rows: Vec<&CapacityCheck> = report.capacity.iter().collect();
        rows.sort_by_key(|c| (c.status, c.endpoint.clone()));
        let rps = |v: Option<f64>| {
            v.map(|v| format!("{v:.1} req/s"))
                .unwrap_or_else(|| "–".into())
        };
        for c in rows {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} |",
                markdown_cell(&c.name),
                markdown_status(c.status),
                rps(c.knee_rps),
                rps(c.baseline_knee_rps),
                ratio(c.ratio),
                rps(c.limit_rps)
            );
        }
    }
    if !report.problems.is_empty() {
        let _ = writeln!(out, "\n**Unreadable inputs**\n");
        for p in &report.problems {
            let _ = writeln!(out, "- {}", markdown_cell(p));
        }
    }
    out
}

/// One JUnit test case: a failure for a regression, skipped when it was
/// not judged, the status as output otherwise.
struct JunitCase<'a> {
    classname: &'a str,
    name: &'a str,
    status: CheckStatus,
    reason: &'a str,
    failure_type: &'a str,
    failure_body: String,
}

fn junit_case(out: &mut String, case: JunitCase) {
    let _ = write!(
        out,
        "    <testcase classname=\"{}\" name=\"{}\" time=\"0\"",
        xml_escape(case.classname),
        xml_escape(case.name)
    );
    let detail = xml_escape(&format!("{}: {}", case.status.as_str(), case.reason));
    let _ = match case.status {
        CheckStatus::Regression => writeln!(
            out,
            ">\n      <failure type=\"{}\" message=\"{detail}\">{}</failure>\n    </testcase>",
            case.failure_type,
            xml_escape(&case.failure_body)
        ),
        s if s.is_skipped() => writeln!(
            out,
            ">\n      <skipped message=\"{detail}\"/>\n    </testcase>"
        ),
        _ => writeln!(
            out,
            ">\n      <system-out>{detail}</system-out>\n    </testcase>"
        ),
    };
}

/// JUnit XML: one test case per endpoint; regressions are failures,
/// unjudged endpoints are skipped, unreadable inputs are errors.
pub fn junit(report: &CheckReport) -> String {
    let failures =
        report.count(CheckStatus::Regression) + report.capacity_count(CheckStatus::Regression);
    let skipped = report
        .endpoints
        .iter()
        .map(|e| e.status)
        .chain(report.capacity.iter().map(|c| c.status))
        .filter(|s| s.is_skipped())
        .count();
    let errors = usize::from(!report.problems.is_empty());
    let tests = report.endpoints.len() + report.capacity.len() + errors;
    let suite = format!("perfdash check {} ({})", report.run, report.policy);
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"perfdash check\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\">"
    );
    let _ = writeln!(
        out,
        "  <testsuite name=\"{}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\" timestamp=\"{}\">",
        xml_escape(&suite),
        crate::calendar::junit_timestamp(report.started_at)
    );
    let policy_class = format!("perfdash.{}", report.policy);
    for e in &report.endpoints {
        let rounds: Vec<String> = e.round_p99_ms.iter().map(|r| format!("{r:.1}")).collect();
        junit_case(
            &mut out,
            JunitCase {
                classname: &policy_class,
                name: &e.endpoint,
                status: e.status,
                reason: &e.reason,
                failure_type: "regression",
                failure_body: format!(
                    "{} ({}): round p99s {} ms",
                    e.name,
                    e.endpoint,
                    rounds.join(", ")
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
                status: c.status,
                reason: &c.reason,
                failure_type: "capacity-regression",
                failure_body: format!("{} ({}): {}", c.name, c.endpoint, c.reason),
            },
        );
    }
    if !report.problems.is_empty() {
        let _ = writeln!(
            out,
            "    <testcase classname=\"perfdash.input\" name=\"inputs of run {}\" time=\"0\">\n      <error type=\"bad-input\" message=\"{} unreadable input(s)\">{}</error>\n    </testcase>",
            xml_escape(&report.run),
            report.problems.len(),
            xml_escape(&report.problems.join("\n"))
        );
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}
