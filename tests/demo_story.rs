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
        perfdash::analyse::weekly::WeekSpec::Latest,
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

/// The weekly page shows, beside each open latency problem of the
/// archive's policy, the flame-graph attribution of its runs over the line (code
/// regression vs GC/lock, with the category shift) and links to the flame
/// page; and the accepted change on cart-checkout is drawn as accepted.
#[test]
fn the_demo_weekly_page_attributes_open_regressions() {
    let a = demo();
    let site = perfdash::render::render_site(a).unwrap();
    let page =
        |p: &str| String::from_utf8(site.get(p).unwrap_or_else(|| panic!("{p}")).to_vec()).unwrap();
    let weekly = page("weekly.html");
    let decide = &weekly[weekly.find("<section id=\"decide\"").unwrap()..];
    let decide = &decide[..decide.find("</section>").unwrap()];
    let review = perfdash::analyse::weekly::weekly_review(
        a,
        perfdash::analyse::weekly::WeekSpec::Latest,
        a.settings.alarms.policy,
    )
    .unwrap();
    let problems = perfdash::analyse::problems::open_problems(a, review.from, review.to);
    let mut attributed = 0;
    for p in problems
        .iter()
        .filter(|p| p.kind == perfdash::analyse::problems::ProblemKind::Latency)
    {
        let alarm = a
            .alarms
            .of(a.settings.alarms.policy)
            .find(|x| x.endpoint == p.endpoint && x.run == p.first_bad_run)
            .unwrap();
        let e = a.endpoints.iter().find(|e| e.id == p.endpoint).unwrap();
        let summary = alarm
            .over_runs
            .iter()
            .filter_map(|run| e.points.iter().find(|p| &p.run == run))
            .flat_map(|p| &p.profiles)
            .find_map(|pa| pa.attribution.as_ref().map(|x| x.summary.clone()));
        if let Some(summary) = summary {
            assert!(decide.contains(&summary), "{summary} on the page");
            attributed += 1;
        }
    }
    assert!(attributed > 0, "the demo's open regressions have profiles");
    assert!(decide.contains("code regression: DiscountRules.forLine +"));
    // Its flame links point at pages of the site.
    let links: Vec<&str> = decide
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
    assert!(index.contains("<td class=\"h-accepted\""));
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

/// A number written as `<strong>N</strong>` right before `words` on the page.
fn count_before(html: &str, words: &str) -> usize {
    let at = html
        .find(words)
        .unwrap_or_else(|| panic!("{words:?} on the page"));
    let before = &html[..at];
    let open = before.rfind("<strong>").expect("a <strong> count") + "<strong>".len();
    before[open..before[open..].find("</strong>").unwrap() + open]
        .parse()
        .unwrap()
}

/// Every count on the weekly page agrees with every other count, with the
/// page's own lists, and with `data/analysis.json`, whose alarms the test
/// counts again itself: one definition of the week, [Monday, next Monday).
#[test]
fn the_weekly_page_counts_agree_with_each_other_and_with_analysis_json() {
    use serde_json::Value;
    let a = demo();
    let site = perfdash::render::render_site(a).unwrap();
    let html = String::from_utf8(site.get("weekly.html").unwrap().to_vec()).unwrap();
    let json: Value = serde_json::from_slice(site.get("data/analysis.json").unwrap()).unwrap();
    let weekly = &json["weekly"];
    let (from, to) = (
        weekly["from"].as_str().unwrap(),
        weekly["to"].as_str().unwrap(),
    );
    assert_eq!(weekly["week"], "2026-W48", "the ISO week of the latest run");
    assert_eq!((from, to), ("2026-11-23T00:00:00Z", "2026-11-30T00:00:00Z"));
    let in_week = |t: &str| from <= t && t < to;
    let policy = weekly["policy"].as_str().unwrap();

    // Open problems: the headline, the list and the JSON say the same, and
    // the JSON's latency problems are exactly the policy's alarms still
    // open at the week's end that no noise/accepted label settled.
    let problems = weekly["open_problems"].as_array().unwrap();
    assert_eq!(count_before(&html, " open problem"), problems.len());
    assert_eq!(html.matches("<li class=\"problem ").count(), problems.len());
    let run_start = |id: &str| {
        json["runs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == id)
            .map(|r| r["started_at"].as_str().unwrap().to_string())
    };
    // Improvements: the headline, the list and the JSON agree, and each
    // is an endpoint with a run of the week judged an improvement.
    let improvements = weekly["improvements"].as_array().unwrap();
    assert_eq!(count_before(&html, " improvement"), improvements.len());
    assert_eq!(
        html.matches("<li class=\"improvement\">").count(),
        improvements.len()
    );
    for i in improvements {
        let run = i["first_run"].as_str().unwrap();
        let started = run_start(run).unwrap();
        assert!(in_week(&started), "{i}");
        let point = json["endpoints"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["id"] == i["endpoint"])
            .and_then(|e| e["runs"].as_array())
            .and_then(|ps| ps.iter().find(|p| p["run"] == run))
            .unwrap_or_else(|| panic!("{i}: its run in analysis.json"));
        assert_eq!(point["verdict"], "improvement", "{i}");
    }
    let mut open: Vec<(String, String)> = json["alarms"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["policy"] == policy && x["state"] != "reverted")
        .filter(|x| x["started_at"].as_str().unwrap() < to)
        .filter(|x| {
            x["closed_run"]
                .as_str()
                .and_then(run_start)
                .is_none_or(|closed| closed.as_str() >= to)
        })
        .filter(|x| !matches!(x["label"].as_str(), Some("noise" | "accepted")))
        .map(|x| {
            (
                x["endpoint"].as_str().unwrap().into(),
                x["run"].as_str().unwrap().into(),
            )
        })
        .collect();
    open.sort();
    let mut listed: Vec<(String, String)> = problems
        .iter()
        .filter(|p| p["kind"] == "latency")
        .map(|p| {
            (
                p["endpoint"].as_str().unwrap().into(),
                p["first_bad_run"].as_str().unwrap().into(),
            )
        })
        .collect();
    listed.sort();
    assert_eq!(listed, open);
    // The bundled story: price-quote's open regression and
    // inventory-reserve's capacity regression, each on the page with its
    // current ratio, age, suspect commits and owner (or "no owner").
    for (kind, endpoint) in [
        ("latency", "price-quote"),
        ("capacity", "inventory-reserve"),
    ] {
        let p = problems
            .iter()
            .find(|p| p["kind"] == kind && p["endpoint"] == endpoint)
            .unwrap_or_else(|| panic!("{kind} problem of {endpoint}: {problems:?}"));
        let ratio = format!("×{:.2}", p["ratio"].as_f64().unwrap());
        let runs = p["runs"].as_u64().unwrap();
        let item = html
            .split("<li class=\"problem ")
            .find(|li| {
                li.contains(&format!("{ratio}</strong>")) && li.contains(&format!("{runs} runs"))
            })
            .unwrap_or_else(|| panic!("{kind} {endpoint} {ratio} on the page"));
        assert!(item.contains("class=\"suspect\""), "{item}");
        assert!(item.contains("class=\"commit\""), "{item}");
        assert!(
            item.contains("owner</small>") || item.contains("no owner"),
            "{item}"
        );
    }

    // New alarms (raised in the week: an alarm dated at its change's first
    // run may start in the week before): the JSON keeps every policy's
    // count for the back-test;
    // the page lists the site's policy alone, one row per endpoint and
    // suspect commit range, and its count is the JSON's groups.
    for p in Policy::ALL {
        let name = p.name();
        let counted = json["alarms"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|x| x["policy"] == name && in_week(x["raised_at"].as_str().unwrap()))
            .count();
        assert_eq!(
            weekly["new_alarms"][name].as_u64().unwrap() as usize,
            counted,
            "{name}"
        );
    }
    let groups = weekly["new_alarm_groups"].as_array().unwrap();
    let of_policy: Vec<&Value> = json["alarms"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["policy"] == policy && in_week(x["raised_at"].as_str().unwrap()))
        .collect();
    assert_eq!(
        groups
            .iter()
            .map(|g| g["alarm_runs"].as_array().unwrap().len())
            .sum::<usize>(),
        of_policy.len(),
        "every alarm of the policy is in one group"
    );
    assert_eq!(count_before(&html, " new alarm"), groups.len());
    assert!(html.contains(&format!("New alarms this week: {}</h2>", groups.len())));
    match html.find("<table class=\"new-alarms\"") {
        Some(at) => {
            let table = &html[at..];
            let table = &table[..table.find("</table>").unwrap()];
            // One row per endpoint; its other suspect ranges beneath.
            let endpoints: std::collections::BTreeSet<&str> = groups
                .iter()
                .map(|g| g["endpoint"].as_str().unwrap())
                .collect();
            let rows = table.matches("<tr><th scope=\"row\">").count();
            assert_eq!(rows, endpoints.len(), "one row per endpoint");
            assert_eq!(
                rows + table.matches("<small class=\"also\">").count(),
                groups.len(),
                "every group on its endpoint's row"
            );
        }
        None => {
            assert!(groups.is_empty());
            assert!(html.contains(&format!("The {policy} policy raised no alarm this week.")));
        }
    }
    // Other policies appear only in the back-test (the folded policy table).
    let before_backtest = &html[..html.find("id=\"policies\"").unwrap()];
    for p in Policy::ALL.iter().filter(|p| p.name() != policy) {
        assert!(
            !before_backtest.contains(&format!(">{}<", p.name())),
            "{} outside the back-test",
            p.name()
        );
    }
    let current = &html[html
        .find("<tr class=\"current\">")
        .expect("this week's row")..];
    let current = &current[..current.find("</tr>").unwrap()];
    assert!(current.contains(">2026-W48<"), "{current}");
    let cells: Vec<usize> = current
        .split("<td>")
        .skip(1)
        .map(|c| c[..c.find([' ', '<']).unwrap()].parse().unwrap())
        .collect();
    assert_eq!(
        cells,
        [weekly["new_alarms"][policy].as_u64().unwrap() as usize],
        "the false-positive table's row of this week: the site's policy"
    );

    // Untriaged: the headline, the section and the JSON.
    let untriaged = weekly["untriaged"].as_u64().unwrap() as usize;
    assert_eq!(count_before(&html, " untriaged</a>"), untriaged);
    assert!(html.contains(&format!("Untriaged: {untriaged}</h2>")));
}

/// `--week 2026-W47` reviews that week only: the price-quote regression
/// that began on Friday 2026-11-20 is new there, and not new again in
/// W48, the default.
#[test]
fn a_week_is_half_open_so_an_alarm_is_new_in_exactly_one_week() {
    use perfdash::analyse::weekly::{WeekSpec, weekly_review};
    let a = demo();
    let policy = a.settings.alarms.policy;
    let w47 = weekly_review(a, "2026-W47".parse().unwrap(), policy).unwrap();
    let w48 = weekly_review(a, WeekSpec::Latest, policy).unwrap();
    assert_eq!(
        (w47.title.as_str(), w48.title.as_str()),
        ("2026-W47", "2026-W48")
    );
    assert_eq!(w47.to, w48.from);
    let new = |r: &perfdash::analyse::weekly::WeeklyReview| -> Vec<String> {
        r.new_alarms
            .iter()
            .map(|x| format!("{}@{}", x.alarm.endpoint, x.alarm.run))
            .collect()
    };
    assert!(
        new(&w47).contains(&"price-quote@2026-11-20T0302Z".to_string()),
        "{:?}",
        new(&w47)
    );
    assert!(
        !new(&w48).iter().any(|x| new(&w47).contains(x)),
        "{:?} {:?}",
        new(&w47),
        new(&w48)
    );
    for p in Policy::ALL {
        let both = a
            .alarms
            .of(p)
            .filter(|x| w47.from <= x.started_at && x.started_at < w48.to)
            .count();
        assert_eq!(w47.new_by_policy[&p] + w48.new_by_policy[&p], both, "{p:?}");
    }
}

/// A comparison lists the most severe first: in "1.9.0 → latest" the one
/// regression was row 11 of 12 in endpoint order (issue 34); now failed
/// and regressed endpoints lead, then the rest by verdict.
#[test]
fn comparison_pages_list_the_most_severe_first() {
    let site = perfdash::render::render_site(demo()).unwrap();
    let rank = |v: &str| match v {
        "failed" => 0,
        "regression" => 1,
        "inconclusive" => 2,
        "removed" => 3,
        "added" => 4,
        "improvement" => 5,
        "same" => 6,
        other => panic!("verdict {other}"),
    };
    let mut moved = 0;
    let mut pages = 0;
    for (path, bytes) in site.files() {
        if !(path.starts_with("compare/") && path.ends_with(".html")) {
            continue;
        }
        pages += 1;
        let html = std::str::from_utf8(bytes).unwrap();
        let table = &html[html.find("<tbody>").unwrap()..html.find("</tbody>").unwrap()];
        let rows: Vec<(&str, &str)> = table
            .split("<tr data-verdict=\"")
            .skip(1)
            .map(|r| {
                let verdict = &r[..r.find('"').unwrap()];
                let anchor = &r[r.find("href=\"#").unwrap() + 7..];
                (verdict, &anchor[..anchor.find('"').unwrap()])
            })
            .collect();
        assert!(
            rows.windows(2).all(|w| rank(w[0].0) <= rank(w[1].0)),
            "{path}: {rows:?}"
        );
        // The regression leads where endpoint order would have put it later.
        let mut by_name: Vec<&str> = rows.iter().map(|r| r.1).collect();
        by_name.sort_unstable();
        if rows.first().is_some_and(|r| r.0 == "regression") && by_name[0] != rows[0].1 {
            moved += 1;
        }
    }
    assert!(pages > 0 && moved > 0, "{pages} pages, {moved} reordered");
}
