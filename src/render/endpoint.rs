//! `endpoints/<slug>.html`: one endpoint's trend chart, change points,
//! environment changes, alarms and its runs of the last year; older runs
//! as weekly medians, each year in full on `endpoints/<slug>/<year>.html`
//! (so that a page stays light however long the history grows).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::ops::Range;

use askama::Template;

use super::filters;
use chrono::{Datelike, Duration};

use super::charts::trend::RANGES;
use super::charts::{PointInfo, TrendInput, TrendView, trend_views};
use super::context::{Ctx, RunLabel, SuspectView};
use super::display::{DisplayState, display_state};
use super::evidence::{EvidenceView, evidence_view};
use super::figures::{FiguresView, environment_mark};
use super::flame_pages::{FlameLink, flame_links};
use super::format as f;
use super::memo::{PointKey, RawRounds};
use super::rows::{
    ChangePointRow, EnvChangeRow, Page, PointRow, VerdictView, change_point_row, env_change_row,
    point_row, point_row_with, render, settings_line,
};
use crate::analyse::alarms::Alarm;
use crate::analyse::{EndpointAnalysis, EnvironmentChange, RunPoint};
use crate::calendar;
use crate::error::Error;
use crate::model::Annotation;

/// One alarm of the archive's policy with its evidence.
#[derive(Debug, Clone, serde::Serialize)]
pub struct AlarmRow {
    /// The candidate run: the first over the line.
    pub run: RunLabel,
    /// The run before it and the candidate, with the commits between.
    pub suspect: Option<SuspectView>,
    pub state: &'static str,
    pub label: String,
    /// The triage label's note (what was found), shown under the label.
    pub note: String,
    pub median: String,
    pub baseline: String,
    pub ratio: String,
    pub change: String,
    pub evidence: EvidenceView,
    /// Error rate and throughput of its first run, marked when over.
    pub figures: FiguresView,
    /// The first run was environment suspect.
    pub environment_suspect: bool,
}

#[derive(Template)]
#[template(path = "endpoint.html")]
pub struct EndpointPage {
    pub root: &'static str,
    pub name: String,
    pub id: String,
    /// The trend chart once per time range; one is shown at a time.
    pub views: Vec<TrendView>,
    /// The chart's series a reader can hide (app.js): `(key, words)`; the
    /// key names the classes hidden (`static/style.css`, `hide-<key>`).
    pub series: Vec<(&'static str, &'static str)>,
    /// The annotations on the chart, numbered as drawn:
    /// `(when, text, link)`.
    pub annotations: Vec<(String, String, String)>,
    pub change_points: Vec<ChangePointRow>,
    pub env_changes: Vec<EnvChangeRow>,
    /// The archive's policy (`[alarms] policy`), for the alarm table's caption.
    pub policy: &'static str,
    pub alarms: Vec<AlarmRow>,
    pub csv_href: String,
    /// This endpoint's runs whose time cannot be trusted: off the chart.
    pub untrusted: Vec<super::context::UntrustedRun>,
    pub rows: Vec<PointRow>,
    pub latest: Option<PointRow>,
    /// How the latest run was judged besides the plain ratio: its noise
    /// line, and the sensitive reading (`reading_line`); empty on a
    /// year page.
    pub reading: String,
    pub threshold_ratio: String,
    pub settings_line: String,
    /// The capacity page and its one-line summary, when the endpoint has
    /// step-load runs.
    pub capacity: Option<(String, String)>,
    /// The service's page and name, when endpoints have services.
    pub service: Option<(String, String)>,
    /// On a year page, the year (the page lists that year's runs only).
    pub year: Option<i32>,
    /// The endpoint's main page (for a year page's crumbs).
    pub page_href: String,
    /// Runs older than the last year, as weekly medians by year, each
    /// year with its page; empty when the history is a year or shorter.
    pub older: Vec<OlderYear>,
}

/// One year of the history older than the last year: its weeks as
/// weekly medians, and its page with every run.
#[derive(Debug, Clone, serde::Serialize)]
pub struct OlderYear {
    pub year: i32,
    pub href: String,
    /// Runs of the year on its page (the whole year).
    pub runs: usize,
    /// Oldest first.
    pub weeks: Vec<WeekRow>,
}

