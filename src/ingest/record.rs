//! A run's rounds kept as one compact binary record in its cache file, and
//! found again by the `stat` fingerprint of the files they were read from:
//! a rebuild (or a `check`) that finds every file of a run as it was does
//! not open any of them.
//!
//! The fingerprint of a run is the xxh3-128 of, for every file it reads
//! (`run.toml` by content; round and step files by `stat`): the path in the
//! archive, the size, the modification and **change** times in
//! nanoseconds, the inode and the device, plus the perfdash version and
//! every setting that decides the rounds. Like git's index:
//!
//! * An edit always moves the change time (ctime), which no user call can
//!   set back; `touch -r` restores the modification time only. A file
//!   replaced by another (a rename, a restore from backup) has another
//!   inode. A copied archive (`cp -a`) has new inodes and ctimes: its first
//!   build reads every file by content (the per-file cache still serves
//!   it) and records the new fingerprints.
//! * "Racily clean" files: file times have a coarse clock (a few ms), so a
//!   file written again within one tick of being fingerprinted could keep
//!   its `stat`. A record is therefore kept only when every fingerprinted
//!   file's times are at least [`SETTLED`] older than the build; the runs
//!   being written right now are read by content every time.
//! * A run whose reading produced any diagnostic gets no record: its files
//!   are read, and their problems reported, on every build.
//!
//! The record holds exactly what [`super::read_run`] derives from those
//! files (each endpoint's chosen rounds, each step series), encoded by
//! hand in a small fixed layout (little-endian numbers, length-prefixed
//! strings): at 120 endpoints × 468 runs the JSON entries took a third of
//! a warm `check` to parse, and most of that was decimal floats. Floats are
//! stored as their bits, so a record gives back exactly what was read.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use xxhash_rust::xxh3::Xxh3;

use crate::le_bytes::LeReader;
use crate::model::{CrossCheck, Round, RoundStats, SourceFormat, StepSeries};

/// How much older than the build every fingerprinted file's times must be
/// for a run's record to be kept (see the module notes on racy files).
pub(crate) const SETTLED: Duration = Duration::from_secs(2);

/// Bump when the layout below or the meaning of a record changes.
const RECORD_FORMAT: u32 = 1;

/// Builds a run's fingerprint from the files it reads.
pub(crate) struct Fingerprinter {
    hasher: Xxh3,
    /// Files changed at or after this moment make the fingerprint unsafe.
    settled_before: SystemTime,
    settled: bool,
}

impl Fingerprinter {
    /// `settings`: everything besides the files that decides the run's
    /// rounds (serialised by the caller).
    pub(crate) fn new(build_started: SystemTime, settings: &[u8]) -> Fingerprinter {
        let mut hasher = Xxh3::new();
        let version = format!(
            "perfdash {} record {RECORD_FORMAT}",
            env!("CARGO_PKG_VERSION")
        );
        add_bytes(&mut hasher, version.as_bytes());
        add_bytes(&mut hasher, settings);
        Fingerprinter {
            hasher,
            settled_before: build_started
                .checked_sub(SETTLED)
                .unwrap_or(SystemTime::UNIX_EPOCH),
            settled: true,
        }
    }

    /// A file known by its content (`run.toml`, read anyway).
    pub(crate) fn add_content(&mut self, rel: &str, bytes: &[u8]) {
        add_bytes(&mut self.hasher, b"content");
        add_bytes(&mut self.hasher, rel.as_bytes());
        add_bytes(&mut self.hasher, bytes);
    }

    /// A file known by its `stat` (`None`: it could not be stat'ed, so the
    /// run gets no record).
    pub(crate) fn add_stat(&mut self, rel: &str, stamp: Option<&crate::stat_stamp::Stamp>) {
        let Some(stamp) = stamp else {
            self.settled = false;
            return;
        };
        if stamp.changed >= self.settled_before {
            self.settled = false;
        }
        // The same bytes as `add_bytes` of the tag and the path, then the
        // numbers, handed to the hasher at once: eleven small updates per
        // file were a twentieth of a warm `check` (~300k files).
        const MAX_REL: usize = 256;
        let rel = rel.as_bytes();
        if rel.len() > MAX_REL {
            add_bytes(&mut self.hasher, b"stat");
            add_bytes(&mut self.hasher, rel);
            for n in stamp.numbers {
                self.hasher.update(&n.to_le_bytes());
            }
            return;
        }
        let mut buf = [0u8; 8 + 4 + 8 + MAX_REL + 7 * 8];
        let mut at = 0;
        let mut put = |bytes: &[u8]| {
            buf[at..at + bytes.len()].copy_from_slice(bytes);
            at += bytes.len();
        };
        put(&4u64.to_le_bytes());
        put(b"stat");
        put(&(rel.len() as u64).to_le_bytes());
        put(rel);
        for n in stamp.numbers {
            put(&n.to_le_bytes());
        }
        self.hasher.update(&buf[..at]);
    }

