//! Keys of the page memo (`crate::write::memo`): a page that was made from
//! exactly the same inputs by the same perfdash is not rendered again, its
//! previous file is linked into the new site.
//!
//! **Why a key is complete.** A memoised page is made in two steps: a
//! function gathers, from the analysis, one value holding everything the
//! page shows (its *inputs*: the template's own struct, or the slices of
//! the analysis and the resolved links a renderer is given), and a second
//! function makes the files from that value alone — it takes no `Ctx`,
//! no analysis, no settings, so it cannot read anything the value does
//! not hold. The key is the digest of that value's serde form
//! (`crate::cache::key`, the one way perfdash makes keys), which `derive`
//! writes from every field (a field added later enters the key by
//! itself), together with a salt naming the perfdash that renders (its
//! version and its binary: templates and code are compiled in) and what
//! the page kind is. What the second step computes (layouts, colours,
//! formats) is code, covered by the salt.
//!
//! Values the analysis shares between many pages enter a key as their
//! own digest, computed once per build, so that no page's key goes over
//! them again: [`RawRounds`] (a point's rounds), [`PointKey`] (a run
//! point, the fields it does not serialise included) and [`ProfileKey`]
//! (a profile's analysis with the digests of its stacks and its
//! baseline's). Their fields are listed by destructuring so that a new
//! field does not compile until it is placed.

use crate::analyse::RunPoint;
use crate::analyse::attribution::{ProfileAnalysis, ProfileBaseline};
use crate::cache::key::serde_digest;
use crate::model::Round;

/// The key of a page of kind `kind` made from `inputs`, by the perfdash
/// `salt` names.
pub fn key(salt: u128, kind: &str, inputs: &impl serde::Serialize) -> u128 {
    crate::cache::key::key(salt, kind, inputs)
}

/// Rounds in a page memo key as the digest of every field of every round
/// (`Ctx::raw_rounds`: once per build; a run page and the run's data file
/// hold the same rounds, and a year page's points hold them again).
#[derive(Clone, Copy, Debug)]
pub struct RawRounds<'a> {
    rounds: &'a [Round],
    digest: u128,
}

impl<'a> RawRounds<'a> {
    /// `rounds` with their digest (a page gets them through
    /// `Ctx::raw_rounds`, which digests each point's rounds once per
    /// build).
    pub fn of(rounds: &'a [Round]) -> RawRounds<'a> {
        RawRounds {
            rounds,
            digest: serde_digest(&rounds),
        }
    }

    /// `rounds` with the digest [`RawRounds::of`] gave them before.
    pub(super) fn known(rounds: &'a [Round], digest: u128) -> RawRounds<'a> {
        RawRounds { rounds, digest }
    }

    pub(super) fn digest(&self) -> u128 {
        self.digest
    }

    pub fn rounds(&self) -> &'a [Round] {
        self.rounds
    }
}

/// As its key: the count and the digest.
impl serde::Serialize for RawRounds<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (self.rounds.len() as u64, self.digest).serialize(s)
    }
}

/// A run point in a page memo key: the digest of every field, the ones it
/// does not serialise included, with its rounds as the digest
/// [`RawRounds`] gives them (`Ctx::raw_rounds`: once per build, shared
/// with the run pages) and its profiles as [`ProfileKey`]s (they skip
/// their stacks when serialised). The fields are listed by destructuring,
/// so a field added to `RunPoint` does not compile until it is placed
/// here.
pub struct PointKey<'a> {
    pub point: &'a RunPoint,
    pub rounds: RawRounds<'a>,
}

