//! Comparing two runs: the release check (`perfdash compare`, the
//! comparison and release pages).
//!
//! The rolling baseline asks "is this run slow against recent weeks"; a
//! comparison asks "what changed between these two builds, and can the
//! difference be trusted". Per endpoint present in either run:
//!
//! * each run's round p99s and their median (the gate's figure);
//! * `ratio` = median p99 of B ÷ median p99 of A. This is the statistic the
//!   gate judges, so the threshold ratio means the same thing in
//!   `perfdash check` and here;
//! * an interval for the B/A ratio from the rounds: the Hodges–Lehmann
//!   estimate of the shift of log p99 with its exact Mann–Whitney interval
//!   (see [`INTERVAL_ONE_SIDED_ALPHA`] for the level and why);
//! * the four figures side by side ([`RunFigures`]: p99 and p90, error
//!   rate, throughput, spread between rounds; failed rounds left out of
//!   the medians); B's error rate is judged against A's as the gate judges
//!   a run against its baseline, and so is its throughput when both runs
//!   record the same load profile;
//! * the verdict, from [`verdict::decide_comparison`](super::verdict::decide_comparison)
//!   (the single place the rule lives): `failed` when most of B's rounds
//!   failed.
//!
//! Why this interval: with 5 rounds a side, a bootstrap can only ever
//! return 5 distinct values and a t-interval is driven by the GC-tail
//! rounds. The Hodges–Lehmann interval over the 25 pairwise round ratios is
//! distribution-free, exact at any sample size (its coverage is a count of
//! orderings, 1 − 2·19/252 = 84.9% at 5 vs 5) and works on ratios, which
//! is how latency changes are read. Working on log p99 makes it symmetric:
//! swapping A and B inverts the ratio and mirrors the interval.
//!
//! What the interval is not: the rounds of one run share machine, time of
//! day and data state, so they are not independent draws of run-to-run
//! behaviour (pseudo-replication; docs/detection.md, "Rounds, runs and
//! small samples"). The interval says
//! whether B's rounds sit apart from A's beyond the round-to-round scatter
//! of these two runs; it does not promise that a re-run of either build
//! lands inside it. That is why the verdict also needs the gate's effect
//! size, and why a separation alone is never called a regression.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::figures::{FailedRound, RunFigures, rate_percent};
use super::gate::Outcome;
use super::verdict::{
    ComparisonEvidence, ComparisonVerdict, Figure, FigureLines, decide_comparison,
};
use crate::error::{Diagnostic, Error};
use crate::model::{Archive, EndpointRun, Run};
use crate::stats::hodges_lehmann_ratio;

/// Each tail of the round interval holds at most this probability.
///
/// 10% one-sided gives k = 6 at 5 vs 5 rounds: the interval runs from the
/// 6th smallest to the 6th largest of the 25 pairwise ratios, with exact
/// coverage 84.9%. The choice keeps the comparison as robust as the gate:
/// one GC-tail round in the slower direction spoils only 5 of the 25 pairs,
/// so a clear 30% regression stays a regression when A has one 2× round.
/// At 95% (k = 3) that single round would turn it into `inconclusive`, and
/// the gate's own median-of-5 already tolerates two such rounds. A higher
/// nominal level would also promise more than pseudo-replicated rounds can
/// deliver (see the module docs).
pub const INTERVAL_ONE_SIDED_ALPHA: f64 = 0.10;

/// Two runs compared endpoint by endpoint.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// The reference run (usually the last release).
    pub a: RunRef,
    /// The candidate run.
    pub b: RunRef,
    /// Every endpoint present in either run, sorted by id.
    pub endpoints: Vec<EndpointComparison>,
}

/// Which run a side of a comparison is.
#[derive(Debug, Clone, Serialize)]
pub struct RunRef {
    pub run: String,
    pub started_at: DateTime<Utc>,
    pub release: Option<String>,
    pub commit: Option<String>,
    /// Problems met while reading the run; non-empty means incomplete.
    pub problems: Vec<String>,
    /// A problem of the run puts its figures in doubt (a skipped round,
    /// not a second flame graph): the comparison cannot be vouched for.
    #[serde(skip)]
    pub in_doubt: bool,
}

