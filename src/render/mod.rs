//! Rendering: [`Analysis`] → an in-memory [`Site`]. Nothing here touches
//! the disk; `crate::write` does.
//!
//! Site layout (stable URLs; slugs from [`slug::unique_slugs`]):
//!
//! ```text
//! index.html                      overview
//! endpoints/<endpoint-slug>.html  one page per endpoint (the last year in full)
//! endpoints/<endpoint-slug>/<year>.html  one year of an endpoint's runs, when its history is longer
//! services/<service-slug>.html    one page per service, when endpoints have services
//! runs/index.html                 all runs
//! runs/<run-slug>.html            one page per run
//! weekly.html                     the weekly review (alarms, triage, policies)
//! history.html                    every change point, newest first, and environment changes
//! releases.html                   release history and the list of comparisons
//! compare/<a-slug>_vs_<b-slug>.html  one page per comparison in `[compare]`
//! capacity/<endpoint-slug>.html   knee, limit and steps of step-load runs (capacity)
//! data/analysis.json              the JSON data contract (docs/data-contract.md)
//! data/endpoints/<slug>.csv       each endpoint's history as CSV
//! flame/<endpoint-slug>/<run-slug>.<kind>.{html,svg,diff.svg}  flame graphs (flame_pages)
//! static/…                        CSS, JS, favicon (embedded in the binary)
//! ```

mod assets;
pub mod capacity;
pub mod charts;
pub mod compare;
pub mod context;
pub mod data;
pub mod display;
pub mod endpoint;
pub mod evidence;
pub mod figures;
pub mod flame;
pub mod flame_pages;
pub mod format;
pub mod history;
pub mod overview;
pub mod palette;
pub mod releases;
pub mod rows;
pub mod run;
pub mod service;
/// Page file names (`crate::slug`), under the path the pages use.
pub use crate::slug;
pub mod weekly;

use std::collections::BTreeMap;

use crate::analyse::Analysis;
use crate::error::Error;

/// The rendered site: relative path (with `/`) → file bytes.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Site {
    files: BTreeMap<String, Vec<u8>>,
}

impl Site {
    pub fn insert(&mut self, path: &str, bytes: Vec<u8>) {
        self.files.insert(path.to_string(), bytes);
    }

    pub fn get(&self, path: &str) -> Option<&[u8]> {
        self.files.get(path).map(Vec::as_slice)
    }

    /// Files in path order.
    pub fn files(&self) -> impl Iterator<Item = (&str, &[u8])> {
        self.files.iter().map(|(p, b)| (p.as_str(), b.as_slice()))
    }

    /// How many HTML pages the site has.
    pub fn pages(&self) -> usize {
        self.files.keys().filter(|p| p.ends_with(".html")).count()
    }
}

/// Stable slugs for every endpoint and run of an analysis.
#[derive(Debug, Clone)]
pub struct Slugs {
    pub endpoints: BTreeMap<String, String>,
    pub runs: BTreeMap<String, String>,
}

impl Slugs {
    pub fn new(analysis: &Analysis) -> Slugs {
        Slugs {
            // Capacity-only endpoints (step-load files but no rounds) get
            // slugs too, for their capacity pages.
            endpoints: slug::unique_slugs(
                analysis
                    .endpoints
                    .iter()
                    .map(|e| e.id.as_str())
                    .chain(analysis.capacity.iter().map(|e| e.id.as_str())),
            ),
            runs: slug::unique_slugs(analysis.runs.iter().map(|r| r.id.as_str())),
        }
    }

    pub fn endpoint(&self, id: &str) -> &str {
        &self.endpoints[id]
    }

    pub fn run(&self, id: &str) -> &str {
        &self.runs[id]
    }
}

/// Choices that change what is rendered (not what is analysed).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RenderOptions {
    /// The week `weekly.html` reviews.
    pub week: crate::analyse::weekly::WeekSpec,
}

/// Renders every page, chart and data file.
pub fn render_site(analysis: &Analysis) -> Result<Site, Error> {
    render_site_with(analysis, &RenderOptions::default())
}

/// [`render_site`] with options. Each page kind has one function that
/// returns `(path, bytes)`; this is the only place that collects them.
pub fn render_site_with(analysis: &Analysis, options: &RenderOptions) -> Result<Site, Error> {
    let slugs = Slugs::new(analysis);
    let ctx = context::Ctx::new(analysis, &slugs);
    let mut site = Site::default();
    for (path, bytes) in assets::files() {
        site.insert(path, bytes);
    }
    let services = service::services(analysis);
    let capacity_rows = capacity::capacity_summaries(analysis, &slugs);
    let mut pages: Vec<rows::Page> = Vec::new();
    for s in &services {
        pages.push(service::service_page(&ctx, s, &capacity_rows)?);
    }
    pages.extend([
        overview::overview_page(&ctx, capacity_rows, &services)?,
        history::history_page(&ctx)?,
        run::runs_index_page(&ctx)?,
        releases::releases_page(&ctx)?,
    ]);
    for e in &analysis.endpoints {
        pages.extend(endpoint::endpoint_pages(&ctx, e)?);
    }
    for i in 0..analysis.runs.len() {
        pages.push(run::run_page(&ctx, i)?);
    }
    for e in &analysis.capacity {
        pages.extend(capacity::capacity_page(&ctx, e)?);
    }
    pages.extend(compare::comparison_pages(&ctx)?);
    pages.extend(weekly::weekly_page(&ctx, options.week)?);
    pages.push((
        "data/analysis.json".to_string(),
        data::analysis_json(analysis, &slugs, options.week)?,
    ));
    for e in &analysis.endpoints {
        pages.push((
            format!("data/endpoints/{}.csv", slugs.endpoint(&e.id)),
            data::endpoint_csv(e)?,
        ));
    }
    for (path, bytes) in pages {
        site.insert(&path, bytes);
    }
    // Flame pages insert themselves (render/flame_pages.rs).
    flame_pages::render_flame_pages(analysis, &slugs, &mut site)?;
    Ok(site)
}

/// The one XML escaper (`crate::escape::xml`), under the name the
/// chart modules use.
pub use crate::escape::xml as xml_escape;
