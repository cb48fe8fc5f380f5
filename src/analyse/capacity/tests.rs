use super::*;
use crate::model::{SourceFormat, Step};
use proptest::prelude::*;

/// A step with the given load, throughput, p99 and error rate.
fn step(number: u32, load: f64, rps: f64, p99: f64, errors: f64) -> Step {
    Step {
        number,
        label: None,
        load,
        start_s: 12.0 * (number - 1) as f64,
        duration_s: 12.0,
        window_s: 7.0,
        count: (rps * 7.0).round() as u64,
        throughput_rps: rps,
        p99_ms: Some(p99),
        p50_ms: Some(p99 / 2.0),
        mean_ms: Some(p99 / 2.0),
        error_rate: errors,
        concurrency: None,
        cpu_pct: None,
        memory: None,
    }
}

fn steps(rows: &[(f64, f64, f64, f64)]) -> Vec<Step> {
    rows.iter()
        .enumerate()
        .map(|(i, &(load, rps, p99, err))| step(i as u32 + 1, load, rps, p99, err))
        .collect()
}

const OBJ: Objective = Objective {
    p99_ms: 250.0,
    max_error_rate: 0.01,
    headroom: 0.2,
};

#[test]
fn the_knee_is_the_last_step_within_the_objective() {
    let s = steps(&[
        (50.0, 400.0, 80.0, 0.0),
        (100.0, 800.0, 95.0, 0.0),
        (200.0, 1600.0, 140.0, 0.0),
        (400.0, 2600.0, 212.0, 0.001),
        (800.0, 2700.0, 900.0, 0.0),
    ]);
    let k = find_knee(&s, LoadUnit::Vus, &OBJ);
    assert_eq!(k.knee_step, Some(4));
    assert_eq!(k.knee_rps, Some(2600.0));
    assert!((k.limit_rps.unwrap() - 2080.0).abs() < 1e-9);
    assert_eq!(k.break_step, Some(5));
    assert!(k.noise_steps.is_empty());
    assert!(
        k.reasoning.starts_with(
            "knee 2,600 req/s at 400 VUs (step 4: p99 212 ms ≤ 250 ms objective, errors 0.1%); \
             limit = 2,600 × (1 − 20%) = 2,080 req/s"
        ),
        "{}",
        k.reasoning
    );
    assert!(k.reasoning.contains(
        "step 5 at 800 VUs broke the objective: p99 900 ms > 250 ms objective (the last step)"
    ));
}

#[test]
fn errors_at_the_ceiling_break_a_step() {
    let s = steps(&[
        (1.0, 10.0, 10.0, 0.0),
        (2.0, 20.0, 10.0, 0.0),
        (4.0, 40.0, 10.0, 0.01), // exactly 1%: not under 1%
        (8.0, 45.0, 10.0, 0.05),
    ]);
    let k = find_knee(&s, LoadUnit::Vus, &OBJ);
    assert_eq!(k.knee_step, Some(2));
    assert_eq!(k.break_step, Some(3));
    assert_eq!(k.checks[2].reasons, vec!["errors 1% ≥ 1%".to_string()]);
}

#[test]
fn a_single_noisy_step_is_ignored_and_a_sustained_break_ends_the_search() {
    let s = steps(&[
        (1.0, 100.0, 100.0, 0.0),
        (2.0, 200.0, 300.0, 0.0), // misses alone: noise
        (3.0, 300.0, 120.0, 0.0),
        (4.0, 400.0, 400.0, 0.0), // sustained break …
        (5.0, 500.0, 500.0, 0.0), // … confirmed here
        (6.0, 600.0, 100.0, 0.0), // meets again, but after the break: ignored
    ]);
    let k = find_knee(&s, LoadUnit::Vus, &OBJ);
    assert_eq!(k.knee_step, Some(3));
    assert_eq!(k.noise_steps, vec![2]);
    assert_eq!(k.break_step, Some(4));
    assert!(k.checks[1].noise && !k.checks[3].noise);
    assert!(
        k.reasoning.contains("step 2 at 2 VUs missed alone"),
        "{}",
        k.reasoning
    );
}