    /// A file that was looked for and is not there (a step-load run's
    /// optional `resources.csv`).
    pub(crate) fn add_absent(&mut self, rel: &str) {
        add_bytes(&mut self.hasher, b"absent");
        add_bytes(&mut self.hasher, rel.as_bytes());
    }

    /// The fingerprint, or `None` when some file changed too recently (or
    /// could not be stat'ed) for its `stat` to be trusted.
    pub(crate) fn finish(self) -> Option<u128> {
        self.settled.then(|| self.hasher.digest128())
    }
}

fn add_bytes(hasher: &mut Xxh3, bytes: &[u8]) {
    hasher.update(&(bytes.len() as u64).to_le_bytes());
    hasher.update(bytes);
}

/// What a record gives back: the rounds and step series of one run.
#[derive(Debug, Default)]
pub(crate) struct RunRecord {
    pub endpoints: BTreeMap<String, Vec<Round>>,
    pub capacity: BTreeMap<String, StepSeries>,
}

/// The record's bytes: the fingerprint, then the rounds and step series.
pub(crate) fn encode(fingerprint: u128, record: &RunRecord) -> Option<Vec<u8>> {
    let mut w = Writer(Vec::with_capacity(64 + 160 * record.endpoints.len() * 5));
    w.0.extend_from_slice(&fingerprint.to_le_bytes());
    w.len(record.endpoints.len());
    for (endpoint, rounds) in &record.endpoints {
        w.str(endpoint);
        w.len(rounds.len());
        for round in rounds {
            w.round(round);
        }
    }
    w.len(record.capacity.len());
    for (endpoint, series) in &record.capacity {
        w.str(endpoint);
        // Step files are rare; JSON keeps their layout in one place.
        let json = serde_json::to_string(series).ok()?;
        let back: StepSeries = serde_json::from_str(&json).ok()?;
        if back != *series {
            return None; // would not come back equal (a NaN)
        }
        w.str(&json);
    }
    Some(w.0)
}

/// The record in `bytes` when it was made for `fingerprint`; `Err` when the
/// bytes are not a whole record (damaged).
pub(crate) fn decode(bytes: &[u8], fingerprint: u128) -> Result<Option<RunRecord>, String> {
    let mut r = LeReader::new(bytes);
    let stored = r.u128()?;
    if stored != fingerprint {
        return Ok(None);
    }
    let mut record = RunRecord::default();
    for _ in 0..r.len()? {
        let endpoint = r.string()?;
        let n = r.len()?;
        let mut rounds = Vec::with_capacity(n.min(1 << 16));
        for _ in 0..n {
            rounds.push(r.round()?);
        }
        record.endpoints.insert(endpoint, rounds);
    }
    for _ in 0..r.len()? {
        let endpoint = r.string()?;
        let series = serde_json::from_str(&r.string()?).map_err(|e| e.to_string())?;
        record.capacity.insert(endpoint, series);
    }
    if r.remaining() != 0 {
        return Err(format!("{} bytes after the record", r.remaining()));
    }
    Ok(Some(record))
}

/// The code of each source format in a record. Exhaustive both ways: a new
/// format does not compile until it has a code.
fn format_code(format: SourceFormat) -> u8 {
    match format {
        SourceFormat::K6HandleSummary => 0,
        SourceFormat::K6SummaryExport => 1,
        SourceFormat::K6MachineReadable => 2,
        SourceFormat::K6Ndjson => 3,
        SourceFormat::K6Csv => 4,
        SourceFormat::JmeterCsv => 5,
        SourceFormat::JmeterXml => 6,
        SourceFormat::GatlingLog => 7,
        SourceFormat::GatlingBinaryLog => 8,
        SourceFormat::LocustStats => 9,
        SourceFormat::LocustJson => 10,
        SourceFormat::ArtilleryReport => 11,
        SourceFormat::JmeterStatistics => 12,
        SourceFormat::HeyCsv => 13,
        SourceFormat::AbGnuplot => 14,
        SourceFormat::AbPercentiles => 15,
    }
}

