//! Comparing a profile with its baseline profile: which frames grew.
//!
//! Shares, not raw counts: the two profiles may span different durations or
//! sampling rates, so each frame's weight is taken as a percentage of its own
//! profile's total.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::Profile;
use super::classify::strip_annotation;

/// One frame's share in the baseline and in the current profile.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FrameGrowth {
    /// The frame name (annotation suffix removed, so `_[j]` and plain names meet).
    pub frame: String,
    /// Self share: stacks whose leaf is this frame, percent of the total.
    pub self_before_pct: f64,
    pub self_after_pct: f64,
    /// Inclusive share: stacks that contain this frame anywhere (counted once
    /// per stack), percent of the total.
    pub total_before_pct: f64,
    pub total_after_pct: f64,
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
struct Shares {
    self_weight: f64,
    total_weight: f64,
}

fn frame_weights(profile: &Profile) -> BTreeMap<&str, Shares> {
    let mut map: BTreeMap<&str, Shares> = BTreeMap::new();
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    for (stack, &weight) in &profile.stacks {
        seen.clear();
        let frames: Vec<&str> = stack.split(';').map(strip_annotation).collect();
        for &frame in &frames {
            if seen.insert(frame) {
                map.entry(frame).or_default().total_weight += weight;
            }
        }
        if let Some(&leaf) = frames.last() {
            map.entry(leaf).or_default().self_weight += weight;
        }
    }
    map
}

/// The `limit` frames whose self share grew most from `baseline` to
/// `current` (ties: larger inclusive growth, then name). Only growth is
/// listed; a frame must grow by more than 0.05 points to count.
pub fn grown_frames(baseline: &Profile, current: &Profile, limit: usize) -> Vec<FrameGrowth> {
    let before = frame_weights(baseline);
    let after = frame_weights(current);
    let pct = |w: f64, total: f64| if total > 0.0 { 100.0 * w / total } else { 0.0 };
    let names: BTreeSet<&str> = before.keys().chain(after.keys()).copied().collect();
    let mut rows: Vec<FrameGrowth> = names
        .into_iter()
        .map(|name| {
            let b = before.get(name).copied().unwrap_or_default();
            let a = after.get(name).copied().unwrap_or_default();
            FrameGrowth {
                frame: name.to_string(),
                self_before_pct: pct(b.self_weight, baseline.total),
                self_after_pct: pct(a.self_weight, current.total),
                total_before_pct: pct(b.total_weight, baseline.total),
                total_after_pct: pct(a.total_weight, current.total),
            }
        })
        .filter(|r| r.self_delta_pts() > 0.05 || r.total_delta_pts() > 0.05)
        .collect();
    rows.sort_by(|x, y| {
        y.self_delta_pts()
            .total_cmp(&x.self_delta_pts())
            .then(y.total_delta_pts().total_cmp(&x.total_delta_pts()))
            .then(x.frame.cmp(&y.frame))
    });
    rows.truncate(limit);
    rows
}