#[test]
fn falling_throughput_past_saturation_keeps_the_best_step_as_knee() {
    // Throughput peaks at step 3 and falls while p99 still meets.
    let s = steps(&[
        (1.0, 100.0, 50.0, 0.0),
        (2.0, 300.0, 60.0, 0.0),
        (3.0, 290.0, 90.0, 0.0),
        (4.0, 280.0, 600.0, 0.0),
    ]);
    let k = find_knee(&s, LoadUnit::Vus, &OBJ);
    assert_eq!(k.knee_step, Some(2));
}

#[test]
fn no_step_within_the_objective_gives_no_knee() {
    let s = steps(&[
        (1.0, 10.0, 300.0, 0.0),
        (2.0, 20.0, 400.0, 0.0),
        (3.0, 30.0, 500.0, 0.0),
    ]);
    let k = find_knee(&s, LoadUnit::Vus, &OBJ);
    assert_eq!(k.knee_rps, None);
    assert_eq!(k.limit_rps, None);
    assert_eq!(k.break_step, Some(1));
    assert!(k.reasoning.starts_with("no knee"));
}

#[test]
fn numbers_read_like_a_report() {
    assert_eq!(number(2600.0), "2,600");
    assert_eq!(number(1234567.4), "1,234,567");
    assert_eq!(number(36.54), "36.5");
    assert_eq!(number(4.431), "4.43");
    assert_eq!(number(8.0), "8");
}

#[test]
fn the_capacity_verdict_band() {
    use CapacityVerdict::*;
    let d = |k, b| verdict::decide_capacity(k, b, 0.15);
    assert_eq!(d(Some(85.0), Some(100.0)), Ok); // at the edge: not below it
    assert_eq!(d(Some(84.0), Some(100.0)), Regression);
    assert_eq!(d(Some(117.0), Some(100.0)), Ok);
    assert_eq!(d(Some(118.0), Some(100.0)), Improvement); // > 100 / 0.85 = 117.6
    assert_eq!(d(None, Some(100.0)), Regression);
    assert_eq!(d(None, None), NoKnee);
    assert_eq!(d(Some(5.0), None), NoBaseline);
}

fn series(knee_rps: f64) -> StepSeries {
    StepSeries {
        source: "x".into(),
        format: SourceFormat::K6Ndjson,
        unit: LoadUnit::Vus,
        settle_s: 5.0,
        origin_unix_us: 0,
        steps: steps(&[
            (1.0, knee_rps / 4.0, 50.0, 0.0),
            (2.0, knee_rps / 2.0, 80.0, 0.0),
            (4.0, knee_rps, 200.0, 0.0),
            (8.0, knee_rps * 1.05, 800.0, 0.0),
        ]),
        resources: None,
    }
}

#[test]
fn knee_history_flags_a_drop_and_keeps_it_out_of_the_baseline() {
    let knees = [1000.0, 1040.0, 980.0, 1010.0, 700.0, 690.0];
    let runs = knees
        .iter()
        .enumerate()
        .map(|(i, &k)| {
            let mut run = crate::test_support::run(i, &[]);
            run.capacity.insert("search".to_string(), series(k));
            run
        })
        .collect();
    let archive = crate::test_support::archive(runs);
    let e = &analyse_capacity(&archive)[0];
    let verdicts: Vec<&str> = e.runs.iter().map(|p| p.verdict.as_str()).collect();
    assert_eq!(
        verdicts,
        [
            "no-baseline",
            "no-baseline",
            "ok",
            "ok",
            "regression",
            "regression"
        ]
    );
    // Baseline of run 5: median of 1000, 1040, 980, 1010 = 1005.
    assert_eq!(e.runs[4].baseline_knee_rps, Some(1005.0));
    // Run 6's baseline does not include the regressed run 5.
    assert_eq!(e.runs[5].baseline_runs.len(), 4);
    assert!((e.runs[4].knee.limit_rps.unwrap() - 560.0).abs() < 1e-9);
}