fn format_from_code(code: u8) -> Option<SourceFormat> {
    Some(match code {
        0 => SourceFormat::K6HandleSummary,
        1 => SourceFormat::K6SummaryExport,
        2 => SourceFormat::K6MachineReadable,
        3 => SourceFormat::K6Ndjson,
        4 => SourceFormat::K6Csv,
        5 => SourceFormat::JmeterCsv,
        6 => SourceFormat::JmeterXml,
        7 => SourceFormat::GatlingLog,
        8 => SourceFormat::GatlingBinaryLog,
        9 => SourceFormat::LocustStats,
        10 => SourceFormat::LocustJson,
        11 => SourceFormat::ArtilleryReport,
        12 => SourceFormat::JmeterStatistics,
        13 => SourceFormat::HeyCsv,
        14 => SourceFormat::AbGnuplot,
        15 => SourceFormat::AbPercentiles,
        _ => return None,
    })
}

/// Appends every field of `round` to `buf` in the run record's encoding:
/// decodable, so two different rounds never give the same bytes (the page
/// memo keys rounds by a digest of these bytes, `render::memo::RawRounds`).
pub(crate) fn round_bytes(buf: &mut Vec<u8>, round: &Round) {
    let mut w = Writer(std::mem::take(buf));
    w.round(round);
    *buf = w.0;
}

struct Writer(Vec<u8>);

impl Writer {
    fn len(&mut self, n: usize) {
        self.0.extend_from_slice(&(n as u32).to_le_bytes());
    }
    fn str(&mut self, s: &str) {
        self.len(s.len());
        self.0.extend_from_slice(s.as_bytes());
    }
    fn f64(&mut self, v: f64) {
        self.0.extend_from_slice(&v.to_bits().to_le_bytes());
    }
    fn opt_f64(&mut self, v: Option<f64>) {
        match v {
            None => self.0.push(0),
            Some(v) => {
                self.0.push(1);
                self.f64(v);
            }
        }
    }
    fn round(&mut self, round: &Round) {
        let Round {
            number,
            label,
            source,
            format,
            stats,
            warmup_s,
            cross_check,
        } = round;
        self.0.extend_from_slice(&number.to_le_bytes());
        match label {
            None => self.0.push(0),
            Some(l) => {
                self.0.push(1);
                self.str(l);
            }
        }
        self.str(source);
        self.0.push(format_code(*format));
        let RoundStats {
            count,
            throughput_rps,
            mean_ms,
            stddev_ms,
            min_ms,
            p50_ms,
            p90_ms,
            p95_ms,
            p99_ms,
            max_ms,
            error_rate,
        } = stats;
        match count {
            None => self.0.push(0),
            Some(c) => {
                self.0.push(1);
                self.0.extend_from_slice(&c.to_le_bytes());
            }
        }
        for v in [
            throughput_rps,
            mean_ms,
            stddev_ms,
            min_ms,
            p50_ms,
            p90_ms,
            p95_ms,
        ] {
            self.opt_f64(*v);
        }
        self.f64(*p99_ms);
        self.opt_f64(*max_ms);
        self.opt_f64(*error_rate);
        self.opt_f64(*warmup_s);
        match cross_check {
            None => self.0.push(0),
            Some(c) => {
                self.0.push(1);
                self.str(&c.source);
                self.0.push(format_code(c.format));
                self.f64(c.summary_p99_ms);
                self.f64(c.raw_untrimmed_p99_ms);
                self.0.push(u8::from(c.agrees));
            }
        }
    }
}

/// The record's own values read on top of [`LeReader`]: flags, lengths,
/// text, rounds.
trait RecordRead {
    fn flag(&mut self) -> Result<bool, String>;
    fn len(&mut self) -> Result<usize, String>;
    fn string(&mut self) -> Result<String, String>;
    fn opt_f64(&mut self) -> Result<Option<f64>, String>;
    fn format(&mut self) -> Result<SourceFormat, String>;
    fn round(&mut self) -> Result<Round, String>;
}

