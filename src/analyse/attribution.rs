//! Attribution: is a regression code, or GC/lock? Decided here only.
//!
//! A regressed run's profile is compared with the baseline profile (the
//! most recent accepted run with a profile of the same endpoint and kind),
//! on **busy** weight: idle stacks (threads waiting for work) are left out,
//! so a server that waits for requests most of the time does not dilute
//! the change. Three things are read, all format-independent (they use
//! only the stacks, their categories and the run's figures):
//!
//! 1. **Where the width grew.** Frames ranked by the growth of their
//!    inclusive (total) share ([`crate::profile::compare::grown_frames`]);
//!    the (up to) three that grew most and are not merely callers of a
//!    frame ranked above are *named*, and the growth of the stacks through
//!    them is split by category (application, GC + lock + VM/safepoint).
//! 2. **Whether there is more busy work at all.** Shares always add up to
//!    100 %, so when something shrinks every other frame gains share. The
//!    **busy time per request** says it directly: the busy weight ÷ the
//!    requests served while the profiler ran (the run's throughput ×
//!    `[profile] duration` in run.toml; in seconds when the weights are
//!    time or `[profile] rate` is given). Without a duration, the frames
//!    both profiles hold say it ([`shared_work_ratio`]: when new work is
//!    added they lose share in proportion), and the busy weight per unit
//!    of throughput is shown beside it (its ratio is the per-request one
//!    when both profiles ran as long, as a CI step that profiles every run
//!    alike records them; it decides only when too few frames are shared).
//! 3. **Category shares**, as before: the busy share of application code
//!    and of GC + lock + VM/safepoint, in points.
//!
//! * `code regression` — more busy work, and the application growth (the
//!   application share, or the named frames' growth in application
//!   stacks) is at least `min_shift_pts` (default 5) and at least twice the
//!   GC + lock + VM/safepoint growth: "code regression: rules_for_line
//!   (shop.py) +83.1 pts". A real N+1 query on a service whose baseline is
//!   already 96 % application code moves the category shares by 3 points,
//!   but its function goes from 0 % to 96 % of the busy time.
//! * `GC/lock` — more busy work, and GC + lock + VM/safepoint grew by at
//!   least `min_shift_pts` and at least twice the application growth;
//! * `inconclusive` — anything else: both grew, nothing grew enough, no
//!   more busy work than the baseline (the time went to waits the profiler
//!   does not sample, or outside the process), or too few samples
//!   ([`MIN_SAMPLES`] busy samples in either profile) to tell.
//!
//! Why these numbers: a 30 s profile at 100 Hz holds ~3,000 samples, where
//! the sampling noise of a share difference is about 1.3 points (binomial,
//! p = 0.5), and steady services move a couple of points between runs; 5
//! points is well clear of both. The 2× dominance keeps a verdict from being
//! given when code and environment both moved: then neither explains the
//! regression alone, and saying so is more useful than a coin toss. More
//! busy work means a busy time per request at least `min_shift_pts` percent
//! and two standard errors of its sampling noise above the baseline's, or,
//! estimated from the shared frames, at least [`SHARED_MIN_GROWTH`] above.
//! The minimum counts samples, never weight: 2,016 py-spy samples weigh
//! 20.16 seconds, and 100 samples of 1 MB allocations are still 100 samples.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use crate::cache::key::Digested;

use serde::Serialize;

use super::RunPoint;
use super::verdict::{self, BaselineEffect, Verdict};
use crate::model::{Archive, EndpointRun, ProfileCapture, ProfileFile, RunMeta};
use crate::profile::classify::StackCategories;
use crate::profile::compare::{
    Comparable, FrameNumbers, FrameTable, SharedWork, StackNormaliser, culprits, grown_frames_in,
    share_through, shared_work_ratio, short_frame_name,
};
use crate::profile::{
    Category, CategoryShares, Classifier, FrameGrowth, Normalisation, Profile, ProfileFormat,
};

/// How many grown frames are kept per profile (the table on the flame page).
pub const GROWN_FRAMES: usize = 15;

/// Below this many busy samples in either profile the shares are too noisy
/// to attribute anything: one sample is then 1 point or more.
pub const MIN_SAMPLES: f64 = 100.0;

/// How many grown frames the attribution line names.
pub const NAMED_FRAMES: usize = 3;

/// The categories that count as environment or configuration.
pub const ENVIRONMENT: [Category; 3] = [Category::Gc, Category::Lock, Category::Vm];

/// The growth of the stacks through the named frames counts as evidence
/// when it is at least this many standard errors of binomial sampling
/// noise: they are the largest of dozens of noisy changes (the largest of
/// 50 is about 2.3 standard errors by chance), and consecutive samples of
/// one slow request are not independent, so the real noise is larger. A
/// real N+1 grows by 30 standard errors and more; a frame that is 84 % of
/// the busy time moving 4 points in 500 samples, by about 2.
pub const FRAMES_MIN_Z: f64 = 4.0;

/// Estimated from the shared frames ([`shared_work_ratio`]), the busy
/// work must have grown by at least this fraction to be called more: the
/// median of a handful of frames' share ratios moves by a few percent
/// between two captures of the same code.
pub const SHARED_MIN_GROWTH: f64 = 0.10;