/// One ISO week of older history.
#[derive(Debug, Clone, serde::Serialize)]
pub struct WeekRow {
    /// `2024-W07`.
    pub week: String,
    /// Its Monday.
    pub date: String,
    pub runs: usize,
    /// Median of the week's run medians (ms).
    pub median: String,
    /// The worst verdict of the week's runs.
    pub verdict: VerdictView,
}

/// The trend chart's series a reader can hide, those it draws: rounds,
/// medians (with their verdict shapes), the baseline and the line always;
/// change points, environment changes and annotations when it has some.
fn trend_series(
    change_points: bool,
    environment: bool,
    annotations: bool,
) -> Vec<(&'static str, &'static str)> {
    let mut series = vec![
        ("rounds", "round p99"),
        ("medians", "run median"),
        ("baseline", "baseline"),
        ("line", "regression line"),
    ];
    if change_points {
        series.push(("changes", "change points"));
    }
    if environment {
        series.push(("environment", "environment changes"));
    }
    if annotations {
        series.push(("annotations", "annotations"));
    }
    series
}

/// How much history an endpoint page shows in full; older runs are
/// weekly medians there and in full on their year's page.
const FULL_HISTORY_DAYS: i64 = 365;

/// One sentence or two under the lede (issue 33): the latest run's noise
/// line when the endpoint's own noise widened it past the threshold ratio,
/// and how the sensitive policy reads the latest run.
fn reading_line(ctx: &Ctx, e: &EndpointAnalysis) -> String {
    let mut parts = Vec::new();
    if let Some(p) = e.latest() {
        let (line, ratio) = (p.line_ratio(), p.decided_from.threshold_ratio);
        if let Some(spread) = p.decided_from.noise_spread.filter(|_| line > ratio) {
            parts.push(format!(
                "Judged against ×{line:.2}, not ×{ratio}: this endpoint's runs differ by σ {:.1}% \
                 from one to the next, too much for a ×{ratio} line to mean anything (the noise line).",
                100.0 * spread
            ));
        }
    }
    let sensitive = ctx
        .analysis
        .alarms
        .endpoint(&e.id)
        .and_then(|a| a.sensitive.as_ref());
    if let Some(r) = sensitive {
        let default_over = e
            .latest()
            .is_some_and(|p| p.verdict == crate::analyse::Verdict::Regression);
        let reading = match (r.judgement, &r.since_run) {
            (crate::analyse::policy::Judgement::Over, Some(since)) => format!(
                "the level rose{} from run {since} on{}",
                r.change
                    .map(|c| format!(" {}", f::signed_percent(c)))
                    .unwrap_or_default(),
                if default_over {
                    ""
                } else {
                    ", a shift the line does not alarm on"
                }
            ),
            (crate::analyse::policy::Judgement::Over, None) => "over its line".to_string(),
            (crate::analyse::policy::Judgement::Within, _) => "no level shift".to_string(),
            (crate::analyse::policy::Judgement::NotJudged, _) => "not judged yet".to_string(),
        };
        parts.push(format!(
            "Sensitive reading (the {} policy, for quiet endpoints): {reading}.",
            r.policy
        ));
    }
    parts.join(" ")
}

fn alarm_row(ctx: &Ctx, a: &Alarm, e: &EndpointAnalysis, root: &str) -> AlarmRow {
    AlarmRow {
        run: ctx.run_label(&a.run, root, Some(ctx.slugs.endpoint(&a.endpoint))),
        suspect: ctx.suspect(e, a.onset_index, root),
        state: a.state.as_str(),
        label: a
            .label
            .map(|l| l.to_string())
            .unwrap_or_else(|| "untriaged".into()),
        note: a.label_note.clone().unwrap_or_default(),
        median: super::weekly::alarm_median(a),
        baseline: f::opt_ms(a.baseline_p99_ms),
        ratio: f::ratio(a.ratio),
        change: f::change(a.ratio),
        evidence: evidence_view(&a.evidence),
        figures: FiguresView::of(&a.figures),
        environment_suspect: a.environment_suspect,
    }
}

