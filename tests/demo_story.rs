//! The bundled demo archive tells the team's story (issue 5): under the
//! `naive` policy several alarms a week, most of them labelled noise; under
//! the default `median` policy few, each endpoint's false-positive rate
//! visible, and every real regression caught, with its delay.

mod common;

use perfdash::analyse::alarms::PolicyStats;
use perfdash::analyse::{Analysis, Policy, analyse};
use perfdash::ingest::load_archive;

/// Loaded once for both tests: the archive holds about 5,000 files.
fn demo() -> &'static Analysis {
    static DEMO: std::sync::OnceLock<Analysis> = std::sync::OnceLock::new();
    DEMO.get_or_init(load_demo)
}

fn load_demo() -> Analysis {
    let loaded = load_archive(common::bundled_archive()).expect("the bundled archive loads");
    assert!(
        !loaded.archive.triage.is_empty(),
        "the demo archive ships triage labels"
    );
    analyse(&loaded.archive, loaded.diagnostics)
}

fn totals(a: &Analysis, p: Policy) -> &PolicyStats {
    &a.alarms.totals[&p]
}

#[test]
fn the_demo_archive_tells_the_story() {
    let a = demo();
    let naive = totals(a, Policy::Naive);
    let median = totals(a, Policy::Median);
    let persistent = totals(a, Policy::Persistent);

    // Before: several alarms a week across the 12 endpoints, mostly noise.
    assert!(naive.alarms_per_week >= 2.0, "naive: {naive:?}");
    assert!(naive.noise > 3 * naive.real, "naive: {naive:?}");
    assert!(naive.fp_rate.unwrap() > 0.75, "naive: {naive:?}");

    // After: the median of the rounds leaves few alarms, a fraction of naive's.
    assert!(median.alarms_per_week < 0.5, "median: {median:?}");
    assert!(
        median.alarms * 5 <= naive.alarms,
        "median {median:?} vs naive {naive:?}"
    );
    assert!(median.noise < naive.noise / 5);
    assert_eq!(
        median.unknown, 0,
        "every median alarm of the demo is triaged"
    );
    // Persistence removes what noise is left, for a couple of runs of delay.
    assert!(persistent.noise <= median.noise);

    // Each endpoint's false-positive rate is there for every policy, and
    // defined wherever that policy raised labelled alarms.
    assert_eq!(a.alarms.endpoints.len(), 12);
    for e in &a.alarms.endpoints {
        assert_eq!(e.policies.len(), Policy::ALL.len(), "{}", e.endpoint);
        for (p, s) in &e.policies {
            assert_eq!(
                s.fp_rate.is_some(),
                s.real + s.noise > 0,
                "{} {p}",
                e.endpoint
            );
        }
    }

    // Every real regression is caught by the default policy, with its delay.
    assert!(
        a.alarms.regressions.len() >= 3,
        "{:?}",
        a.alarms.regressions
    );
    assert_eq!(median.detected, median.regressions);
    for r in &a.alarms.regressions {
        let d = r
            .detections
            .iter()
            .find(|d| d.policy == Policy::Median)
            .unwrap();
        assert!(
            d.alarm_run.is_some(),
            "median missed {} at {}",
            r.endpoint,
            r.onset_run
        );
        let days = d.delay_days.unwrap();
        assert!(
            (0.0..=7.0).contains(&days),
            "{} caught after {days} days",
            r.endpoint
        );
        let p = r
            .detections
            .iter()
            .find(|d| d.policy == Policy::Persistent)
            .unwrap();
        assert!(
            p.delay_runs >= d.delay_runs,
            "persistence never catches earlier"
        );
    }
    assert!(median.median_delay_days.is_some());

    // Persistence's inferred labels agree with the humans on the default policy.
    assert!(
        median.agreement.rate.unwrap() >= 0.8,
        "{:?}",
        median.agreement
    );
}

