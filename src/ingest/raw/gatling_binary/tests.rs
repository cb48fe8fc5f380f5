//! The binary reader on logs written as Gatling writes them ([`LogWriter`]),
//! cut short and corrupted byte by byte. The real file Gatling's own test
//! uses is read in `tests/gatling_binary_fixtures.rs`.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::Path;

use proptest::prelude::*;

use super::*;
use crate::ingest::raw::{FileResult, FileSettings, SampleSet, StatsOptions, compute, read_file};

/// The run start of Gatling's own fixture (2024-11-04T21:58:51.501Z).
const T0: i64 = 1_730_757_531_501;
const SHOWN: &str = "runs/r/round-1.log";

fn read_bytes_as(bytes: &[u8], name: &str) -> Result<RawFile, Error> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    read_file(
        &path,
        Path::new(SHOWN),
        &ReadOptions {
            split_tag: Some("name".into()),
            ..Default::default()
        },
    )
}

fn read_bytes(bytes: &[u8]) -> Result<RawFile, Error> {
    read_bytes_as(bytes, "round-1.log")
}

fn error_of(bytes: &[u8]) -> String {
    read_bytes(bytes).unwrap_err().to_string()
}

fn groups(file: &RawFile) -> &BTreeMap<String, SampleSet> {
    match &file.content {
        RawContent::Samples { groups, .. } => groups,
        other => panic!("samples expected, got {other:?}"),
    }
}

/// Users, a group, an error and three requests, one of them KO.
fn small_log() -> LogWriter {
    let mut w = LogWriter::new("3.13.4", T0, &["Users", "Admins"]);
    w.user(0, true, T0 + 10);
    w.request(&[], "Home", T0 + 20, T0 + 120, true, "");
    w.request(
        &["Browse"],
        "Search",
        T0 + 130,
        T0 + 160,
        false,
        "status.find.is(200), but actually found 500",
    );
    w.group(&["Browse"], T0 + 125, T0 + 170, false);
    w.error("j.n.ConnectException: Connection refused", T0 + 171);
    w.user(1, true, T0 + 180);
    w.request(&[], "Home", T0 + 200, T0 + 250, true, "");
    w.user(0, false, T0 + 300);
    w
}

#[test]
fn requests_become_samples_split_by_name() {
    let file = read_bytes(small_log().bytes()).unwrap();
    assert_eq!(file.format, SourceFormat::GatlingBinaryLog);
    assert!(file.warnings.is_empty(), "{:?}", file.warnings);
    let g = groups(&file);
    assert_eq!(g.keys().collect::<Vec<_>>(), ["Home", "Search"]);
    // The sample time is the request start; latency = end − start.
    assert_eq!(
        g["Home"].ok.iter().collect::<Vec<_>>(),
        [
            Sample {
                t_us: (T0 + 20) * 1000,
                ms: 100.0
            },
            Sample {
                t_us: (T0 + 200) * 1000,
                ms: 50.0
            }
        ]
    );
    assert!(g["Home"].failed.is_empty());
    assert_eq!(
        g["Search"].failed.iter().collect::<Vec<_>>(),
        [Sample {
            t_us: (T0 + 130) * 1000,
            ms: 30.0
        }]
    );
    let RawContent::Samples { time_is_start, .. } = file.content else {
        unreachable!()
    };
    assert!(time_is_start);
}

#[test]
fn sniffed_by_content_whatever_the_name() {
    let log = small_log();
    assert_eq!(
        crate::ingest::raw::sniff(log.bytes()),
        Ok(crate::ingest::raw::Sniffed::GatlingBinary)
    );
    // The extension only says the file is worth reading.
    let file = read_bytes_as(log.bytes(), "results.csv").unwrap();
    assert_eq!(file.format, SourceFormat::GatlingBinaryLog);
    // The version in UTF-16 (a JVM run with -XX:-CompactStrings).
    let mut utf16 = vec![RUN, 0, 0, 0, 12];
    utf16.extend("3.13.4".encode_utf16().flat_map(u16::to_le_bytes));
    utf16.push(1);
    assert!(looks_like(&utf16));
    // Cut inside the version's length: still told apart from other files.
    assert!(looks_like(&[0, 0]));
    for other in [
        &b"\0\0\0\0\0\0"[..],         // a zero-length version: not Gatling
        &b"\0\0\0\0\x06abcdef\0"[..], // a version that is no version
        &b"\x01\0\0\0\x06"[..],
        &b"RUN\tsim"[..],
        &b""[..],
    ] {
        assert!(!looks_like(other), "{other:?}");
    }
}