impl RunRef {
    fn of(run: &Run) -> RunRef {
        RunRef {
            run: run.id.clone(),
            started_at: run.started_at,
            release: run.meta.release.clone(),
            commit: run.meta.commit.clone(),
            problems: run.problems.iter().map(ToString::to_string).collect(),
            in_doubt: run
                .problems
                .iter()
                .any(|d| d.kind.casts_doubt_on_verdicts()),
        }
    }

    /// `1.4.0 (2026-05-04T0300Z)` or just the id.
    pub fn label(&self) -> String {
        match &self.release {
            Some(r) => format!("{r} ({})", self.run),
            None => self.run.clone(),
        }
    }
}

/// One endpoint's figures in one run.
#[derive(Debug, Clone, Serialize)]
pub struct Side {
    /// Every round's p99, failed rounds included, in round order.
    pub round_p99_ms: Vec<f64>,
    /// Median of the usable rounds' p99 (of all rounds when none is usable).
    pub median_p99_ms: f64,
    /// Median of the usable rounds' p90.
    pub p90_ms: Option<f64>,
    /// Median of the usable rounds' requests per second.
    pub throughput_rps: Option<f64>,
    /// Median of the rounds' error rates (the one definition of a run's
    /// error rate, `analyse::figures`).
    pub error_rate: Option<f64>,
    /// (max − min) ÷ median of the usable rounds' p99.
    pub spread: Option<f64>,
    pub usable_rounds: usize,
    pub failed_rounds: Vec<FailedRound>,
    /// Most rounds failed.
    pub failed: bool,
}

impl Side {
    fn of(endpoint: &EndpointRun, failed_round_error_rate: f64) -> Option<Side> {
        let round_p99_ms: Vec<f64> = endpoint.rounds.iter().map(|r| r.stats.p99_ms).collect();
        let f = RunFigures::of(&endpoint.rounds, failed_round_error_rate);
        let median_p99_ms = f.p99_ms.or_else(|| crate::stats::median(&round_p99_ms))?;
        Some(Side {
            median_p99_ms,
            p90_ms: f.p90_ms,
            throughput_rps: f.throughput_rps,
            error_rate: f.error_rate,
            spread: f.spread,
            usable_rounds: f.usable_rounds,
            failed: f.run_failed(),
            failed_rounds: f.failed_rounds,
            round_p99_ms,
        })
    }

    /// The usable rounds' p99s (failed rounds left out).
    fn usable_p99(&self, numbers: impl Iterator<Item = u32>) -> Vec<f64> {
        self.round_p99_ms
            .iter()
            .zip(numbers)
            .filter(|(_, n)| !self.failed_rounds.iter().any(|f| f.round == *n))
            .map(|(v, _)| *v)
            .collect()
    }
}

/// One endpoint across the two runs.
#[derive(Debug, Clone, Serialize)]
pub struct EndpointComparison {
    pub id: String,
    pub name: String,
    pub threshold_ratio: f64,
    /// `None` when run A does not have the endpoint (`added`).
    pub a: Option<Side>,
    /// `None` when run B does not have the endpoint (`removed`).
    pub b: Option<Side>,
    /// Median p99 of B ÷ median p99 of A.
    pub ratio: Option<f64>,
    /// The Hodges–Lehmann B/A ratio: the median of the pairwise round ratios
    /// (geometric). Close to `ratio` unless the rounds are skewed.
    pub hodges_lehmann_ratio: Option<f64>,
    /// `[low, high]` for the B/A ratio from the rounds.
    pub ratio_interval: Option<[f64; 2]>,
    /// The exact coverage of `ratio_interval` under the shift model.
    pub interval_confidence: Option<f64>,
    /// The figures of B that crossed their lines against A's.
    pub regressed: Vec<Figure>,
    /// Why B's throughput was not judged, when it was not.
    pub throughput_not_judged: Option<String>,
    pub verdict: ComparisonVerdict,
    /// One sentence saying why, for people.
    pub reason: String,
}

impl Comparison {
    /// How many endpoints got each verdict.
    pub fn counts(&self) -> BTreeMap<ComparisonVerdict, usize> {
        let mut counts = BTreeMap::new();
        for e in &self.endpoints {
            *counts.entry(e.verdict).or_insert(0) += 1;
        }
        counts
    }