proptest! {
    /// Scaling every step's throughput by a power of two scales the knee and
    /// the limit by the same factor (exactly: powers of two are exact in
    /// binary floating point) and keeps the knee step.
    #[test]
    fn scaling_throughput_scales_knee_and_limit(
        rows in proptest::collection::vec((1.0f64..1e4, 1.0f64..1000.0, 0.0f64..0.03), 3..8),
        shift in -8i32..8,
    ) {
        let factor = 2f64.powi(shift);
        let rows: Vec<(f64, f64, f64, f64)> = rows
            .iter()
            .enumerate()
            .map(|(i, &(rps, p99, e))| (i as f64 + 1.0, rps, p99, e))
            .collect();
        let a = find_knee(&steps(&rows), LoadUnit::Vus, &OBJ);
        let scaled: Vec<_> = rows.iter().map(|&(l, r, p, e)| (l, r * factor, p, e)).collect();
        let b = find_knee(&steps(&scaled), LoadUnit::Vus, &OBJ);
        prop_assert_eq!(a.knee_step, b.knee_step);
        prop_assert_eq!(a.knee_rps.map(|k| k * factor), b.knee_rps);
        prop_assert_eq!(a.limit_rps.map(|k| k * factor), b.limit_rps);
    }

    /// The knee always meets the objective, and no step before the first
    /// sustained break that meets it has a higher throughput.
    #[test]
    fn the_knee_meets_the_objective_and_is_the_best_before_the_break(
        rows in proptest::collection::vec((1.0f64..1e4, 1.0f64..600.0, 0.0f64..0.03), 1..10),
    ) {
        let rows: Vec<(f64, f64, f64, f64)> = rows
            .iter()
            .enumerate()
            .map(|(i, &(rps, p99, e))| (i as f64 + 1.0, rps, p99, e))
            .collect();
        let s = steps(&rows);
        let k = find_knee(&s, LoadUnit::Vus, &OBJ);
        let end = k.break_step.map(|b| b as usize - 1).unwrap_or(s.len());
        if let Some(n) = k.knee_step {
            let knee = &s[n as usize - 1];
            prop_assert!(knee.p99_ms.unwrap() <= OBJ.p99_ms && knee.error_rate < OBJ.max_error_rate);
            for st in &s[..end] {
                if st.p99_ms.unwrap() <= OBJ.p99_ms && st.error_rate < OBJ.max_error_rate {
                    prop_assert!(st.throughput_rps <= knee.throughput_rps);
                }
            }
        } else {
            prop_assert!(s[..end].iter().all(|st| st.p99_ms.unwrap() > OBJ.p99_ms || st.error_rate >= OBJ.max_error_rate));
        }
    }
}

/// An endpoint whose step-load runs have these knees (`None`: no step met
/// the objective), judged as the pipeline does; `untrusted` marks runs
/// whose time cannot be trusted.
fn judged(knees: &[Option<f64>], untrusted: &[usize]) -> EndpointCapacity {
    let runs = knees
        .iter()
        .enumerate()
        .map(|(i, &k)| {
            let mut run = crate::test_support::run(i, &[]);
            // No knee: every step over the 250 ms objective.
            let mut s = series(k.unwrap_or(400.0));
            if k.is_none() {
                s.steps.iter_mut().for_each(|st| st.p99_ms = Some(900.0));
            }
            run.capacity.insert("search".to_string(), s);
            if untrusted.contains(&i) {
                run.untrusted_time = Some("dated 2099".into());
            }
            run
        })
        .collect();
    let archive = crate::test_support::archive(runs);
    analyse_capacity(&archive).remove(0)
}

#[test]
fn the_limit_range_of_a_single_run_is_that_run_s_limit() {
    let e = judged(&[Some(1000.0)], &[]);
    let r = e.limit_range(5).expect("one run with a knee has a range");
    let limit = e.runs[0].knee.limit_rps.unwrap();
    assert_eq!((r.median, r.min, r.max), (limit, limit, limit));
    assert_eq!(r.runs, vec![e.runs[0].run.clone()]);
}