#[test]
fn versions_from_3_12_1_on_are_read_and_others_refused_by_name() {
    for ok in [
        "3.12.1",
        "3.13",
        "3.13.4",
        "3.14.0-SNAPSHOT",
        "3.15.2+build.7",
    ] {
        assert!(supported_version(ok), "{ok}");
    }
    for refused in [
        "3.12.0", "3.11.5", "2.3.1", "4.0.0", "3", "3.x.1", "3.13.4.1",
    ] {
        assert!(!supported_version(refused), "{refused}");
        let mut w = LogWriter::new(refused, T0, &["Users"]);
        w.request(&[], "Home", T0 + 1, T0 + 2, true, "");
        let err = error_of(w.bytes());
        assert!(
            err.starts_with(&format!(
                "{SHOWN}: byte 1: Gatling version '{refused}' in the run record: perfdash reads \
                 the binary simulation.log of Gatling 3.12.1 and later"
            )),
            "{err}"
        );
    }
}

#[test]
fn names_in_latin1_and_utf16_with_line_breaks_made_spaces() {
    let mut w = LogWriter::new("3.13.4", T0, &["Users"]);
    for name in [
        "Café crème",
        "日本語 page",
        "tab\tand\nnewline",
        "Café crème",
    ] {
        w.request(&["Grüße", "日本"], name, T0 + 5, T0 + 7, true, "");
    }
    let file = read_bytes(w.bytes()).unwrap();
    let g = groups(&file);
    assert_eq!(
        g.keys().collect::<Vec<_>>(),
        ["Café crème", "tab and newline", "日本語 page"]
    );
    assert_eq!(
        g["Café crème"].ok.len(),
        2,
        "the repeat is a back-reference"
    );
}

/// The offset of the last request record of `w` as written so far, and
/// `w`'s bytes.
fn with_last_request(build: impl FnOnce(&mut LogWriter)) -> (usize, Vec<u8>) {
    let mut w = LogWriter::new("3.13.4", T0, &["Users"]);
    w.request(&[], "Home", T0 + 20, T0 + 120, true, "");
    let at = w.bytes().len();
    build(&mut w);
    (at, w.bytes().to_vec())
}

#[test]
fn corrupt_content_is_an_error_naming_the_byte() {
    let header = LogWriter::new("3.13.4", T0, &["Users"]).bytes().len();
    // (what is wrong, the bytes, the offset named, the message)
    let mut cases: Vec<(&str, Vec<u8>, usize, &str)> = Vec::new();

    let (at, mut b) = with_last_request(|_| {});
    b.push(9);
    cases.push(("record type", b, at, "unknown record type 9"));

    // Request "x" with its string's coder byte 7: type, groups, index, length, 'x', coder.
    let (at, mut b) = with_last_request(|_| {});
    b.extend([REQUEST, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 1, b'x', 7]);
    cases.push(("coder", b, at + 14, "string coder byte is 7"));

    let (at, mut b) = with_last_request(|_| {});
    b.extend([REQUEST, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 3, 0, b'x', 0, 1]);
    cases.push((
        "odd UTF-16",
        b,
        at + 16,
        "UTF-16 string of an odd length (3 bytes)",
    ));

    let (at, mut b) = with_last_request(|_| {});
    b.extend([REQUEST, 0, 0, 0, 0]);
    b.extend((-7i32).to_be_bytes());
    cases.push((
        "back-reference",
        b,
        at + 5,
        "reference to string 7, which no earlier record defined",
    ));

    let (at, mut b) = with_last_request(|_| {});
    b.extend([REQUEST, 0, 0, 0, 0]);
    b.extend((-1i32).to_be_bytes()); // "Home"
    b.extend([0, 0, 0, 1, 0, 0, 0, 2, 2]);
    cases.push(("status", b, at + 17, "request status byte is 2, not 0 or 1"));

    let (at, b) = with_last_request(|w| w.user(3, true, T0 + 1));
    cases.push((
        "scenario",
        b,
        at + 1,
        "user record of scenario 3, but the run record lists 1 scenario(s)",
    ));

    let (at, b) = with_last_request(|w| w.request(&[], "Home", T0 + 50, T0 + 40, true, ""));
    cases.push((
        "end before start",
        b,
        at,
        "request ends before it starts (50 ms and 40 ms after the run start)",
    ));

    let (at, mut b) = with_last_request(|_| {});
    b.extend([REQUEST, 0, 0, 0, 0, 0, 0, 0, 5]);
    b.extend((-2i32).to_be_bytes());
    cases.push((
        "string length",
        b,
        at + 9,
        "string length -2 is out of range",
    ));

    let (at, mut b) = with_last_request(|_| {});
    b.push(REQUEST);
    b.extend(i32::MAX.to_be_bytes());
    cases.push((
        "group depth",
        b,
        at + 1,
        "group depth 2147483647 is out of range",
    ));

    let (_, mut b) = with_last_request(|_| {});
    b[header - 4..header].copy_from_slice(&(-1i32).to_be_bytes());
    cases.push((
        "assertion count",
        b,
        header - 4,
        "assertion count -1 is out of range",
    ));

    for (what, bytes, at, message) in cases {
        let err = error_of(&bytes);
        assert!(
            err.starts_with(&format!("{SHOWN}: byte {at}: {message}")),
            "{what}: {err}"
        );
    }
}

