//! `history.html`: every change point of every endpoint, newest first,
//! and the environment changes.

use askama::Template;

use super::filters;

use super::context::{Ctx, RunLabel, UntrustedRun};
use super::format as f;
use super::rows::{ChangePointRow, EnvChangeRow, Page, change_point_row, env_change_row, render};
use crate::analyse::EndpointAnalysis;
use crate::analyse::changepoint::LevelShift;
use crate::error::Error;

#[derive(Template)]
#[template(path = "history.html")]
pub struct HistoryPage {
    pub root: &'static str,
    /// Every endpoint's change points, newest first.
    pub change_points: Vec<ChangePointRow>,
    pub env_changes: Vec<EnvChangeRow>,
    pub regressions: usize,
    pub improvements: usize,
    pub settings_line: String,
    /// `annotations/*.toml`, newest first.
    pub annotations: Vec<AnnotationRow>,
    /// Runs whose time cannot be trusted, listed apart: where they belong
    /// in the history is unknown.
    pub untrusted: Vec<UntrustedRun>,
}

/// One annotation as the history page lists it.
pub struct AnnotationRow {
    /// `2026-11-19 14:30 UTC`.
    pub when: String,
    /// The run it was given by, if any.
    pub run: Option<RunLabel>,
    pub text: String,
    pub link: String,
    /// `every endpoint`, or the endpoints' names with their pages.
    pub endpoints: Vec<(String, String)>,
    pub source: String,
}

/// The annotations, newest first, links relative to the site root.
pub fn annotation_rows(ctx: &Ctx) -> Vec<AnnotationRow> {
    ctx.analysis
        .annotations
        .iter()
        .rev()
        .map(|a| AnnotationRow {
            when: f::datetime(a.at),
            run: a.run.as_deref().map(|r| ctx.run_label(r, "", None)),
            text: a.text.clone(),
            link: a.link.clone().unwrap_or_default(),
            endpoints: a
                .endpoints
                .iter()
                .map(|id| {
                    let name = ctx
                        .analysis
                        .endpoints
                        .iter()
                        .find(|e| &e.id == id)
                        .map_or(id.clone(), |e| e.name.clone());
                    let href = ctx
                        .slugs
                        .endpoints
                        .get(id)
                        .map(|s| format!("endpoints/{s}.html"))
                        .unwrap_or_default();
                    (name, href)
                })
                .collect(),
            source: a.source.clone(),
        })
        .collect()
}

/// `history.html`: every change point of every endpoint, newest first
/// (ties by endpoint name, then id), and the environment changes.
pub fn history_page(ctx: &Ctx) -> Result<Page, Error> {
    let analysis = ctx.analysis;
    let mut shifts: Vec<(&LevelShift, &EndpointAnalysis)> = analysis
        .endpoints
        .iter()
        .flat_map(|e| e.change_points.iter().map(move |cp| (cp, e)))
        .filter(|(cp, e)| {
            e.points
                .get(cp.point_index)
                .is_none_or(|p| !p.untrusted_time)
        })
        .collect();
    shifts.sort_by(|(a, ea), (b, eb)| {
        b.started_at
            .cmp(&a.started_at)
            .then_with(|| ea.name.cmp(&eb.name))
            .then_with(|| ea.id.cmp(&eb.id))
            .then_with(|| a.point_index.cmp(&b.point_index))
    });
    let c = &analysis.settings.changepoint;
    let page = HistoryPage {
        root: "",
        regressions: shifts
            .iter()
            .filter(|(cp, _)| cp.direction == "regression")
            .count(),
        improvements: shifts
            .iter()
            .filter(|(cp, _)| cp.direction != "regression")
            .count(),
        change_points: shifts
            .iter()
            .map(|(cp, e)| change_point_row(ctx, cp, e, ""))
            .collect(),
        env_changes: analysis
            .environment_changes
            .iter()
            .rev()
            .filter(|ch| ctx.trusted(&ch.run) && ctx.trusted(&ch.previous_run))
            .map(|ch| env_change_row(ctx, ch, ""))
            .collect(),
        annotations: annotation_rows(ctx),
        untrusted: ctx.untrusted_runs("", None),
        settings_line: format!(
            "Change points: Otava's E-divisive means with a t-test over each endpoint's run medians \
             (window {}, p-value under {}, minimum change {}), per stretch of runs with the same load profile; \
             runs with too few rounds are left out.",
            c.window_len,
            c.max_pvalue,
            f::percent(Some(c.min_magnitude))
        ),
    };
    Ok(("history.html".to_string(), render(&page, "history.html")?))
}
