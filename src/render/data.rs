//! Machine-readable outputs: `data/analysis.json` (the contract documented
//! in `docs/data-contract.md`) and per-endpoint CSV downloads.
//!
//! The field names and verdict strings here are a public contract: add
//! fields freely, never rename or remove one without bumping
//! `schema_version`.

use serde::Serialize;
use std::io::Write as _;

use super::Slugs;
use std::collections::BTreeMap;

use crate::analyse::alarms::{Alarm, PolicyStats, Regression};
use crate::analyse::attribution::ProfileAnalysis;
use crate::analyse::changepoint::LevelShift;
use crate::analyse::evidence::Evidence;
use crate::analyse::figures::FigureSummary;
use crate::analyse::{Analysis, EndpointAnalysis, EnvironmentChange, Policy, RunPoint};
use crate::calendar::rfc3339;
use crate::config::{AlarmSettings, AnalysisSettings};
use crate::error::{Diagnostic, Error};
use crate::model::Round;

use super::memo::RawRounds;

/// Bumped on any incompatible change to `analysis.json`. 2: the verdict
/// `failed`, `regression` also for error rate and throughput (`figures`),
/// alarm episodes that end at the first run back under the line. 3: a
/// point's rounds are in its run's `data/runs/<slug>.json`
/// (`rounds_file`), no longer copied into `analysis.json`. 4: an alarm's
/// `run` is its first run at the new level (the first run over the line is
/// `first_over_run`), and the alarms a run-wide shift would have raised on
/// each endpoint are one `run_wide_alarms` entry instead.
pub const SCHEMA_VERSION: u32 = 4;

#[derive(Serialize)]
struct AnalysisJson<'a> {
    schema_version: u32,
    generator: String,
    settings: &'a AnalysisSettings,
    runs: Vec<RunJson<'a>>,
    endpoints: Vec<EndpointJson<'a>>,
    diagnostics: &'a [Diagnostic],
    /// Issue 5: every policy's alarms, side by side.
    alarm_settings: &'a AlarmSettings,
    policies: Vec<PolicyJson>,
    alarms: &'a [Alarm],
    /// Issue 33: one alarm per run whose endpoints moved slower together.
    run_wide_alarms: &'a [crate::analyse::alarms::RunWideAlarm],
    alarm_totals: &'a BTreeMap<Policy, PolicyStats>,
    regressions: &'a [Regression],
    alarm_weeks: f64,
    environment_changes: &'a [EnvironmentChange],
    /// Issue 9: capacity from step-load runs, per endpoint.
    capacity: CapacityJson<'a>,
    /// Issue 17: the human labels with their follow-up (owner, issue,
    /// status), the annotations, and the reviewed week as `weekly.html`
    /// shows it.
    triage: &'a [crate::model::TriageLabel],
    annotations: &'a [crate::model::Annotation],
    weekly: Option<WeeklyJson>,
    /// Issue 18: the services endpoints are grouped into (absent when no
    /// endpoint has `service` in perfdash.toml).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    services: Vec<ServiceJson<'a>>,
}

/// One service: its page and its endpoints' ids.
#[derive(Serialize)]
struct ServiceJson<'a> {
    name: &'a str,
    slug: &'a str,
    /// Relative to the site root.
    page: String,
    endpoints: Vec<&'a str>,
}

/// The week `weekly.html` reviews and every count on it.
#[derive(Serialize)]
struct WeeklyJson {
    /// `2026-W48`.
    week: String,
    /// Half-open: `from` ≤ t < `to`.
    from: String,
    to: String,
    policy: &'static str,
    runs: Vec<String>,
    open_problems: Vec<crate::analyse::problems::Problem>,
    /// Alarms whose first run is in the week, per policy (the back-test's
    /// count; the page lists `policy`'s alone).
    new_alarms: BTreeMap<Policy, usize>,
    /// What the page lists: `policy`'s new alarms, one entry per endpoint
    /// and suspect commit range, with the runs of its alarms.
    new_alarm_groups: Vec<AlarmGroupJson>,
    /// Alarms of `policy` up to the end of the week without a label, and
    /// open capacity problems without one.
    untriaged: usize,
    /// Endpoints with a run judged an improvement in the week.
    improvements: Vec<crate::analyse::improvements::Improvement>,
}

