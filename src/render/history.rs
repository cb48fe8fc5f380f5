//! `history.html`: every change point of every endpoint, newest first,
//! and the environment changes.

use askama::Template;

use super::context::Ctx;
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
}

/// `history.html`: every change point of every endpoint, newest first
/// (ties by endpoint name, then id), and the environment changes.
pub fn history_page(ctx: &Ctx) -> Result<Page, Error> {
    let analysis = ctx.analysis;
    let mut shifts: Vec<(&LevelShift, &EndpointAnalysis)> = analysis
        .endpoints
        .iter()
        .flat_map(|e| e.change_points.iter().map(move |cp| (cp, e)))
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
            .map(|ch| env_change_row(ctx, ch, ""))
            .collect(),
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