/// The outcome of an attribution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AttributionKind {
    /// Width moved into business code.
    CodeRegression,
    /// Width moved into GC, lock or VM/safepoint frames.
    GcLock,
    /// Neither side clearly explains it, or the profiles cannot tell.
    Inconclusive,
}

impl AttributionKind {
    pub fn as_str(self) -> &'static str {
        match self {
            AttributionKind::CodeRegression => "code-regression",
            AttributionKind::GcLock => "gc-lock",
            AttributionKind::Inconclusive => "inconclusive",
        }
    }

    fn label(self) -> &'static str {
        match self {
            AttributionKind::CodeRegression => "code regression",
            AttributionKind::GcLock => "GC/lock",
            AttributionKind::Inconclusive => "inconclusive",
        }
    }
}

/// One category's share now, in the baseline, and the change.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CategoryChange {
    pub category: Category,
    pub share_pct: f64,
    pub baseline_pct: f64,
    /// `share_pct - baseline_pct`, percentage points.
    pub delta_pts: f64,
}

/// The attribution verdict with the numbers behind it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Attribution {
    pub kind: AttributionKind,
    /// One short line for tables that list many runs, e.g. `code
    /// regression: rules_for_line (shop.py) +83.1 pts`.
    pub summary: String,
    /// Change of the application share, points.
    pub application_delta_pts: f64,
    /// Change of GC + lock + VM/safepoint, points.
    pub environment_delta_pts: f64,
    /// Every busy category, in a fixed order (idle is left out when it is
    /// excluded).
    pub changes: Vec<CategoryChange>,
    /// The frames [`line`](Self::line) names: the largest total-share
    /// growth, callers of a frame ranked above skipped.
    pub top_frames: Vec<NamedFrame>,
    /// Growth of the busy share of the stacks through the named frames
    /// (each stack once), in application stacks and in GC + lock +
    /// VM/safepoint stacks, points.
    pub frames_application_pts: f64,
    pub frames_environment_pts: f64,
    /// That growth in standard errors of its (binomial) sampling noise; it
    /// counts as evidence from [`FRAMES_MIN_Z`] on. `None` when a profile
    /// has no sample count (it then counts), or the noise is nil.
    pub frames_z: Option<f64>,
    /// The busy time per request of both profiles, or why it is not known.
    pub per_request: PerRequest,
    /// What the frames both profiles hold say about the busy work
    /// ([`shared_work_ratio`]); `None` with too few such frames.
    pub shared_work: Option<SharedWork>,
    /// Whether the comparison found more busy work than the baseline's
    /// (`None`: neither the busy time per request nor the shared frames
    /// could say; the shares are then read alone).
    pub more_work: Option<bool>,
    /// Something to say beside the reading ("per request: cannot tell: …").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A grown frame named in the attribution line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NamedFrame {
    pub frame: String,
    /// Change of its total (inclusive) busy share, points.
    pub total_delta_pts: f64,
    /// The category most of that growth is in (the categories of the
    /// stacks through the frame).
    pub category: Category,
}

/// The busy time (or weight) per request served while the profiler ran.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum PerRequest {
    /// Both runs say how long their profiler ran (`[profile] duration`):
    /// each profile's busy weight per request, in `unit` (`s` when it is
    /// time).
    Measured {
        unit: String,
        before: f64,
        after: f64,
        /// `after ÷ before`.
        ratio: f64,
        /// The relative sampling noise of `ratio` (one standard error of
        /// its logarithm, from the busy sample counts; 0 when unknown).
        noise: f64,
    },
    /// The profiles do not say how long they ran: the busy weight ÷ the
    /// run's throughput, whose ratio is the busy weight per request's when
    /// both profiles ran as long (and, counted in samples, at one rate),
    /// as a CI step that profiles every run alike records them.
    Relative {
        /// `samples`, `s`, or the profiles' unit.
        unit: String,
        ratio: f64,
        noise: f64,
    },
    /// Why it cannot be told.
    Unknown { reason: String },
}

impl PerRequest {
    /// The ratio and its noise, when there is one.
    pub fn ratio(&self) -> Option<(f64, f64)> {
        match self {
            PerRequest::Measured { ratio, noise, .. }
            | PerRequest::Relative { ratio, noise, .. } => Some((*ratio, *noise)),
            PerRequest::Unknown { .. } => None,
        }
    }

    /// `busy time per request ×9.7`, `busy samples per request ×1.38`.
    fn words(&self) -> Option<String> {
        let what = |unit: &str| match unit {
            "s" => "busy time",
            "samples" => "busy samples",
            _ => "busy weight",
        };
        match self {
            PerRequest::Measured { unit, ratio, .. } | PerRequest::Relative { unit, ratio, .. } => {
                Some(format!(
                    "{} per request ×{}",
                    what(unit),
                    ratio_text(*ratio)
                ))
            }
            PerRequest::Unknown { .. } => None,
        }
    }

    /// What the ratio assumes, in brackets, or the values it compares.
    fn qualifier(&self) -> String {
        match self {
            PerRequest::Measured {
                unit,
                before,
                after,
                ..
            } => format!(
                " ({} → {})",
                cost_text(*before, unit),
                cost_text(*after, unit)
            ),
            PerRequest::Relative { unit, .. } if unit == "samples" => {
                " (if both profiles ran as long, at one rate)".to_string()
            }
            PerRequest::Relative { .. } => " (if both profiles ran as long)".to_string(),
            PerRequest::Unknown { .. } => String::new(),
        }
    }
}