#[test]
fn the_limit_range_takes_the_last_n_runs_and_its_median() {
    let e = judged(
        &[
            Some(1000.0),
            Some(1040.0),
            Some(980.0),
            Some(1010.0),
            Some(990.0),
        ],
        &[],
    );
    let limits: Vec<f64> = e.runs.iter().map(|p| p.knee.limit_rps.unwrap()).collect();
    let r = e.limit_range(3).unwrap();
    // The last three: 980, 1010, 990 (× 0.8) — median 990 × 0.8.
    assert_eq!(
        r.runs,
        e.runs[2..]
            .iter()
            .map(|p| p.run.clone())
            .collect::<Vec<_>>()
    );
    assert_eq!(r.median, limits[4]);
    assert_eq!(r.min, limits[2]);
    assert_eq!(r.max, limits[3]);
    // n = 0 still gives the latest run rather than nothing.
    assert_eq!(e.limit_range(0).unwrap().runs, vec![e.runs[4].run.clone()]);
}

#[test]
fn tied_limits_give_a_range_of_one_value() {
    let e = judged(&[Some(800.0), Some(800.0), Some(800.0)], &[]);
    let r = e.limit_range(5).unwrap();
    let limit = e.runs[0].knee.limit_rps.unwrap();
    assert_eq!((r.median, r.min, r.max), (limit, limit, limit));
    assert_eq!(r.runs.len(), 3);
}

#[test]
fn runs_without_a_knee_are_listed_but_not_counted() {
    let e = judged(&[Some(1000.0), None, Some(1020.0)], &[]);
    assert_eq!(e.runs[1].knee.limit_rps, None);
    // No baseline yet for run 1 (one earlier knee): no-knee, not regression,
    // so all three runs are on one side.
    assert_eq!(e.runs[1].verdict, CapacityVerdict::NoKnee);
    let r = e.limit_range(5).unwrap();
    assert_eq!(r.runs.len(), 3);
    let (a, c) = (
        e.runs[0].knee.limit_rps.unwrap(),
        e.runs[2].knee.limit_rps.unwrap(),
    );
    assert_eq!((r.min, r.max), (a, c));
    assert_eq!(r.median, (a + c) / 2.0);
    // Only runs without a knee: no range at all.
    assert_eq!(judged(&[None, None], &[]).limit_range(5), None);
}

#[test]
fn the_limit_range_never_mixes_the_capacity_before_a_drop_with_after() {
    let e = judged(
        &[
            Some(1000.0),
            Some(1040.0),
            Some(980.0),
            Some(700.0),
            Some(690.0),
        ],
        &[],
    );
    assert_eq!(e.runs[3].verdict, CapacityVerdict::Regression);
    let r = e.limit_range(5).unwrap();
    assert_eq!(r.runs, vec![e.runs[3].run.clone(), e.runs[4].run.clone()]);
    assert_eq!(r.max, e.runs[3].knee.limit_rps.unwrap());
}

#[test]
fn an_untrusted_run_is_neither_the_latest_nor_in_the_limit_range() {
    // The last run (say dated 2099) has a knee far above the others.
    let e = judged(&[Some(1000.0), Some(1040.0), Some(5000.0)], &[2]);
    assert_eq!(e.latest().unwrap().run, e.runs[1].run);
    let r = e.limit_range(5).unwrap();
    assert!(!r.runs.contains(&e.runs[2].run), "{:?}", r.runs);
    assert_eq!(r.max, e.runs[1].knee.limit_rps.unwrap());
    // Only untrusted runs: no latest, no range.
    let only = judged(&[Some(1000.0)], &[0]);
    assert!(only.latest().is_none());
    assert_eq!(only.limit_range(5), None);
}