    /// Whether any endpoint regressed or failed in run B.
    pub fn has_regression(&self) -> bool {
        self.endpoints.iter().any(|e| {
            matches!(
                e.verdict,
                ComparisonVerdict::Regression | ComparisonVerdict::Failed
            )
        })
    }

    /// The outcome `perfdash compare` exits with (mapped in `src/cli/`):
    /// it cannot vouch for a comparison of runs with unreadable inputs.
    pub fn outcome(&self) -> Outcome {
        if self.a.in_doubt || self.b.in_doubt {
            Outcome::CannotVouch
        } else if self.has_regression() {
            Outcome::Regression
        } else {
            Outcome::Pass
        }
    }
}

/// Compares run `b` against run `a`, both from `archive`.
pub fn compare(archive: &Archive, a: &Run, b: &Run) -> Comparison {
    let settings = &archive.settings;
    let mut ids: Vec<&String> = a.endpoints.keys().chain(b.endpoints.keys()).collect();
    ids.sort();
    ids.dedup();
    let failed_rate = settings.analysis.failed_round_error_rate;
    // Throughput is compared only under the same recorded load profile.
    let throughput_not_judged = if a.meta.load.is_empty() || b.meta.load.is_empty() {
        Some("the load profile is not recorded in both runs ([load] in run.toml)".to_string())
    } else if a.meta.load != b.meta.load {
        Some(format!(
            "the load profiles differ: {}",
            super::comparability::describe_changes(&a.meta.load, &b.meta.load)
        ))
    } else {
        None
    };
    let endpoints = ids
        .into_iter()
        .map(|id| {
            let numbers = |run: &Run| -> Vec<u32> {
                run.endpoints
                    .get(id)
                    .map(|e| e.rounds.iter().map(|r| r.number).collect())
                    .unwrap_or_default()
            };
            compare_endpoint(
                Target::new(id, settings, throughput_not_judged.clone()),
                a.endpoints
                    .get(id)
                    .and_then(|e| Side::of(e, failed_rate))
                    .map(|s| (s, numbers(a))),
                b.endpoints
                    .get(id)
                    .and_then(|e| Side::of(e, failed_rate))
                    .map(|s| (s, numbers(b))),
            )
        })
        .collect();
    Comparison {
        a: RunRef::of(a),
        b: RunRef::of(b),
        endpoints,
    }
}

/// One endpoint's rounds in a run (`b`) against the rounds of earlier runs
/// pooled (`a`, each run's rounds in turn, numbered one after another):
/// the figures, the Hodges–Lehmann interval and the rule of a comparison
/// of two runs. `perfdash check` gives its early verdict from this when a
/// run has too few earlier runs for a baseline ([`super::gate`]).
/// `throughput_not_judged`: why the throughputs do not compare, if they do
/// not (the load profiles differ or are not recorded).
pub fn compare_rounds(
    settings: &crate::config::Settings,
    id: &str,
    a: &[&[crate::model::Round]],
    b: &[crate::model::Round],
    throughput_not_judged: Option<String>,
) -> EndpointComparison {
    let pooled: Vec<crate::model::Round> = a
        .iter()
        .flat_map(|rounds| rounds.iter())
        .zip(1u32..)
        .map(|(round, number)| crate::model::Round {
            number,
            ..round.clone()
        })
        .collect();
    let failed_rate = settings.analysis.failed_round_error_rate;
    let side = |rounds: &[crate::model::Round]| {
        let run = EndpointRun {
            rounds: rounds.to_vec().into(),
            profiles: Vec::new(),
        };
        Side::of(&run, failed_rate).map(|s| (s, rounds.iter().map(|r| r.number).collect()))
    };
    compare_endpoint(
        Target::new(id, settings, throughput_not_judged),
        side(&pooled),
        side(b),
    )
}

/// What one endpoint is compared under.
struct Target<'a> {
    id: &'a str,
    name: String,
    threshold_ratio: f64,
    expected_rounds: u32,
    lines: FigureLines,
    throughput_not_judged: Option<String>,
}