/// Which measure decides whether the regressed profile does more busy work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WorkMeasure {
    PerRequest,
    SharedFrames,
    None,
}

/// What a run says about how one of its profiles was recorded, besides the
/// file: with the endpoint's throughput, the requests the profiler saw.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Capture {
    /// Requests per second the endpoint served in the run (the median of
    /// its rounds').
    pub throughput_rps: Option<f64>,
    /// run.toml `[profile]`.
    pub recorded: ProfileCapture,
}

/// One side of the comparison: a profile's busy shares, its busy stacks as
/// compared, and how it was recorded.
#[derive(Debug, Clone, Copy)]
pub struct Side<'a> {
    pub shares: &'a CategoryShares,
    pub comparable: &'a Comparable,
    pub capture: Capture,
}

impl Attribution {
    /// The reading with every frame it names and what the busy time per
    /// request says, as the flame page and `perfdash check` show it:
    /// `code regression: DiscountRules.forLine +27.4 pts,
    /// DiscountRuleRepository.findByProduct +19.8 pts, JdbcTemplate.query
    /// +18.8 pts; application share +7 pts of busy time`. [`summary`](Self::summary) stays short for tables
    /// that list many runs.
    pub fn line(&self) -> String {
        let frames = || {
            self.top_frames
                .iter()
                .map(|f| {
                    format!(
                        "{} {:+.1} pts",
                        short_frame_name(&f.frame),
                        f.total_delta_pts
                    )
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut out = match (self.kind, self.top_frames.is_empty()) {
            (AttributionKind::CodeRegression, false) if self.names_code_frame() => {
                format!(
                    "code regression: {}; {}",
                    frames(),
                    category_points(Category::Application, self.application_delta_pts, self)
                )
            }
            (_, false) => format!("{}; grew most: {}", self.summary, frames()),
            (_, true) => self.summary.clone(),
        };
        if let Some(words) = self.per_request.words()
            && !self.summary.contains("per request")
        {
            out.push_str(&format!("; {words}{}", self.per_request.qualifier()));
        }
        if let Some(note) = &self.note {
            out.push_str("; ");
            out.push_str(note);
        }
        out
    }

    /// Whether the summary names an application frame (it does for a code
    /// regression whose growth is in named frames).
    fn names_code_frame(&self) -> bool {
        self.top_frames
            .iter()
            .find(|f| f.category == Category::Application)
            .is_some_and(|f| {
                self.summary
                    .starts_with(&format!("code regression: {} ", short_frame_name(&f.frame)))
            })
    }
}

fn category_points(c: Category, d: f64, a: &Attribution) -> String {
    let busy = if a.changes.iter().all(|x| x.category != Category::IdleWait) {
        " of busy time"
    } else {
        ""
    };
    format!("{} share {:+.0} pts{busy}", c.label(), d)
}

/// `9.7`, `1.02`, `0.34`: enough digits to tell it from 1.
fn ratio_text(r: f64) -> String {
    if r >= 10.0 {
        format!("{r:.0}")
    } else if r >= 2.0 {
        format!("{r:.1}")
    } else {
        format!("{r:.2}")
    }
}

/// A busy time per request: `5.6 ms`, `120 µs`; other units as they are.
fn cost_text(v: f64, unit: &str) -> String {
    if unit != "s" {
        return format!("{} {unit}", crate::profile::format_weight(v));
    }
    if v >= 1.0 {
        format!("{v:.2} s")
    } else if v >= 1e-3 {
        format!("{:.1} ms", v * 1e3)
    } else {
        format!("{:.0} µs", v * 1e6)
    }
}

/// Per-category changes of the busy shares from `baseline` to `current`.
pub fn changes(current: &CategoryShares, baseline: &CategoryShares) -> Vec<CategoryChange> {
    current
        .busy_shares
        .iter()
        .map(|&(c, share)| CategoryChange {
            category: c,
            share_pct: share,
            baseline_pct: baseline.busy_pct(c),
            delta_pts: share - baseline.busy_pct(c),
        })
        .collect()
}

/// Seconds per unit of a time unit (`seconds`, `ms`, `nanoseconds`, …).
fn seconds_per(unit: &str) -> Option<f64> {
    Some(match unit {
        "seconds" | "second" | "s" => 1.0,
        "milliseconds" | "millisecond" | "ms" => 1e-3,
        "microseconds" | "microsecond" | "us" | "µs" => 1e-6,
        "nanoseconds" | "nanosecond" | "ns" => 1e-9,
        _ => return None,
    })
}

/// The busy weight of one side in seconds when it is time (time units, or
/// samples at a known rate), else in its own unit.
fn busy_of(side: &Side<'_>) -> (f64, String) {
    let units = side.comparable.units.as_str();
    let total = side.comparable.total;
    match (seconds_per(units), side.capture.recorded.rate_hz) {
        (Some(f), _) => (total * f, "s".to_string()),
        (None, Some(rate)) if units == "samples" => (total / rate, "s".to_string()),
        _ => (total, units.to_string()),
    }
}

/// The busy time per request of both sides ([`PerRequest`]): measured when
/// both runs say how long their profiler ran, else relative to the
/// throughput, else why not.
pub fn per_request(current: &Side<'_>, baseline: &Side<'_>) -> PerRequest {
    let unknown = |reason: String| PerRequest::Unknown { reason };
    let rps = |s: &Side<'_>| {
        s.capture
            .throughput_rps
            .filter(|r| *r > 0.0 && r.is_finite())
    };
    let (ra, rb) = match (rps(current), rps(baseline)) {
        (Some(a), Some(b)) => (a, b),
        (None, _) => return unknown("no request count: the run's throughput is not known".into()),
        (_, None) => {
            return unknown(
                "no request count: the baseline profile's run's throughput is not known".into(),
            );
        }
    };
    let ((wa, ua), (wb, ub)) = (busy_of(current), busy_of(baseline));
    if ua != ub {
        let rates = [current, baseline].map(|s| s.capture.recorded.rate_hz);
        return unknown(if rates[0].is_some() != rates[1].is_some() {
            format!(
                "one profile's sampling rate is known, the other's not ([profile] rate in {} \
                 run.toml)",
                if rates[0].is_none() {
                    "this run's"
                } else {
                    "the baseline's"
                }
            )
        } else {
            format!("the profiles weigh different things ({ua} and {ub})")
        });
    }
    if !(wb > 0.0 && wa.is_finite()) {
        return unknown("the baseline profile holds no busy weight".into());
    }
    let noise = match (
        current.shares.busy_samples(),
        baseline.shares.busy_samples(),
    ) {
        (Some(x), Some(y)) if x > 0.0 && y > 0.0 => (1.0 / x + 1.0 / y).sqrt(),
        _ => 0.0,
    };
    let duration = |s: &Side<'_>| s.capture.recorded.duration_s;
    match (duration(current), duration(baseline)) {
        (Some(da), Some(db)) => {
            let (after, before) = (wa / (ra * da), wb / (rb * db));
            PerRequest::Measured {
                unit: ua,
                before,
                after,
                ratio: after / before,
                noise,
            }
        }
        _ => PerRequest::Relative {
            unit: ua,
            ratio: (wa / ra) / (wb / rb),
            noise,
        },
    }
}

/// Per category, the growth of the busy share of the stacks through
/// `frames` from `baseline` to `current`, points.
fn growth_through(
    current: &Comparable,
    baseline: &Comparable,
    frames: &[&str],
) -> BTreeMap<Category, f64> {
    let mut out = share_through(current, frames);
    for (c, before) in share_through(baseline, frames) {
        *out.entry(c).or_insert(0.0) -= before;
    }
    out
}

fn environment_part(by: &BTreeMap<Category, f64>) -> f64 {
    ENVIRONMENT
        .iter()
        .map(|c| by.get(c).copied().unwrap_or(0.0))
        .sum()
}

/// The change of one category's busy share, points.
fn category_delta(changes: &[CategoryChange], c: Category) -> f64 {
    changes
        .iter()
        .find(|x| x.category == c)
        .map(|x| x.delta_pts)
        .unwrap_or(0.0)
}

/// The frames the line names and how the stacks through them grew.
struct Named {
    frames: Vec<NamedFrame>,
    /// Growth of the busy share of the stacks through them, in application
    /// and in GC + lock + VM/safepoint stacks, points.
    application: f64,
    environment: f64,
    /// That growth in standard errors of its sampling noise (`None`:
    /// a profile has no sample count).
    z: Option<f64>,
}

impl Named {
    /// Whether the growth through the named frames is more than sampling
    /// noise: the named frames are the largest of many noisy changes.
    fn significant(&self) -> bool {
        self.z.is_none_or(|z| z >= FRAMES_MIN_Z)
    }
}

/// The frames the line names ([`culprits`] of `grown`; none with too few
/// samples), each with the category of its growth, and the growth of the
/// stacks through them.
fn name_frames(
    current: &Side<'_>,
    baseline: &Side<'_>,
    grown: &[FrameGrowth],
    enough: bool,
) -> Named {
    let named: Vec<&FrameGrowth> = if enough {
        culprits(grown, NAMED_FRAMES)
    } else {
        Vec::new()
    };
    let (now, then) = (current.comparable, baseline.comparable);
    let frames = named
        .iter()
        .map(|g| {
            let by = growth_through(now, then, &[g.frame.as_str()]);
            let category = by
                .iter()
                .max_by(|a, b| a.1.total_cmp(b.1).then(b.0.cmp(a.0)))
                .map_or(Category::Other, |(c, _)| *c);
            NamedFrame {
                frame: g.frame.clone(),
                total_delta_pts: g.total_delta_pts(),
                category,
            }
        })
        .collect();
    let names: Vec<&str> = named.iter().map(|g| g.frame.as_str()).collect();
    let through = growth_through(now, then, &names);
    // Binomial noise of the two shares, from the busy sample counts.
    let share = |p: &Comparable| share_through(p, &names).values().sum::<f64>() / 100.0;
    let (after, before) = (share(now), share(then));
    let z = match (
        current.shares.busy_samples(),
        baseline.shares.busy_samples(),
    ) {
        (Some(na), Some(nb)) if na > 0.0 && nb > 0.0 => {
            let var = after * (1.0 - after) / na + before * (1.0 - before) / nb;
            let delta = after - before;
            Some(if var > 0.0 {
                delta / var.sqrt()
            } else if delta > 0.0 {
                f64::INFINITY
            } else {
                0.0
            })
        }
        _ => None,
    };
    Named {
        frames,
        application: through.get(&Category::Application).copied().unwrap_or(0.0),
        environment: environment_part(&through),
        z,
    }
}

/// What says whether the regressed profile does more busy work.
struct Work {
    per_request: PerRequest,
    shared: Option<SharedWork>,
    /// What each measure says on its own.
    per_request_more: Option<bool>,
    shared_more: Option<bool>,
    /// The measure that decides.
    by: WorkMeasure,
}

impl Work {
    /// The measured busy time per request (facts the runs declare), else
    /// the frames both profiles hold (no assumption about the captures),
    /// else the busy weight per unit of throughput (assumes both profiles
    /// ran as long).
    fn of(current: &Side<'_>, baseline: &Side<'_>, min_shift_pts: f64) -> Work {
        let per_request = per_request(current, baseline);
        let shared = shared_work_ratio(baseline.comparable, current.comparable);
        let per_request_more = per_request
            .ratio()
            .map(|(ratio, noise)| ratio >= 1.0 + (min_shift_pts / 100.0).max(2.0 * noise));
        let by = match (&per_request, shared) {
            (PerRequest::Measured { .. }, _) => WorkMeasure::PerRequest,
            (_, Some(_)) => WorkMeasure::SharedFrames,
            (PerRequest::Relative { .. }, None) => WorkMeasure::PerRequest,
            _ => WorkMeasure::None,
        };
        Work {
            shared_more: shared.map(|s| s.ratio >= 1.0 + SHARED_MIN_GROWTH),
            per_request,
            shared,
            per_request_more,
            by,
        }
    }

    fn more(&self) -> Option<bool> {
        match self.by {
            WorkMeasure::PerRequest => self.per_request_more,
            WorkMeasure::SharedFrames => self.shared_more,
            WorkMeasure::None => None,
        }
    }

    /// Why there is no more busy work than the baseline's, in words.
    fn none_more(&self) -> String {
        match (&self.per_request, self.shared) {
            (p, _) if self.by == WorkMeasure::PerRequest => {
                let (ratio, noise) = p.ratio().expect("a per-request ratio decided");
                format!(
                    "{}, {} the baseline's{}: the extra latency is in waits the profile does \
                     not show, or outside the process",
                    p.words().expect("a ratio"),
                    if ratio < 1.0 - (2.0 * noise).max(0.05) {
                        "less than"
                    } else {
                        "no more than"
                    },
                    match p {
                        PerRequest::Relative { .. } => p.qualifier(),
                        _ => String::new(),
                    }
                )
            }
            (_, Some(s)) if s.ratio < 1.0 => format!(
                "less busy work than the baseline (×{} by the frames both profiles hold): the \
                 frames that grew only gained share",
                ratio_text(s.ratio)
            ),
            (_, Some(s)) => format!(
                "no more busy work than the baseline (×{} by the frames both profiles hold)",
                ratio_text(s.ratio)
            ),
            _ => unreachable!("a measure decided"),
        }
    }

    /// What the line adds: what the busy time per request misses when a
    /// run recorded part of it, and whether the relative ratio and the
    /// shared frames disagree (one of their assumptions does not hold).
    fn note(&self, current: &Side<'_>, baseline: &Side<'_>) -> Option<String> {
        let asked = [current, baseline].iter().any(|s| {
            s.capture.recorded.duration_s.is_some() || s.capture.recorded.rate_hz.is_some()
        });
        let missing = match &self.per_request {
            PerRequest::Unknown { reason } if asked => {
                Some(format!("per request: cannot tell: {reason}"))
            }
            PerRequest::Relative { .. } if asked => Some(format!(
                "per request: relative only: {} does not say how long it was recorded \
                 ([profile] duration in its run.toml)",
                if current.capture.recorded.duration_s.is_none() {
                    "this run"
                } else {
                    "the baseline profile's run"
                }
            )),
            _ => None,
        };
        let disagree = match (&self.per_request, self.shared) {
            (PerRequest::Relative { .. }, Some(shared))
                if self.per_request_more.is_some() && self.per_request_more != self.shared_more =>
            {
                Some(format!(
                    "the frames both profiles hold say ×{}: did both profiles run as long?",
                    ratio_text(shared.ratio)
                ))
            }
            _ => None,
        };
        match (missing, disagree) {
            (Some(a), Some(b)) => Some(format!("{a}; {b}")),
            (a, b) => a.or(b),
        }
    }
}

/// `application +7 pts`.
fn points(c: Category, d: f64) -> String {
    format!("{} {:+.0} pts", c.label(), d)
}

/// The summary's words after `GC/lock: `: the grown environment
/// categories, else the environment frame named.
fn gc_lock_detail(changes: &[CategoryChange], top_frames: &[NamedFrame], of_busy: &str) -> String {
    let mut grown: Vec<(Category, f64)> = ENVIRONMENT
        .iter()
        .map(|&c| (c, category_delta(changes, c)))
        .filter(|(_, d)| *d >= 0.5)
        .collect();
    grown.sort_by(|a, b| b.1.total_cmp(&a.1));
    if !grown.is_empty() {
        let listed: Vec<String> = grown.iter().map(|&(c, d)| points(c, d)).collect();
        return format!("{}{of_busy}", listed.join(", "));
    }
    let env: f64 = ENVIRONMENT
        .iter()
        .map(|&c| category_delta(changes, c))
        .sum();
    top_frames
        .iter()
        .find(|f| ENVIRONMENT.contains(&f.category))
        .map(|f| {
            format!(
                "{} {:+.1} pts",
                short_frame_name(&f.frame),
                f.total_delta_pts
            )
        })
        .unwrap_or_else(|| format!("{}{of_busy}", points(Category::Gc, env)))
}

/// The two largest category moves: `other -14 pts, application +8 pts`.
fn largest_moves(changes: &[CategoryChange], of_busy: &str) -> String {
    let mut moved: Vec<&CategoryChange> = changes.iter().collect();
    moved.sort_by(|a, b| {
        b.delta_pts
            .abs()
            .total_cmp(&a.delta_pts.abs())
            .then(a.category.cmp(&b.category))
    });
    let listed: Vec<String> = moved
        .iter()
        .take(2)
        .map(|c| points(c.category, c.delta_pts))
        .collect();
    format!("{}{of_busy}", listed.join(", "))
}

/// Decides whether a regression is code or GC/lock (see the module docs),
/// naming the frames in `grown` (ranked, as
/// [`grown_frames`](crate::profile::grown_frames) gives them) that grew
/// most.
pub fn attribute(
    current: &Side<'_>,
    baseline: &Side<'_>,
    min_shift_pts: f64,
    grown: &[FrameGrowth],
) -> Attribution {
    let changes = changes(current.shares, baseline.shares);
    let app = category_delta(&changes, Category::Application);
    let env: f64 = ENVIRONMENT
        .iter()
        .map(|&c| category_delta(&changes, c))
        .sum();
    // Unknown sample counts (bytes or ns without counts) are not held
    // against the profile: there is nothing to check.
    let busy = |s: &CategoryShares| s.busy_samples().unwrap_or(f64::INFINITY);
    let enough = busy(current.shares) >= MIN_SAMPLES && busy(baseline.shares) >= MIN_SAMPLES;
    let named = name_frames(current, baseline, grown, enough);
    let (frames_app, frames_env) = (named.application, named.environment);
    let work = Work::of(current, baseline, min_shift_pts);
    let more_work = work.more();

    // The named frames' growth counts when it is more than sampling noise.
    let (app_evidence, env_evidence) = if named.significant() {
        (app.max(frames_app), env.max(frames_env))
    } else {
        (app, env)
    };
    let kind = if !enough || more_work == Some(false) {
        AttributionKind::Inconclusive
    } else if app_evidence >= min_shift_pts && app_evidence >= 2.0 * env_evidence.max(0.0) {
        AttributionKind::CodeRegression
    } else if env_evidence >= min_shift_pts && env_evidence >= 2.0 * app_evidence.max(0.0) {
        AttributionKind::GcLock
    } else {
        AttributionKind::Inconclusive
    };

    let of_busy = if current.shares.excludes_idle() {
        " of busy time"
    } else {
        ""
    };
    let detail = match kind {
        AttributionKind::CodeRegression => match named
            .frames
            .iter()
            .find(|f| f.category == Category::Application)
        {
            Some(f) if frames_app >= min_shift_pts && named.significant() => format!(
                "{} {:+.1} pts",
                short_frame_name(&f.frame),
                f.total_delta_pts
            ),
            _ => format!("{}{of_busy}", points(Category::Application, app)),
        },
        AttributionKind::GcLock => gc_lock_detail(&changes, &named.frames, of_busy),
        AttributionKind::Inconclusive if !enough => format!(
            "{} and {} {}samples, at least {MIN_SAMPLES:.0} needed",
            busy(current.shares).round(),
            busy(baseline.shares).round(),
            if of_busy.is_empty() { "" } else { "busy " }
        ),
        AttributionKind::Inconclusive if more_work == Some(false) => work.none_more(),
        AttributionKind::Inconclusive => largest_moves(&changes, of_busy),
    };
    let note = if enough {
        work.note(current, baseline)
    } else {
        None
    };
    let (top_frames, frames_z) = (named.frames, named.z);
    Attribution {
        kind,
        summary: format!("{}: {detail}", kind.label()),
        application_delta_pts: app,
        environment_delta_pts: env,
        changes,
        top_frames,
        frames_application_pts: frames_app,
        frames_environment_pts: frames_env,
        frames_z: frames_z.filter(|z| z.is_finite()),
        per_request: work.per_request,
        shared_work: work.shared,
        more_work,
        note,
    }
}

/// One profile of one endpoint in one run, classified, and compared with
/// the baseline's profile of the same kind.
#[derive(Debug, Clone, Serialize)]
pub struct ProfileAnalysis {
    pub kind: String,
    /// The file, relative to the archive root.
    pub source: String,
    pub format: ProfileFormat,
    /// What the weights count (`samples`, `bytes`, `ns`, `seconds`, …).
    pub units: String,
    /// All weight in the profile, including the root's own.
    pub total: f64,
    /// How many samples the profile holds (`None`: the format does not say).
    pub samples: Option<u64>,
    /// Category → percent of `total`; every category is present.
    pub shares: BTreeMap<Category, f64>,
    /// Percent of `total` that is idle (threads waiting for work).
    pub idle_pct: f64,
    /// The weight that is not idle: the base of `busy_shares` and of the
    /// frame shares in `grown_frames`.
    pub busy_total: f64,
    /// Category → percent of `busy_total`; idle is absent when it is
    /// excluded (`[profiles] exclude_idle`, the default).
    pub busy_shares: BTreeMap<Category, f64>,
    /// Percent of `total` spent on GC work inside application threads
    /// (overlaps the categories).
    pub gc_in_mutator_pct: f64,
    /// How frame names were normalised before they were compared.
    pub normalisation: Normalisation,
    /// The most recent accepted earlier run with a profile of this kind.
    pub baseline: Option<ProfileBaseline>,
    /// On a regressed run with a baseline profile: code or GC/lock.
    pub attribution: Option<Attribution>,
    /// Frames whose total (inclusive) busy share grew most against the
    /// baseline profile, largest growth first.
    pub grown_frames: Vec<FrameGrowth>,
    /// The stacks themselves, for the renderers (digested once for the
    /// page memo's keys).
    #[serde(skip)]
    pub profile: Digested<Profile>,
    /// The busy stacks with normalised names, as compared.
    #[serde(skip)]
    pub comparable: Digested<Comparable>,
}

/// The baseline profile a profile is compared with.
#[derive(Debug, Clone, Serialize)]
pub struct ProfileBaseline {
    pub run: String,
    pub source: String,
    pub total: f64,
    pub samples: Option<u64>,
    /// Percent of the baseline's weight that is idle.
    pub idle_pct: f64,
    /// Per busy category: share now, share in the baseline, change in points.
    pub changes: Vec<CategoryChange>,
    #[serde(skip)]
    pub profile: Digested<Profile>,
    #[serde(skip)]
    pub comparable: Digested<Comparable>,
}

/// A profile classified, with its busy stacks as compared and their frame
/// table: ready to be compared, or to serve as a baseline.
struct Prepared {
    run: String,
    kind: String,
    source: String,
    /// One digest for this profile wherever it is shown.
    profile: Digested<Profile>,
    comparable: Digested<Comparable>,
    table: FrameTable,
    shares: CategoryShares,
    capture: Capture,
}

/// Prepares and compares the profiles of one endpoint, with one memo for
/// all of them: most stacks recur in every run. The one place a profile is
/// compared with its baseline, for the site ([`attach_profiles`]) and for
/// `perfdash check` ([`attribute_checked`]).
struct Comparer<'p> {
    classifier: &'p Classifier,
    min_shift_pts: f64,
    normaliser: StackNormaliser<'p>,
    numbers: FrameNumbers,
    classified: StackCategories<'p>,
}

impl<'p> Comparer<'p> {
    fn new(classifier: &'p Classifier, min_shift_pts: f64) -> Comparer<'p> {
        Comparer {
            classifier,
            min_shift_pts,
            normaliser: StackNormaliser::new(classifier.normalisation()),
            numbers: FrameNumbers::default(),
            classified: StackCategories::default(),
        }
    }

    fn prepare(&mut self, file: &'p ProfileFile, run: &str, capture: Capture) -> Prepared {
        let (shares, categories) = self
            .classifier
            .shares_and_categories_with(&file.profile, &mut self.classified);
        let comparable = Digested::new(Arc::new(Comparable::from_categories_with(
            &file.profile,
            &categories,
            self.classifier,
            &mut self.normaliser,
        )));
        let table = FrameTable::of(&comparable, &mut self.numbers);
        Prepared {
            run: run.to_string(),
            kind: file.kind.clone(),
            source: file.source.clone(),
            profile: Digested::new(file.profile.clone()),
            comparable,
            table,
            shares,
            capture,
        }
    }

    /// `current` against `base`, attributed when `regressed`.
    fn compare(
        &self,
        current: &Prepared,
        base: Option<&Prepared>,
        regressed: bool,
    ) -> ProfileAnalysis {
        let shares = &current.shares;
        let baseline = base.map(|b| ProfileBaseline {
            run: b.run.clone(),
            source: b.source.clone(),
            total: b.profile.total,
            samples: b.profile.samples,
            idle_pct: b.shares.idle_pct(),
            changes: changes(shares, &b.shares),
            profile: b.profile.clone(),
            comparable: b.comparable.clone(),
        });
        let grown = base
            .map(|b| {
                grown_frames_in(
                    (&b.comparable, &b.table),
                    (&current.comparable, &current.table),
                    &self.numbers,
                    GROWN_FRAMES,
                )
            })
            .unwrap_or_default();
        let attribution = base.filter(|_| regressed).map(|b| {
            attribute(
                &Side {
                    shares,
                    comparable: &current.comparable,
                    capture: current.capture,
                },
                &Side {
                    shares: &b.shares,
                    comparable: &b.comparable,
                    capture: b.capture,
                },
                self.min_shift_pts,
                &grown,
            )
        });
        let profile = &current.profile;
        ProfileAnalysis {
            kind: current.kind.clone(),
            source: current.source.clone(),
            format: profile.format,
            units: profile.units.clone(),
            total: profile.total,
            samples: profile.samples,
            shares: shares.shares.iter().copied().collect(),
            idle_pct: shares.idle_pct(),
            busy_total: shares.busy,
            busy_shares: shares.busy_shares.iter().copied().collect(),
            gc_in_mutator_pct: shares.gc_in_mutator_pct,
            normalisation: self.classifier.normalisation(),
            baseline,
            attribution,
            grown_frames: grown,
            profile: profile.clone(),
            comparable: current.comparable.clone(),
        }
    }
}

/// What a point says about how its run's profiles were recorded.
fn capture_of(point: &RunPoint, meta: &RunMeta) -> Capture {
    Capture {
        throughput_rps: point.figures.throughput_rps,
        recorded: meta.profile,
    }
}

/// Whether a point's profiles may serve as baseline profiles: profiles
/// follow the latency baseline, so a run that joined it (including one
/// inside an accepted change) becomes the reference; a branch run's never
/// does (it never joins a main baseline).
fn serves_as_baseline(point: &RunPoint, meta: &RunMeta, main_branch: Option<&str>) -> bool {
    verdict::baseline_effect(point.verdict, point.accepted_change) != BaselineEffect::Skip
        && meta.on_main(main_branch)
}

/// Classifies and compares the profiles of one endpoint's runs, in time
/// order, and attributes each regressed run that has a baseline profile.
/// The baseline of a kind is the most recent earlier run of this endpoint
/// that has a profile of that kind and may serve as a baseline (the same
/// rule as for p99 baselines: [`verdict::baseline_effect`]).
/// `endpoint_runs`: the runs that hold the endpoint (index into
/// `archive.runs`, its folder), in index order.
pub fn attach_profiles(
    points: &mut [RunPoint],
    endpoint_runs: &[(usize, &EndpointRun)],
    archive: &Archive,
    classifier: &Classifier,
    min_shift_pts: f64,
) {
    let mut bases: HashMap<String, Prepared> = HashMap::new();
    let main_branch = archive.main_branch();
    let mut comparer = Comparer::new(classifier, min_shift_pts);
    for point in points.iter_mut() {
        let run = &archive.runs[point.run_index];
        let Ok(at) = endpoint_runs.binary_search_by_key(&point.run_index, |&(i, _)| i) else {
            continue;
        };
        let files = &endpoint_runs[at].1.profiles;
        let capture = capture_of(point, &run.meta);
        let mut analysed = Vec::with_capacity(files.len());
        let mut new_bases = Vec::new();
        for file in files {
            let prepared = comparer.prepare(file, &run.id, capture);
            analysed.push(comparer.compare(
                &prepared,
                bases.get(&file.kind),
                point.verdict == Verdict::Regression,
            ));
            new_bases.push((file.kind.clone(), prepared));
        }
        point.profiles = analysed;
        if serves_as_baseline(point, &run.meta, main_branch.as_deref()) {
            bases.extend(new_bases);
        }
    }
}

/// One earlier point of an endpoint that may hold a baseline profile, for
/// [`attribute_checked`].
pub struct Candidate<'a> {
    pub point: &'a RunPoint,
    pub meta: &'a RunMeta,
}

/// The profiles of one regressed point compared with their baseline
/// profiles, exactly as the site's walk compares them ([`attach_profiles`]),
/// for `perfdash check`, which classifies no other profile. `files`: the
/// point's profiles; `earlier`: the endpoint's points before it, newest
/// first; `load` gives a point's profiles (read on demand: only until each
/// kind has found its baseline). Returns one analysis per profile, with
/// its baseline when one was found, attributed (when it was) if
/// `regressed`: the gate asks for every run over its policy's line.
pub fn attribute_checked<'a>(
    checked: Candidate<'_>,
    files: &[ProfileFile],
    earlier: impl Iterator<Item = Candidate<'a>>,
    mut load: impl FnMut(&RunPoint) -> Vec<ProfileFile>,
    main_branch: Option<&str>,
    classifier: &Classifier,
    (min_shift_pts, regressed): (f64, bool),
) -> Vec<ProfileAnalysis> {
    let (point, meta) = (checked.point, checked.meta);
    let mut wanted: Vec<&str> = files.iter().map(|f| f.kind.as_str()).collect();
    let mut found: Vec<(ProfileFile, String, Capture)> = Vec::new();
    for c in earlier {
        if wanted.is_empty() {
            break;
        }
        if !serves_as_baseline(c.point, c.meta, main_branch) {
            continue;
        }
        for file in load(c.point) {
            if let Some(at) = wanted.iter().position(|k| *k == file.kind) {
                wanted.remove(at);
                found.push((file, c.point.run.clone(), capture_of(c.point, c.meta)));
            }
        }
    }
    let mut comparer = Comparer::new(classifier, min_shift_pts);
    let bases: Vec<Prepared> = found
        .iter()
        .map(|(file, run, capture)| comparer.prepare(file, run, *capture))
        .collect();
    let capture = capture_of(point, meta);
    files
        .iter()
        .map(|file| {
            let prepared = comparer.prepare(file, &point.run, capture);
            let base = bases.iter().find(|b| b.kind == file.kind);
            comparer.compare(&prepared, base, regressed)
        })
        .collect()
}

#[cfg(test)]
mod tests;
