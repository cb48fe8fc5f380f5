//! Unit and property tests of the baseline and verdict logic.

use proptest::prelude::*;

use super::*;
use crate::model::Run;

/// An archive with one endpoint `e` whose runs have the given round p99s.
fn archive(runs: &[Vec<f64>]) -> Archive {
    crate::test_support::archive_of(&[("e", runs.to_vec())])
}

fn verdicts(runs: &[Vec<f64>]) -> Vec<Verdict> {
    let a = analyse(&archive(runs), vec![]);
    a.endpoints[0].points.iter().map(|p| p.verdict).collect()
}

fn steady(n: usize, level: f64) -> Vec<Vec<f64>> {
    (0..n).map(|_| vec![level; 5]).collect()
}

#[test]
fn first_runs_have_no_baseline_then_ok() {
    let v = verdicts(&steady(5, 100.0));
    assert_eq!(v[..3], [Verdict::NoBaseline; 3]);
    assert_eq!(v[3..], [Verdict::Ok; 2]);
}

#[test]
fn step_regression_persists_and_stays_out_of_the_baseline() {
    let mut runs = steady(12, 100.0);
    runs.extend(steady(4, 130.0));
    let a = analyse(&archive(&runs), vec![]);
    let pts = &a.endpoints[0].points;
    for p in &pts[12..] {
        assert_eq!(p.verdict, Verdict::Regression);
        assert_eq!(
            p.baseline_p99_ms,
            Some(100.0),
            "regressed runs never join the baseline"
        );
        assert!((p.ratio.unwrap() - 1.3).abs() < 1e-12);
    }
    assert_eq!(pts[12].baseline_runs.len(), 10);
}

#[test]
fn insufficient_runs_are_shown_but_not_judged() {
    let mut runs = steady(6, 100.0);
    runs.push(vec![300.0, 300.0]);
    runs.push(vec![100.0; 5]);
    let a = analyse(&archive(&runs), vec![]);
    let pts = &a.endpoints[0].points;
    assert_eq!(pts[6].verdict, Verdict::Insufficient);
    assert_eq!(pts[6].median_p99_ms, 300.0);
    assert_eq!(pts[7].verdict, Verdict::Ok);
    assert_eq!(pts[7].baseline_p99_ms, Some(100.0));
}

#[test]
fn one_gc_round_does_not_flip_a_verdict() {
    let mut runs = steady(10, 100.0);
    runs.push(vec![100.0, 101.0, 99.0, 200.0, 100.0]);
    assert_eq!(*verdicts(&runs).last().unwrap(), Verdict::Ok);
}

#[test]
fn improvement_lowers_the_baseline() {
    let mut runs = steady(10, 100.0);
    runs.extend(steady(10, 50.0));
    let v = verdicts(&runs);
    assert_eq!(v[10], Verdict::Improvement);
    assert_eq!(*v.last().unwrap(), Verdict::Ok);
}

fn levels() -> impl Strategy<Value = Vec<Vec<f64>>> {
    proptest::collection::vec(proptest::collection::vec(10.0f64..1000.0, 5), 1..30)
}