impl RecordRead for LeReader<'_> {
    fn flag(&mut self) -> Result<bool, String> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            b => Err(format!("a flag of {b}")),
        }
    }
    fn len(&mut self) -> Result<usize, String> {
        Ok(self.u32()? as usize)
    }
    fn string(&mut self) -> Result<String, String> {
        let n = self.len()?;
        self.utf8(n)
    }
    fn opt_f64(&mut self) -> Result<Option<f64>, String> {
        Ok(if self.flag()? {
            Some(self.f64()?)
        } else {
            None
        })
    }
    fn format(&mut self) -> Result<SourceFormat, String> {
        let code = self.u8()?;
        format_from_code(code).ok_or_else(|| format!("unknown format code {code}"))
    }
    fn round(&mut self) -> Result<Round, String> {
        let number = self.u32()?;
        let label = if self.flag()? {
            Some(self.string()?)
        } else {
            None
        };
        let source = self.string()?;
        let format = self.format()?;
        let count = if self.flag()? {
            Some(self.u64()?)
        } else {
            None
        };
        let throughput_rps = self.opt_f64()?;
        let mean_ms = self.opt_f64()?;
        let stddev_ms = self.opt_f64()?;
        let min_ms = self.opt_f64()?;
        let p50_ms = self.opt_f64()?;
        let p90_ms = self.opt_f64()?;
        let p95_ms = self.opt_f64()?;
        let p99_ms = self.f64()?;
        let max_ms = self.opt_f64()?;
        let error_rate = self.opt_f64()?;
        let warmup_s = self.opt_f64()?;
        let cross_check = if self.flag()? {
            Some(Box::new(CrossCheck {
                source: self.string()?,
                format: self.format()?,
                summary_p99_ms: self.f64()?,
                raw_untrimmed_p99_ms: self.f64()?,
                agrees: self.flag()?,
            }))
        } else {
            None
        };
        Ok(Round {
            number,
            label,
            source,
            format,
            stats: RoundStats {
                count,
                throughput_rps,
                mean_ms,
                stddev_ms,
                min_ms,
                p50_ms,
                p90_ms,
                p95_ms,
                p99_ms,
                max_ms,
                error_rate,
            },
            warmup_s,
            cross_check,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn any_f64() -> impl Strategy<Value = f64> {
        prop_oneof![
            any::<f64>(),
            Just(f64::NAN),
            Just(-0.0),
            Just(f64::INFINITY),
            0.0..1e6f64
        ]
    }

    prop_compose! {
        fn any_round()(
            number in any::<u32>(),
            label in proptest::option::of("[a-z.]{0,8}"),
            source in "[a-z0-9/._-]{0,40}",
            format in 0u8..10,
            count in proptest::option::of(any::<u64>()),
            opts in proptest::collection::vec(proptest::option::of(any_f64()), 11),
            p99 in any_f64(),
            cross in proptest::option::of(("[a-z/.]{0,20}", 0u8..10, any_f64(), any_f64(), any::<bool>())),
        ) -> Round {
            Round {
                number,
                label,
                source,
                format: format_from_code(format).unwrap(),
                stats: RoundStats {
                    count,
                    throughput_rps: opts[0],
                    mean_ms: opts[1],
                    stddev_ms: opts[2],
                    min_ms: opts[3],
                    p50_ms: opts[4],
                    p90_ms: opts[5],
                    p95_ms: opts[6],
                    p99_ms: p99,
                    max_ms: opts[7],
                    error_rate: opts[8],
                },
                warmup_s: opts[9],
                cross_check: cross.map(|(source, f, s, r, agrees)| {
                    Box::new(CrossCheck {
                        source,
                        format: format_from_code(f).unwrap(),
                        summary_p99_ms: s,
                        raw_untrimmed_p99_ms: r,
                        agrees,
                    })
                }),
            }
        }
    }

    /// Bit-for-bit equality (NaN included), which `PartialEq` on floats is not.
    fn bits(r: &Round) -> String {
        format!("{r:?}|{}", {
            let s = &r.stats;
            [
                s.throughput_rps,
                s.mean_ms,
                s.stddev_ms,
                s.min_ms,
                s.p50_ms,
                s.p90_ms,
                s.p95_ms,
                Some(s.p99_ms),
                s.max_ms,
                s.error_rate,
                r.warmup_s,
            ]
            .iter()
            .map(|v| format!("{:?}", v.map(f64::to_bits)))
            .collect::<Vec<_>>()
            .join(",")
        })
    }

    proptest! {
        #[test]
        fn a_record_gives_back_every_round_bit_for_bit(
            endpoints in proptest::collection::btree_map("[a-z-]{1,12}", proptest::collection::vec(any_round(), 0..6), 0..5),
            fingerprint in any::<u128>(),
        ) {
            let record = RunRecord { endpoints, capacity: BTreeMap::new() };
            let bytes = encode(fingerprint, &record).unwrap();
            let back = decode(&bytes, fingerprint).unwrap().unwrap();
            prop_assert_eq!(back.endpoints.len(), record.endpoints.len());
            for (a, b) in record.endpoints.values().zip(back.endpoints.values()) {
                let a: Vec<_> = a.iter().map(bits).collect();
                let b: Vec<_> = b.iter().map(bits).collect();
                prop_assert_eq!(a, b);
            }
            prop_assert!(decode(&bytes, fingerprint ^ 1).unwrap().is_none(), "another fingerprint");
            // Any cut is an error, never a shorter record.
            for cut in [16usize, bytes.len() / 2, bytes.len() - 1] {
                if cut < bytes.len() && cut >= 16 && bytes.len() > 20 {
                    prop_assert!(decode(&bytes[..cut], fingerprint).is_err());
                }
            }
        }
    }

    /// `add_stat` hands the hasher the tag, the path and the numbers in
    /// one buffer when the path fits: the fingerprint must be the one the
    /// separate updates give (else every record made before would be
    /// read again, and a short and a long path would disagree).
    #[test]
    fn a_stat_is_hashed_as_the_same_bytes_whatever_the_length_of_its_path() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("round-1.json");
        std::fs::write(&file, "{}").unwrap();
        let meta = std::fs::symlink_metadata(&file).unwrap();
        let stamp = crate::stat_stamp::of(&meta).unwrap();
        let later = SystemTime::now() + Duration::from_secs(3600);
        for rel in [
            String::new(),
            "runs/2026-05-04T0300Z/order-list/round-1.json".to_string(),
            "é".repeat(128),
            "x".repeat(256),
            "x".repeat(257),
            "y/".repeat(400),
        ] {
            let mut fingerprint = Fingerprinter::new(later, b"settings");
            fingerprint.add_stat(&rel, Some(&stamp));
            let mut want = Fingerprinter::new(later, b"settings").hasher;
            add_bytes(&mut want, b"stat");
            add_bytes(&mut want, rel.as_bytes());
            for n in stamp.numbers {
                want.update(&n.to_le_bytes());
            }
            assert_eq!(fingerprint.finish(), Some(want.digest128()), "{rel}");
        }
    }

    #[test]
    fn every_format_code_reads_back() {
        for code in 0..=255u8 {
            if let Some(f) = format_from_code(code) {
                assert_eq!(format_code(f), code);
            }
        }
        assert_eq!((0..=255u8).filter_map(format_from_code).count(), 16);
    }

    #[test]
    fn a_file_changed_in_the_last_seconds_gives_no_fingerprint() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("round-1.json");
        std::fs::write(&file, "{}").unwrap();
        let meta = std::fs::metadata(&file).unwrap();
        let stamp = |m: &std::fs::Metadata| crate::stat_stamp::of(m).unwrap();
        let mut now = Fingerprinter::new(SystemTime::now(), b"s");
        now.add_stat("f", Some(&stamp(&meta)));
        assert_eq!(now.finish(), None, "just written: racily clean");
        let later = SystemTime::now() + Duration::from_secs(60);
        let fp = |m: &std::fs::Metadata| {
            let mut f = Fingerprinter::new(later, b"s");
            f.add_stat("f", Some(&stamp(m)));
            f.finish().unwrap()
        };
        let first = fp(&meta);
        assert_eq!(first, fp(&std::fs::metadata(&file).unwrap()));
        // Rewritten with the same size and its modification time restored:
        // the change time still moves.
        std::thread::sleep(Duration::from_millis(20));
        crate::test_support::write_with_mtime(&file, "[]", meta.modified().unwrap());
        assert_ne!(first, fp(&std::fs::metadata(&file).unwrap()));
        let mut missing = Fingerprinter::new(later, b"s");
        missing.add_stat("f", None);
        assert_eq!(missing.finish(), None);
    }
}
