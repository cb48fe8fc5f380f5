//! Attribution: is a regression code, or GC/lock? Decided here only.
//!
//! Inputs are the **busy** category shares of the run's profile and of the
//! baseline profile (the most recent accepted run with a profile of the
//! same endpoint and kind): percent of the weight that is not idle, so a
//! server that waits for requests most of the time does not dilute the
//! change (idle is shown apart). Shares, not sample counts, so profiles of
//! different lengths compare.
//!
//! * `code regression` — the application share grew by at least
//!   `min_shift_pts` (default 5) and by at least twice the growth of
//!   GC + lock + VM/safepoint combined;
//! * `GC/lock` — GC + lock + VM/safepoint grew by at least `min_shift_pts`
//!   and by at least twice the application growth;
//! * `inconclusive` — anything else, including profiles with fewer than
//!   [`MIN_SAMPLES`] busy samples.
//!
//! [`Attribution::line`] adds the (up to) three frames whose total share
//! grew most ([`crate::profile::compare::culprits`]); the flame page shows
//! it, the shorter summary goes where many runs are listed.
//!
//! Why these numbers: a 30 s profile at 100 Hz holds ~3,000 samples, where
//! the sampling noise of a share difference is about 1.3 points (binomial,
//! p = 0.5), and steady services move a couple of points between runs; 5
//! points is well clear of both. The 2× dominance keeps a verdict from being
//! given when code and environment both moved: then neither explains the
//! regression alone, and saying so is more useful than a coin toss. The
//! minimum counts samples, never weight: 2,016 py-spy samples weigh 20.16
//! seconds, and 100 samples of 1 MB allocations are still 100 samples.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use crate::cache::key::Digested;

use serde::Serialize;

use super::RunPoint;
use super::verdict::{self, BaselineEffect, Verdict};
use crate::model::{Archive, EndpointRun};
use crate::profile::classify::StackCategories;
use crate::profile::compare::{
    Comparable, FrameNumbers, FrameTable, StackNormaliser, culprits, grown_frames_in,
    short_frame_name,
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

/// The outcome of an attribution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AttributionKind {
    /// Width moved into business code.
    CodeRegression,
    /// Width moved into GC, lock or VM/safepoint frames.
    GcLock,
    /// Neither side clearly explains it.
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
    /// One line, e.g. `code regression (application +18 pts)`.
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
}

/// A grown frame named in the attribution line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NamedFrame {
    pub frame: String,
    /// Change of its total (inclusive) busy share, points.
    pub total_delta_pts: f64,
}

