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
//! not hold. The key hashes that value's `Debug` form, which `derive`
//! writes from every field (a field added later enters the key by
//! itself; floats print exactly, `Arc`s print what they hold, and a
//! `crate::hash::Digested` value — a profile's stacks — the digest of its
//! whole form, computed once per build), together
//! with a salt naming the perfdash that renders (its version and its
//! binary: templates and code are compiled in) and what the page kind is.
//! What the second step computes (layouts, colours, formats) is code,
//! covered by the salt.
//!
//! Where the `Debug` form is too slow to write for every page of every
//! build (281k rounds, 56k run points at 120 endpoints × 3 years, 469 run
//! pages of short strings), a value writes a digest of its data instead,
//! nothing formatted: [`Serialised`] (a run page's template value, by
//! everything it serialises),
//! [`RawRounds`] (the run record's encoding), and [`PointKey`]
//! (`crate::hash::serde_digest` of a run point's fields, the ones it does
//! not serialise included, and the `Debug` form of its profiles; its
//! fields listed by destructuring so that a new field does not compile
//! until it is placed).
//!
//! A value whose `Debug` form is not stable between runs (a `HashMap`)
//! would only make keys miss: never a wrong page, only a page rendered.

use std::fmt::{Debug, Write as _};

use crate::analyse::RunPoint;
use crate::hash::DebugHasher;
use crate::model::Round;

/// The key of a page of kind `kind` made from `inputs`, by the perfdash
/// `salt` names.
pub fn key(salt: u128, kind: &str, inputs: &dyn Debug) -> u128 {
    let mut hasher = DebugHasher::new();
    hasher.update(&salt.to_le_bytes());
    hasher.update(kind.as_bytes());
    hasher.update(&[0]);
    // Writing into a hasher never fails.
    let _ = write!(hasher, "{inputs:?}");
    hasher.digest()
}

/// Rounds in a page memo key as a digest of their bytes in the run
/// record's encoding (`ingest::record::round_bytes`: every field, float
/// bits, decodable), not their `derive`d `Debug` form: writing every
/// figure of 281k rounds in shortest decimal only to hash it cost more
/// than the pages it keyed. A run page and the run's data file hold the
/// same rounds: `render::context::Ctx::raw_rounds` digests each point's
/// once per build.
#[derive(Clone, Copy)]
pub struct RawRounds<'a> {
    rounds: &'a [Round],
    digest: u128,
}

impl<'a> RawRounds<'a> {
    /// `rounds` with their digest (a page gets them through
    /// `Ctx::raw_rounds`, which digests each point's rounds once per
    /// build).
    pub fn of(rounds: &'a [Round]) -> RawRounds<'a> {
        let mut buf = Vec::with_capacity(rounds.len() * 128);
        for r in rounds {
            crate::ingest::record::round_bytes(&mut buf, r);
        }
        RawRounds {
            rounds,
            digest: xxhash_rust::xxh3::xxh3_128(&buf),
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

impl Debug for RawRounds<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RawRounds({}, {:032x})", self.rounds.len(), self.digest)
    }
}

/// A value in a page memo key by the digest of everything it serialises
/// ([`crate::hash::serde_digest`]), not by its `Debug` form: a run page's
/// template value is a few hundred short strings per page, and `Debug`
/// escapes a string one character at a time (7 % of the instructions of
/// a build after one new run at 120 endpoints × 3 years went to the run
/// pages' keys). `derive(Serialize)` writes every field, as `derive(Debug)`
/// does: a field added later enters the key by itself.
pub struct Serialised<'a, T: serde::Serialize>(pub &'a T);

impl<T: serde::Serialize> Debug for Serialised<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Serialised({:032x})", crate::hash::serde_digest(self.0))
    }
}

/// A run point in a page memo key: the digest
/// ([`crate::hash::serde_digest`], nothing formatted) of everything it
/// serialises and of the fields it does not, and the `derive`d `Debug`
/// form of its profiles (which skip some of theirs when serialised). The
/// fields are listed by destructuring, so a field added to `RunPoint` does
/// not compile until it is placed here.
pub struct PointKey<'a>(pub &'a RunPoint);

impl Debug for PointKey<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let RunPoint {
            // Serialised:
            run: _,
            started_at: _,
            rounds: _,
            round_p99_ms: _,
            median_p99_ms: _,
            baseline_p99_ms: _,
            ratio: _,
            verdict: _,
            baseline_runs: _,
            not_comparable: _,
            no_baseline_reason: _,
            figures: _,
            baseline_error_rate: _,
            baseline_throughput_rps: _,
            throughput_not_judged: _,
            regressed: _,
            accepted_change: _,
            evidence: _,
            // Not serialised, or not whole:
            run_index,
            commit,
            decided_from,
            untrusted_time,
            series,
            profiles,
        } = self.0;
        // Only the profiles are formatted (they hold digests, and are
        // few): the figures behind the verdict as floats in shortest
        // decimal were most of the cost of the year pages' keys.
        write!(
            f,
            "RunPoint({:032x}, {:?})",
            crate::hash::serde_digest(&(
                self.0,
                (run_index, commit, decided_from, untrusted_time, series)
            )),
            profiles
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Read through `Debug` only, as the key reads them.
    #[allow(dead_code)]
    #[derive(Debug)]
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
        let k = |p: &RunPoint| key(1, "endpoint-year", &PointKey(p));
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
        ];
        for (field, change) in changed {
            let mut p = point.clone();
            change(&mut p);
            assert_ne!(k(&p), base, "{field}");
        }
    }
}