#[derive(Serialize)]
struct AlarmGroupJson {
    endpoint: String,
    suspect: crate::analyse::evidence::SuspectRange,
    /// The run each of its alarms began with, oldest first.
    alarm_runs: Vec<String>,
    /// The state of its latest alarm.
    state: crate::analyse::alarms::AlarmState,
}

#[derive(Serialize)]
struct CapacityJson<'a> {
    settings: &'a crate::config::CapacitySettings,
    endpoints: Vec<CapacityEndpointJson<'a>>,
}

#[derive(Serialize)]
struct CapacityEndpointJson<'a> {
    slug: &'a str,
    /// The capacity page, relative to the site root.
    page: String,
    /// Issue 17: the recommended limit over recent step-load runs at the
    /// current level (median, min, max, runs).
    limit_range: Option<crate::analyse::capacity::LimitRange>,
    #[serde(flatten)]
    capacity: &'a crate::analyse::capacity::EndpointCapacity,
}

#[derive(Serialize)]
struct PolicyJson {
    name: &'static str,
    summary: &'static str,
}

#[derive(Serialize)]
struct RunJson<'a> {
    id: &'a str,
    slug: &'a str,
    started_at: String,
    commit: Option<&'a str>,
    branch: Option<&'a str>,
    release: Option<&'a str>,
    notes: Option<&'a str>,
    incomplete: bool,
    problems: Vec<String>,
    load: &'a BTreeMap<String, String>,
    environment: &'a BTreeMap<String, String>,
    /// Most endpoints of the run moved together (`null` otherwise).
    environment_suspect: &'a Option<crate::analyse::RunWideShift>,
    /// Why `started_at` cannot be trusted (`null` when it can): such a run
    /// is never the latest and stretches no time axis or window.
    untrusted_time: Option<&'a str>,
    /// A run of another branch than the main one: the main baseline it
    /// was judged against (`null` for a main run).
    judged_against: &'a Option<crate::analyse::BranchBase>,
    /// Its series under `[analysis] series_by` (`null` without it).
    series: Option<&'a str>,
    /// The host changed against its baseline runs (`null` otherwise).
    host_changed: Option<&'a str>,
}

#[derive(Serialize)]
struct EndpointJson<'a> {
    id: &'a str,
    name: &'a str,
    slug: &'a str,
    /// Issue 18: `[endpoints.<id>] service` (`ungrouped` for endpoints
    /// without one when others have one); absent when no endpoint has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    service: Option<&'a str>,
    threshold_ratio: f64,
    runs: Vec<PointJson<'a>>,
    /// Runs of other branches, each judged against the main baseline;
    /// never part of `runs`.
    branch_runs: Vec<PointJson<'a>>,
    policies: Option<&'a BTreeMap<Policy, PolicyStats>>,
    /// Issue 33: how the sensitive policy reads the latest run.
    sensitive_reading: Option<&'a crate::analyse::alarms::SensitiveReading>,
    /// Issue 6: level shifts found by change-point detection.
    change_points: &'a [LevelShift],
}

#[derive(Serialize)]
struct PointJson<'a> {
    run: &'a str,
    started_at: String,
    round_p99_ms: &'a [f64],
    median_p99_ms: f64,
    baseline_p99_ms: Option<f64>,
    ratio: Option<f64>,
    /// Issue 33: the p99 line as a ratio to the baseline: the threshold
    /// ratio, or the noise line where the endpoint's own noise is wider.
    line_ratio: f64,
    /// Issue 33: the endpoint's run-to-run spread the line was widened by
    /// (σ of the log of its recent run medians); `null` until measured.
    noise_spread: Option<f64>,
    verdict: &'static str,
    baseline_runs: &'a [std::sync::Arc<str>],
    not_comparable: Option<&'a str>,
    /// Why there is no baseline, whenever there is none.
    no_baseline_reason: Option<&'a str>,
    /// The four figures against their baselines and lines, failed rounds,
    /// and the figures that crossed their lines.
    figures: FigureSummary,
    /// Issue 18: the file holding this point's rounds (its run's, with
    /// every endpoint's), relative to the site root; the rounds were 59 %
    /// of a point's JSON, copied again into every build's analysis.json.
    rounds_file: String,
    /// Issue 4: flame-graph profiles, their category shares, the change
    /// against the baseline's profile and, on regressions, the attribution.
    profiles: &'a [ProfileAnalysis],
    /// Issue 5: a regression inside a change triaged `accepted` (shown as
    /// accepted, not as an alarm).
    accepted_change: bool,
    /// Issue 6: the rounds' band, likely GC/noise rounds and the shift of
    /// this run's median against its baseline window.
    evidence: &'a Evidence,
}

