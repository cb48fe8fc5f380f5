//! Comparing a profile with its baseline profile: which frames grew.
//!
//! Shares, not raw counts: the two profiles may span different durations or
//! sampling rates, so each frame's weight is taken as a percentage of its own
//! profile's busy weight (idle stacks left out, see `classify`). Frame names
//! are normalised first ([`Normalisation`]) so that a function is one row
//! whichever line it was sampled on and wherever the build was deployed.
//!
//! Frames are ranked by their **inclusive** (total) change: the width of
//! every stack that passes through the frame. When new work is added under
//! one function, that function's total share grows more than any of its
//! callers' (their other children lose share to it) and more than any one
//! of its callees', so the first row is the function the growth is in.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::Serialize;

use super::Profile;
use super::classify::Classifier;
use super::normalise::Normalisation;

/// A profile as it is compared: busy stacks with normalised frame names.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparable {
    /// Normalised `root;…;leaf` → weight; idle stacks left out (when idle is
    /// excluded), stacks that became equal merged. A stack that
    /// normalising left as it was shares the profile's string.
    pub stacks: BTreeMap<super::Stack, f64>,
    /// The busy weight, including samples with an empty stack: the base of
    /// every share.
    pub total: f64,
    /// What the weights count (the profile's units).
    pub units: String,
    /// How the frame names were normalised.
    pub normalisation: Normalisation,
    /// Whether idle stacks were left out.
    pub idle_excluded: bool,
}

impl Comparable {
    /// The busy part of `profile`, frame names normalised.
    pub fn new(
        profile: &Profile,
        classifier: &Classifier,
        normalisation: Normalisation,
    ) -> Comparable {
        Comparable::from_categories(
            profile,
            &classifier.stack_categories(profile),
            classifier,
            normalisation,
        )
    }

    /// [`Comparable::new`] from the categories of `profile`'s stacks, when
    /// they are already known (classifying is the costly part).
    pub fn from_categories(
        profile: &Profile,
        categories: &[(&str, f64, super::Category)],
        classifier: &Classifier,
        normalisation: Normalisation,
    ) -> Comparable {
        let mut names: HashMap<&str, std::borrow::Cow<'_, str>> = HashMap::new();
        let mut stacks: BTreeMap<super::Stack, f64> = BTreeMap::new();
        let mut total = profile.root_self;
        let mut key = String::new();
        for &(stack, weight, category) in categories {
            if !classifier.is_busy(category) {
                continue;
            }
            total += weight;
            key.clear();
            for (i, frame) in stack.split(';').enumerate() {
                if i > 0 {
                    key.push(';');
                }
                key.push_str(
                    names
                        .entry(frame)
                        .or_insert_with(|| normalisation.frame(frame)),
                );
            }
            match stacks.get_mut(key.as_str()) {
                Some(w) => *w += weight,
                None => {
                    let shared = match key == stack {
                        true => profile.stacks.get_key_value(stack).map(|(s, _)| s.clone()),
                        false => None,
                    };
                    stacks.insert(shared.unwrap_or_else(|| key.as_str().into()), weight);
                }
            }
        }
        Comparable {
            stacks,
            total,
            units: profile.units.clone(),
            normalisation,
            idle_excluded: classifier.excludes_idle(),
        }
    }

    fn pct(&self, weight: f64) -> f64 {
        if self.total > 0.0 {
            100.0 * weight / self.total
        } else {
            0.0
        }
    }
}

/// One frame's share in the baseline and in the current profile.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FrameGrowth {
    /// The frame name, normalised (annotation suffix removed, and by default
    /// line numbers and directories).
    pub frame: String,
    /// Self share: busy stacks whose leaf is this frame, percent of the busy weight.
    pub self_before_pct: f64,
    pub self_after_pct: f64,
    /// Inclusive share: busy stacks that contain this frame anywhere (counted
    /// once per stack), percent of the busy weight.
    pub total_before_pct: f64,
    pub total_after_pct: f64,
    /// A frame ranked above this one that this frame calls in (nearly) all
    /// of that frame's stacks: this frame's growth passes through to it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub caller_of: Option<String>,
}

impl FrameGrowth {
    /// Change of the self share, percentage points.
    pub fn self_delta_pts(&self) -> f64 {
        self.self_after_pct - self.self_before_pct
    }

    /// Change of the inclusive share, percentage points.
    pub fn total_delta_pts(&self) -> f64 {
        self.total_after_pct - self.total_before_pct
    }
}

#[derive(Default, Clone, Copy)]
struct Weights {
    self_weight: f64,
    total_weight: f64,
}

fn frame_weights(profile: &Comparable) -> BTreeMap<&str, Weights> {
    let mut map: BTreeMap<&str, Weights> = BTreeMap::new();
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    for (stack, &weight) in &profile.stacks {
        seen.clear();
        let mut leaf = None;
        for frame in stack.split(';') {
            if seen.insert(frame) {
                map.entry(frame).or_default().total_weight += weight;
            }
            leaf = Some(frame);
        }
        if let Some(leaf) = leaf {
            map.entry(leaf).or_default().self_weight += weight;
        }
    }
    map
}

/// Every frame of either profile with its shares before and after (no
/// `caller_of`), by name.
pub fn frame_changes(baseline: &Comparable, current: &Comparable) -> BTreeMap<String, FrameGrowth> {
    let before = frame_weights(baseline);
    let after = frame_weights(current);
    let names: BTreeSet<&str> = before.keys().chain(after.keys()).copied().collect();
    names
        .into_iter()
        .map(|name| {
            let b = before.get(name).copied().unwrap_or_default();
            let a = after.get(name).copied().unwrap_or_default();
            (
                name.to_string(),
                FrameGrowth {
                    frame: name.to_string(),
                    self_before_pct: baseline.pct(b.self_weight),
                    self_after_pct: current.pct(a.self_weight),
                    total_before_pct: baseline.pct(b.total_weight),
                    total_after_pct: current.pct(a.total_weight),
                    caller_of: None,
                },
            )
        })
        .collect()
}

