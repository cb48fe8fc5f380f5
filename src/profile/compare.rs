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

use std::collections::BTreeMap;

use serde::Serialize;

use super::classify::{Category, Classifier};
use super::normalise::Normalisation;
use super::{Profile, Stack};
use crate::hash::FastMap;
use std::borrow::Cow;

/// A profile as it is compared: busy stacks with normalised frame names.
/// (`Serialize`: page memo keys digest it, `hash::Digested`.)
#[derive(Debug, Clone, PartialEq, Serialize)]
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
    /// Each stack's category, in the order of `stacks` (stacks that became
    /// equal when normalised take the category of the heavier one). Not in
    /// the digest: no page draws it, attribution reads it.
    #[serde(skip)]
    pub categories: Vec<Category>,
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
        categories: &[(&Stack, f64, Category)],
        classifier: &Classifier,
        normalisation: Normalisation,
    ) -> Comparable {
        let mut normaliser = StackNormaliser::new(normalisation);
        Comparable::from_categories_with(profile, categories, classifier, &mut normaliser)
    }

    /// [`Comparable::from_categories`], with normalised stacks remembered
    /// in `normaliser` across the profiles it is given.
    pub fn from_categories_with<'p>(
        profile: &Profile,
        categories: &[(&'p Stack, f64, Category)],
        classifier: &Classifier,
        normaliser: &mut StackNormaliser<'p>,
    ) -> Comparable {
        // The normalised stacks in the order first met, weights summed in
        // the order of `categories`; sorted once at the end.
        // (stack, weight, category, the heaviest weight merged under it).
        let mut rows: Vec<(Stack, f64, Category, f64)> = Vec::with_capacity(categories.len());
        let mut row_of: FastMap<Stack, usize> = FastMap::default();
        let mut total = profile.root_self;
        for &(stack, weight, category) in categories {
            if !classifier.is_busy(category) {
                continue;
            }
            total += weight;
            let key = normaliser.stack(stack);
            match row_of.get(&*key) {
                Some(&row) => {
                    let r = &mut rows[row];
                    r.1 += weight;
                    if weight > r.3 {
                        (r.2, r.3) = (category, weight);
                    }
                }
                None => {
                    row_of.insert(key.clone(), rows.len());
                    rows.push((key, weight, category, weight));
                }
            }
        }
        // Keys are distinct; unchanged stacks come already sorted.
        rows.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let categories = rows.iter().map(|r| r.2).collect();
        Comparable {
            stacks: rows.into_iter().map(|r| (r.0, r.1)).collect(),
            total,
            units: profile.units.clone(),
            normalisation: normaliser.normalisation,
            idle_excluded: classifier.excludes_idle(),
            categories,
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

/// Stacks with normalised frame names ([`Normalisation::stack`]),
/// remembered: the profiles of one endpoint hold mostly the same stacks.
pub struct StackNormaliser<'p> {
    normalisation: Normalisation,
    /// Raw stack → its normalised form (`None`: the same).
    stacks: FastMap<&'p str, Option<Stack>>,
    frames: FastMap<&'p str, Cow<'p, str>>,
    key: String,
}

impl<'p> StackNormaliser<'p> {
    pub fn new(normalisation: Normalisation) -> StackNormaliser<'p> {
        StackNormaliser {
            normalisation,
            stacks: FastMap::default(),
            frames: FastMap::default(),
            key: String::new(),
        }
    }

    /// `stack` normalised: `stack` itself (shared) when normalising leaves
    /// it as it is.
    pub fn stack(&mut self, stack: &'p Stack) -> Stack {
        if let Some(known) = self.stacks.get(&**stack) {
            return known.clone().unwrap_or_else(|| stack.clone());
        }
        let key = &mut self.key;
        key.clear();
        for (i, frame) in stack.split(';').enumerate() {
            if i > 0 {
                key.push(';');
            }
            match self.frames.get(frame) {
                Some(known) => key.push_str(known),
                None => {
                    let name = self.normalisation.frame(frame);
                    key.push_str(&name);
                    if self.frames.len() < super::MEMO_ENTRIES {
                        self.frames.insert(frame, name);
                    }
                }
            }
        }
        let normalised = (key.as_str() != &**stack).then(|| Stack::from(key.as_str()));
        if self.stacks.len() < super::MEMO_ENTRIES {
            self.stacks.insert(stack, normalised.clone());
        }
        normalised.unwrap_or_else(|| stack.clone())
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

/// Frame numbers shared by the profiles compared with one another (those
/// of one endpoint), and each stack as frame numbers, remembered: a stack
/// is split and its frames looked up by name once, not once per profile.
///
/// The names are kept one after another in one string, found by their
/// hash: a profile of 2,000,000 distinct frames numbered them in 120 MB,
/// where a map of shared strings took 260 MB (issue 35).
#[derive(Default)]
pub struct FrameNumbers {
    /// Every frame name, one after another: frame `i` is
    /// `text[ends[i - 1]..ends[i]]` (from 0 for the first).
    text: String,
    ends: Vec<usize>,
    /// Frame numbers, found by the xxh3 hash of their name.
    index: hashbrown::HashTable<u32>,
    /// Stack → where its frame numbers are in `pool`, root first (at most
    /// [`MEMO_ENTRIES`](super::MEMO_ENTRIES) stacks).
    stacks: FastMap<Stack, (usize, usize)>,
    pool: Vec<usize>,
}

impl FrameNumbers {
    /// Appends the frame numbers of `stack`, root first, to `out`.
    fn push_stack(&mut self, stack: &Stack, out: &mut Vec<usize>) {
        if let Some(&(start, end)) = self.stacks.get(&**stack) {
            out.extend_from_slice(&self.pool[start..end]);
            return;
        }
        let first = out.len();
        for frame in stack.split(';') {
            out.push(self.number(frame));
        }
        if self.stacks.len() < super::MEMO_ENTRIES {
            let start = self.pool.len();
            self.pool.extend_from_slice(&out[first..]);
            self.stacks.insert(stack.clone(), (start, self.pool.len()));
        }
    }

    /// The number of the frame named `frame`, a new one when it has none.
    fn number(&mut self, frame: &str) -> usize {
        let hash = xxhash_rust::xxh3::xxh3_64(frame.as_bytes());
        let (text, ends) = (&self.text, &self.ends);
        if let Some(&id) = self
            .index
            .find(hash, |&id| name_in(text, ends, id as usize) == frame)
        {
            return id as usize;
        }
        let id = self.ends.len();
        self.text.push_str(frame);
        self.ends.push(self.text.len());
        let (text, ends) = (&self.text, &self.ends);
        // More than 4 billion distinct frames cannot be read in the first place.
        let number = u32::try_from(id).expect("fewer than 2^32 distinct frames");
        self.index.insert_unique(hash, number, |&id| {
            xxhash_rust::xxh3::xxh3_64(name_in(text, ends, id as usize).as_bytes())
        });
        id
    }

    fn name(&self, id: usize) -> &str {
        name_in(&self.text, &self.ends, id)
    }
}

/// Frame `id`'s name in [`FrameNumbers`]' `text`.
fn name_in<'a>(text: &'a str, ends: &[usize], id: usize) -> &'a str {
    let start = if id == 0 { 0 } else { ends[id - 1] };
    &text[start..ends[id]]
}

/// Every frame of a profile with its weights, and its stacks as frame
/// numbers ([`FrameNumbers`]), from one pass over the stacks: the passes
/// that follow look a frame up by number, not by name.
pub struct FrameTable {
    /// The frames the profile holds, in the order first met.
    present: Vec<usize>,
    /// By frame number: whether the profile holds it (shorter than the
    /// numbering when later profiles added frames).
    held: Vec<bool>,
    /// By frame number. Self weight: stacks whose leaf is the frame; total
    /// weight: stacks that hold it anywhere (once per stack). Summed in
    /// stack order.
    weights: Vec<Weights>,
    /// The stacks in order, root first: stack `i` is
    /// `frames[ends[i - 1]..ends[i]]` and weighs `stack_weights[i]`.
    frames: Vec<usize>,
    ends: Vec<usize>,
    stack_weights: Vec<f64>,
}

impl FrameTable {
    /// The table of `profile`, its frames numbered in `numbers`.
    pub fn of(profile: &Comparable, numbers: &mut FrameNumbers) -> FrameTable {
        let mut table = FrameTable {
            present: Vec::new(),
            held: Vec::new(),
            weights: Vec::new(),
            frames: Vec::new(),
            ends: Vec::with_capacity(profile.stacks.len()),
            stack_weights: Vec::with_capacity(profile.stacks.len()),
        };
        // Per frame: the last stack its total counted (a recursive frame
        // is in a stack's total once).
        let mut counted: Vec<usize> = Vec::new();
        for (n, (stack, &weight)) in profile.stacks.iter().enumerate() {
            let start = table.frames.len();
            numbers.push_stack(stack, &mut table.frames);
            let end = table.frames.len();
            for &id in &table.frames[start..end] {
                if id >= table.held.len() {
                    table.held.resize(id + 1, false);
                    table.weights.resize(id + 1, Weights::default());
                    counted.resize(id + 1, usize::MAX);
                }
                if !table.held[id] {
                    table.held[id] = true;
                    table.present.push(id);
                }
                if counted[id] != n {
                    counted[id] = n;
                    table.weights[id].total_weight += weight;
                }
            }
            // A stack has at least one frame (`split` yields one): the
            // last is the leaf.
            if end > start {
                table.weights[table.frames[end - 1]].self_weight += weight;
            }
            table.ends.push(table.frames.len());
            table.stack_weights.push(weight);
        }
        table
    }

    fn holds(&self, id: usize) -> bool {
        self.held.get(id).copied().unwrap_or(false)
    }

    fn weights_of(&self, id: usize) -> Weights {
        self.weights.get(id).copied().unwrap_or_default()
    }

    /// Each stack's frame numbers, root first, with its weight.
    fn stacks(&self) -> impl Iterator<Item = (&[usize], f64)> + '_ {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts
            .zip(&self.ends)
            .zip(&self.stack_weights)
            .map(|((start, &end), &w)| (&self.frames[start..end], w))
    }
}