#[test]
fn the_demo_archive_weekly_review_and_gate() {
    let a = demo();
    let review = perfdash::analyse::weekly::weekly_review(
        a,
        perfdash::analyse::weekly::WeekSpec::LastSevenDays,
        Policy::Median,
    )
    .unwrap();
    assert!(
        (2..=4).contains(&review.runs.len()),
        "three runs a week: {:?}",
        review.runs
    );
    assert_eq!(review.fp_by_week.len(), perfdash::analyse::weekly::FP_WEEKS);
    let gate = perfdash::analyse::gate::check(
        a,
        &perfdash::analyse::gate::RunSelector::Latest,
        Policy::Median,
        &perfdash::analyse::gate::CheckOptions::default(),
    )
    .unwrap();
    // The story ends with an open regression on price-quote: the gate fails.
    assert_eq!(gate.outcome, perfdash::analyse::gate::Outcome::Regression);
    assert!(gate.endpoints.iter().any(|e| e.endpoint == "price-quote"
        && e.status == perfdash::analyse::gate::CheckStatus::Regression));
    // The latest run's verdicts and the gate agree endpoint by endpoint.
    for e in &gate.endpoints {
        let point = a
            .endpoints
            .iter()
            .find(|x| x.id == e.endpoint)
            .and_then(|x| x.points.iter().find(|p| p.run == gate.run));
        if let Some(point) = point {
            let regressed = point.verdict == perfdash::analyse::Verdict::Regression;
            let failing = matches!(
                e.status,
                perfdash::analyse::gate::CheckStatus::Regression
                    | perfdash::analyse::gate::CheckStatus::TriagedNoise
                    | perfdash::analyse::gate::CheckStatus::TriagedAccepted
            );
            assert_eq!(regressed, failing, "{}", e.endpoint);
        }
    }
}

/// The weekly page shows, beside each confirmed regression of the
/// archive's policy, the flame-graph attribution of its runs over the line (code
/// regression vs GC/lock, with the category shift) and links to the flame
/// page; and the accepted change on cart-checkout is drawn as accepted.
#[test]
fn the_demo_weekly_page_attributes_confirmed_regressions() {
    let a = demo();
    let site = perfdash::render::render_site(a).unwrap();
    let page =
        |p: &str| String::from_utf8(site.get(p).unwrap_or_else(|| panic!("{p}")).to_vec()).unwrap();
    let weekly = page("weekly.html");
    let confirmed = &weekly[weekly.find("<h2 id=\"confirmed\">").unwrap()..];
    let confirmed = &confirmed[..confirmed.find("<h2 id=\"fp-by-week\">").unwrap()];
    let review = perfdash::analyse::weekly::weekly_review(
        a,
        perfdash::analyse::weekly::WeekSpec::LastSevenDays,
        a.settings.alarms.policy,
    )
    .unwrap();
    let mut attributed = 0;
    for r in &review.confirmed {
        let e = a
            .endpoints
            .iter()
            .find(|e| e.id == r.alarm.endpoint)
            .unwrap();
        let summary = r
            .alarm
            .over_runs
            .iter()
            .filter_map(|run| e.points.iter().find(|p| &p.run == run))
            .flat_map(|p| &p.profiles)
            .find_map(|pa| pa.attribution.as_ref().map(|x| x.summary.clone()));
        if let Some(summary) = summary {
            assert!(confirmed.contains(&summary), "{summary} on the page");
            attributed += 1;
        }
    }
    assert!(
        attributed > 0,
        "the demo's confirmed regressions have profiles"
    );
    assert!(confirmed.contains("code regression (application +"));
    // Its flame links point at pages of the site.
    let links: Vec<&str> = confirmed
        .split("href=\"")
        .skip(1)
        .map(|s| &s[..s.find('"').unwrap()])
        .filter(|h| h.starts_with("flame/"))
        .collect();
    assert!(!links.is_empty());
    for l in links {
        assert!(site.get(l).is_some(), "{l}");
    }

    // cart-checkout's step was triaged `accepted`: accepted in the
    // overview's heatmap and sparkline, and on its chart's legend.
    let index = page("index.html");
    assert!(index.contains("class=\"h-accepted\" data-tip-target"));
    assert!(index.contains("class=\"v-accepted\""));
    assert!(page("endpoints/cart-checkout.html").contains(">accepted change (triaged)</text>"));
    // The history page lists the change points the demo injected.
    let history = page("history.html");
    for e in &a.endpoints {
        for cp in &e.change_points {
            assert!(
                history.contains(&format!(">{}</a>", cp.run)),
                "{} {}",
                e.id,
                cp.run
            );
        }
    }
}
