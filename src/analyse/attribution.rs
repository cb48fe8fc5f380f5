//! Attribution: is a regression code, or GC/lock? Decided here only.
//!
//! Inputs are the category shares (percent of all samples) of the run's
//! profile and of the baseline profile (the most recent accepted run with a
//! profile of the same endpoint and kind). Shares, not sample counts, so
//! profiles of different lengths compare.
//!
//! * `code regression` — the application share grew by at least
//!   `min_shift_pts` (default 5) and by at least twice the growth of
//!   GC + lock + VM/safepoint combined;
//! * `GC/lock` — GC + lock + VM/safepoint grew by at least `min_shift_pts`
//!   and by at least twice the application growth;
//! * `inconclusive` — anything else, including profiles with fewer than
//!   [`MIN_SAMPLES`] samples.
//!
//! Why these numbers: a 30 s profile at 100 Hz holds ~3,000 samples, where
//! the sampling noise of a share difference is about 1.3 points (binomial,
//! p = 0.5), and steady services move a couple of points between runs; 5
//! points is well clear of both. The 2× dominance keeps a verdict from being
//! given when code and environment both moved: then neither explains the
//! regression alone, and saying so is more useful than a coin toss.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde::Serialize;

use super::RunPoint;
use super::verdict::{self, BaselineEffect, Verdict};
use crate::model::Archive;
use crate::profile::{
    Category, CategoryShares, Classifier, FrameGrowth, Profile, ProfileFormat, grown_frames,
};

/// How many grown frames are kept per profile (the table on the flame page).
pub const GROWN_FRAMES: usize = 15;

/// Below this many samples (or units) in either profile the shares are too
/// noisy to attribute anything: one sample is then 1 point or more.
pub const MIN_SAMPLES: f64 = 100.0;

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
    /// Every category, in a fixed order.
    pub changes: Vec<CategoryChange>,
}

/// Per-category changes from `baseline` to `current`.
pub fn changes(current: &CategoryShares, baseline: &CategoryShares) -> Vec<CategoryChange> {
    Category::ALL
        .iter()
        .map(|&c| CategoryChange {
            category: c,
            share_pct: current.pct(c),
            baseline_pct: baseline.pct(c),
            delta_pts: current.pct(c) - baseline.pct(c),
        })
        .collect()
}