#[test]
fn records_longer_than_the_line_limit_are_refused_at_their_start() {
    let (at, mut b) = with_last_request(|_| {});
    // A group and a name of 100 bytes each, in a file read with a 128-byte
    // record limit (the run record and the first request are shorter).
    b.extend([REQUEST, 0, 0, 0, 1, 0, 0, 0, 5, 0, 0, 0, 100]);
    b.extend([b'x'; 100]);
    b.extend([0, 0, 0, 0, 6, 0, 0, 0, 100]);
    b.extend([b'y'; 100]);
    b.push(0);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("round-1.log");
    std::fs::write(&path, &b).unwrap();
    let mut opts = ReadOptions::default();
    opts.limits.max_line_bytes = 128;
    let err = read_file(&path, Path::new(SHOWN), &opts)
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        format!(
            "{SHOWN}: byte {at}: a record longer than 128 bytes (limits.max_line_bytes): \
             a corrupt file, or raise the limit"
        )
    );
}

#[test]
fn a_cut_inside_the_run_record_is_an_error_naming_where_the_file_ends() {
    let log = small_log();
    let header = LogWriter::new("3.13.4", T0, &["Users", "Admins"])
        .bytes()
        .len();
    for cut in 1..header {
        let err = error_of(&log.bytes()[..cut]);
        assert!(
            err.starts_with(&format!(
                "{SHOWN}: byte {cut}: the file ends inside the run record that starts at byte 0"
            )),
            "cut at {cut}: {err}"
        );
    }
}

#[test]
fn a_cut_inside_a_record_keeps_the_records_before_it_and_warns() {
    let mut w = small_log();
    let third_at = w.bytes().len();
    w.request(&[], "Search", T0 + 400, T0 + 410, true, "");
    let whole = w.bytes().to_vec();
    for cut in third_at + 1..whole.len() {
        let file = read_bytes(&whole[..cut]).unwrap();
        let g = groups(&file);
        assert_eq!(g["Home"].ok.len(), 2, "cut at {cut}");
        assert_eq!(
            (g["Search"].ok.len(), g["Search"].failed.len()),
            (0, 1),
            "cut at {cut}"
        );
        assert_eq!(file.warnings.len(), 1);
        let warning = file.warnings[0].to_string();
        assert!(
            warning.starts_with(&format!(
                "{SHOWN}: byte {cut}: the file ends inside the record that starts at byte {third_at} \
                 (was Gatling stopped mid-write?); the 9 complete records before it (3 requests) were used"
            )),
            "{warning}"
        );
    }
    // Cut between records: nothing lost, nothing to warn about.
    let file = read_bytes(&whole[..third_at]).unwrap();
    assert!(file.warnings.is_empty());
}

#[test]
fn a_log_without_requests_is_an_error() {
    let mut w = LogWriter::new("3.13.4", T0, &["Users"]);
    w.user(0, true, T0);
    w.user(0, false, T0 + 5);
    assert_eq!(
        error_of(w.bytes()),
        format!("{SHOWN}: no request records in this Gatling binary simulation.log")
    );
}

#[test]
fn gzip_is_read_transparently_and_offsets_are_of_the_plain_content() {
    let mut w = small_log();
    let cut_record = w.bytes().len();
    w.request(&[], "Search", T0 + 400, T0 + 410, true, "");
    let plain = &w.bytes()[..w.bytes().len() - 3];
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(plain).unwrap();
    let gz = gz.finish().unwrap();
    let file = read_bytes_as(&gz, "round-1.log.gz").unwrap();
    assert_eq!(groups(&file)["Home"].ok.len(), 2);
    assert!(
        file.warnings[0].to_string().contains(&format!(
            "byte {} (of the decompressed content): the file ends inside the record that starts at byte {cut_record}",
            plain.len()
        )),
        "{:?}",
        file.warnings
    );
}

