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

/// One endpoint that got faster in the reviewed week.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Improvement {
    pub endpoint: String,
    /// Its first run of the week judged an improvement.
    pub first_run: String,
    pub since: DateTime<Utc>,
    /// The last run before it that measured a level (the suspect range
    /// ends at `first_run`); `None` when it is the endpoint's first.
    pub last_old_run: Option<String>,
    /// The baseline the first improved run was judged against, and its
    /// median p99: before → after, in ms.
    pub before_ms: Option<f64>,
    pub after_ms: f64,
    /// after ÷ before.
    pub ratio: Option<f64>,
    /// Runs of the week judged an improvement.
    pub runs: usize,
}

/// Every endpoint with a run judged an improvement in `[from, to)`, by
/// endpoint order. Runs whose time cannot be trusted belong to no week.
pub fn week_improvements(
    analysis: &Analysis,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> Vec<Improvement> {
    analysis
        .endpoints
        .iter()
        .filter_map(|e| {
            let improved: Vec<usize> = (0..e.points.len())
                .filter(|&i| {
                    let p = &e.points[i];
                    !p.untrusted_time
                        && from <= p.started_at
                        && p.started_at < to
                        && p.verdict == Verdict::Improvement
                })
                .collect();
            let &first = improved.first()?;
            let p = &e.points[first];
            Some(Improvement {
                endpoint: e.id.clone(),
                first_run: p.run.clone(),
                since: p.started_at,
                last_old_run: SuspectRange::before(&e.points, first).last_old_run,
                before_ms: p.baseline_p99_ms,
                after_ms: p.median_p99_ms,
                ratio: p.ratio,
                runs: improved.len(),
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
        assert!(i.runs >= 1);
        // A week before the change has none.
        let before = week_improvements(&analysis, e.points[0].started_at, e.points[12].started_at);
        assert!(before.is_empty(), "{before:?}");
    }
}
