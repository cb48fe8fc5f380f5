//! CSV raw results: JMeter JTL CSV or k6 CSV (the first byte picks the
//! header), then arbitrary rows.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::io::Write as _;
use std::path::Path;

use perfdash::ingest::raw::{FileSettings, ReadOptions, analyse_file};

/// The raw readers stream from files (gzip-transparent), so every input
/// is written to one temporary file per process and read back.
fn with_file(bytes: &[u8], f: impl FnOnce(&Path)) {
    thread_local! {
        static FILE: tempfile::NamedTempFile = tempfile::NamedTempFile::new().unwrap();
    }
    FILE.with(|file| {
        let mut handle = file.reopen().unwrap();
        handle.set_len(0).unwrap();
        handle.write_all(bytes).unwrap();
        f(file.path());
    });
}

fn check(path: &Path) {
    for split in [None, Some("name".to_string())] {
        let mut settings = FileSettings {
            read: ReadOptions {
                split_tag: split,
                ..Default::default()
            },
            stats: Default::default(),
            tag_map: Default::default(),
            endpoint_warmups: Default::default(),
        };
        settings.stats.warmup_s = 0.0;
        match analyse_file(path, Path::new("runs/r/round-1.x"), &settings) {
            Ok(result) => {
                for group in result.groups.values().flatten() {
                    let s = &group.stats;
                    assert!(s.p99_ms.is_finite() && s.p99_ms >= 0.0, "{s:?}");
                }
            }
            Err(e) => assert!(e.to_string().starts_with("runs/r/round-1.x"), "{e}"),
        }
    }
}

const HEADERS: [&[u8]; 3] = [
    b"timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success,failureMessage,bytes,sentBytes,grpThreads,allThreads,URL,Latency,IdleTime,Connect\n",
    b"metric_name,timestamp,metric_value,check,error,error_code,expected_response,group,method,name,proto,scenario,service,status,subproto,tls_version,url,extra_tags,metadata\n",
    b"",
];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let mut bytes = HEADERS[pick as usize % HEADERS.len()].to_vec();
    bytes.extend_from_slice(rest);
    with_file(&bytes, check);
});