/// What a run's point on the trend chart links to and says: one fact a
/// line (the native tooltip shows the lines, app.js turns them into a
/// small table).
fn point_info(p: &RunPoint, run: &RunLabel) -> PointInfo {
    use std::fmt::Write as _;
    // One string, written in place: every point of every endpoint page
    // has one, and the intermediate strings of `format!` showed in
    // profiles.
    let mut title = String::with_capacity(256);
    let _ = write!(
        title,
        "Run {} · {}\nRounds: {} (p99 ",
        p.run,
        run.date,
        p.rounds.len()
    );
    for (i, v) in p.round_p99_ms.iter().enumerate() {
        if i > 0 {
            title.push_str(" · ");
        }
        title.push_str(&f::ms(*v));
    }
    title.push_str(" ms)\nMedian p99: ");
    if p.verdict == crate::analyse::verdict::Verdict::Failed {
        title.push_str(f::NO_VALID_LATENCY);
    } else {
        let _ = write!(title, "{} ms", f::ms(p.median_p99_ms));
    }
    title.push_str("\nBaseline: ");
    match p.baseline_p99_ms {
        Some(b) => {
            let _ = write!(title, "{} ms", f::ms(b));
        }
        None => title.push_str("none yet"),
    }
    title.push_str("\nRatio: ");
    match p.ratio {
        Some(r) => {
            let _ = write!(title, "{} ({})", f::ratio(Some(r)), f::change(Some(r)));
        }
        None => title.push('–'),
    }
    title.push_str("\nVerdict: ");
    title.push_str(match display_state(p) {
        DisplayState::Accepted => "regression (accepted change)",
        _ => p.verdict.as_str(),
    });
    if let Some(c) = &run.commit {
        title.push_str("\nCommit: ");
        title.push_str(&c.short);
    }
    if !run.notes.is_empty() {
        title.push_str("\nNotes: ");
        title.push_str(&run.notes);
    }
    PointInfo {
        href: run.href.clone(),
        title,
    }
}

/// The capacity page of the endpoint and its one-line summary, when it
/// has step-load runs.
fn capacity_line(ctx: &Ctx, e: &EndpointAnalysis, root: &str) -> Option<(String, String)> {
    let c = ctx.analysis.capacity.iter().find(|c| c.id == e.id)?;
    let p = c.latest()?;
    Some((
        format!("{root}{}", super::capacity::capacity_href(ctx.slugs, &c.id)),
        format!(
            "Latest step-load run {} ({}): {} — capacity {}.",
            p.run,
            ctx.when(p.started_at),
            p.knee.reasoning,
            p.verdict.as_str()
        ),
    ))
}

/// The first point of the last year of `e`'s history (0 when the
/// history is a year or shorter). The year ends at the latest run whose
/// time can be trusted: a run dated 2099 must not push every real run
/// into the older history.
fn last_year_start(e: &EndpointAnalysis) -> usize {
    let Some(last) = e.points.iter().rev().find(|p| !p.untrusted_time) else {
        return 0;
    };
    let from = last.started_at - Duration::days(FULL_HISTORY_DAYS);
    e.points.partition_point(|p| p.started_at < from)
}

/// `e` with only the points in `range`: its change points inside it,
/// re-indexed, so the chart draws that stretch as a whole history.
fn slice(e: &EndpointAnalysis, range: Range<usize>) -> EndpointAnalysis {
    EndpointAnalysis {
        id: e.id.clone(),
        name: e.name.clone(),
        threshold_ratio: e.threshold_ratio,
        points: e.points[range.clone()].to_vec(),
        change_points: e
            .change_points
            .iter()
            .filter(|c| range.contains(&c.point_index))
            .map(|c| {
                let mut c = c.clone();
                c.point_index -= range.start;
                c
            })
            .collect(),
        // Branch runs are not drawn on endpoint pages (the runs index lists
        // them); a slice keeps none.
        branch_points: Vec::new(),
    }
}