impl<'a> Target<'a> {
    /// The endpoint `id` under the archive's settings.
    fn new(
        id: &'a str,
        settings: &crate::config::Settings,
        throughput_not_judged: Option<String>,
    ) -> Self {
        Target {
            id,
            name: settings.endpoint_name(id),
            threshold_ratio: settings.threshold_ratio(id),
            expected_rounds: settings.analysis.expected_rounds,
            lines: FigureLines::of(&settings.analysis),
            throughput_not_judged,
        }
    }
}

fn compare_endpoint(
    t: Target,
    a: Option<(Side, Vec<u32>)>,
    b: Option<(Side, Vec<u32>)>,
) -> EndpointComparison {
    let mut out = EndpointComparison {
        id: t.id.to_string(),
        name: t.name,
        threshold_ratio: t.threshold_ratio,
        a: None,
        b: None,
        ratio: None,
        hodges_lehmann_ratio: None,
        ratio_interval: None,
        interval_confidence: None,
        regressed: Vec::new(),
        throughput_not_judged: None,
        verdict: ComparisonVerdict::Inconclusive,
        reason: String::new(),
    };
    let ((sa, numbers_a), (sb, numbers_b)) = match (a, b) {
        (Some(a), Some(b)) => (a, b),
        (a, b) => {
            let added = a.is_none();
            out.verdict = if added {
                ComparisonVerdict::Added
            } else {
                ComparisonVerdict::Removed
            };
            out.reason = if added {
                "only in run B"
            } else {
                "only in run A"
            }
            .to_string();
            out.a = a.map(|(s, _)| s);
            out.b = b.map(|(s, _)| s);
            return out;
        }
    };
    // Ratios need positive latencies; failed rounds measured none.
    let usable_a = sa.usable_p99(numbers_a.into_iter());
    let usable_b = sb.usable_p99(numbers_b.into_iter());
    let positive = |v: &[f64]| !v.is_empty() && v.iter().all(|v| v.is_finite() && *v > 0.0);
    if positive(&usable_a) && positive(&usable_b) {
        out.ratio = Some(sb.median_p99_ms / sa.median_p99_ms);
        let level = 1.0 - 2.0 * INTERVAL_ONE_SIDED_ALPHA;
        if let Some(shift) = hodges_lehmann_ratio(&usable_a, &usable_b, level) {
            out.hodges_lehmann_ratio = Some(shift.estimate);
            // Too few rounds for the level: no interval rather than a weaker one.
            if shift.reaches(level) {
                out.ratio_interval = Some([shift.low, shift.high]);
                out.interval_confidence = Some(shift.coverage);
            }
        }
    }
    out.throughput_not_judged = t.throughput_not_judged.clone();
    let evidence = ComparisonEvidence {
        rounds_a: sa.usable_rounds,
        rounds_b: sb.usable_rounds,
        expected_rounds: t.expected_rounds,
        ratio: out.ratio,
        interval: out.ratio_interval.map(|[l, h]| (l, h)),
        threshold_ratio: t.threshold_ratio,
        failed_a: sa.failed,
        failed_b: sb.failed,
        error_rate_a: sa.error_rate,
        error_rate_b: sb.error_rate,
        throughput_a: sa.throughput_rps,
        throughput_b: sb
            .throughput_rps
            .filter(|_| t.throughput_not_judged.is_none()),
        lines: t.lines,
    };
    let decision = decide_comparison(&evidence);
    out.verdict = decision.verdict;
    out.regressed = decision.regressed;
    out.reason = explain(&evidence, &out, &sa, &sb);
    out.a = Some(sa);
    out.b = Some(sb);
    out
}

