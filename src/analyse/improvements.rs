//! Improvements of a week: the endpoints whose runs in the week were
//! judged `improvement` (faster than the baseline by the threshold), with
//! where the change came in and its size in ms. The weekly review lists
//! them beside the open problems: a change that made one endpoint slower
//! often made another faster (a cache moved, a query rewritten), and the
//! meeting should see both. Until issue 34 an endpoint ×0.31 faster showed
//! on the weekly page only as a zero in a table.
//!
//! Pure data from the verdicts (`verdict.rs` decides them); `render::weekly`
//! shows it, and `data/analysis.json` lists the same (`weekly.improvements`).

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::evidence::SuspectRange;
use super::{Analysis, Verdict};

/// One endpoint that got faster in the reviewed week: its latest streak of
/// runs judged an improvement in the week.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Improvement {
    pub endpoint: String,
    /// The first run of the streak.
    pub first_run: String,
    pub since: DateTime<Utc>,
    /// The last run before it that measured a level (the suspect range
    /// ends at `first_run`); `None` when it is the endpoint's first.
    pub last_old_run: Option<String>,
    /// The streak's latest run: its baseline and its median p99 (before →
    /// after, in ms) and their ratio.
    pub latest_run: String,
    pub before_ms: Option<f64>,
    pub after_ms: f64,
    pub ratio: Option<f64>,
    /// Runs in the streak.
    pub runs: usize,
    /// The streak began with a run where most endpoints moved together:
    /// likely the environment, not the code.
    pub environment_suspect: bool,
}

/// Every endpoint with a run judged an improvement in `[from, to)` and no
/// regression after it in the week, by endpoint order, each with its
/// latest streak of improved runs in the week (an improvement on an
/// environment-suspect Monday and the code's ×0.31 on Friday are two
/// streaks: Friday's is the one to show). Runs whose time cannot be
/// trusted belong to no week.
pub fn week_improvements(
    analysis: &Analysis,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> Vec<Improvement> {
    analysis
        .endpoints
        .iter()
        .filter_map(|e| {
            let in_week: Vec<usize> = (0..e.points.len())
                .filter(|&i| {
                    let p = &e.points[i];
                    !p.untrusted_time && from <= p.started_at && p.started_at < to
                })
                .collect();
            let improved = |i: &usize| e.points[*i].verdict == Verdict::Improvement;
            let last = in_week.iter().rposition(improved)?;
            // Undone by a regression later in the week: nothing to show
            // beside the open problem it became.
            if in_week[last + 1..]
                .iter()
                .any(|i| e.points[*i].verdict == Verdict::Regression)
            {
                return None;
            }
            let first = in_week[..=last]
                .iter()
                .rposition(|i| !improved(i))
                .map_or(0, |k| k + 1);
            let (start, end) = (in_week[first], in_week[last]);
            let p = &e.points[end];
            let environment_suspect = analysis
                .runs
                .get(e.points[start].run_index)
                .is_some_and(|r| r.environment_suspect.is_some());
            Some(Improvement {
                endpoint: e.id.clone(),
                first_run: e.points[start].run.clone(),
                since: e.points[start].started_at,
                last_old_run: SuspectRange::before(&e.points, start).last_old_run,
                latest_run: p.run.clone(),
                before_ms: p.baseline_p99_ms,
                after_ms: p.median_p99_ms,
                ratio: p.ratio,
                runs: last + 1 - first,
                environment_suspect,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyse::analyse;
    use crate::test_support;

    #[test]
    fn an_endpoint_that_got_faster_is_listed_with_its_change() {
        // 12 runs near 100 ms, then 3 near 30 ms (×0.3), for `fast`; `same`
        // stays at 100 ms.
        let fast: Vec<Vec<f64>> = (0..15)
            .map(|i| vec![if i < 12 { 100.0 } else { 30.0 } + (i % 3) as f64; 5])
            .collect();
        let same: Vec<Vec<f64>> = (0..15).map(|i| vec![100.0 + (i % 3) as f64; 5]).collect();
        let archive = test_support::archive_of(&[("fast", fast), ("same", same)]);
        let analysis = analyse(&archive, vec![]);
        let e = &analysis.endpoints.iter().find(|e| e.id == "fast").unwrap();
        let all = week_improvements(
            &analysis,
            e.points[0].started_at,
            e.points.last().unwrap().started_at + chrono::Duration::seconds(1),
        );
        assert_eq!(all.len(), 1, "{all:?}");
        let i = &all[0];
        assert_eq!(i.endpoint, "fast");
        assert_eq!(i.first_run, e.points[12].run);
        assert_eq!(i.last_old_run.as_deref(), Some(e.points[11].run.as_str()));
        assert!(i.before_ms.unwrap() > 99.0 && i.after_ms < 33.0, "{i:?}");
        assert!(i.ratio.unwrap() < 0.35);
        assert_eq!(i.runs, 3, "{i:?}");
        assert_eq!(i.latest_run, e.points[14].run);
        assert!(!i.environment_suspect);
        // Two streaks (a faster run, a slower one, then faster again): the
        // latest is shown.
        let mut archive = archive;
        let ok = archive.runs[10].endpoints["fast"].clone();
        archive.runs[13].endpoints.insert("fast".into(), ok);
        let analysis = analyse(&archive, vec![]);
        let e = analysis.endpoints.iter().find(|e| e.id == "fast").unwrap();
        let all = week_improvements(
            &analysis,
            e.points[0].started_at,
            e.points.last().unwrap().started_at + chrono::Duration::seconds(1),
        );
        assert_eq!(all[0].first_run, e.points[14].run, "{all:?}");
        assert_eq!(all[0].runs, 1);
        // A regression after it undoes it.
        let slow = test_support::endpoint_run(&[150.0; 5], test_support::round);
        archive.runs[14].endpoints.insert("fast".into(), slow);
        let analysis = analyse(&archive, vec![]);
        let e = analysis.endpoints.iter().find(|e| e.id == "fast").unwrap();
        assert_eq!(e.points[14].verdict, Verdict::Regression);
        let all = week_improvements(
            &analysis,
            e.points[0].started_at,
            e.points.last().unwrap().started_at + chrono::Duration::seconds(1),
        );
        assert!(all.is_empty(), "{all:?}");
        // A week before the change has none.
        let before = week_improvements(&analysis, e.points[0].started_at, e.points[12].started_at);
        assert!(before.is_empty(), "{before:?}");
    }
}