impl PointKey<'_> {
    pub fn digest(&self) -> u128 {
        let RunPoint {
            run,
            started_at,
            rounds,
            round_p99_ms,
            median_p99_ms,
            baseline_p99_ms,
            ratio,
            verdict,
            baseline_runs,
            not_comparable,
            no_baseline_reason,
            load_change,
            early_runs,
            figures,
            baseline_error_rate,
            baseline_throughput_rps,
            throughput_not_judged,
            regressed,
            accepted_change,
            evidence,
            run_index,
            commit,
            decided_from,
            untrusted_time,
            series,
            profiles,
            environment_suspect,
        } = self.point;
        debug_assert!(std::ptr::eq(&rounds[..], self.rounds.rounds()));
        let profiles: Vec<u128> = profiles.iter().map(profile_digest).collect();
        serde_digest(&(
            (run, started_at, self.rounds, round_p99_ms, median_p99_ms),
            (baseline_p99_ms, ratio, verdict, baseline_runs),
            (not_comparable, no_baseline_reason, figures),
            (load_change, early_runs),
            (baseline_error_rate, baseline_throughput_rps),
            (throughput_not_judged, regressed, accepted_change, evidence),
            (run_index, commit, decided_from, untrusted_time, series),
            (profiles, environment_suspect),
        ))
    }
}

impl serde::Serialize for PointKey<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.digest().serialize(s)
    }
}

/// A profile's analysis in a page memo key: the digest of everything it
/// serialises and of its stacks and its baseline's (which it does not
/// serialise; their own digests, computed once per build). Fields listed
/// by destructuring, as for [`PointKey`].
#[derive(Clone, Copy, Debug)]
pub struct ProfileKey<'a>(pub &'a ProfileAnalysis);

impl std::ops::Deref for ProfileKey<'_> {
    type Target = ProfileAnalysis;
    fn deref(&self) -> &ProfileAnalysis {
        self.0
    }
}

impl serde::Serialize for ProfileKey<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        profile_digest(self.0).serialize(s)
    }
}

/// Profiles in a key, each as its [`ProfileKey`] (for
/// `#[serde(serialize_with)]`).
pub fn profile_keys<S: serde::Serializer>(
    profiles: &&[ProfileAnalysis],
    s: S,
) -> Result<S::Ok, S::Error> {
    s.collect_seq(profiles.iter().map(ProfileKey))
}