/// The sentence shown beside a verdict. It describes the evidence the
/// verdict was decided from; it never decides anything itself.
fn explain(e: &ComparisonEvidence, out: &EndpointComparison, a: &Side, b: &Side) -> String {
    if out.verdict == ComparisonVerdict::Failed {
        return format!(
            "run B failed: {} of {} rounds failed: {}; error rate {}",
            b.failed_rounds.len(),
            b.round_p99_ms.len(),
            describe_failed(&b.failed_rounds),
            b.error_rate
                .map_or("not reported".to_string(), rate_percent)
        );
    }
    if e.failed_a {
        return format!(
            "run A failed ({} of {} rounds): nothing to compare with",
            a.failed_rounds.len(),
            a.round_p99_ms.len()
        );
    }
    let mut parts = Vec::new();
    if out.regressed.contains(&Figure::ErrorRate)
        && let (Some(ea), Some(eb)) = (e.error_rate_a, e.error_rate_b)
    {
        parts.push(format!(
            "error rate {} over its line {} (A {})",
            rate_percent(eb),
            rate_percent(e.lines.error_rate_line(ea)),
            rate_percent(ea)
        ));
    }
    if out.regressed.contains(&Figure::Throughput)
        && let (Some(ta), Some(tb)) = (e.throughput_a, e.throughput_b)
    {
        parts.push(format!(
            "throughput {tb:.1} req/s under its line {:.1} req/s (A {ta:.1} req/s, ×{})",
            e.lines.throughput_line(ta),
            fmt_ratio(tb / ta)
        ));
    }
    parts.push(explain_latency(e, decision_latency(e)));
    parts.join("; ")
}

/// What the latency rule alone said (the verdict can be a regression of
/// another figure).
fn decision_latency(e: &ComparisonEvidence) -> ComparisonVerdict {
    decide_comparison(e).latency
}

fn describe_failed(failed: &[FailedRound]) -> String {
    RunFigures {
        failed_rounds: failed.to_vec(),
        ..Default::default()
    }
    .describe_failed_rounds()
}

/// The latency part of the reason.
fn explain_latency(e: &ComparisonEvidence, verdict: ComparisonVerdict) -> String {
    let t = e.threshold_ratio;
    let expected = e.expected_rounds as usize;
    if e.rounds_a < expected || e.rounds_b < expected {
        return format!(
            "too few rounds to judge: A has {} usable, B has {} usable, {} expected",
            e.rounds_a, e.rounds_b, expected
        );
    }
    let Some(ratio) = e.ratio else {
        return "no ratio: a round p99 is zero or negative".to_string();
    };
    let Some((lo, hi)) = e.interval else {
        return format!(
            "median p99 ×{}, but too few rounds for an interval",
            fmt_ratio(ratio)
        );
    };
    let interval = format!("rounds give ×{}–{}", fmt_ratio(lo), fmt_ratio(hi));
    match verdict {
        ComparisonVerdict::Regression => {
            format!(
                "median p99 ×{} is over ×{}; {interval}, all above 1",
                fmt_ratio(ratio),
                fmt_ratio(t)
            )
        }
        ComparisonVerdict::Improvement => {
            format!(
                "median p99 ×{} is under ÷{}; {interval}, all below 1",
                fmt_ratio(ratio),
                fmt_ratio(t)
            )
        }
        ComparisonVerdict::Same => {
            format!(
                "median p99 ×{}; {interval}, inside ×{}",
                fmt_ratio(ratio),
                fmt_ratio(t)
            )
        }
        _ if ratio > t || ratio < 1.0 / t => format!(
            "median p99 ×{} is past ×{}, but the rounds overlap: {interval}, which includes 1",
            fmt_ratio(ratio),
            fmt_ratio(t)
        ),
        _ => format!(
            "median p99 ×{}, but the rounds cannot rule out a change past ×{}: {interval}",
            fmt_ratio(ratio),
            fmt_ratio(t)
        ),
    }
}

// ---------------------------------------------------------------------------
// Run selection

pub use crate::config::RunSpec;

/// Finds the run `spec` names. Errors are usage errors (exit code 2) that
/// say what was found instead.
pub fn resolve_run<'a>(archive: &'a Archive, spec: &str) -> Result<&'a Run, Error> {
    let parsed = RunSpec::parse(spec).map_err(Error::Usage)?;
    resolve_spec(archive, &parsed)
        .map_err(|msg| Error::Usage(format!("run `{}`: {msg}", spec.trim())))
}

