//! The four figures of a run (p99/p90, error rate, throughput, spread
//! between rounds) as the pages show them, with the ones that crossed
//! their lines marked, and a run's failed rounds and environment mark.
//! Every page takes them from here so they read the same everywhere.

use super::format as f;
use crate::analyse::figures::{FigureSummary, rate_percent};
use crate::analyse::verdict::Figure;
use crate::analyse::{RunInfo, RunPoint};
use crate::model::Round;

/// One figure's cell.
#[derive(Debug, Clone, serde::Serialize)]
pub struct FigureCell {
    pub text: String,
    /// Crossed its line: shown in red.
    pub over: bool,
    /// Its baseline and line, for the tooltip.
    pub title: String,
}

/// The figures of one run of one endpoint, display-ready.
#[derive(Debug, Clone, serde::Serialize)]
pub struct FiguresView {
    pub p99: FigureCell,
    pub p90: String,
    pub error_rate: FigureCell,
    pub throughput: FigureCell,
    pub spread: String,
    /// "error rate, throughput": what made the verdict a regression
    /// (empty for p99 alone, whose cell is marked).
    pub regressed: String,
    /// "rounds 1–5 (100% errors)", empty when no round failed.
    pub failed_rounds: String,
}

impl FiguresView {
    pub fn of(s: &FigureSummary) -> FiguresView {
        let over = |f: Figure| s.regressed.contains(&f);
        let line = |baseline: String, line: String| match (baseline.as_str(), line.as_str()) {
            ("–", _) => "no baseline".to_string(),
            (b, "–") => format!("baseline {b}"),
            (b, l) => format!("baseline {b}, line {l}"),
        };
        FiguresView {
            p99: FigureCell {
                text: f::opt_ms(s.p99_ms),
                over: over(Figure::P99),
                title: line(f::opt_ms(s.baseline_p99_ms), f::opt_ms(s.p99_line_ms)),
            },
            p90: f::opt_ms(s.p90_ms),
            error_rate: FigureCell {
                text: s.error_rate.map(rate_percent).unwrap_or_else(|| "–".into()),
                over: over(Figure::ErrorRate),
                title: line(
                    s.baseline_error_rate
                        .map(rate_percent)
                        .unwrap_or_else(|| "–".into()),
                    s.error_rate_line
                        .map(rate_percent)
                        .unwrap_or_else(|| "–".into()),
                ),
            },
            throughput: FigureCell {
                text: f::rate(s.throughput_rps),
                over: over(Figure::Throughput),
                title: match &s.throughput_not_judged {
                    Some(why) => format!("not judged: {why}"),
                    None => line(
                        f::rate(s.baseline_throughput_rps),
                        f::rate(s.throughput_line_rps),
                    ),
                },
            },
            spread: f::percent(s.spread),
            // A p99 regression is the usual one and its cell is marked
            // already; the words are for the others.
            regressed: if s.regressed == [Figure::P99] {
                String::new()
            } else {
                s.regressed
                    .iter()
                    .map(|f| f.words())
                    .collect::<Vec<_>>()
                    .join(", ")
            },
            failed_rounds: crate::analyse::RunFigures {
                failed_rounds: s.failed_rounds.clone(),
                ..Default::default()
            }
            .describe_failed_rounds(),
        }
    }

    pub fn of_point(p: &RunPoint) -> FiguresView {
        FiguresView::of(&FigureSummary::of(p))
    }
}

/// One round's p99 in a list of rounds; a failed round says so with its
/// error rate.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RoundCell {
    pub text: String,
    pub failed: bool,
}

/// The rounds of a run as cells, failed rounds marked.
pub fn round_cells(p: &RunPoint) -> Vec<RoundCell> {
    p.rounds.iter().map(|r| round_cell(p, r)).collect()
}

fn round_cell(p: &RunPoint, r: &Round) -> RoundCell {
    match failure(&p.figures.failed_rounds, r) {
        Some(why) => RoundCell {
            text: format!("failed: {why}"),
            failed: true,
        },
        None => RoundCell {
            text: f::ms(r.stats.p99_ms),
            failed: false,
        },
    }
}

/// Why round `r` failed, if `failed` (a run's failed rounds) has it:
/// "100% errors".
fn failure(failed: &[crate::analyse::figures::FailedRound], r: &Round) -> Option<String> {
    let failed = failed.iter().find(|f| f.round == r.number)?;
    Some(match failed.error_rate {
        Some(e) => format!("{} errors", rate_percent(e)),
        None => failed.reason.describe().to_string(),
    })
}

/// Why round `r` failed (`failed`: its run's failed rounds), or empty:
/// "100% errors".
pub fn round_failure(failed: &[crate::analyse::figures::FailedRound], r: &Round) -> String {
    failure(failed, r).unwrap_or_default()
}

/// "environment suspect: 9 of 12 endpoints slower together (median
/// ×1.20)", or empty.
pub fn environment_mark(run: &RunInfo) -> String {
    run.environment_suspect
        .as_ref()
        .map(|s| format!("environment suspect: {}", s.describe()))
        .unwrap_or_default()
}
