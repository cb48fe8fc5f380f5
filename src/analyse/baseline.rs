//! The baseline walk: runs in time order, each judged against the accepted
//! runs before it, then added to them or left out.
//!
//! [`RollingWindow`] is the walk itself (the last N accepted entries);
//! [`SeriesWalk`] is the latency walk of one endpoint on top of it, used by
//! [`super::analyse`] and by the demo generator while it writes the
//! bundled archive (a noisy-neighbour run is placed against the baseline of
//! its time), so both judge every run the same way. The capacity walk
//! ([`super::capacity`]) keeps knees in the same [`RollingWindow`].

use std::collections::BTreeMap;
use std::sync::Arc;

use super::comparability;
use super::figures::RunFigures;
use super::verdict::{self, AcceptedChanges, Decision, Evidence, FigureLines, Verdict};
use crate::config::AnalysisSettings;
use crate::model::SeriesKey;
use crate::stats::median;

/// The last `size` accepted entries of a walk, oldest first.
#[derive(Debug, Clone)]
pub struct RollingWindow<T> {
    size: usize,
    accepted: Vec<T>,
}

impl<T> RollingWindow<T> {
    pub fn new(size: usize) -> RollingWindow<T> {
        RollingWindow {
            size,
            accepted: Vec::new(),
        }
    }

    /// The entries a baseline is formed from, oldest first.
    pub fn recent(&self) -> &[T] {
        &self.accepted[self.accepted.len().saturating_sub(self.size)..]
    }

    /// Adds an accepted entry (the oldest falls out of [`Self::recent`]).
    pub fn accept(&mut self, entry: T) {
        // Older entries are never read again; drop them now and then
        // rather than on every push.
        if self.accepted.len() >= self.size.saturating_mul(4).max(64) {
            self.accepted.drain(..self.accepted.len() - self.size);
        }
        self.accepted.push(entry);
    }
}

/// A run that joined the latency baseline.
#[derive(Debug, Clone)]
struct AcceptedRun {
    /// Shared with every baseline it is part of (up to `baseline_window`
    /// points of every endpoint name it).
    id: Arc<str>,
    p99_ms: f64,
    error_rate: Option<f64>,
    throughput_rps: Option<f64>,
    /// Shared with the accepted runs before it when they recorded the same
    /// profile (nearly always): one copy, and one comparison per profile
    /// rather than per window run in [`SeriesWalk::baseline`].
    load: Arc<BTreeMap<String, String>>,
}

/// What a run is compared with.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Baseline {
    /// Median of the window runs' median p99; `None` with too few runs.
    pub p99_ms: Option<f64>,
    /// Median of the window runs' error rates (those that report one).
    pub error_rate: Option<f64>,
    /// Median of the window runs' throughputs, only when the run and every
    /// window run record the same load profile.
    pub throughput_rps: Option<f64>,
    /// Why throughput is not judged, when it is not.
    pub throughput_not_judged: Option<String>,
    /// The window runs, oldest first (empty without a baseline).
    pub runs: Vec<Arc<str>>,
    /// Their median p99s, in the same order.
    pub run_p99_ms: Vec<f64>,
    /// Why there is no baseline, when there is none.
    pub missing: Option<String>,
    /// Why the run is not comparable with the runs before it (a different
    /// load profile), when that is why there is no baseline.
    pub not_comparable: Option<String>,
    /// The load-profile change that leaves the p99 without a baseline, in
    /// words (`vus 50 → 100`); `None` when the profile is not why.
    pub load_change: Option<String>,
    /// Without a baseline: the accepted runs it would have been formed
    /// from, fewer than `min_baseline_runs` (oldest first). `perfdash
    /// check` gives an early verdict from their rounds.
    pub early_runs: Vec<Arc<str>>,
}

/// One run as the walk takes it.
#[derive(Debug, Clone, Copy)]
pub struct RunInput<'a> {
    pub id: &'a str,
    /// Rounds in the run, failed ones included.
    pub rounds: usize,
    pub figures: &'a RunFigures,
    /// The median p99 judged: of the usable rounds, or of all rounds when
    /// none is usable (a failed run; shown, never judged).
    pub median_p99_ms: f64,
    pub load: &'a BTreeMap<String, String>,
    /// A triage label says `accepted` for this run.
    pub labelled_accepted: bool,
    /// How finely its p99 figures were measured (Locust rounds them).
    pub resolution: verdict::Resolution,
}