proptest! {
    #[test]
    fn round_order_does_not_matter(runs in levels()) {
        let reversed: Vec<Vec<f64>> = runs.iter().map(|r| r.iter().rev().cloned().collect()).collect();
        let a = analyse(&archive(&runs), vec![]);
        let b = analyse(&archive(&reversed), vec![]);
        for (p, q) in a.endpoints[0].points.iter().zip(&b.endpoints[0].points) {
            prop_assert_eq!(p.median_p99_ms, q.median_p99_ms);
            prop_assert_eq!(p.baseline_p99_ms, q.baseline_p99_ms);
            prop_assert_eq!(p.verdict, q.verdict);
        }
    }

    #[test]
    fn scaling_every_value_scales_medians_and_baselines(runs in levels(), k in prop_oneof![Just(2.0f64), Just(0.5), Just(4.0), Just(0.25)]) {
        // Powers of two keep the arithmetic exact, so verdicts must agree exactly.
        let scaled: Vec<Vec<f64>> = runs.iter().map(|r| r.iter().map(|x| x * k).collect()).collect();
        let a = analyse(&archive(&runs), vec![]);
        let b = analyse(&archive(&scaled), vec![]);
        for (p, q) in a.endpoints[0].points.iter().zip(&b.endpoints[0].points) {
            prop_assert_eq!(p.median_p99_ms * k, q.median_p99_ms);
            prop_assert_eq!(p.baseline_p99_ms.map(|b| b * k), q.baseline_p99_ms);
            prop_assert_eq!(p.verdict, q.verdict);
        }
    }

    #[test]
    fn a_single_gc_round_never_flips_a_verdict(runs in levels(), which in 0usize..5, factor in 1.5f64..3.0) {
        // Doubling (or worse) one round of the last run moves the median by
        // at most one order statistic; with four steady rounds it cannot
        // move it at all.
        let mut base = runs.clone();
        let last = base.last_mut().unwrap();
        let steady_level = last[0];
        for x in last.iter_mut() { *x = steady_level; }
        let mut with_gc = base.clone();
        with_gc.last_mut().unwrap()[which] = steady_level * factor;
        let a = verdicts(&base);
        let b = verdicts(&with_gc);
        prop_assert_eq!(a.last(), b.last());
    }

    #[test]
    fn adding_branch_runs_never_changes_a_main_verdict(
        main in levels(),
        branches in proptest::collection::vec((0usize..40, proptest::collection::vec(10.0f64..1000.0, 5), 0usize..30), 0..8),
    ) {
        // Main runs record `main`; each branch run its own branch, placed
        // anywhere in time, judged as of its start or of a main run's
        // commit (its merge base).
        let main_runs: Vec<Run> = main
            .iter()
            .enumerate()
            .map(|(i, rounds)| {
                let mut r = crate::test_support::run(i, &[("e", rounds)]);
                r.meta.branch = Some("main".into());
                r.meta.commit = Some(format!("{i:07x}a"));
                r
            })
            .collect();
        let without = analyse(&crate::test_support::archive(main_runs.clone()), vec![]);
        let mut runs = main_runs;
        for (k, (at, rounds, _)) in branches.iter().enumerate() {
            let mut r = crate::test_support::run(*at, &[("e", rounds)]);
            r.id = format!("pr-{k}");
            r.started_at += chrono::Duration::minutes(1 + k as i64);
            r.meta.branch = Some(format!("feature-{k}"));
            runs.push(r);
        }
        runs.sort_by(|a, b| a.started_at.cmp(&b.started_at).then_with(|| a.id.cmp(&b.id)));
        let archive = crate::test_support::archive(runs);
        let mut options = AnalyseOptions::default();
        for (k, (_, _, base)) in branches.iter().enumerate() {
            if *base < main.len()
                && let Ok(b) = merge_base_run(&archive, &format!("pr-{k}"), &format!("{base:07x}a"))
            {
                options.merge_bases.insert(format!("pr-{k}"), b);
            }
        }
        let with = analyse_with(&archive, vec![], &options);
        let key = |a: &Analysis| -> Vec<(String, Verdict, Option<f64>, Vec<String>)> {
            a.endpoints[0]
                .points
                .iter()
                .map(|p| {
                    let ids = p.baseline_runs.iter().map(|r| r.to_string()).collect();
                    (p.run.clone(), p.verdict, p.baseline_p99_ms, ids)
                })
                .collect()
        };
        prop_assert_eq!(key(&without), key(&with));
        prop_assert_eq!(with.endpoints[0].branch_points.len(), branches.len());
        prop_assert_eq!(&without.alarms.alarms.len(), &with.alarms.alarms.len());
        prop_assert_eq!(without.latest_run().map(|r| &r.id), with.latest_run().map(|r| &r.id));
        // Each branch run's baseline is made of main runs before its anchor.
        for p in &with.endpoints[0].branch_points {
            let base = with.runs[p.run_index].branch.as_ref().expect("a branch run");
            for r in &p.baseline_runs {
                let i = with.runs.iter().position(|x| *x.id == **r).unwrap();
                prop_assert!(with.runs[i].branch.is_none());
                prop_assert!(base.main_run_index.is_some_and(|m| i <= m));
            }
        }
    }
}

/// The alarm report is made on every core, one endpoint a task: it must
/// not depend on how many threads there are or which finishes first.
#[test]
fn the_alarm_report_is_the_same_on_one_thread_and_on_many() {
    let histories: Vec<(String, Vec<Vec<f64>>)> = (0..8)
        .map(|i| {
            // Endpoints that regress at different runs, by different steps,
            // and some that recover: alarms of every policy, in every order.
            let mut runs = steady(10 + i, 100.0 + i as f64);
            runs.extend(steady(4 + i % 3, 130.0 + 7.0 * i as f64));
            let after = if i % 2 == 0 {
                100.0
            } else {
                130.0 + 7.0 * i as f64
            };
            runs.extend(steady(30 - runs.len(), after));
            (format!("e{i}"), runs)
        })
        .collect();
    let endpoints: Vec<(&str, Vec<Vec<f64>>)> = histories
        .iter()
        .map(|(id, runs)| (id.as_str(), runs.clone()))
        .collect();
    let archive = crate::test_support::archive_of(&endpoints);
    let report_on = |threads| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| format!("{:?}", analyse(&archive, vec![]).alarms))
    };
    let one = report_on(1);
    assert!(one.contains("Regression"), "the histories raise alarms");
    for threads in [2, 4, 8] {
        assert_eq!(one, report_on(threads), "{threads} threads");
    }
}