/// One frame's shares before and after, named `frame`.
fn growth(
    frame: String,
    before: Weights,
    after: Weights,
    baseline: &Comparable,
    current: &Comparable,
) -> FrameGrowth {
    FrameGrowth {
        frame,
        self_before_pct: baseline.pct(before.self_weight),
        self_after_pct: current.pct(after.self_weight),
        total_before_pct: baseline.pct(before.total_weight),
        total_after_pct: current.pct(after.total_weight),
        caller_of: None,
    }
}

/// Every frame of either profile with its shares before and after (no
/// `caller_of`), by name.
pub fn frame_changes(baseline: &Comparable, current: &Comparable) -> BTreeMap<String, FrameGrowth> {
    frame_changes_and_largest(baseline, current).0
}

/// [`frame_changes`], and the largest change of a total share (absolute,
/// points) among the frames `current` holds (0 when it holds none).
pub fn frame_changes_and_largest(
    baseline: &Comparable,
    current: &Comparable,
) -> (BTreeMap<String, FrameGrowth>, f64) {
    let mut numbers = FrameNumbers::default();
    let before = FrameTable::of(baseline, &mut numbers);
    let after = FrameTable::of(current, &mut numbers);
    let mut ids: Vec<usize> = before.present.clone();
    ids.extend(after.present.iter().filter(|&&id| !before.holds(id)));
    // Distinct numbers are distinct names.
    ids.sort_unstable_by(|&x, &y| numbers.name(x).cmp(numbers.name(y)));
    let mut largest = 0.0f64;
    let changes = ids
        .into_iter()
        .map(|id| {
            let name = numbers.name(id);
            let g = growth(
                name.to_string(),
                before.weights_of(id),
                after.weights_of(id),
                baseline,
                current,
            );
            if after.holds(id) {
                largest = largest.max(g.total_delta_pts().abs());
            }
            (name.to_string(), g)
        })
        .collect();
    (changes, largest)
}