/// How the walk judged one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Judged {
    pub baseline: Baseline,
    pub decision: Decision,
    /// What the decision was made from.
    pub evidence: Evidence,
    /// Part of a change a human accepted ([`AcceptedChanges`]).
    pub accepted_change: bool,
}

/// Runs left out of the baseline so far, by why, for "why is there no
/// baseline" messages.
#[derive(Debug, Clone, Copy, Default)]
struct LeftOut {
    failed: usize,
    regressions: usize,
    insufficient: usize,
}

/// One endpoint's latency walk: the rolling window of accepted runs, the
/// accepted changes in progress and the runs left out.
#[derive(Debug, Clone)]
pub struct SeriesWalk {
    settings: AnalysisSettings,
    threshold_ratio: f64,
    window: RollingWindow<AcceptedRun>,
    accepted_changes: AcceptedChanges,
    left_out: LeftOut,
}

impl SeriesWalk {
    pub fn new(settings: &AnalysisSettings, threshold_ratio: f64) -> SeriesWalk {
        SeriesWalk {
            settings: settings.clone(),
            threshold_ratio,
            window: RollingWindow::new(settings.baseline_window),
            accepted_changes: AcceptedChanges::new(settings.baseline_window),
            left_out: LeftOut::default(),
        }
    }

    /// What a run under `load` would be compared with now.
    ///
    /// The window is the last `baseline_window` accepted runs, of which
    /// only those measured under the same load profile count: a run with a
    /// new profile is "not comparable" until enough runs with that profile
    /// exist.
    pub fn baseline(&self, load: &BTreeMap<String, String>) -> Baseline {
        let recent = self.window.recent();
        // Neighbours share their profile's allocation: compare each
        // profile once (it was a tenth of a warm `check`).
        let mut last: Option<(&Arc<BTreeMap<String, String>>, comparability::Comparable)> = None;
        let judged: Vec<(&AcceptedRun, comparability::Comparable)> = recent
            .iter()
            .map(|r| match last {
                Some((seen, c)) if Arc::ptr_eq(seen, &r.load) => (r, c),
                _ => {
                    let c = comparability::comparable(&r.load, load);
                    last = Some((&r.load, c));
                    (r, c)
                }
            })
            .collect();
        // The p99 (and the throughput, which compares under the same
        // changes: `comparability::comparable`) is judged against the runs
        // whose profile keeps it comparable.
        let window: Vec<&AcceptedRun> = judged
            .iter()
            .filter(|(_, c)| c.p99)
            .map(|(r, _)| *r)
            .collect();
        let min = self.settings.min_baseline_runs;
        if window.len() < min {
            let other = judged.iter().rev().find(|(_, c)| !c.p99).map(|(r, _)| *r);
            let load_change = other.map(|o| comparability::describe_changes(&o.load, load));
            let not_comparable = other.zip(load_change.as_ref()).map(|(other, change)| {
                format!("load profile differs from run {}'s: {change}", other.id)
            });
            let missing = match &not_comparable {
                Some(why) => format!(
                    "{} of {min} accepted runs with this load profile before it ({why})",
                    window.len()
                ),
                None => self.too_few_runs(window.len()),
            };
            // A new load level leaves the error rate comparable: judged
            // against the runs it compares with, when there are enough.
            let error_rates: Vec<f64> = judged
                .iter()
                .filter(|(_, c)| c.error_rate)
                .filter_map(|(r, _)| r.error_rate)
                .collect();
            let error_rate = match not_comparable {
                Some(_) if error_rates.len() >= min => median(&error_rates),
                _ => None,
            };
            return Baseline {
                missing: Some(missing),
                not_comparable,
                load_change,
                error_rate,
                early_runs: window.iter().map(|r| Arc::clone(&r.id)).collect(),
                ..Baseline::default()
            };
        }
        let p99s: Vec<f64> = window.iter().map(|r| r.p99_ms).collect();
        let p99_ms = median(&p99s);
        let error_rate = median(
            &window
                .iter()
                .filter_map(|r| r.error_rate)
                .collect::<Vec<_>>(),
        );
        // Throughput measures the load as much as the service: it is only
        // compared when the load profile is known to be the same.
        let (throughput_rps, throughput_not_judged) = if load.is_empty() {
            (
                None,
                Some("the load profile is not recorded ([load] in run.toml)".to_string()),
            )
        } else if let Some(other) = window.iter().find(|r| r.load.is_empty()) {
            (
                None,
                Some(format!(
                    "baseline run {} does not record its load profile",
                    other.id
                )),
            )
        } else {
            let tputs: Vec<f64> = window.iter().filter_map(|r| r.throughput_rps).collect();
            match median(&tputs) {
                Some(t) => (Some(t), None),
                None => (
                    None,
                    Some("the baseline runs report no throughput".to_string()),
                ),
            }
        };
        let missing = match p99_ms {
            Some(b) if b <= 0.0 => Some(format!(
                "the baseline runs' median p99 is {b} ms: a history of zeros measures nothing"
            )),
            _ => None,
        };
        Baseline {
            p99_ms,
            error_rate,
            throughput_rps,
            throughput_not_judged,
            runs: window.iter().map(|r| Arc::clone(&r.id)).collect(),
            run_p99_ms: p99s,
            missing,
            not_comparable: None,
            load_change: None,
            early_runs: Vec::new(),
        }
    }