fn profile_digest(pa: &ProfileAnalysis) -> u128 {
    let ProfileAnalysis {
        // Serialised:
        kind: _,
        source: _,
        format: _,
        units: _,
        total: _,
        samples: _,
        shares: _,
        idle_pct: _,
        busy_total: _,
        busy_shares: _,
        gc_in_mutator_pct: _,
        normalisation: _,
        baseline,
        attribution: _,
        grown_frames: _,
        // Not serialised:
        profile,
        comparable,
    } = pa;
    let baseline_stacks = baseline.as_ref().map(|b| {
        let ProfileBaseline {
            run: _,
            source: _,
            total: _,
            samples: _,
            idle_pct: _,
            changes: _,
            profile,
            comparable,
        } = b;
        (profile.digest(), comparable.digest())
    });
    serde_digest(&(pa, (profile.digest(), comparable.digest()), baseline_stacks))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Serialize)]
    struct Inputs {
        title: String,
        share: f64,
    }

    #[test]
    fn a_key_changes_with_any_field_the_kind_and_the_salt() {
        let a = Inputs {
            title: "orders".into(),
            share: 0.1,
        };
        let k = key(1, "flame", &a);
        assert_eq!(k, key(1, "flame", &a), "deterministic");
        let b = Inputs {
            share: 0.1 + f64::EPSILON,
            ..a
        };
        assert_ne!(k, key(1, "flame", &b), "a float's last bit");
        let a = Inputs {
            title: "orders".into(),
            share: 0.1,
        };
        assert_ne!(k, key(2, "flame", &a), "another perfdash");
        assert_ne!(k, key(1, "run", &a), "another kind of page");
        // Long values cross the buffer; the key is still of the whole.
        let long = |c| Inputs {
            title: format!("{}{c}", "x".repeat(50_000)),
            share: 0.0,
        };
        assert_ne!(key(1, "flame", &long('a')), key(1, "flame", &long('b')));
    }

    #[test]
    fn raw_rounds_key_every_field_of_a_round() {
        use crate::model::{CrossCheck, RoundStats, SourceFormat};
        let round = Round::new(
            1,
            "runs/a/orders/round-1.json",
            SourceFormat::K6HandleSummary,
            RoundStats {
                count: Some(100),
                throughput_rps: Some(10.0),
                mean_ms: Some(12.0),
                stddev_ms: None,
                min_ms: Some(1.0),
                p50_ms: Some(10.0),
                p90_ms: Some(20.0),
                p95_ms: Some(25.0),
                p99_ms: 40.0,
                max_ms: Some(50.0),
                error_rate: Some(0.0),
            },
        );
        let k = |r: &Round| key(1, "run-rounds", &RawRounds::of(std::slice::from_ref(r)));
        let base = k(&round);
        assert_eq!(base, k(&round.clone()));
        type Change = Box<dyn Fn(&mut Round)>;
        let changed: Vec<(&str, Change)> = vec![
            ("number", Box::new(|r| r.number = 2)),
            ("label", Box::new(|r| r.label = Some(String::new()))),
            ("source", Box::new(|r| r.source.push('x'))),
            (
                "format",
                Box::new(|r| r.format = SourceFormat::K6SummaryExport),
            ),
            ("count", Box::new(|r| r.stats.count = None)),
            ("throughput", Box::new(|r| r.stats.throughput_rps = None)),
            (
                "mean",
                Box::new(|r| r.stats.mean_ms = Some(12.000000000000002)),
            ),
            ("stddev", Box::new(|r| r.stats.stddev_ms = Some(0.0))),
            ("min", Box::new(|r| r.stats.min_ms = Some(-0.0))),
            ("p50", Box::new(|r| r.stats.p50_ms = None)),
            ("p90", Box::new(|r| r.stats.p90_ms = Some(21.0))),
            ("p95", Box::new(|r| r.stats.p95_ms = Some(26.0))),
            ("p99", Box::new(|r| r.stats.p99_ms = 41.0)),
            ("max", Box::new(|r| r.stats.max_ms = None)),
            ("error rate", Box::new(|r| r.stats.error_rate = Some(0.5))),
            ("warm-up", Box::new(|r| r.warmup_s = Some(30.0))),
            (
                "cross-check",
                Box::new(|r| {
                    r.cross_check = Some(Box::new(CrossCheck {
                        source: "s".into(),
                        format: SourceFormat::K6HandleSummary,
                        summary_p99_ms: 1.0,
                        raw_untrimmed_p99_ms: 1.0,
                        agrees: true,
                    }))
                }),
            ),
        ];
        for (field, change) in changed {
            let mut r = round.clone();
            change(&mut r);
            assert_ne!(k(&r), base, "{field}");
        }
        // A label and a source that write the same text without lengths.
        let mut a = round.clone();
        a.label = Some("ab".into());
        a.source = "c".into();
        let mut b = round.clone();
        b.label = Some("a".into());
        b.source = "bc".into();
        assert_ne!(k(&a), k(&b));
    }

    #[test]
    fn a_point_key_changes_with_the_fields_a_point_does_not_serialise() {
        use crate::test_support::archive_of;
        let archive = archive_of(&[("orders", vec![vec![10.0; 5]; 4])]);
        let analysis = crate::analyse::analyse(&archive, Vec::new());
        let point = analysis.endpoints[0].points.last().unwrap().clone();
        let k = |p: &RunPoint| {
            let rounds = RawRounds::of(&p.rounds);
            key(1, "endpoint-year", &PointKey { point: p, rounds })
        };
        let base = k(&point);
        assert_eq!(base, k(&point.clone()));
        type Change = Box<dyn Fn(&mut RunPoint)>;
        let changed: Vec<(&str, Change)> = vec![
            ("run index", Box::new(|p| p.run_index += 1)),
            ("commit", Box::new(|p| p.commit = Some("abc".into()))),
            (
                "threshold",
                Box::new(|p| p.decided_from.threshold_ratio += f64::EPSILON),
            ),
            (
                "error rate line",
                Box::new(|p| p.decided_from.lines.max_error_rate = 0.5),
            ),
            (
                "resolution",
                Box::new(|p| {
                    p.decided_from.resolution = crate::analyse::verdict::Resolution::LocustBuckets
                }),
            ),
            ("untrusted time", Box::new(|p| p.untrusted_time = true)),
            (
                "series",
                Box::new(|p| p.series.0.push(("region".into(), None))),
            ),
            ("a serialised field", Box::new(|p| p.median_p99_ms += 1.0)),
            (
                "a round",
                Box::new(|p| {
                    let mut rounds = p.rounds.to_vec();
                    rounds[0].stats.p99_ms += 1.0;
                    p.rounds = rounds.into();
                }),
            ),
        ];
        for (field, change) in changed {
            let mut p = point.clone();
            change(&mut p);
            assert_ne!(k(&p), base, "{field}");
        }
    }

    /// A profile's stacks and its baseline's are not serialised: the key
    /// holds their digests. Run on the bundled archive's profiles.
    #[test]
    fn a_profile_key_changes_with_its_stacks_and_its_baselines() {
        use crate::cache::key::Digested;
        use std::sync::Arc;
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("archive");
        let loaded = crate::ingest::load_archive(&root).unwrap();
        let analysis = crate::analyse::analyse(&loaded.archive, Vec::new());
        let (point, pa) = analysis
            .endpoints
            .iter()
            .flat_map(|e| &e.points)
            .find_map(|p| {
                let pa = p.profiles.iter().find(|pa| pa.baseline.is_some())?;
                Some((p, pa))
            })
            .expect("the bundled archive has a profile with a baseline");
        let pk = |pa: &ProfileAnalysis| key(1, "flame", &ProfileKey(pa));
        let point_key = |pa: &ProfileAnalysis| {
            let mut p = point.clone();
            p.profiles = vec![pa.clone()];
            let rounds = RawRounds::of(&p.rounds);
            key(1, "endpoint-year", &PointKey { point: &p, rounds })
        };
        let base = (pk(pa), point_key(pa));
        assert_eq!(base, (pk(&pa.clone()), point_key(&pa.clone())));
        fn with_stack(profile: &crate::profile::Profile) -> Digested<crate::profile::Profile> {
            let mut more = profile.clone();
            more.add("main;one-more-frame", 1.0);
            Digested::new(Arc::new(more))
        }
        type Change = Box<dyn Fn(&mut ProfileAnalysis)>;
        let changed: Vec<(&str, Change)> = vec![
            (
                "stacks",
                Box::new(|pa| pa.profile = with_stack(&pa.profile)),
            ),
            (
                "normalised stacks",
                Box::new(|pa| {
                    let mut c = (*pa.comparable).clone();
                    c.total += 1.0;
                    pa.comparable = Digested::new(Arc::new(c));
                }),
            ),
            (
                "baseline stacks",
                Box::new(|pa| {
                    let b = pa.baseline.as_mut().unwrap();
                    b.profile = with_stack(&b.profile);
                }),
            ),
            (
                "baseline normalised stacks",
                Box::new(|pa| {
                    let b = pa.baseline.as_mut().unwrap();
                    let mut c = (*b.comparable).clone();
                    c.total += 1.0;
                    b.comparable = Digested::new(Arc::new(c));
                }),
            ),
            ("a serialised field", Box::new(|pa| pa.idle_pct += 0.5)),
        ];
        for (field, change) in changed {
            let mut changed = pa.clone();
            change(&mut changed);
            assert_ne!(pk(&changed), base.0, "{field}");
            assert_ne!(point_key(&changed), base.1, "{field} in a point's key");
        }
    }
}