fn resolve_spec<'a>(archive: &'a Archive, spec: &RunSpec) -> Result<&'a Run, String> {
    let runs = &archive.runs;
    match spec {
        RunSpec::Latest(back) => {
            // A run whose time cannot be trusted is never "latest" (see
            // Archive::latest_run), nor counted in `latest~N`.
            let trusted: Vec<&Run> = runs.iter().filter(|r| r.untrusted_time.is_none()).collect();
            if trusted.is_empty() {
                return Err(match runs.is_empty() {
                    true => "the archive has no runs".to_string(),
                    false => "the archive has no runs with a trusted time".to_string(),
                });
            }
            trusted
                .len()
                .checked_sub(1 + back)
                .map(|i| trusted[i])
                .ok_or_else(|| format!("the archive has only {} runs", trusted.len()))
        }
        RunSpec::Release(name) => runs
            .iter()
            .rev()
            .find(|r| r.meta.release.as_deref() == Some(name.as_str()))
            .ok_or_else(|| {
                let known: Vec<String> = release_runs(archive)
                    .into_iter()
                    .map(|(r, _)| r.to_string())
                    .collect();
                if known.is_empty() {
                    "no run is marked as a release (add release = \"1.4.0\" to its run.toml)"
                        .to_string()
                } else {
                    format!(
                        "no run is marked release = \"{name}\"; releases: {}",
                        known.join(", ")
                    )
                }
            }),
        RunSpec::Id(id) => {
            if let Some(run) = runs.iter().find(|r| &r.id == id) {
                return Ok(run);
            }
            let candidates: Vec<&Run> = runs
                .iter()
                .filter(|r| r.id.starts_with(id.as_str()))
                .collect();
            match candidates.as_slice() {
                [one] => Ok(one),
                [] => {
                    let recent: Vec<&str> =
                        runs.iter().rev().take(3).map(|r| r.id.as_str()).collect();
                    Err(format!(
                        "no run id starts with it (latest runs: {})",
                        recent.join(", ")
                    ))
                }
                many => {
                    const SHOWN: usize = 10;
                    let mut list: Vec<&str> =
                        many.iter().take(SHOWN).map(|r| r.id.as_str()).collect();
                    let more = many.len().saturating_sub(SHOWN);
                    let tail = if more > 0 {
                        format!(", … and {more} more")
                    } else {
                        String::new()
                    };
                    list.sort();
                    Err(format!(
                        "the prefix matches {} runs: {}{tail}; give more of the id",
                        many.len(),
                        list.join(", ")
                    ))
                }
            }
        }
    }
}

/// Every release and the run that stands for it (the latest run marked
/// with that release), ordered by when that run started. Releases are
/// ordered by time, not by parsing version numbers: archives name releases
/// in many ways, and the order they were measured in is what the history
/// shows.
pub fn release_runs(archive: &Archive) -> Vec<(&str, &Run)> {
    let mut latest: BTreeMap<&str, &Run> = BTreeMap::new();
    for run in &archive.runs {
        if let Some(release) = run.meta.release.as_deref() {
            latest.insert(release, run); // runs are in time order: the last one wins
        }
    }
    let mut out: Vec<(&str, &Run)> = latest.into_iter().collect();
    out.sort_by(|(ra, a), (rb, b)| {
        a.started_at
            .cmp(&b.started_at)
            .then_with(|| a.id.cmp(&b.id))
            .then(ra.cmp(rb))
    });
    out
}

// ---------------------------------------------------------------------------
// The comparisons the site shows

/// A comparison the site shows, with the names it was asked for by.
#[derive(Debug, Clone, Serialize)]
pub struct SiteComparison {
    /// What the pair was asked as, e.g. `release:1.3.0` and `latest`.
    pub spec_a: String,
    pub spec_b: String,
    pub comparison: Comparison,
}