/// Decides whether a regression is code or GC/lock (see the module docs).
pub fn attribute(
    current: &CategoryShares,
    baseline: &CategoryShares,
    min_shift_pts: f64,
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
    let enough = current.total >= MIN_SAMPLES && baseline.total >= MIN_SAMPLES;

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
    let detail = match kind {
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
            "{:.0} and {:.0} samples; at least {MIN_SAMPLES:.0} needed",
            current.total, baseline.total
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
    Attribution {
        kind,
        summary: format!("{} ({detail})", kind.label()),
        application_delta_pts: app,
        environment_delta_pts: env,
        changes,
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
    /// What the weights count (`samples`, `bytes`, `ns`, …).
    pub units: String,
    /// All weight in the profile, including the root's own.
    pub total: f64,
    /// Category → percent of `total`; every category is present.
    pub shares: BTreeMap<Category, f64>,
    /// Percent of `total` spent on GC work inside application threads
    /// (overlaps the categories).
    pub gc_in_mutator_pct: f64,
    /// The most recent accepted earlier run with a profile of this kind.
    pub baseline: Option<ProfileBaseline>,
    /// On a regressed run with a baseline profile: code or GC/lock.
    pub attribution: Option<Attribution>,
    /// Frames whose share grew most against the baseline profile.
    pub grown_frames: Vec<FrameGrowth>,
    /// The stacks themselves, for the renderers.
    #[serde(skip)]
    pub profile: Arc<Profile>,
}

/// The baseline profile a profile is compared with.
#[derive(Debug, Clone, Serialize)]
pub struct ProfileBaseline {
    pub run: String,
    pub source: String,
    pub total: f64,
    /// Per category: share now, share in the baseline, change in points.
    pub changes: Vec<CategoryChange>,
    #[serde(skip)]
    pub profile: Arc<Profile>,
}

/// Classifies and compares the profiles of one endpoint's runs, in time
/// order, and attributes each regressed run that has a baseline profile.
/// The baseline of a kind is the most recent earlier run of this endpoint
/// that has a profile of that kind and may serve as a baseline (the same
/// rule as for p99 baselines: [`verdict::baseline_effect`]).
pub fn attach_profiles(
    endpoint: &str,
    points: &mut [RunPoint],
    archive: &Archive,
    classifier: &Classifier,
    min_shift_pts: f64,
) {
    struct Base {
        run: String,
        source: String,
        profile: Arc<Profile>,
        shares: CategoryShares,
    }
    let mut bases: HashMap<String, Base> = HashMap::new();
    for point in points.iter_mut() {
        let run = &archive.runs[point.run_index];
        let Some(files) = run.endpoints.get(endpoint).map(|e| &e.profiles) else {
            continue;
        };
        let mut analysed = Vec::with_capacity(files.len());
        let mut new_bases = Vec::new();
        for file in files {
            let shares = classifier.shares(&file.profile);
            let base = bases.get(&file.kind);
            let baseline = base.map(|b| ProfileBaseline {
                run: b.run.clone(),
                source: b.source.clone(),
                total: b.profile.total,
                changes: changes(&shares, &b.shares),
                profile: b.profile.clone(),
            });
            let attribution = match base {
                Some(b) if point.verdict == Verdict::Regression => {
                    Some(attribute(&shares, &b.shares, min_shift_pts))
                }
                _ => None,
            };
            let grown = base
                .map(|b| grown_frames(&b.profile, &file.profile, GROWN_FRAMES))
                .unwrap_or_default();
            analysed.push(ProfileAnalysis {
                kind: file.kind.clone(),
                source: file.source.clone(),
                format: file.profile.format,
                units: file.profile.units.clone(),
                total: file.profile.total,
                shares: shares.shares.iter().copied().collect(),
                gc_in_mutator_pct: shares.gc_in_mutator_pct,
                baseline,
                attribution,
                grown_frames: grown,
                profile: file.profile.clone(),
            });
            new_bases.push((
                file.kind.clone(),
                Base {
                    run: run.id.clone(),
                    source: file.source.clone(),
                    profile: file.profile.clone(),
                    shares,
                },
            ));
        }
        point.profiles = analysed;
        // Profiles follow the latency baseline: a run that joined it
        // (including one inside an accepted change) becomes the reference.
        if verdict::baseline_effect(point.verdict, point.accepted_change) != BaselineEffect::Skip {
            bases.extend(new_bases);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shares(total: f64, pairs: &[(Category, f64)]) -> CategoryShares {
        CategoryShares {
            total,
            shares: Category::ALL
                .iter()
                .map(|c| {
                    (
                        *c,
                        pairs
                            .iter()
                            .find(|(x, _)| x == c)
                            .map(|(_, v)| *v)
                            .unwrap_or(0.0),
                    )
                })
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
        let a = attribute(&now, &base, 5.0);
        assert_eq!(a.kind, AttributionKind::CodeRegression);
        assert_eq!(a.summary, "code regression (application +18 pts)");
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
        let a = attribute(&now, &base, 5.0);
        assert_eq!(a.kind, AttributionKind::GcLock);
        assert_eq!(a.summary, "GC/lock (GC +12 pts, lock +3 pts)");
        assert!((a.environment_delta_pts - 15.0).abs() < 1e-9);
    }

    #[test]
    fn both_growing_is_inconclusive() {
        let base = shares(3000.0, &[(Application, 40.0), (Gc, 10.0), (Other, 50.0)]);
        let now = shares(3000.0, &[(Application, 48.0), (Gc, 16.0), (Other, 36.0)]);
        let a = attribute(&now, &base, 5.0);
        assert_eq!(a.kind, AttributionKind::Inconclusive);
        assert_eq!(
            a.summary,
            "inconclusive (other -14 pts, application +8 pts)"
        );
    }

    #[test]
    fn small_shifts_and_small_profiles_are_inconclusive() {
        let base = shares(3000.0, &[(Application, 50.0), (Other, 50.0)]);
        let now = shares(3000.0, &[(Application, 53.0), (Other, 47.0)]);
        assert_eq!(
            attribute(&now, &base, 5.0).kind,
            AttributionKind::Inconclusive
        );
        let tiny = shares(40.0, &[(Application, 90.0), (Other, 10.0)]);
        let a = attribute(&tiny, &base, 5.0);
        assert_eq!(a.kind, AttributionKind::Inconclusive);
        assert!(a.summary.contains("at least 100"), "{}", a.summary);
    }

    #[test]
    fn the_threshold_is_configurable() {
        let base = shares(3000.0, &[(Application, 50.0), (Other, 50.0)]);
        let now = shares(3000.0, &[(Application, 53.0), (Other, 47.0)]);
        assert_eq!(
            attribute(&now, &base, 2.5).kind,
            AttributionKind::CodeRegression
        );
    }
}
