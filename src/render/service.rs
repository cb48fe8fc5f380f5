//! Services: endpoints grouped by `[endpoints.<id>] service`, and
//! `services/<slug>.html`, one page per service listing its endpoints as
//! the overview does when there are no services.

use std::collections::{BTreeMap, BTreeSet};

use askama::Template;

use super::filters;

use super::capacity::CapacitySummary;
use super::context::Ctx;
use super::overview::{EndpointRow, endpoint_heatmap, endpoint_rows};
use super::rows::{Page, render, settings_line};
use crate::analyse::{Analysis, EndpointAnalysis};
use crate::error::Error;

/// One service and its endpoints (in the analysis' order).
pub struct Service<'a> {
    pub name: &'a str,
    /// Its page is `services/<slug>.html`.
    pub slug: String,
    pub endpoints: Vec<&'a EndpointAnalysis>,
}

impl Service<'_> {
    /// Its page, relative to `root`.
    pub fn href(&self, root: &str) -> String {
        format!("{root}services/{}.html", self.slug)
    }
}

/// The services of the archive's endpoints, by name; empty when no
/// endpoint has a service (the overview then lists endpoints, as before
/// services existed).
pub fn services(analysis: &Analysis) -> Vec<Service<'_>> {
    let settings = &analysis.settings;
    let mut groups: BTreeMap<&str, Vec<&EndpointAnalysis>> = BTreeMap::new();
    for e in &analysis.endpoints {
        if let Some(service) = settings.endpoint_service(&e.id) {
            groups.entry(service).or_default().push(e);
        }
    }
    let slugs = service_slugs(analysis);
    groups
        .into_iter()
        .map(|(name, endpoints)| Service {
            name,
            slug: slugs[name].clone(),
            endpoints,
        })
        .collect()
}

/// Each service's slug, by name.
fn service_slugs(analysis: &Analysis) -> BTreeMap<String, String> {
    let names: BTreeSet<&str> = analysis
        .endpoints
        .iter()
        .filter_map(|e| analysis.settings.endpoint_service(&e.id))
        .collect();
    super::slug::unique_slugs(names)
}

/// The page (relative to `root`) and name of an endpoint's service, when
/// endpoints have services.
pub fn service_link(analysis: &Analysis, endpoint: &str, root: &str) -> Option<(String, String)> {
    let name = analysis.settings.endpoint_service(endpoint)?;
    let slugs = service_slugs(analysis);
    Some((
        format!("{root}services/{}.html", slugs[name]),
        name.to_string(),
    ))
}

#[derive(Template)]
#[template(path = "service.html")]
pub struct ServicePage {
    pub root: &'static str,
    pub name: String,
    pub rows: Vec<EndpointRow>,
    pub run_count: usize,
    pub settings_line: String,
    pub heatmap: String,
    pub heatmap_older_weeks: usize,
    /// Its endpoints with step-load runs.
    pub capacity: Vec<CapacitySummary>,
}

/// `services/<slug>.html`; `capacity` are the overview's capacity rows
/// (those of this service's endpoints are shown).
pub fn service_page(
    ctx: &Ctx,
    service: &Service,
    capacity: &[CapacitySummary],
) -> Result<Page, Error> {
    let root = "../";
    let (heatmap, heatmap_older_weeks) = endpoint_heatmap(ctx, &service.endpoints, root);
    let mut runs: Vec<&str> = service
        .endpoints
        .iter()
        .flat_map(|e| e.points.iter().map(|p| p.run.as_str()))
        .collect();
    runs.sort_unstable();
    runs.dedup();
    let page = ServicePage {
        root,
        name: service.name.to_string(),
        rows: endpoint_rows(ctx, &service.endpoints, root, true),
        run_count: runs.len(),
        settings_line: settings_line(ctx.analysis),
        heatmap,
        heatmap_older_weeks,
        capacity: capacity
            .iter()
            .filter(|c| {
                service
                    .endpoints
                    .iter()
                    .any(|e| super::capacity::capacity_href(ctx.slugs, &e.id) == c.href)
            })
            .map(|c| CapacitySummary {
                href: format!("{root}{}", c.href),
                ..c.clone()
            })
            .collect(),
    };
    Ok((
        format!("services/{}.html", service.slug),
        render(&page, service.name)?,
    ))
}
