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
//! weekly.html                     the weekly review (alarms, triage, policies) of the reviewed week
//! weekly/<2026-w47>.html          each week's own review (every ISO week with runs)
//! history.html                    every change point, newest first, and environment changes
//! releases.html                   release history and the list of comparisons
//! compare/<a-slug>_vs_<b-slug>.html  one page per comparison in `[compare]`
//! capacity/<endpoint-slug>.html   knee, limit and steps of step-load runs (capacity)
//! data/analysis.json              the JSON data contract (docs/data-contract.md)
//! data/<table>.parquet            the history as Parquet tables (endpoint_runs, rounds, alarms, change_points)
//! data/endpoints/<slug>.csv       each endpoint's history as CSV
//! data/runs/<run-slug>.json       each run's rounds, as read (analysis.json refers to them)
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
pub mod filters;
pub mod flame;
pub mod flame_pages;
pub mod format;
pub mod history;
pub mod memo;
pub mod overview;
pub mod palette;
pub mod releases;
pub mod rows;
pub mod run;
pub mod service;
pub mod tables;
/// Page file names (`crate::slug`), under the path the pages use.
pub use crate::slug;
pub mod weekly;

use std::collections::BTreeMap;

use crate::analyse::{self, Analysis};
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

    /// Its files, in path order.
    pub fn into_files(self) -> Vec<(String, Vec<u8>)> {
        self.files.into_iter().collect()
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
    /// `data/analysis.json` indented (`build --pretty-json`); compact by
    /// default, since indentation was nearly half its size (issue 18).
    pub pretty_json: bool,
}

/// Where rendered files go, one at a time and from any thread: an
/// in-memory [`Site`] (tests, `render_site`), or the staging folder of
/// `crate::write` (a build), which writes each file as it comes, so that
/// the whole site is never held in memory.
pub trait SiteSink: Sync {
    /// One finished file (`path`: relative, with `/`).
    fn put(&self, path: &str, bytes: Vec<u8>) -> Result<(), Error>;
    /// A file too big to hold (`data/analysis.json`): `write` writes it
    /// into the writer given.
    fn put_streamed(
        &self,
        path: &str,
        write: &mut dyn FnMut(&mut dyn std::io::Write) -> Result<(), Error>,
    ) -> Result<(), Error>;
    /// The salt of page memo keys ([`memo::key`]); `None` when this sink
    /// keeps no page memo (no key is then computed).
    fn memo_salt(&self) -> Option<u128> {
        None
    }
    /// Puts in the files the page memo holds for `key`, as the previous
    /// build published them, when it vouches for them all; returns their
    /// paths. `None`: the page is to be rendered.
    fn reuse(&self, _key: u128) -> Result<Option<Vec<String>>, Error> {
        Ok(None)
    }
    /// The files `paths`, just put, were made from inputs whose key is
    /// `key`.
    fn remember(&self, _key: u128, _paths: Vec<String>) {}
}

impl SiteSink for std::sync::Mutex<Site> {
    fn put(&self, path: &str, bytes: Vec<u8>) -> Result<(), Error> {
        let mut site = self.lock().unwrap_or_else(|p| p.into_inner());
        if site.files.contains_key(path) {
            return Err(Error::Internal(format!("{path} was rendered twice")));
        }
        site.insert(path, bytes);
        Ok(())
    }

    fn put_streamed(
        &self,
        path: &str,
        write: &mut dyn FnMut(&mut dyn std::io::Write) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let mut bytes = Vec::new();
        write(&mut bytes)?;
        self.put(path, bytes)
    }
}

/// Renders every page, chart and data file.
pub fn render_site(analysis: &Analysis) -> Result<Site, Error> {
    render_site_with(analysis, &RenderOptions::default())
}

/// [`render_site`] with options, into memory.
pub fn render_site_with(analysis: &Analysis, options: &RenderOptions) -> Result<Site, Error> {
    let site = std::sync::Mutex::new(Site::default());
    render_site_into(analysis, options, &site)?;
    Ok(site.into_inner().unwrap_or_else(|p| p.into_inner()))
}