/// One request as the property tests draw it.
#[derive(Debug, Clone)]
struct Drawn {
    name: &'static str,
    start: i64,
    duration: i64,
    ok: bool,
}

fn drawn() -> impl Strategy<Value = Drawn> {
    (
        prop::sample::select(vec!["Home", "Search", "Café", "日本語", "Post Redirect 1"]),
        0i64..60_000,
        0i64..5_000,
        prop::bool::weighted(0.9),
    )
        .prop_map(|(name, start, duration, ok)| Drawn {
            name,
            start,
            duration,
            ok,
        })
}

fn binary_log(requests: &[Drawn]) -> Vec<u8> {
    let mut w = LogWriter::new("3.14.2", T0, &["Users"]);
    for (i, r) in requests.iter().enumerate() {
        if i % 7 == 0 {
            w.user(0, true, T0 + r.start);
        }
        let message = if r.ok {
            ""
        } else {
            "status.find.is(200), but actually found 503"
        };
        w.request(
            &[],
            r.name,
            T0 + r.start,
            T0 + r.start + r.duration,
            r.ok,
            message,
        );
    }
    w.bytes().to_vec()
}

/// The same requests as Gatling 3.4–3.12 wrote them in the text log.
fn text_log(requests: &[Drawn]) -> String {
    let mut out = format!("RUN\tcomputerdatabase.BasicSimulation\tbasic\t{T0}\t \t3.12.0\n");
    for r in requests {
        let (status, message) = if r.ok {
            ("OK", " ")
        } else {
            ("KO", "status.find.is(200), but actually found 503")
        };
        out += &format!(
            "REQUEST\t\t{}\t{}\t{}\t{status}\t{message}\n",
            r.name,
            T0 + r.start,
            T0 + r.start + r.duration
        );
    }
    out
}

fn results(bytes: &[u8], name: &str, split: bool, warmup_s: f64) -> FileResult {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    let settings = FileSettings {
        read: ReadOptions {
            split_tag: split.then(|| "name".to_string()),
            ..Default::default()
        },
        stats: StatsOptions {
            warmup_s,
            ..Default::default()
        },
        tag_map: BTreeMap::new(),
        endpoint_warmups: BTreeMap::new(),
    };
    let raw = read_file(&path, Path::new(SHOWN), &settings.read).unwrap();
    compute(raw, &settings)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// A binary log gives exactly the round statistics of the text log of
    /// the same requests: same latencies, warm-up, error rate, endpoints.
    #[test]
    fn the_same_round_as_the_text_log(
        requests in prop::collection::vec(drawn(), 1..60),
        split in any::<bool>(),
        warmup_s in prop::sample::select(vec![0.0, 5.0, 30.0]),
    ) {
        let binary = results(&binary_log(&requests), "round-1.log", split, warmup_s);
        let text = results(text_log(&requests).as_bytes(), "round-2.log", split, warmup_s);
        prop_assert_eq!(binary.format, SourceFormat::GatlingBinaryLog);
        prop_assert_eq!(text.format, SourceFormat::GatlingLog);
        prop_assert_eq!(binary.groups, text.groups);
    }

    /// Cut anywhere after the run record: every complete request before
    /// the cut is kept, and the warning names the byte where the file ends.
    #[test]
    fn a_cut_anywhere_loses_only_the_cut_record(
        requests in prop::collection::vec(drawn(), 1..30),
        cut_fraction in 0.0f64..1.0,
    ) {
        let header = LogWriter::new("3.14.2", T0, &["Users"]).bytes().len();
        let whole = binary_log(&requests);
        let cut = header + ((whole.len() - header) as f64 * cut_fraction) as usize;
        // Requests complete before the cut, as the writer wrote them.
        let complete = (0..=requests.len())
            .rev()
            .find(|&n| binary_log(&requests[..n]).len() <= cut)
            .unwrap();
        match read_bytes(&whole[..cut]) {
            Ok(file) => {
                let kept: usize = groups(&file).values().map(SampleSet::len).sum();
                prop_assert_eq!(kept, complete);
                let expected = format!("{SHOWN}: byte {cut}: the file ends inside the record");
                prop_assert!(
                    file.warnings.iter().all(|w| w.to_string().starts_with(&expected)),
                    "{:?}", file.warnings
                );
            }
            Err(e) => {
                prop_assert_eq!(complete, 0);
                prop_assert!(e.to_string().contains("no request records"), "{}", e);
            }
        }
    }
}