/// The older history (`e.points[..cut]`) as weekly medians, by year
/// (a week belongs to the year of its Monday), with each year's page.
fn older_years(e: &EndpointAnalysis, cut: usize, slug: &str) -> Vec<OlderYear> {
    let mut weeks: BTreeMap<chrono::NaiveDate, Vec<&RunPoint>> = BTreeMap::new();
    for p in &e.points[..cut] {
        weeks
            .entry(calendar::week_monday(p.started_at.date_naive()))
            .or_default()
            .push(p);
    }
    let mut years: BTreeMap<i32, Vec<WeekRow>> = BTreeMap::new();
    for (monday, points) in weeks {
        let medians: Vec<f64> = points.iter().map(|p| p.median_p99_ms).collect();
        let worst = points
            .iter()
            .map(|p| VerdictView::of(p))
            .min_by_key(|v| v.rank)
            .expect("a week has a run");
        years.entry(monday.year()).or_default().push(WeekRow {
            week: calendar::iso_week_label(monday),
            date: calendar::date(monday),
            runs: points.len(),
            median: f::ms(crate::stats::median(&medians).unwrap_or(f64::NAN)),
            verdict: worst,
        });
    }
    years
        .into_iter()
        .map(|(year, weeks)| OlderYear {
            year,
            href: format!("{slug}/{year}.html"),
            runs: e
                .points
                .iter()
                .filter(|p| p.started_at.year() == year)
                .count(),
            weeks,
        })
        .collect()
}

/// One endpoint's main page: its last year in full, older runs as
/// weekly medians (each year in full on a page of [`year_page_inputs`]).
pub fn endpoint_page(ctx: &Ctx, e: &EndpointAnalysis) -> Result<Page, Error> {
    let slug = ctx.slugs.endpoint(&e.id);
    let cut = last_year_start(e);
    let inputs = match cut {
        0 => EndpointInputs::of(ctx, e, Cow::Borrowed(e), PageKind::Main(Vec::new())),
        _ => EndpointInputs::of(
            ctx,
            e,
            Cow::Owned(slice(e, cut..e.points.len())),
            PageKind::Main(older_years(e, cut, slug)),
        ),
    };
    inputs.render()
}

/// The years older than `e`'s last year that have a page of their own:
/// the years of the weeks its main page lists as weekly medians.
pub fn page_years(e: &EndpointAnalysis) -> Vec<i32> {
    let cut = last_year_start(e);
    let mut years: Vec<i32> = e.points[..cut]
        .iter()
        .map(|p| calendar::week_monday(p.started_at.date_naive()).year())
        .collect();
    years.sort_unstable();
    years.dedup();
    years
}

/// What the page of `e`'s runs in `year` is made from.
pub fn year_page_inputs<'a>(
    ctx: &Ctx<'a>,
    e: &'a EndpointAnalysis,
    year: i32,
) -> EndpointInputs<'a> {
    let start = e.points.partition_point(|p| p.started_at.year() < year);
    let end = e.points.partition_point(|p| p.started_at.year() <= year);
    EndpointInputs::of(
        ctx,
        e,
        Cow::Owned(slice(e, start..end)),
        PageKind::Year(year),
    )
}

/// Which page of an endpoint.
enum PageKind {
    /// `endpoints/<slug>.html`, with the older years (may be empty).
    Main(Vec<OlderYear>),
    /// `endpoints/<slug>/<year>.html`.
    Year(i32),
}

/// The first and last start of the runs of `shown` whose time can be
/// trusted: a run dated 1970 or 2099 stretches no span.
fn trusted_span(
    shown: &EndpointAnalysis,
) -> (
    Option<chrono::DateTime<chrono::Utc>>,
    Option<chrono::DateTime<chrono::Utc>>,
) {
    let mut trusted = shown.points.iter().filter(|p| !p.untrusted_time);
    let first = trusted.next().map(|p| p.started_at);
    let last = trusted.next_back().map(|p| p.started_at).or(first);
    (first, last)
}

/// Everything one endpoint page shows, gathered from the analysis by
/// `EndpointInputs::of`; [`EndpointInputs::render`] makes the page from
/// this value alone (no `Ctx`), so its `Debug` form is a complete page
/// memo key (`render::memo`). Year pages are memoised on it: after a new
/// run, 360 year pages at 120 endpoints × 3 years were rendered again
/// (most of it building their rows and charts) for 31 that changed.
#[derive(Debug, serde::Serialize)]
pub struct EndpointInputs<'a> {
    path: String,
    root: &'static str,
    slug: &'a str,
    /// The runs the page shows (all, the last year, or one year).
    shown: Shown<'a>,
    /// For each shown point: its run, the run's environment mark, its
    /// flame-graph links.
    labels: Vec<RunLabel>,
    environment_marks: Vec<String>,
    flames: Vec<Vec<FlameLink>>,
    environment: &'a [EnvironmentChange],
    annotations: Vec<&'a Annotation>,
    year: Option<i32>,
    older: Vec<OlderYear>,
    alarms: Vec<AlarmRow>,
    change_points: Vec<ChangePointRow>,
    env_changes: Vec<EnvChangeRow>,
    policy: &'static str,
    untrusted: Vec<super::context::UntrustedRun>,
    latest: Option<PointRow>,
    reading: String,
    settings_line: String,
    capacity: Option<(String, String)>,
    service: Option<(String, String)>,
}