/// One unit of rendering: a page, or a few files that are made together.
/// Each kind has one function that returns `(path, bytes)`; this module
/// is the only place that collects them.
enum Job<'a> {
    Assets,
    Overview,
    Services,
    History,
    RunsIndex,
    Releases,
    Endpoint(&'a analyse::EndpointAnalysis),
    /// The page of an endpoint's runs in one year older than its last.
    EndpointYear(&'a analyse::EndpointAnalysis, i32),
    Run(usize),
    /// `data/runs/<slug>.json`: a run's rounds.
    RunRounds(usize),
    Capacity(&'a analyse::capacity::EndpointCapacity),
    Comparison(&'a analyse::compare::SiteComparison),
    Weekly,
    /// `weekly/<week>.html`: one week's own review.
    Week(crate::analyse::weekly::WeekSpec),
    AnalysisJson,
    /// `data/<table>.parquet`: one table of the history.
    Table(tables::Table),
    Csv(&'a analyse::EndpointAnalysis),
    Flame(
        &'a analyse::EndpointAnalysis,
        &'a analyse::RunPoint,
        &'a analyse::attribution::ProfileAnalysis,
    ),
}

/// What rendering a site did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Rendered {
    /// HTML pages in the site.
    pub pages: usize,
    /// Of `pages`, those the page memo vouched for: linked from the
    /// previous site, not rendered.
    pub reused_pages: usize,
}

/// Renders every file of the site into `sink`, on every core (rayon),
/// each file handed over as soon as it is made. Which thread renders what
/// changes nothing: each file's bytes depend only on the analysis, and
/// every path is made by exactly one job. Pages the sink's page memo
/// vouches for ([`memo`]) are taken from the previous site instead.
pub fn render_site_into(
    analysis: &Analysis,
    options: &RenderOptions,
    sink: &dyn SiteSink,
) -> Result<Rendered, Error> {
    use rayon::prelude::*;
    let slugs = Slugs::new(analysis);
    let ctx = context::Ctx::new(analysis, &slugs);
    let counts = Counts::default();
    let salt = sink.memo_salt();
    // One job per task: a job holds its files only until they are handed
    // over.
    jobs(analysis, &slugs)
        .into_par_iter()
        .with_max_len(1)
        .try_for_each(|job| -> Result<(), Error> {
            if let Job::AnalysisJson = job {
                return sink.put_streamed("data/analysis.json", &mut |w| {
                    data::write_analysis_json(
                        analysis,
                        &slugs,
                        options.week,
                        options.pretty_json,
                        w,
                    )
                });
            }
            let memo = Memo {
                sink,
                salt,
                counts: &counts,
            };
            match job {
                Job::Flame(e, p, pa) => {
                    let inputs = flame_pages::FlameInputs::of(&ctx, e, p, pa);
                    memo.pages("flame", &inputs, || inputs.render())
                }
                Job::Comparison(c) => {
                    let inputs = compare::CompareInputs::of(&ctx, c);
                    memo.pages("comparison", &inputs, || inputs.render())
                }
                Job::EndpointYear(e, year) => {
                    let inputs = endpoint::year_page_inputs(&ctx, e, year);
                    memo.pages("endpoint-year", &inputs, || Ok(vec![inputs.render()?]))
                }
                Job::RunRounds(i) => {
                    let inputs = data::RunRoundsInputs::of(&ctx, i, options.pretty_json);
                    memo.pages("run-rounds", &inputs, || inputs.render())
                }
                Job::Run(i) => {
                    // The template's own value: the page is made from it alone.
                    let view = run::run_view(&ctx, i);
                    memo.pages("run", &view, || {
                        Ok(vec![(view.0.clone(), run::render_run(&view.1)?)])
                    })
                }
                job => memo.put(render_job(&ctx, &job, options)?),
            }
        })?;
    use std::sync::atomic::Ordering::Relaxed;
    Ok(Rendered {
        pages: counts.pages.load(Relaxed),
        reused_pages: counts.reused.load(Relaxed),
    })
}

/// Every job of a site, the biggest first, so that no core is left with
/// a long one at the end: analysis.json, then the endpoint pages.
fn jobs<'a>(analysis: &'a Analysis, slugs: &Slugs) -> Vec<Job<'a>> {
    let mut jobs = vec![Job::AnalysisJson];
    jobs.extend(tables::Table::ALL.map(Job::Table));
    jobs.extend([
        Job::Assets,
        Job::Overview,
        Job::Services,
        Job::History,
        Job::RunsIndex,
        Job::Releases,
        Job::Weekly,
    ]);
    // The same comparison listed twice in `[compare]` makes the same page
    // twice: the site keeps the last.
    let mut comparisons: Vec<_> = analysis
        .comparisons
        .iter()
        .rev()
        .scan(std::collections::HashSet::new(), |seen, c| {
            Some(seen.insert(compare::comparison_path(c, slugs)).then_some(c))
        })
        .flatten()
        .collect();
    comparisons.reverse();
    jobs.extend(comparisons.into_iter().map(Job::Comparison));
    jobs.extend(analysis.endpoints.iter().map(Job::Endpoint));
    for e in &analysis.endpoints {
        jobs.extend(
            endpoint::page_years(e)
                .into_iter()
                .map(|year| Job::EndpointYear(e, year)),
        );
    }
    jobs.extend(weekly::review_weeks(analysis).into_iter().map(Job::Week));
    jobs.extend(analysis.capacity.iter().map(Job::Capacity));
    jobs.extend((0..analysis.runs.len()).map(Job::Run));
    jobs.extend((0..analysis.runs.len()).map(Job::RunRounds));
    jobs.extend(analysis.endpoints.iter().map(Job::Csv));
    for e in &analysis.endpoints {
        for p in &e.points {
            jobs.extend(p.profiles.iter().map(|pa| Job::Flame(e, p, pa)));
        }
    }
    jobs
}

#[derive(Default)]
struct Counts {
    pages: std::sync::atomic::AtomicUsize,
    reused: std::sync::atomic::AtomicUsize,
}

/// Hands a job's files to the sink, through the page memo when the job's
/// files are made from one value of inputs.
struct Memo<'a> {
    sink: &'a dyn SiteSink,
    salt: Option<u128>,
    counts: &'a Counts,
}