fn point_json<'a>(p: &'a RunPoint, slugs: &Slugs) -> PointJson<'a> {
    PointJson {
        run: &p.run,
        started_at: rfc3339(p.started_at),
        round_p99_ms: &p.round_p99_ms,
        median_p99_ms: p.median_p99_ms,
        baseline_p99_ms: p.baseline_p99_ms,
        ratio: p.ratio,
        line_ratio: p.line_ratio(),
        noise_spread: p.decided_from.noise_spread,
        verdict: p.verdict.as_str(),
        baseline_runs: &p.baseline_runs,
        not_comparable: p.not_comparable.as_deref(),
        no_baseline_reason: p.no_baseline_reason.as_deref(),
        figures: FigureSummary::of(p),
        rounds_file: run_rounds_path(slugs.run(&p.run)),
        profiles: &p.profiles,
        accepted_change: p.accepted_change,
        evidence: &p.evidence,
    }
}

fn endpoint_json<'a>(
    analysis: &'a Analysis,
    slugs: &'a Slugs,
    e: &'a EndpointAnalysis,
) -> EndpointJson<'a> {
    let points = |points: &'a [RunPoint]| points.iter().map(|p| point_json(p, slugs)).collect();
    EndpointJson {
        id: &e.id,
        name: &e.name,
        slug: slugs.endpoint(&e.id),
        service: analysis.settings.endpoint_service(&e.id),
        threshold_ratio: e.threshold_ratio,
        runs: points(&e.points),
        branch_runs: points(&e.branch_points),
        policies: analysis.alarms.endpoint(&e.id).map(|a| &a.policies),
        sensitive_reading: analysis
            .alarms
            .endpoint(&e.id)
            .and_then(|a| a.sensitive.as_ref()),
        change_points: &e.change_points,
    }
}

/// `data/analysis.json` in memory, compact (see [`write_analysis_json`]).
pub fn analysis_json(
    analysis: &Analysis,
    slugs: &Slugs,
    week: crate::analyse::weekly::WeekSpec,
) -> Result<Vec<u8>, Error> {
    let mut bytes = Vec::new();
    write_analysis_json(analysis, slugs, week, false, &mut bytes)?;
    Ok(bytes)
}