/// A frame must grow by more than this many points (self or total) to be
/// listed.
const MIN_GROWTH_PTS: f64 = 0.05;

/// A frame is the caller of one ranked above when it is above it in at
/// least this fraction of that frame's weight.
const CALLER_SHARE: f64 = 0.9;

/// The `limit` frames whose inclusive (total) share grew most from
/// `baseline` to `current`. Ties (a chain of frames that only call each
/// other grows by the same points) go to the deeper frame, then to the
/// larger self growth, then by name. Only growth is listed: a frame must
/// grow by more than 0.05 points.
pub fn grown_frames(baseline: &Comparable, current: &Comparable, limit: usize) -> Vec<FrameGrowth> {
    let mut rows: Vec<FrameGrowth> = frame_changes(baseline, current)
        .into_values()
        .filter(|r| r.self_delta_pts() > MIN_GROWTH_PTS || r.total_delta_pts() > MIN_GROWTH_PTS)
        .collect();
    // Points to a millionth: shares summed in another order must still tie.
    let key = |r: &FrameGrowth| (r.total_delta_pts() * 1e6).round() as i64;
    rows.sort_by(|x, y| {
        key(y)
            .cmp(&key(x))
            .then(y.self_delta_pts().total_cmp(&x.self_delta_pts()))
            .then(x.frame.cmp(&y.frame))
    });
    // Ties can straddle the cut: keep a margin until depths are known.
    rows.truncate(limit.saturating_mul(2).max(limit + 8));
    let depth = mean_depths(&rows, current);
    rows.sort_by(|x, y| {
        key(y)
            .cmp(&key(x))
            .then(depth[&y.frame].total_cmp(&depth[&x.frame]))
            .then(y.self_delta_pts().total_cmp(&x.self_delta_pts()))
            .then(x.frame.cmp(&y.frame))
    });
    rows.truncate(limit);
    mark_callers(&mut rows, current);
    rows
}

/// Each row's mean depth in the current profile (its first occurrence per
/// stack, weighted), 0 for frames it does not have.
fn mean_depths(rows: &[FrameGrowth], current: &Comparable) -> HashMap<String, f64> {
    let mut sums: HashMap<&str, (f64, f64)> = rows
        .iter()
        .map(|r| (r.frame.as_str(), (0.0, 0.0)))
        .collect();
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    for (stack, &w) in &current.stacks {
        seen.clear();
        for (depth, frame) in stack.split(';').enumerate() {
            if let Some(sum) = sums.get_mut(frame)
                && seen.insert(frame)
            {
                sum.0 += w * depth as f64;
                sum.1 += w;
            }
        }
    }
    sums.into_iter()
        .map(|(frame, (d, w))| (frame.to_string(), if w > 0.0 { d / w } else { 0.0 }))
        .collect()
}

/// Sets `caller_of` on rows that call a row ranked above them in at least
/// [`CALLER_SHARE`] of that row's current weight.
fn mark_callers(rows: &mut [FrameGrowth], current: &Comparable) {
    let index: HashMap<&str, usize> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| (r.frame.as_str(), i))
        .collect();
    let n = rows.len();
    // above[i][j]: weight of stacks where row i is an ancestor of row j.
    let mut above = vec![vec![0.0f64; n]; n];
    let mut weight = vec![0.0f64; n];
    let mut first_at: Vec<Option<usize>> = vec![None; n];
    for (stack, &w) in &current.stacks {
        first_at.iter_mut().for_each(|p| *p = None);
        let mut present: Vec<usize> = Vec::new();
        for (depth, frame) in stack.split(';').enumerate() {
            if let Some(&i) = index.get(frame)
                && first_at[i].is_none()
            {
                first_at[i] = Some(depth);
                present.push(i);
            }
        }
        for &j in &present {
            weight[j] += w;
            for &i in &present {
                if i != j && first_at[i] < first_at[j] {
                    above[i][j] += w;
                }
            }
        }
    }
    for i in 0..n {
        let callee = (0..i).find(|&j| weight[j] > 0.0 && above[i][j] >= CALLER_SHARE * weight[j]);
        rows[i].caller_of = callee.map(|j| rows[j].frame.clone());
    }
}

/// A frame named in a summary must have grown by at least this many
/// points: smaller moves are sampling noise (see `analyse::attribution`).
const NAMED_GROWTH_PTS: f64 = 1.0;

/// The frames to name in a one-line summary: the top `limit` grown frames
/// that grew by a point or more and are not merely callers of a frame
/// ranked above them.
pub fn culprits(grown: &[FrameGrowth], limit: usize) -> Vec<&FrameGrowth> {
    grown
        .iter()
        .filter(|g| g.caller_of.is_none() && g.total_delta_pts() >= NAMED_GROWTH_PTS)
        .take(limit)
        .collect()
}

/// A frame name short enough for a sentence: a Java method without its
/// package (`com/acme/pricing/DiscountRules.forLine` →
/// `DiscountRules.forLine`); other names as they are.
pub fn short_frame_name(frame: &str) -> &str {
    if frame.contains(' ') || frame.contains("::") {
        return frame;
    }
    match frame.rfind('/') {
        Some(at) if at + 1 < frame.len() => &frame[at + 1..],
        _ => frame,
    }
}