#[test]
fn an_accepted_capacity_drop_stays_accepted_while_it_regresses() {
    let knees = [1000.0, 1040.0, 980.0, 700.0, 690.0, 1000.0, 650.0];
    let runs = knees
        .iter()
        .enumerate()
        .map(|(i, &k)| {
            let mut run = crate::test_support::run(i, &[]);
            run.capacity.insert("search".to_string(), series(k));
            run
        })
        .collect();
    let mut archive = crate::test_support::archive(runs);
    archive.triage.push(crate::model::TriageLabel {
        run: archive.runs[3].id.clone(),
        endpoint: "search".into(),
        label: crate::model::Label::Accepted,
        note: None,
        author: "sre".into(),
        date: chrono::NaiveDate::from_ymd_opt(2026, 1, 1).unwrap(),
        source: "triage/x.toml:1".into(),
        follow_up: Default::default(),
    });
    let e = &analyse_capacity(&archive)[0];
    let accepted: Vec<bool> = e.runs.iter().map(|p| p.accepted_change).collect();
    // The labelled drop and the regression right after it are accepted;
    // the run back at 1000 ends the change.
    assert_eq!(accepted[..6], [false, false, false, true, true, false]);
    assert_eq!(e.runs[3].verdict, CapacityVerdict::Regression);
    // Both runs of the accepted change joined later baselines.
    for joined in &e.runs[3..5] {
        assert!(
            e.runs[5].baseline_runs.contains(&joined.run),
            "{:?}",
            e.runs[5].baseline_runs
        );
    }
    // A drop after the change ended is a new, unaccepted regression.
    assert_eq!(e.runs[6].verdict, CapacityVerdict::Regression);
    assert!(!e.runs[6].accepted_change);
}

fn at(rows: &[(f64, Option<f64>)]) -> Vec<Step> {
    rows.iter()
        .enumerate()
        .map(|(i, &(rps, p99))| {
            let mut s = step(i as u32 + 1, i as f64 + 1.0, rps, 0.0, 0.0);
            s.p99_ms = p99;
            s
        })
        .collect()
}

#[test]
fn p99_at_a_step_s_throughput_is_that_step_s_p99() {
    let s = at(&[
        (100.0, Some(50.0)),
        (200.0, Some(80.0)),
        (300.0, Some(200.0)),
    ]);
    assert_eq!(p99_at(&s, 100.0), Some(50.0));
    assert_eq!(p99_at(&s, 200.0), Some(80.0));
    assert_eq!(p99_at(&s, 300.0), Some(200.0));
}

#[test]
fn p99_at_interpolates_between_the_steps_around_it() {
    let s = at(&[
        (100.0, Some(50.0)),
        (200.0, Some(80.0)),
        (300.0, Some(200.0)),
    ]);
    assert_eq!(p99_at(&s, 150.0), Some(65.0));
    assert_eq!(p99_at(&s, 275.0), Some(170.0));
    // Steps need not come in throughput order (throughput falls past saturation).
    let shuffled = at(&[
        (300.0, Some(200.0)),
        (100.0, Some(50.0)),
        (200.0, Some(80.0)),
    ]);
    assert_eq!(p99_at(&shuffled, 150.0), Some(65.0));
}

#[test]
fn p99_at_is_none_outside_the_steps() {
    let s = at(&[(100.0, Some(50.0)), (200.0, Some(80.0))]);
    assert_eq!(p99_at(&s, 99.9), None);
    assert_eq!(p99_at(&s, 200.1), None);
    assert_eq!(p99_at(&[], 100.0), None);
    assert_eq!(p99_at(&s, f64::NAN), None);
}

#[test]
fn p99_at_with_one_step_answers_only_at_that_step() {
    let s = at(&[(100.0, Some(50.0))]);
    assert_eq!(p99_at(&s, 100.0), Some(50.0));
    assert_eq!(p99_at(&s, 90.0), None);
    assert_eq!(p99_at(&s, 110.0), None);
}

#[test]
fn p99_at_skips_steps_without_a_p99() {
    // Step 2 had no successful request: read across it.
    let s = at(&[(100.0, Some(50.0)), (200.0, None), (300.0, Some(150.0))]);
    assert_eq!(p99_at(&s, 200.0), Some(100.0));
    assert_eq!(p99_at(&at(&[(100.0, None)]), 100.0), None);
}

#[test]
fn p99_at_a_tied_throughput_is_the_first_step_that_reached_it() {
    // Saturated: two steps at 200 req/s, the heavier one slower. The lighter
    // (earlier) step is the one that first reached that throughput.
    let s = at(&[
        (100.0, Some(50.0)),
        (200.0, Some(80.0)),
        (200.0, Some(400.0)),
    ]);
    assert_eq!(p99_at(&s, 200.0), Some(80.0));
    assert_eq!(p99_at(&s, 150.0), Some(65.0));
}