impl Memo<'_> {
    /// The files of a page made by `render` from `inputs` alone (see
    /// [`memo`] for why its key is then complete): linked from the
    /// previous site when the memo vouches for them, else rendered.
    fn pages(
        &self,
        kind: &str,
        inputs: &impl serde::Serialize,
        render: impl FnOnce() -> Result<Vec<rows::Page>, Error>,
    ) -> Result<(), Error> {
        let key = self.salt.map(|salt| memo::key(salt, kind, inputs));
        if let Some(key) = key
            && let Some(paths) = self.sink.reuse(key)?
        {
            let pages = paths.iter().filter(|p| p.ends_with(".html")).count();
            self.counts
                .pages
                .fetch_add(pages, std::sync::atomic::Ordering::Relaxed);
            self.counts
                .reused
                .fetch_add(pages, std::sync::atomic::Ordering::Relaxed);
            return Ok(());
        }
        let files = render()?;
        let paths: Vec<String> = files.iter().map(|(p, _)| p.clone()).collect();
        self.put(files)?;
        if let Some(key) = key {
            self.sink.remember(key, paths);
        }
        Ok(())
    }

    fn put(&self, files: Vec<rows::Page>) -> Result<(), Error> {
        for (path, bytes) in files {
            if path.ends_with(".html") {
                self.counts
                    .pages
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            self.sink.put(&path, bytes)?;
        }
        Ok(())
    }
}

fn render_job(
    ctx: &context::Ctx,
    job: &Job,
    options: &RenderOptions,
) -> Result<Vec<rows::Page>, Error> {
    let (analysis, slugs) = (ctx.analysis, ctx.slugs);
    let files = match *job {
        Job::Assets => assets::files()
            .map(|(path, bytes)| (path.to_string(), bytes))
            .collect(),
        Job::Overview => vec![overview::overview_page(
            ctx,
            capacity::capacity_summaries(analysis, slugs),
            &service::services(analysis),
        )?],
        Job::Services => {
            let capacity = capacity::capacity_summaries(analysis, slugs);
            service::services(analysis)
                .iter()
                .map(|s| service::service_page(ctx, s, &capacity))
                .collect::<Result<_, _>>()?
        }
        Job::History => vec![history::history_page(ctx)?],
        Job::RunsIndex => vec![run::runs_index_page(ctx)?],
        Job::Releases => vec![releases::releases_page(ctx)?],
        Job::Endpoint(e) => vec![endpoint::endpoint_page(ctx, e)?],
        Job::EndpointYear(e, year) => vec![endpoint::year_page_inputs(ctx, e, year).render()?],
        Job::Run(i) => vec![run::run_page(ctx, i)?],
        Job::RunRounds(i) => data::RunRoundsInputs::of(ctx, i, options.pretty_json).render()?,
        Job::Capacity(e) => capacity::capacity_page(ctx, e)?.into_iter().collect(),
        Job::Comparison(c) => compare::CompareInputs::of(ctx, c).render()?,
        Job::Weekly => weekly::weekly_page(ctx, options.week)?
            .into_iter()
            .collect(),
        // Not memoised: its view is most of its cost and is made either
        // way, and a week's page is a few tens of KB (BENCHMARKS.md).
        Job::Week(w) => weekly::week_page(ctx, w)?.into_iter().collect(),
        Job::Csv(e) => vec![(
            format!("data/endpoints/{}.csv", slugs.endpoint(&e.id)),
            data::endpoint_csv(e)?,
        )],
        Job::Flame(e, p, pa) => flame_pages::FlameInputs::of(ctx, e, p, pa).render()?,
        Job::Table(table) => vec![tables::render(ctx, table)?],
        Job::AnalysisJson => unreachable!("streamed by render_site_into"),
    };
    Ok(files)
}

/// The one XML escaper (`crate::escape::xml`), under the name the
/// chart modules use.
pub use crate::escape::xml as xml_escape;