/// A frame must grow by more than this many points (self or total) to be
/// listed.
const MIN_GROWTH_PTS: f64 = 0.05;

/// A frame is the caller of one ranked above when it is above it in at
/// least this fraction of that frame's weight.
const CALLER_SHARE: f64 = 0.9;

/// A candidate row of [`grown_frames`]: the name is borrowed (and the
/// row's `frame` left empty) until the row is kept.
struct Candidate<'a> {
    name: &'a str,
    growth: FrameGrowth,
    /// The frame's number ([`FrameNumbers`]).
    id: usize,
    depth: f64,
}

/// The `limit` frames whose inclusive (total) share grew most from
/// `baseline` to `current`. Ties (a chain of frames that only call each
/// other grows by the same points) go to the deeper frame, then to the
/// larger self growth, then by name. Only growth is listed: a frame must
/// grow by more than 0.05 points.
pub fn grown_frames(baseline: &Comparable, current: &Comparable, limit: usize) -> Vec<FrameGrowth> {
    let mut numbers = FrameNumbers::default();
    let before = FrameTable::of(baseline, &mut numbers);
    let after = FrameTable::of(current, &mut numbers);
    grown_frames_in((baseline, &before), (current, &after), &numbers, limit)
}

/// [`grown_frames`] of profiles whose tables are already made, both
/// numbered in `numbers`.
pub fn grown_frames_in(
    (baseline, before): (&Comparable, &FrameTable),
    (current, after): (&Comparable, &FrameTable),
    numbers: &FrameNumbers,
    limit: usize,
) -> Vec<FrameGrowth> {
    let now = after.present.iter().map(|&id| (id, after.weights[id]));
    let gone = before
        .present
        .iter()
        .filter(|&&id| !after.holds(id))
        .map(|&id| (id, Weights::default()));
    let mut rows: Vec<Candidate<'_>> = now
        .chain(gone)
        .map(|(id, a)| Candidate {
            name: numbers.name(id),
            growth: growth(String::new(), before.weights_of(id), a, baseline, current),
            id,
            depth: 0.0,
        })
        .filter(|r| {
            r.growth.self_delta_pts() > MIN_GROWTH_PTS
                || r.growth.total_delta_pts() > MIN_GROWTH_PTS
        })
        .collect();
    // Points to a millionth: shares summed in another order must still tie.
    let key = |r: &Candidate<'_>| (r.growth.total_delta_pts() * 1e6).round() as i64;
    let self_delta = |r: &Candidate<'_>| r.growth.self_delta_pts();
    rows.sort_by(|x, y| {
        key(y)
            .cmp(&key(x))
            .then(self_delta(y).total_cmp(&self_delta(x)))
            .then(x.name.cmp(y.name))
    });
    // Ties can straddle the cut: keep a margin until depths are known.
    rows.truncate(limit.saturating_mul(2).max(limit + 8));
    mean_depths(&mut rows, after);
    rows.sort_by(|x, y| {
        key(y)
            .cmp(&key(x))
            .then(y.depth.total_cmp(&x.depth))
            .then(self_delta(y).total_cmp(&self_delta(x)))
            .then(x.name.cmp(y.name))
    });
    rows.truncate(limit);
    let ids: Vec<usize> = rows.iter().map(|r| r.id).collect();
    let mut out: Vec<FrameGrowth> = rows
        .into_iter()
        .map(|r| FrameGrowth {
            frame: r.name.to_string(),
            ..r.growth
        })
        .collect();
    mark_callers(&mut out, &ids, after);
    out
}