/// Writes `data/analysis.json` into `out` as it is serialised, never
/// holding the document (about 150 MB at 120 endpoints × 3 years):
/// compact, or indented with `pretty` (`build --pretty-json`, for reading
/// and diffing; indentation was 47 % of the pretty file). Ends with a
/// newline either way.
pub fn write_analysis_json(
    analysis: &Analysis,
    slugs: &Slugs,
    week: crate::analyse::weekly::WeekSpec,
    pretty: bool,
    out: &mut dyn std::io::Write,
) -> Result<(), Error> {
    let services = super::service::services(analysis);
    let weekly =
        super::weekly::review_and_problems(analysis, week).map(|(review, problems)| WeeklyJson {
            week: review.title.clone(),
            from: rfc3339(review.from),
            to: rfc3339(review.to),
            policy: review.policy.name(),
            runs: review.runs.clone(),
            untriaged: review.untriaged.len() + super::weekly::untriaged_capacity(&problems),
            open_problems: problems,
            new_alarms: review.new_by_policy.clone(),
            new_alarm_groups: review
                .new_groups
                .iter()
                .map(|g| AlarmGroupJson {
                    endpoint: g.endpoint.clone(),
                    suspect: g.suspect.clone(),
                    alarm_runs: g.alarms.iter().map(|a| a.run.clone()).collect(),
                    state: g.latest().state,
                })
                .collect(),
            improvements: crate::analyse::improvements::week_improvements(
                analysis,
                review.from,
                review.to,
            ),
        });
    let doc = AnalysisJson {
        schema_version: SCHEMA_VERSION,
        generator: format!("perfdash {}", env!("CARGO_PKG_VERSION")),
        settings: &analysis.settings.analysis,
        runs: analysis
            .runs
            .iter()
            .map(|r| RunJson {
                id: &r.id,
                slug: slugs.run(&r.id),
                started_at: rfc3339(r.started_at),
                commit: r.meta.commit.as_deref(),
                branch: r.meta.branch.as_deref(),
                release: r.meta.release.as_deref(),
                notes: r.meta.notes.as_deref(),
                incomplete: !r.problems.is_empty(),
                problems: r.problems.iter().map(ToString::to_string).collect(),
                load: &r.meta.load,
                environment: &r.meta.environment,
                environment_suspect: &r.environment_suspect,
                untrusted_time: r.untrusted_time.as_deref(),
                judged_against: &r.branch,
                series: r.series.as_deref(),
                host_changed: r.host_changed.as_deref(),
            })
            .collect(),
        endpoints: analysis
            .endpoints
            .iter()
            .map(|e| endpoint_json(analysis, slugs, e))
            .collect(),
        diagnostics: &analysis.diagnostics,
        alarm_settings: &analysis.settings.alarms,
        policies: Policy::ALL
            .iter()
            .map(|p| PolicyJson {
                name: p.name(),
                summary: p.summary(),
            })
            .collect(),
        alarms: &analysis.alarms.alarms,
        run_wide_alarms: &analysis.alarms.run_wide,
        alarm_totals: &analysis.alarms.totals,
        regressions: &analysis.alarms.regressions,
        alarm_weeks: analysis.alarms.weeks,
        environment_changes: &analysis.environment_changes,
        capacity: CapacityJson {
            settings: &analysis.settings.capacity,
            endpoints: analysis
                .capacity
                .iter()
                .map(|c| CapacityEndpointJson {
                    slug: slugs.endpoint(&c.id),
                    page: super::capacity::capacity_href(slugs, &c.id),
                    limit_range: c.limit_range(super::capacity::LIMIT_RUNS),
                    capacity: c,
                })
                .collect(),
        },
        triage: &analysis.alarms.labels,
        annotations: &analysis.annotations,
        weekly,
        services: services
            .iter()
            .map(|s| ServiceJson {
                name: s.name,
                slug: &s.slug,
                page: s.href(""),
                endpoints: s.endpoints.iter().map(|e| e.id.as_str()).collect(),
            })
            .collect(),
    };
    let mut out = std::io::BufWriter::with_capacity(1 << 16, out);
    let result = match pretty {
        true => serde_json::to_writer_pretty(&mut out, &doc),
        false => serde_json::to_writer(&mut out, &doc),
    };
    // An I/O error (a full disk) keeps its kind, so that the writer can
    // say how much space the site needs.
    result.map_err(|e| match e.io_error_kind() {
        Some(_) => Error::Io {
            path: "data/analysis.json".into(),
            source: std::io::Error::from(e),
        },
        None => Error::Internal(format!("analysis.json: {e}")),
    })?;
    out.write_all(b"\n")
        .and_then(|()| out.flush())
        .map_err(|e| Error::io(std::path::Path::new("data/analysis.json"), e))
}

/// Where a run's rounds are, relative to the site root.
pub fn run_rounds_path(run_slug: &str) -> String {
    format!("data/runs/{run_slug}.json")
}

/// `data/runs/<slug>.json`: every endpoint's rounds in one run, as read
/// (docs/data-contract.md). A run's rounds do not change when runs are
/// added, so the page memo links the file from the previous site instead
/// of writing it again; the key is the rounds' bits ([`RawRounds`]).
#[derive(Debug, serde::Serialize)]
pub struct RunRoundsInputs<'a> {
    path: String,
    run: &'a str,
    /// In endpoint order.
    endpoints: Vec<(&'a str, RawRounds<'a>)>,
    pretty: bool,
}

impl<'a> RunRoundsInputs<'a> {
    /// The file of run `i` (an index into `analysis.runs`).
    pub fn of(ctx: &super::context::Ctx<'a>, i: usize, pretty: bool) -> RunRoundsInputs<'a> {
        let run = &ctx.analysis.runs[i];
        RunRoundsInputs {
            path: run_rounds_path(ctx.slugs.run(&run.id)),
            run: &run.id,
            endpoints: ctx
                .points_of_run(i)
                .iter()
                .map(|&(e, p)| (e.id.as_str(), ctx.raw_rounds(&p.rounds)))
                .collect(),
            pretty,
        }
    }

    /// The file, from these inputs alone.
    pub fn render(&self) -> Result<Vec<super::rows::Page>, Error> {
        #[derive(Serialize)]
        struct RunRoundsJson<'a> {
            schema_version: u32,
            run: &'a str,
            endpoints: BTreeMap<&'a str, Vec<RoundJson<'a>>>,
        }
        let doc = RunRoundsJson {
            schema_version: SCHEMA_VERSION,
            run: self.run,
            endpoints: self
                .endpoints
                .iter()
                .map(|(e, r)| (*e, r.rounds().iter().map(RoundJson::of).collect()))
                .collect(),
        };
        let mut bytes = match self.pretty {
            true => serde_json::to_vec_pretty(&doc),
            false => serde_json::to_vec(&doc),
        }
        .map_err(|e| Error::Internal(format!("{}: {e}", self.path)))?;
        bytes.push(b'\n');
        Ok(vec![(self.path.clone(), bytes)])
    }
}