    /// `load`, shared with the last accepted run when it recorded the same.
    fn shared_load(&self, load: &BTreeMap<String, String>) -> Arc<BTreeMap<String, String>> {
        match self.window.accepted.last() {
            Some(last) if *last.load == *load => Arc::clone(&last.load),
            _ => Arc::new(load.clone()),
        }
    }

    /// "1 of 3 accepted runs before it; 4 earlier runs failed".
    fn too_few_runs(&self, have: usize) -> String {
        let l = self.left_out;
        let mut left = Vec::new();
        for (n, what) in [
            (l.failed, "failed"),
            (l.regressions, "regressed"),
            (l.insufficient, "had too few rounds"),
        ] {
            if n > 0 {
                left.push(format!("{n} {what}"));
            }
        }
        let min = self.settings.min_baseline_runs;
        if left.is_empty() {
            format!("{have} of {min} accepted runs before it")
        } else {
            format!(
                "{have} of {min} accepted runs before it; earlier runs left out of the baseline: {}",
                left.join(", ")
            )
        }
    }

    /// How `run` would be judged now, without taking it into the walk:
    /// what a branch run gets ([`SeriesWalks::assess`]). Never part of an
    /// accepted change: only main-branch runs move the baseline.
    pub fn assess(&self, run: RunInput) -> Judged {
        let baseline = self.baseline(run.load);
        let f = run.figures;
        let evidence = Evidence {
            rounds: run.rounds,
            usable_rounds: f.usable_rounds,
            expected_rounds: self.settings.expected_rounds,
            median_p99_ms: run.median_p99_ms,
            baseline_p99_ms: baseline.p99_ms,
            threshold_ratio: self.threshold_ratio,
            error_rate: f.error_rate,
            baseline_error_rate: baseline.error_rate,
            throughput_rps: f.throughput_rps,
            baseline_throughput_rps: baseline.throughput_rps,
            lines: FigureLines::of(&self.settings),
            resolution: run.resolution,
        };
        let decision = verdict::decide(&evidence);
        Judged {
            baseline,
            decision,
            evidence,
            accepted_change: false,
        }
    }

    /// Judges the next run and updates the walk. Regressions triaged
    /// `accepted` (and the regressions right after them) join the window,
    /// so the baseline moves to the accepted level.
    pub fn judge(&mut self, run: RunInput) -> Judged {
        let mut judged = self.assess(run);
        let verdict = judged.decision.verdict;
        judged.accepted_change = self.accepted_changes.next_run(
            verdict,
            run.median_p99_ms,
            run.labelled_accepted,
            self.threshold_ratio,
        );
        match verdict::baseline_effect(verdict, judged.accepted_change) {
            verdict::BaselineEffect::Join => self.window.accept(AcceptedRun {
                id: Arc::from(run.id),
                p99_ms: run.median_p99_ms,
                error_rate: run.figures.error_rate,
                throughput_rps: run.figures.throughput_rps,
                load: self.shared_load(run.load),
            }),
            verdict::BaselineEffect::Skip => match verdict {
                Verdict::Failed => self.left_out.failed += 1,
                Verdict::Insufficient => self.left_out.insufficient += 1,
                _ => self.left_out.regressions += 1,
            },
        }
        judged
    }
}