/// The comparisons `[compare]` in perfdash.toml asks for, in this order:
/// each release against the previous release (`releases = true`), the
/// latest run against the last release before it (`latest_vs_release =
/// true`), then the listed `pairs`. A pair naming a run that is not there
/// becomes a diagnostic; the same two runs are compared only once.
pub fn site_comparisons(archive: &Archive) -> (Vec<SiteComparison>, Vec<Diagnostic>) {
    let cfg = &archive.settings.compare;
    // (asked-for A, asked-for B, the two runs or why they cannot be found)
    type Wanted<'a> = (String, String, Result<(&'a Run, &'a Run), String>);
    let mut wanted: Vec<Wanted> = Vec::new();
    let releases = release_runs(archive);
    if cfg.releases {
        for pair in releases.windows(2) {
            let ((ra, a), (rb, b)) = (pair[0], pair[1]);
            wanted.push((format!("release:{ra}"), format!("release:{rb}"), Ok((a, b))));
        }
    }
    if cfg.latest_vs_release
        && let Some(latest) = archive.latest_run()
        && let Some((name, release)) = releases
            .iter()
            .rev()
            .find(|(_, r)| r.id != latest.id && r.started_at <= latest.started_at)
    {
        wanted.push((
            format!("release:{name}"),
            "latest".to_string(),
            Ok((release, latest)),
        ));
    }
    for [sa, sb] in &cfg.pairs {
        let pair = match (resolve_run(archive, sa), resolve_run(archive, sb)) {
            (Ok(a), Ok(b)) => Ok((a, b)),
            (Err(e), _) | (_, Err(e)) => Err(e.to_string()),
        };
        wanted.push((sa.clone(), sb.clone(), pair));
    }

    let mut out: Vec<SiteComparison> = Vec::new();
    let mut diagnostics = Vec::new();
    for (spec_a, spec_b, pair) in wanted {
        match pair {
            Ok((a, b)) => {
                // The same pair asked twice is shown once. Pairs are told
                // apart by their run ids: the page's file name is the
                // renderer's business (render::compare::comparison_path, from
                // the runs' unique slugs). A file-name form of the ids used
                // to decide this, and it merged distinct runs (`a b` and
                // `a_b` both gave `a_b`).
                let same =
                    |c: &SiteComparison| c.comparison.a.run == a.id && c.comparison.b.run == b.id;
                if out.iter().any(same) {
                    continue;
                }
                out.push(SiteComparison {
                    spec_a,
                    spec_b,
                    comparison: compare(archive, a, b),
                });
            }
            Err(message) => diagnostics.push(Diagnostic {
                kind: crate::error::DiagnosticKind::Ignored,
                path: crate::config::SETTINGS_FILE.to_string(),
                line: None,
                message: format!("[compare] pair [\"{spec_a}\", \"{spec_b}\"] skipped: {message}"),
            }),
        }
    }
    (out, diagnostics)
}

/// One row per release: each endpoint's median p99 in the run that stands
/// for the release.
#[derive(Debug, Clone, Serialize)]
pub struct ReleaseHistory {
    /// `(id, display name)` of every endpoint in any release run, sorted by id.
    pub endpoints: Vec<(String, String)>,
    /// Oldest release first.
    pub releases: Vec<ReleaseRow>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ReleaseRow {
    pub release: String,
    pub run: String,
    pub started_at: DateTime<Utc>,
    /// Aligned with [`ReleaseHistory::endpoints`]; `None` where the release
    /// run lacks the endpoint.
    pub median_p99_ms: Vec<Option<f64>>,
}

/// The release history of an archive (empty when no run is a release).
pub fn release_history(archive: &Archive) -> ReleaseHistory {
    let releases = release_runs(archive);
    let mut ids: Vec<&String> = releases
        .iter()
        .flat_map(|(_, r)| r.endpoints.keys())
        .collect();
    ids.sort();
    ids.dedup();
    let rows = releases
        .iter()
        .map(|(name, run)| ReleaseRow {
            release: name.to_string(),
            run: run.id.clone(),
            started_at: run.started_at,
            median_p99_ms: ids
                .iter()
                .map(|id| {
                    run.endpoints
                        .get(*id)
                        .and_then(|e| {
                            Side::of(e, archive.settings.analysis.failed_round_error_rate)
                        })
                        .filter(|s| !s.failed)
                        .map(|s| s.median_p99_ms)
                })
                .collect(),
        })
        .collect();
    ReleaseHistory {
        endpoints: ids
            .into_iter()
            .map(|id| (id.clone(), archive.settings.endpoint_name(id)))
            .collect(),
        releases: rows,
    }
}

/// A ratio with two decimals, as verdict reasons and reports print it: 1.15.
pub fn fmt_ratio(r: f64) -> String {
    format!("{r:.2}")
}

#[cfg(test)]
mod tests;