/// A round as the data files show it (docs/data-contract.md): every field,
/// but `warmup_s` and `cross_check` only when there is one. Fields are
/// taken by destructuring, so a field added to `Round` does not compile
/// until it is placed here.
#[derive(Serialize)]
struct RoundJson<'a> {
    number: u32,
    label: &'a Option<String>,
    source: &'a str,
    format: crate::model::SourceFormat,
    stats: &'a crate::model::RoundStats,
    #[serde(skip_serializing_if = "Option::is_none")]
    warmup_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cross_check: Option<&'a crate::model::CrossCheck>,
}

impl<'a> RoundJson<'a> {
    fn of(round: &'a Round) -> RoundJson<'a> {
        let Round {
            number,
            label,
            source,
            format,
            stats,
            warmup_s,
            cross_check,
        } = round;
        RoundJson {
            number: *number,
            label,
            source,
            format: *format,
            stats,
            warmup_s: *warmup_s,
            cross_check: cross_check.as_deref(),
        }
    }
}

/// A CSV cell that a spreadsheet would run as a formula (`=`, `+`, `-`,
/// `@`, tab, CR) is prefixed with `'`, the usual defence; numbers are
/// written by perfdash itself and never need it.
pub fn csv_safe(cell: &str) -> String {
    match cell.chars().next() {
        Some('=' | '+' | '-' | '@' | '\t' | '\r') => format!("'{cell}"),
        _ => cell.to_string(),
    }
}

fn opt(v: Option<f64>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

/// One endpoint's history as CSV: one row per run.
pub fn endpoint_csv(endpoint: &EndpointAnalysis) -> Result<Vec<u8>, Error> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let err = |e: csv::Error| Error::Internal(format!("CSV for {}: {e}", endpoint.id));
    w.write_record([
        "endpoint",
        "run",
        "started_at",
        "rounds",
        "round_p99_ms",
        "median_p99_ms",
        "baseline_p99_ms",
        "ratio",
        "verdict",
        "p90_ms",
        "error_rate",
        "baseline_error_rate",
        "throughput_rps",
        "baseline_throughput_rps",
        "spread",
        "failed_rounds",
        "regressed",
    ])
    .map_err(err)?;
    for p in &endpoint.points {
        let rounds: Vec<String> = p.round_p99_ms.iter().map(|v| v.to_string()).collect();
        w.write_record([
            csv_safe(&endpoint.id),
            csv_safe(&p.run),
            rfc3339(p.started_at),
            p.rounds.len().to_string(),
            rounds.join(";"),
            p.median_p99_ms.to_string(),
            p.baseline_p99_ms.map(|b| b.to_string()).unwrap_or_default(),
            p.ratio.map(|r| r.to_string()).unwrap_or_default(),
            p.verdict.as_str().to_string(),
            opt(p.figures.p90_ms),
            opt(p.figures.error_rate),
            opt(p.baseline_error_rate),
            opt(p.figures.throughput_rps),
            opt(p.baseline_throughput_rps),
            opt(p.figures.spread),
            p.figures
                .failed_rounds
                .iter()
                .map(|f| f.round.to_string())
                .collect::<Vec<_>>()
                .join(";"),
            p.regressed
                .iter()
                .map(|f| f.as_str())
                .collect::<Vec<_>>()
                .join(";"),
        ])
        .map_err(err)?;
    }
    w.into_inner()
        .map_err(|e| Error::Internal(format!("CSV for {}: {e}", endpoint.id)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formula_cells_are_defused() {
        assert_eq!(csv_safe("=HYPERLINK(\"x\")"), "'=HYPERLINK(\"x\")");
        assert_eq!(csv_safe("+1"), "'+1");
        assert_eq!(csv_safe("-2"), "'-2");
        assert_eq!(csv_safe("@SUM"), "'@SUM");
        assert_eq!(csv_safe("order-list"), "order-list");
    }
}