/// One endpoint's walks, one per series (`[analysis] series_by`: runs
/// with the same values of those run.toml keys; without it, one series).
///
/// A run is judged against the baseline of its own series only. When its
/// series has no baseline yet but another has, the run is reported "not
/// comparable" (naming both) rather than compared across series.
#[derive(Debug, Clone)]
pub struct SeriesWalks {
    settings: AnalysisSettings,
    threshold_ratio: f64,
    walks: BTreeMap<SeriesKey, SeriesWalk>,
    /// The series of the run that joined a baseline last: the one a
    /// not-comparable message names first.
    last_joined: Option<SeriesKey>,
}

impl SeriesWalks {
    pub fn new(settings: &AnalysisSettings, threshold_ratio: f64) -> SeriesWalks {
        SeriesWalks {
            settings: settings.clone(),
            threshold_ratio,
            walks: BTreeMap::new(),
            last_joined: None,
        }
    }

    /// Judges a main-branch run of `series` and takes it into that
    /// series' walk.
    pub fn judge(&mut self, series: &SeriesKey, run: RunInput) -> Judged {
        let mut judged = match self.walks.get_mut(series) {
            Some(walk) => walk.judge(run),
            None => {
                let mut walk = SeriesWalk::new(&self.settings, self.threshold_ratio);
                let judged = walk.judge(run);
                self.walks.insert(series.clone(), walk);
                judged
            }
        };
        let joined = verdict::baseline_effect(judged.decision.verdict, judged.accepted_change)
            == verdict::BaselineEffect::Join;
        self.note_other_series(series, run.load, &mut judged.baseline);
        if joined {
            self.last_joined = Some(series.clone());
        }
        judged
    }

    /// Judges a run against the baseline of `series` as the walk stands,
    /// leaving the walk as it is: a branch run, which never joins.
    pub fn assess(&self, series: &SeriesKey, run: RunInput) -> Judged {
        let mut judged = match self.walks.get(series) {
            Some(walk) => walk.assess(run),
            None => SeriesWalk::new(&self.settings, self.threshold_ratio).assess(run),
        };
        self.note_other_series(series, run.load, &mut judged.baseline);
        judged
    }