impl Attribution {
    /// The summary with the frames that grew most, as the flame page shows
    /// it: `code regression (application +7 pts of busy time); grew most:
    /// DiscountRules.forLine +27.4 pts, …`. The summary alone stays short
    /// for tables that list many runs.
    pub fn line(&self) -> String {
        if self.top_frames.is_empty() {
            return self.summary.clone();
        }
        let frames: Vec<String> = self
            .top_frames
            .iter()
            .map(|f| {
                format!(
                    "{} {:+.1} pts",
                    short_frame_name(&f.frame),
                    f.total_delta_pts
                )
            })
            .collect();
        format!("{}; grew most: {}", self.summary, frames.join(", "))
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

/// Decides whether a regression is code or GC/lock (see the module docs),
/// naming the frames in `grown` (ranked, as
/// [`grown_frames`](crate::profile::grown_frames) gives them)
/// that grew most.
pub fn attribute(
    current: &CategoryShares,
    baseline: &CategoryShares,
    min_shift_pts: f64,
    grown: &[FrameGrowth],
) -> Attribution {
    let changes = changes(current, baseline);
    let delta = |c: Category| {
        changes
            .iter()
            .find(|x| x.category == c)
            .map(|x| x.delta_pts)
            .unwrap_or(0.0)
    };
    let app = delta(Category::Application);
    let env: f64 = ENVIRONMENT.iter().map(|&c| delta(c)).sum();
    // Unknown sample counts (bytes or ns without counts) are not held
    // against the profile: there is nothing to check.
    let busy = |s: &CategoryShares| s.busy_samples().unwrap_or(f64::INFINITY);
    let enough = busy(current) >= MIN_SAMPLES && busy(baseline) >= MIN_SAMPLES;

    let kind = if !enough {
        AttributionKind::Inconclusive
    } else if app >= min_shift_pts && app >= 2.0 * env.max(0.0) {
        AttributionKind::CodeRegression
    } else if env >= min_shift_pts && env >= 2.0 * app.max(0.0) {
        AttributionKind::GcLock
    } else {
        AttributionKind::Inconclusive
    };

    let pts = |c: Category, d: f64| format!("{} {:+.0} pts", c.label(), d);
    let busy_word = if current.excludes_idle() { "busy " } else { "" };
    let mut detail = match kind {
        AttributionKind::CodeRegression => pts(Category::Application, app),
        AttributionKind::GcLock => {
            let mut grown: Vec<(Category, f64)> = ENVIRONMENT
                .iter()
                .map(|&c| (c, delta(c)))
                .filter(|(_, d)| *d >= 0.5)
                .collect();
            grown.sort_by(|a, b| b.1.total_cmp(&a.1));
            grown
                .iter()
                .map(|&(c, d)| pts(c, d))
                .collect::<Vec<_>>()
                .join(", ")
        }
        AttributionKind::Inconclusive if !enough => format!(
            "{} and {} {busy_word}samples; at least {MIN_SAMPLES:.0} needed",
            busy(current).round(),
            busy(baseline).round()
        ),
        AttributionKind::Inconclusive => {
            let mut moved: Vec<&CategoryChange> = changes.iter().collect();
            moved.sort_by(|a, b| {
                b.delta_pts
                    .abs()
                    .total_cmp(&a.delta_pts.abs())
                    .then(a.category.cmp(&b.category))
            });
            moved
                .iter()
                .take(2)
                .map(|c| pts(c.category, c.delta_pts))
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    if enough && current.excludes_idle() {
        detail.push_str(" of busy time");
    }
    // Too few samples: no frame is named either.
    let named = if enough {
        culprits(grown, NAMED_FRAMES)
    } else {
        Vec::new()
    };
    Attribution {
        kind,
        summary: format!("{} ({detail})", kind.label()),
        application_delta_pts: app,
        environment_delta_pts: env,
        changes,
        top_frames: named
            .iter()
            .map(|g| NamedFrame {
                frame: g.frame.clone(),
                total_delta_pts: g.total_delta_pts(),
            })
            .collect(),
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
    struct Base {
        run: String,
        source: String,
        profile: Digested<Profile>,
        comparable: Digested<Comparable>,
        table: FrameTable,
        shares: CategoryShares,
    }
    let mut bases: HashMap<String, Base> = HashMap::new();
    let main_branch = archive.main_branch();
    // One memo for all the endpoint's profiles: most stacks recur in every run.
    let mut normaliser = StackNormaliser::new(classifier.normalisation());
    let mut numbers = FrameNumbers::default();
    let mut classified = StackCategories::default();
    for point in points.iter_mut() {
        let run = &archive.runs[point.run_index];
        let Ok(at) = endpoint_runs.binary_search_by_key(&point.run_index, |&(i, _)| i) else {
            continue;
        };
        let files = &endpoint_runs[at].1.profiles;
        let mut analysed = Vec::with_capacity(files.len());
        let mut new_bases = Vec::new();
        for file in files {
            let (shares, categories) =
                classifier.shares_and_categories_with(&file.profile, &mut classified);
            let comparable = Digested::new(Arc::new(Comparable::from_categories_with(
                &file.profile,
                &categories,
                classifier,
                &mut normaliser,
            )));
            // One digest for this profile wherever it is shown.
            let profile = Digested::new(file.profile.clone());
            let base = bases.get(&file.kind);
            let baseline = base.map(|b| ProfileBaseline {
                run: b.run.clone(),
                source: b.source.clone(),
                total: b.profile.total,
                samples: b.profile.samples,
                idle_pct: b.shares.idle_pct(),
                changes: changes(&shares, &b.shares),
                profile: b.profile.clone(),
                comparable: b.comparable.clone(),
            });
            let table = FrameTable::of(&comparable, &mut numbers);
            let grown = base
                .map(|b| {
                    grown_frames_in(
                        (&b.comparable, &b.table),
                        (&comparable, &table),
                        &numbers,
                        GROWN_FRAMES,
                    )
                })
                .unwrap_or_default();
            let attribution = match base {
                Some(b) if point.verdict == Verdict::Regression => {
                    Some(attribute(&shares, &b.shares, min_shift_pts, &grown))
                }
                _ => None,
            };
            analysed.push(ProfileAnalysis {
                kind: file.kind.clone(),
                source: file.source.clone(),
                format: file.profile.format,
                units: file.profile.units.clone(),
                total: file.profile.total,
                samples: file.profile.samples,
                shares: shares.shares.iter().copied().collect(),
                idle_pct: shares.idle_pct(),
                busy_total: shares.busy,
                busy_shares: shares.busy_shares.iter().copied().collect(),
                gc_in_mutator_pct: shares.gc_in_mutator_pct,
                normalisation: classifier.normalisation(),
                baseline,
                attribution,
                grown_frames: grown,
                profile: profile.clone(),
                comparable: comparable.clone(),
            });
            new_bases.push((
                file.kind.clone(),
                Base {
                    run: run.id.clone(),
                    source: file.source.clone(),
                    profile,
                    comparable,
                    table,
                    shares,
                },
            ));
        }
        point.profiles = analysed;
        // Profiles follow the latency baseline: a run that joined it
        // (including one inside an accepted change) becomes the reference.
        // A branch run's never does: it never joins a main baseline.
        if verdict::baseline_effect(point.verdict, point.accepted_change) != BaselineEffect::Skip
            && run.meta.on_main(main_branch.as_deref())
        {
            bases.extend(new_bases);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shares(total: f64, pairs: &[(Category, f64)]) -> CategoryShares {
        let of = |c: &Category| {
            pairs
                .iter()
                .find(|(x, _)| x == c)
                .map(|(_, v)| *v)
                .unwrap_or(0.0)
        };
        let idle = of(&Category::IdleWait);
        let busy = 100.0 - idle;
        CategoryShares {
            total,
            samples: Some(total as u64),
            busy: total * busy / 100.0,
            shares: Category::ALL.iter().map(|c| (*c, of(c))).collect(),
            busy_shares: Category::ALL
                .iter()
                .filter(|c| **c != Category::IdleWait)
                .map(|c| (*c, 100.0 * of(c) / busy))
                .collect(),
            gc_in_mutator_pct: 0.0,
        }
    }

    use Category::*;

    #[test]
    fn application_growth_is_a_code_regression() {
        let base = shares(
            3000.0,
            &[(Application, 50.0), (Gc, 10.0), (Io, 30.0), (Other, 10.0)],
        );
        let now = shares(
            3000.0,
            &[(Application, 68.0), (Gc, 10.0), (Io, 15.0), (Other, 7.0)],
        );
        let a = attribute(&now, &base, 5.0, &[]);
        assert_eq!(a.kind, AttributionKind::CodeRegression);
        assert_eq!(
            a.summary,
            "code regression (application +18 pts of busy time)"
        );
    }

    #[test]
    fn gc_growth_is_gc_lock() {
        let base = shares(
            3000.0,
            &[(Application, 60.0), (Gc, 8.0), (Lock, 1.0), (Other, 31.0)],
        );
        let now = shares(
            3000.0,
            &[(Application, 50.0), (Gc, 20.0), (Lock, 4.0), (Other, 26.0)],
        );
        let a = attribute(&now, &base, 5.0, &[]);
        assert_eq!(a.kind, AttributionKind::GcLock);
        assert_eq!(a.summary, "GC/lock (GC +12 pts, lock +3 pts of busy time)");
        assert!((a.environment_delta_pts - 15.0).abs() < 1e-9);
    }

    #[test]
    fn both_growing_is_inconclusive() {
        let base = shares(3000.0, &[(Application, 40.0), (Gc, 10.0), (Other, 50.0)]);
        let now = shares(3000.0, &[(Application, 48.0), (Gc, 16.0), (Other, 36.0)]);
        let a = attribute(&now, &base, 5.0, &[]);
        assert_eq!(a.kind, AttributionKind::Inconclusive);
        assert_eq!(
            a.summary,
            "inconclusive (other -14 pts, application +8 pts of busy time)"
        );
    }

    #[test]
    fn small_shifts_and_small_profiles_are_inconclusive() {
        let base = shares(3000.0, &[(Application, 50.0), (Other, 50.0)]);
        let now = shares(3000.0, &[(Application, 53.0), (Other, 47.0)]);
        assert_eq!(
            attribute(&now, &base, 5.0, &[]).kind,
            AttributionKind::Inconclusive
        );
        let tiny = shares(40.0, &[(Application, 90.0), (Other, 10.0)]);
        let a = attribute(&tiny, &base, 5.0, &[]);
        assert_eq!(a.kind, AttributionKind::Inconclusive);
        assert!(a.summary.contains("at least 100"), "{}", a.summary);
    }

    /// py-spy's speedscope weighs 2,016 samples as 20.16 seconds: the
    /// minimum is on samples, of busy time.
    #[test]
    fn the_minimum_counts_busy_samples_not_weight() {
        let mut base = shares(15.49, &[(Application, 30.0), (IdleWait, 40.0), (Io, 30.0)]);
        let mut now = shares(20.16, &[(Application, 60.0), (IdleWait, 20.0), (Io, 20.0)]);
        base.samples = Some(1549);
        now.samples = Some(2016);
        let a = attribute(&now, &base, 5.0, &[]);
        assert_eq!(a.kind, AttributionKind::CodeRegression, "{}", a.summary);
        // Busy: 30/60 → 60/80 of the samples, +25 points.
        assert_eq!(
            a.summary,
            "code regression (application +25 pts of busy time)"
        );
        // 150 samples of which 40 % idle leave 90 busy ones: too few.
        base.samples = Some(150);
        let a = attribute(&now, &base, 5.0, &[]);
        assert_eq!(a.kind, AttributionKind::Inconclusive);
        assert_eq!(
            a.summary,
            "inconclusive (1613 and 90 busy samples; at least 100 needed)"
        );
        // No sample count in the format (bytes, ns): not held against it.
        base.samples = None;
        assert_eq!(
            attribute(&now, &base, 5.0, &[]).kind,
            AttributionKind::CodeRegression
        );
    }

    #[test]
    fn the_line_names_the_top_three_frames_but_not_their_callers() {
        let row = |frame: &str, before: f64, after: f64, caller_of: Option<&str>| FrameGrowth {
            frame: frame.to_string(),
            self_before_pct: 0.0,
            self_after_pct: 0.0,
            total_before_pct: before,
            total_after_pct: after,
            caller_of: caller_of.map(str::to_string),
        };
        let grown = [
            row("com/acme/pricing/DiscountRules.forLine", 0.0, 26.3, None),
            row(
                "com/acme/pricing/QuoteService.quote",
                37.7,
                54.6,
                Some("com/acme/pricing/DiscountRules.forLine"),
            ),
            row(
                "com/acme/pricing/DiscountRuleRepository.findByProduct",
                0.0,
                19.1,
                None,
            ),
            row(
                "org/springframework/jdbc/core/JdbcTemplate.query",
                3.1,
                21.2,
                None,
            ),
            row("java/util/HashSet.contains", 0.0, 3.9, None),
        ];
        let base = shares(3000.0, &[(Application, 50.0), (Other, 50.0)]);
        let now = shares(3000.0, &[(Application, 70.0), (Other, 30.0)]);
        let a = attribute(&now, &base, 5.0, &grown);
        assert_eq!(
            a.summary,
            "code regression (application +20 pts of busy time)"
        );
        assert_eq!(
            a.line(),
            "code regression (application +20 pts of busy time); grew most: \
             DiscountRules.forLine +26.3 pts, DiscountRuleRepository.findByProduct +19.1 pts, \
             JdbcTemplate.query +18.1 pts"
        );
        assert_eq!(
            a.top_frames[0].frame,
            "com/acme/pricing/DiscountRules.forLine"
        );
        assert_eq!(a.top_frames.len(), 3);
    }

    #[test]
    fn the_threshold_is_configurable() {
        let base = shares(3000.0, &[(Application, 50.0), (Other, 50.0)]);
        let now = shares(3000.0, &[(Application, 53.0), (Other, 47.0)]);
        assert_eq!(
            attribute(&now, &base, 2.5, &[]).kind,
            AttributionKind::CodeRegression
        );
    }
}