/// The shown runs in a memo key: every field, each point as a
/// [`PointKey`] (its rounds as a digest, `rounds[i]` the digest of the
/// rounds of the i-th of `points` then `branch_points`). Fields listed by
/// destructuring: a field added to `EndpointAnalysis` does not compile
/// until it is here.
struct Shown<'a> {
    analysis: Cow<'a, EndpointAnalysis>,
    rounds: Vec<u128>,
}

impl<'a> Shown<'a> {
    fn of(ctx: &Ctx<'_>, analysis: Cow<'a, EndpointAnalysis>) -> Shown<'a> {
        let rounds = analysis
            .points
            .iter()
            .chain(&analysis.branch_points)
            .map(|p| ctx.raw_rounds(&p.rounds).digest())
            .collect();
        Shown { analysis, rounds }
    }
}

/// As its key: the endpoint's own fields, then each point as a
/// [`PointKey`].
impl serde::Serialize for Shown<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let EndpointAnalysis {
            id,
            name,
            threshold_ratio,
            points,
            branch_points,
            change_points,
        } = &*self.analysis;
        let (main, branch) = self.rounds.split_at(points.len());
        let keys = |points: &'_ [RunPoint], digests: &[u128]| -> Vec<u128> {
            points
                .iter()
                .zip(digests)
                .map(|(point, &digest)| {
                    let rounds = RawRounds::known(&point.rounds, digest);
                    PointKey { point, rounds }.digest()
                })
                .collect()
        };
        // The change points' index into the points, which they do not
        // serialise.
        let at: Vec<usize> = change_points.iter().map(|c| c.point_index).collect();
        (
            (id, name, threshold_ratio, change_points, at),
            keys(points, main),
            keys(branch_points, branch),
        )
            .serialize(s)
    }
}

impl std::fmt::Debug for Shown<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Shown({})", self.analysis.id)
    }
}