    /// A run without a baseline of its own series, while another series
    /// has one: "not comparable", naming both.
    fn note_other_series(
        &self,
        series: &SeriesKey,
        load: &BTreeMap<String, String>,
        baseline: &mut Baseline,
    ) {
        if series.0.is_empty() || baseline.p99_ms.is_some() || baseline.not_comparable.is_some() {
            return;
        }
        let others = self
            .last_joined
            .iter()
            .chain(self.walks.keys())
            .filter(|k| *k != series);
        let Some((other, base)) = others
            .filter_map(|k| Some((k, self.walks.get(k)?.baseline(load))))
            .find(|(_, b)| b.p99_ms.is_some())
        else {
            return;
        };
        let why = format!(
            "this run is on {}, which has {}; the baseline runs {} are on {} \
             ([analysis] series_by keeps series apart)",
            series.describe(),
            baseline
                .missing
                .as_deref()
                .unwrap_or("no accepted runs before it"),
            base.runs.join(", "),
            other.describe()
        );
        baseline.missing = Some(why.clone());
        baseline.not_comparable = Some(why);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(runs: &[Arc<str>]) -> Vec<&str> {
        runs.iter().map(|r| &**r).collect()
    }
    use crate::test_support::round_with;

    fn figures(p99: f64, errors: f64, tput: f64) -> RunFigures {
        let rounds: Vec<_> = (1..=5)
            .map(|n| {
                round_with(
                    n,
                    crate::model::RoundStats {
                        p99_ms: p99,
                        count: Some(1000),
                        error_rate: Some(errors),
                        throughput_rps: Some(tput),
                        ..Default::default()
                    },
                )
            })
            .collect();
        RunFigures::of(&rounds, 0.5)
    }

    fn judge(
        walk: &mut SeriesWalk,
        id: &str,
        f: &RunFigures,
        load: &BTreeMap<String, String>,
    ) -> Judged {
        walk.judge(run(id, f, load))
    }

    #[test]
    fn the_window_keeps_the_last_entries() {
        let mut w = RollingWindow::new(3);
        for i in 0..200 {
            w.accept(i);
            let want: Vec<i32> = ((i - 2).max(0)..=i).collect();
            assert_eq!(w.recent(), want.as_slice());
        }
    }

    /// Accepted runs share their load profile with the run before them
    /// when it is the same (one comparison per profile, not per run): a
    /// profile that comes back after another, or a run that records none,
    /// must still count as exactly what it is.
    #[test]
    fn shared_load_profiles_still_form_the_baseline_of_their_own_profile() {
        let profile = |vus: &str| -> BTreeMap<String, String> {
            [("vus".to_string(), vus.to_string())].into()
        };
        let (a, b, none) = (profile("50"), profile("80"), BTreeMap::new());
        let a_again = profile("50"); // equal, another allocation
        let mut walk = SeriesWalk::new(&AnalysisSettings::default(), 1.15);
        let f = figures(100.0, 0.001, 200.0);
        for (id, load) in [
            ("a0", &a),
            ("a1", &a),
            ("b0", &b),
            ("b1", &b),
            ("a2", &a),
            ("n0", &none),
            ("a3", &a_again),
            ("a4", &a),
            ("b2", &b),
        ] {
            judge(&mut walk, id, &f, load);
        }
        assert_eq!(
            ids(&walk.baseline(&a).runs),
            ["a0", "a1", "a2", "n0", "a3", "a4"]
        );
        assert_eq!(ids(&walk.baseline(&b).runs), ["b0", "b1", "n0", "b2"]);
        assert_eq!(
            ids(&walk.baseline(&none).runs),
            ["a0", "a1", "b0", "b1", "a2", "n0", "a3", "a4", "b2"]
        );
        assert!(walk.baseline(&profile("99")).p99_ms.is_none());
    }

    #[test]
    fn error_rate_and_throughput_have_their_own_baselines() {
        let load: BTreeMap<String, String> = [("vus".to_string(), "50".to_string())].into();
        let mut walk = SeriesWalk::new(&AnalysisSettings::default(), 1.15);
        for i in 0..4 {
            let j = judge(
                &mut walk,
                &format!("r{i}"),
                &figures(100.0, 0.001, 200.0),
                &load,
            );
            assert_ne!(j.decision.verdict, Verdict::Regression);
        }
        // 0.1% → 5%: over max(0.1% + 1 point, 1%).
        let j = judge(&mut walk, "e", &figures(100.0, 0.05, 200.0), &load);
        assert_eq!(j.decision.verdict, Verdict::Regression);
        assert_eq!(j.decision.regressed, vec![verdict::Figure::ErrorRate]);
        assert_eq!(j.baseline.error_rate, Some(0.001));
        // 0.1% → 0.9%: under the 1% floor.
        let j = judge(&mut walk, "f", &figures(100.0, 0.009, 200.0), &load);
        assert_eq!(j.decision.verdict, Verdict::Ok);
        // −30% throughput at the same load.
        let j = judge(&mut walk, "t", &figures(100.0, 0.001, 140.0), &load);
        assert_eq!(j.decision.regressed, vec![verdict::Figure::Throughput]);
        assert_eq!(j.baseline.throughput_rps, Some(200.0));
        // The regressions stayed out of the baseline.
        assert_eq!(
            ids(&walk.baseline(&load).runs),
            ["r0", "r1", "r2", "r3", "f"]
        );
    }

    #[test]
    fn throughput_is_judged_only_under_a_recorded_load_profile() {
        let none = BTreeMap::new();
        let mut walk = SeriesWalk::new(&AnalysisSettings::default(), 1.15);
        for i in 0..4 {
            judge(
                &mut walk,
                &format!("r{i}"),
                &figures(100.0, 0.0, 200.0),
                &none,
            );
        }
        let j = judge(&mut walk, "t", &figures(100.0, 0.0, 100.0), &none);
        assert_eq!(j.decision.verdict, Verdict::Ok);
        assert_eq!(
            j.baseline.throughput_not_judged.as_deref(),
            Some("the load profile is not recorded ([load] in run.toml)")
        );
    }

    #[test]
    fn failed_runs_never_join_and_say_why_there_is_no_baseline() {
        let mut walk = SeriesWalk::new(&AnalysisSettings::default(), 1.15);
        let none = BTreeMap::new();
        let zeros = figures(0.0, 1.0, 1300.0);
        for i in 0..6 {
            let j = judge(&mut walk, &format!("z{i}"), &zeros, &none);
            assert_eq!(j.decision.verdict, Verdict::Failed);
        }
        let j = judge(&mut walk, "ok", &figures(100.0, 0.0, 200.0), &none);
        assert_eq!(j.decision.verdict, Verdict::NoBaseline);
        assert_eq!(
            j.baseline.missing.as_deref(),
            Some("0 of 3 accepted runs before it; earlier runs left out of the baseline: 6 failed")
        );
    }

    fn host(h: &str) -> SeriesKey {
        SeriesKey(vec![("host".to_string(), Some(h.to_string()))])
    }

    #[test]
    fn assessing_a_run_leaves_the_walk_as_it_was() {
        let none = BTreeMap::new();
        let mut walks = SeriesWalks::new(&AnalysisSettings::default(), 1.15);
        let key = SeriesKey::default();
        for i in 0..4 {
            let f = figures(100.0, 0.0, 200.0);
            walks.judge(&key, run(&format!("m{i}"), &f, &none));
        }
        let before = walks.walks[&key].baseline(&none);
        let slow = figures(200.0, 0.0, 200.0);
        for i in 0..20 {
            let j = walks.assess(&key, run(&format!("b{i}"), &slow, &none));
            assert_eq!(j.decision.verdict, Verdict::Regression);
            assert!(!j.accepted_change);
        }
        // Even an "ok" branch run stays out: only main runs join.
        let fine = figures(100.0, 0.0, 200.0);
        assert_eq!(
            walks.assess(&key, run("ok", &fine, &none)).decision.verdict,
            Verdict::Ok
        );
        assert_eq!(walks.walks[&key].baseline(&none), before);
        assert_eq!(ids(&before.runs), ["m0", "m1", "m2", "m3"]);
    }

    #[test]
    fn each_series_has_its_own_baseline() {
        let none = BTreeMap::new();
        let mut walks = SeriesWalks::new(&AnalysisSettings::default(), 1.15);
        let (fast, slow) = (figures(100.0, 0.0, 200.0), figures(160.0, 0.0, 200.0));
        for i in 0..4 {
            let j = walks.judge(&host("a"), run(&format!("a{i}"), &fast, &none));
            assert_ne!(j.decision.verdict, Verdict::Regression);
        }
        // The first runs on host b: host a's baseline exists, b's does not.
        for i in 0..3 {
            let j = walks.judge(&host("b"), run(&format!("b{i}"), &slow, &none));
            assert_eq!(j.decision.verdict, Verdict::NoBaseline);
            let why = j
                .baseline
                .not_comparable
                .expect("not comparable across hosts");
            assert!(why.contains("this run is on host b"), "{why}");
            assert!(why.contains("are on host a"), "{why}");
            assert!(why.contains(&format!("{i} of 3 accepted runs")), "{why}");
        }
        // Then b is judged against b only: 160 ms is its normal.
        let j = walks.judge(&host("b"), run("b3", &slow, &none));
        assert_eq!(j.decision.verdict, Verdict::Ok);
        assert_eq!(ids(&j.baseline.runs), ["b0", "b1", "b2"]);
        assert_eq!(j.baseline.not_comparable, None);
        // And a is still judged against a alone.
        let j = walks.judge(&host("a"), run("a4", &fast, &none));
        assert_eq!(j.decision.verdict, Verdict::Ok);
        assert_eq!(ids(&j.baseline.runs), ["a0", "a1", "a2", "a3"]);
    }

    #[test]
    fn without_series_a_missing_baseline_is_only_missing() {
        let none = BTreeMap::new();
        let mut walks = SeriesWalks::new(&AnalysisSettings::default(), 1.15);
        let f = figures(100.0, 0.0, 200.0);
        let j = walks.judge(&SeriesKey::default(), run("first", &f, &none));
        assert_eq!(j.decision.verdict, Verdict::NoBaseline);
        assert_eq!(j.baseline.not_comparable, None);
    }

    fn run<'a>(id: &'a str, f: &'a RunFigures, load: &'a BTreeMap<String, String>) -> RunInput<'a> {
        RunInput {
            id,
            rounds: 5,
            figures: f,
            median_p99_ms: f.p99_ms.unwrap_or(0.0),
            load,
            labelled_accepted: false,
            resolution: verdict::Resolution::Exact,
        }
    }
}