/// By frame number, the row of `ids` that is that frame (`None`: none);
/// as long as the numbering `current` knows, which is all its stacks hold.
fn rows_by_frame(ids: &[usize], current: &FrameTable) -> Vec<Option<usize>> {
    let mut row_of = vec![None; current.held.len()];
    for (row, &id) in ids.iter().enumerate() {
        if let Some(slot) = row_of.get_mut(id) {
            *slot = Some(row);
        }
    }
    row_of
}

/// Sets each row's mean depth in the current profile (its first occurrence
/// per stack, weighted), 0 for frames it does not have.
fn mean_depths(rows: &mut [Candidate<'_>], current: &FrameTable) {
    let ids: Vec<usize> = rows.iter().map(|r| r.id).collect();
    let row_of = rows_by_frame(&ids, current);
    let mut sums = vec![(0.0f64, 0.0f64); rows.len()];
    // Per row: the last stack counted (+1), so a frame counts once per stack.
    let mut seen = vec![0usize; rows.len()];
    for (n, (frames, w)) in current.stacks().enumerate() {
        for (depth, &id) in frames.iter().enumerate() {
            if let Some(row) = row_of[id]
                && seen[row] != n + 1
            {
                seen[row] = n + 1;
                sums[row].0 += w * depth as f64;
                sums[row].1 += w;
            }
        }
    }
    for (row, (d, w)) in rows.iter_mut().zip(sums) {
        row.depth = if w > 0.0 { d / w } else { 0.0 };
    }
}

/// Sets `caller_of` on rows that call a row ranked above them in at least
/// [`CALLER_SHARE`] of that row's current weight. `ids`: each row's frame
/// number.
fn mark_callers(rows: &mut [FrameGrowth], ids: &[usize], current: &FrameTable) {
    let row_of = rows_by_frame(ids, current);
    let n = rows.len();
    // above[i][j]: weight of stacks where row i is an ancestor of row j.
    let mut above = vec![vec![0.0f64; n]; n];
    let mut weight = vec![0.0f64; n];
    let mut first_at: Vec<Option<usize>> = vec![None; n];
    let mut present: Vec<usize> = Vec::with_capacity(n);
    for (frames, w) in current.stacks() {
        first_at.iter_mut().for_each(|p| *p = None);
        present.clear();
        for (depth, &id) in frames.iter().enumerate() {
            if let Some(i) = row_of[id]
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

/// The busy weight of the stacks that hold any of `frames` (normalised
/// names, as [`FrameGrowth::frame`]), per category, in percent of the
/// profile's busy weight. A stack counts once however many of the frames it
/// holds and however often (recursion): the shares never add up to more
/// than 100.
pub fn share_through(profile: &Comparable, frames: &[&str]) -> BTreeMap<Category, f64> {
    let mut out: BTreeMap<Category, f64> = BTreeMap::new();
    if frames.is_empty() {
        return out;
    }
    for (i, (stack, &weight)) in profile.stacks.iter().enumerate() {
        if stack.split(';').any(|f| frames.contains(&f)) {
            let category = profile
                .categories
                .get(i)
                .copied()
                .unwrap_or(Category::Other);
            *out.entry(category).or_insert(0.0) += profile.pct(weight);
        }
    }
    out
}

/// A leaf frame votes on [`shared_work_ratio`] when it holds at least this
/// share (percent of the busy weight) of either profile: smaller ones are
/// a handful of samples, too noisy to vote.
const VOTER_MIN_PCT: f64 = 1.0;

/// [`shared_work_ratio`] needs at least this many voting frames.
pub const MIN_VOTERS: usize = 3;

/// How the busy weight changed on the work both profiles share.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SharedWork {
    /// The median over the voting frames of (self share in the baseline ÷
    /// self share now): how many times the busy weight per unit of that
    /// work grew. 1: the frames both profiles hold kept their shares.
    pub ratio: f64,
    /// How many leaf frames voted.
    pub frames: usize,
}

/// What the shares alone say about the total: when new work is added, the
/// frames that did not change lose share in proportion (a frame at 10 %
/// falls to 2 % when the busy time grows five-fold). The median, over the
/// leaf frames both profiles hold (at least 1 % of either's busy weight),
/// of each frame's self share before ÷ after estimates that factor: most
/// frames of a service do not change between two runs, and the median
/// ignores the few that did (the new work, or a function that went away).
/// Frames only one profile holds do not vote: they are the change itself.
/// `None` with fewer than [`MIN_VOTERS`] voting frames.
///
/// Above 1: more busy work, the grown frames are new work. Below 1: the
/// frames both hold gained share, so something else shrank, and a frame's
/// growth in share is the rest shrinking, not new work.
pub fn shared_work_ratio(baseline: &Comparable, current: &Comparable) -> Option<SharedWork> {
    fn leaves(p: &Comparable) -> FastMap<&str, f64> {
        let mut out: FastMap<&str, f64> = FastMap::default();
        for (stack, &w) in &p.stacks {
            let leaf = stack.rsplit(';').next().unwrap_or(stack);
            *out.entry(leaf).or_insert(0.0) += w;
        }
        out
    }
    let (before, after) = (leaves(baseline), leaves(current));
    let mut logs: Vec<f64> = before
        .iter()
        .filter_map(|(frame, &b)| {
            let a = *after.get(frame)?;
            let (b, a) = (baseline.pct(b), current.pct(a));
            (b > 0.0 && a > 0.0 && (b >= VOTER_MIN_PCT || a >= VOTER_MIN_PCT)).then(|| (b / a).ln())
        })
        .collect();
    if logs.len() < MIN_VOTERS {
        return None;
    }
    logs.sort_unstable_by(f64::total_cmp);
    let n = logs.len();
    let median = if n % 2 == 1 {
        logs[n / 2]
    } else {
        (logs[n / 2 - 1] + logs[n / 2]) / 2.0
    };
    Some(SharedWork {
        ratio: median.exp(),
        frames: n,
    })
}