impl<'a> EndpointInputs<'a> {
    /// A page of endpoint `e` showing the runs of `shown` (all of `e`, its
    /// last year, or one year).
    fn of(
        ctx: &Ctx<'a>,
        e: &'a EndpointAnalysis,
        shown: Cow<'a, EndpointAnalysis>,
        kind: PageKind,
    ) -> EndpointInputs<'a> {
        let analysis = ctx.analysis;
        let slug = ctx.slugs.endpoint(&e.id);
        let (root, path, year, older) = match kind {
            PageKind::Main(older) => ("../", format!("endpoints/{slug}.html"), None, older),
            PageKind::Year(y) => (
                "../../",
                format!("endpoints/{slug}/{y}.html"),
                Some(y),
                Vec::new(),
            ),
        };
        // The chart spans the runs whose time can be trusted; so do the
        // annotations, change points and environment changes listed with
        // it.
        let (first, last) = trusted_span(&shown);
        let in_shown = |t| first.is_some_and(|f| f <= t) && last.is_some_and(|l| t <= l);
        // Alarms are few and are the page's point: all of them on the
        // main page, none on a year page (its runs carry their verdicts).
        let mut alarms: Vec<AlarmRow> = match year {
            Some(_) => Vec::new(),
            None => ctx
                .endpoint_alarms(&e.id)
                .iter()
                .map(|a| alarm_row(ctx, a, e, root))
                .collect(),
        };
        alarms.reverse(); // newest first
        let flames = shown
            .points
            .iter()
            .map(|p| flame_links(p, e, ctx.slugs, root))
            .collect();
        // The page shows nothing else of the profiles than these links:
        // a copy of the runs drops them (their tables and stacks were most
        // of a year page's memo key).
        let shown = match shown {
            Cow::Owned(mut shown) => {
                for p in &mut shown.points {
                    p.profiles = Vec::new();
                }
                Cow::Owned(shown)
            }
            borrowed => borrowed,
        };
        EndpointInputs {
            root,
            slug,
            // Each point's run as the chart and the table both name it.
            labels: shown
                .points
                .iter()
                .map(|p| ctx.run_label(&p.run, root, Some(slug)))
                .collect(),
            environment_marks: shown
                .points
                .iter()
                .map(|p| {
                    analysis
                        .runs
                        .get(p.run_index)
                        .map(environment_mark)
                        .unwrap_or_default()
                })
                .collect(),
            flames,
            environment: &analysis.environment_changes,
            annotations: analysis
                .annotations
                .iter()
                .filter(|a| a.concerns(&e.id))
                .filter(|a| in_shown(a.at))
                .collect(),
            change_points: e
                .change_points
                .iter()
                .rev()
                .filter(|cp| year.is_none() || in_shown(cp.started_at))
                .map(|cp| change_point_row(ctx, cp, e, root))
                .collect(),
            env_changes: analysis
                .environment_changes
                .iter()
                .filter(|c| in_shown(c.started_at))
                .rev()
                .map(|c| env_change_row(ctx, c, root))
                .collect(),
            policy: analysis.settings.alarms.policy.name(),
            alarms,
            untrusted: ctx.untrusted_runs(root, Some(&shown.points)),
            latest: match year {
                Some(_) => None,
                None => e.latest().map(|p| point_row(ctx, p, e, root)),
            },
            reading: match year {
                Some(_) => String::new(),
                None => reading_line(ctx, e),
            },
            settings_line: settings_line(analysis),
            capacity: capacity_line(ctx, e, root),
            service: super::service::service_link(analysis, &e.id, root),
            year,
            older,
            path,
            shown: Shown::of(ctx, shown),
        }
    }

    /// The page, from these inputs alone.
    pub fn render(&self) -> Result<Page, Error> {
        let shown: &EndpointAnalysis = &self.shown.analysis;
        let (root, slug) = (self.root, self.slug);
        let infos: Vec<PointInfo> = shown
            .points
            .iter()
            .zip(&self.labels)
            .map(|(p, run)| point_info(p, run))
            .collect();
        let mut views = trend_views(
            &TrendInput {
                endpoint: shown,
                points: &infos,
                environment: self.environment,
                annotations: &self.annotations,
            },
            &format!("chart-{slug}"),
        );
        if !self.older.is_empty() {
            // The whole of what is drawn is the last year.
            for v in views.iter_mut().filter(|v| v.range.key == "all") {
                v.range = RANGES[2];
            }
        }
        if self.year.is_some() {
            // A year page is for reading that year whole.
            views.retain(|v| v.range.key == "all");
            for v in &mut views {
                v.default = true;
            }
        }
        let mut rows: Vec<PointRow> = shown
            .points
            .iter()
            .zip(self.labels.iter().zip(&self.environment_marks))
            .zip(&self.flames)
            .map(|((p, (run, env)), flames)| {
                point_row_with(p, run.clone(), env.clone(), flames.clone())
            })
            .collect();
        rows.reverse(); // newest first
        let series = trend_series(
            !self.change_points.is_empty(),
            !self.env_changes.is_empty(),
            !self.annotations.is_empty(),
        );
        let page = EndpointPage {
            root,
            name: shown.name.clone(),
            id: shown.id.clone(),
            views,
            series,
            annotations: self
                .annotations
                .iter()
                .map(|a| {
                    (
                        f::datetime(a.at),
                        a.text.clone(),
                        a.link.clone().unwrap_or_default(),
                    )
                })
                .collect(),
            change_points: self.change_points.clone(),
            env_changes: self.env_changes.clone(),
            policy: self.policy,
            alarms: self.alarms.clone(),
            csv_href: format!("{root}data/endpoints/{slug}.csv"),
            untrusted: self.untrusted.clone(),
            latest: self.latest.clone(),
            reading: self.reading.clone(),
            rows,
            threshold_ratio: format!("×{}", shown.threshold_ratio),
            settings_line: self.settings_line.clone(),
            capacity: self.capacity.clone(),
            service: self.service.clone(),
            year: self.year,
            page_href: format!("{root}endpoints/{slug}.html"),
            older: self.older.clone(),
        };
        Ok((self.path.clone(), render(&page, &shown.id)?))
    }
}
