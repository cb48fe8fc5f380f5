//! `releases.html`: the release history (each release's median p99 per
//! endpoint, and its chart) and the list of comparisons.

use askama::Template;

use super::charts::release::release_chart;
use super::compare::{comparison_path, comparison_summary};
use super::context::{Ctx, RunLabel};
use super::format as f;
use super::rows::{Page, render};
use crate::error::Error;

/// The release history page, relative to the site root.
pub const RELEASES_PAGE: &str = "releases.html";

pub struct ReleaseCell {
    pub median: String,
    pub change: String,
}

pub struct ReleaseRowView {
    pub release: String,
    pub run: RunLabel,
    pub cells: Vec<ReleaseCell>,
}

pub struct ComparisonLink {
    pub title: String,
    pub asked_as: String,
    pub href: String,
    pub summary: String,
    pub regressions: usize,
}

#[derive(Template)]
#[template(path = "releases.html")]
pub struct ReleasesPage {
    pub root: &'static str,
    /// `(name, endpoint page href)` per column.
    pub endpoints: Vec<(String, String)>,
    pub rows: Vec<ReleaseRowView>,
    pub chart: String,
    pub comparisons: Vec<ComparisonLink>,
}

/// The release history page.
pub fn releases_page(ctx: &Ctx) -> Result<Page, Error> {
    let (analysis, slugs) = (ctx.analysis, ctx.slugs);
    let history = &analysis.releases;
    let comparisons = analysis
        .comparisons
        .iter()
        .map(|c| {
            let (summary, regressions) = comparison_summary(c);
            ComparisonLink {
                title: format!("{} → {}", c.comparison.a.label(), c.comparison.b.label()),
                asked_as: format!("{} → {}", c.spec_a, c.spec_b),
                href: comparison_path(c, slugs),
                summary,
                regressions,
            }
        })
        .collect();
    let endpoints = history
        .endpoints
        .iter()
        .map(|(id, name)| {
            let href = slugs
                .endpoints
                .get(id)
                .map(|s| format!("endpoints/{s}.html"))
                .unwrap_or_default();
            (name.clone(), href)
        })
        .collect();
    let rows = history
        .releases
        .iter()
        .enumerate()
        .map(|(i, r)| ReleaseRowView {
            release: r.release.clone(),
            run: ctx.run_label(&r.run, "", None),
            cells: r
                .median_p99_ms
                .iter()
                .enumerate()
                .map(|(j, m)| {
                    let prev = i
                        .checked_sub(1)
                        .and_then(|p| history.releases[p].median_p99_ms[j]);
                    ReleaseCell {
                        median: f::opt_ms(*m),
                        change: match (m, prev) {
                            (Some(m), Some(p)) if p > 0.0 => f::change(Some(m / p)),
                            _ => String::new(),
                        },
                    }
                })
                .collect(),
        })
        .collect();
    let page = ReleasesPage {
        root: "",
        endpoints,
        rows,
        chart: release_chart(history, analysis.settings.analysis.threshold_ratio),
        comparisons,
    };
    Ok((RELEASES_PAGE.to_string(), render(&page, RELEASES_PAGE)?))
}
