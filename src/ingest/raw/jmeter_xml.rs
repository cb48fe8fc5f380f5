//! JMeter JTL XML (FORMATS.md §2.2), read with a streaming XML reader
//! (quick-xml): real files carry response bodies, headers and nested
//! sub-results, so a whole-document parser would hold them all in memory,
//! and a hand-written scanner would get CDATA/entities/comments wrong.
//!
//! Only top-level `<httpSample>`/`<sample>` elements are samples; nested
//! ones are sub-results (redirects, embedded resources) already counted in
//! their parent. Attributes: `t` elapsed ms, `ts` start (epoch ms), `s`
//! success, `lb` label.

use std::io::BufReader;
use std::path::Path;

use quick_xml::events::{BytesStart, Event};

use super::io::{Fault, open_plain};
use super::time::{parse_f64, parse_u64};
use super::{Grouper, RawContent, RawFile, ReadOptions, Sample};
use crate::error::Error;
use crate::ingest::input::InputFile;
use crate::model::SourceFormat;

pub fn read(file: &InputFile, shown: &Path, opts: &ReadOptions) -> Result<RawFile, Error> {
    let plain = open_plain(file, &opts.limits).map_err(|e| Error::io(shown, e))?;
    let mut reader = quick_xml::Reader::from_reader(BufReader::with_capacity(256 * 1024, plain));
    let mut buf = Vec::new();
    let mut depth = 0usize;
    let mut grouper = Grouper::default();
    let split = opts.split_tag.is_some();
    let truncated;
    loop {
        let position = reader.buffer_position();
        let event = match reader.read_event_into(&mut buf) {
            Ok(e) => e,
            Err(quick_xml::Error::Io(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                truncated = true;
                break;
            }
            Err(e) => {
                return Err(Fault::new(
                    reader.error_position(),
                    format!("not well-formed XML: {e}"),
                )
                .into_error(file, shown));
            }
        };
        match event {
            Event::Start(e) => {
                if depth == 1 {
                    sample(&e, split, &mut grouper)
                        .map_err(|m| Fault::new(position, m).into_error(file, shown))?;
                }
                depth += 1;
            }
            Event::Empty(e) if depth == 1 => {
                sample(&e, split, &mut grouper)
                    .map_err(|m| Fault::new(position, m).into_error(file, shown))?;
            }
            Event::End(_) => depth = depth.saturating_sub(1),
            Event::Eof => {
                truncated = depth > 0;
                break;
            }
            _ => {}
        }
        buf.clear();
    }
    let mut warnings = Vec::new();
    if truncated {
        warnings.push(super::warning(
            crate::error::DiagnosticKind::Doubtful,
            shown,
            None,
            "the XML ends before </testResults> (was JMeter stopped?): the complete samples were used",
        ));
    }
    let groups = grouper.finish(|k| String::from_utf8_lossy(k).into_owned());
    if groups.is_empty() {
        return Err(Error::at(
            shown,
            None,
            "no <httpSample> or <sample> elements in this JTL",
        ));
    }
    Ok(RawFile {
        format: SourceFormat::JmeterXml,
        content: RawContent::Samples {
            groups,
            time_is_start: true,
        },
        warnings,
    })
}

fn sample(e: &BytesStart<'_>, split: bool, grouper: &mut Grouper) -> Result<(), String> {
    let name = e.name();
    if name.as_ref() != "httpSample" && name.as_ref() != "sample" {
        return Ok(());
    }
    let (mut t, mut ts, mut success, mut label) = (None, None, true, Vec::new());
    for attr in e.attributes().with_checks(false) {
        let attr = attr.map_err(|e| format!("bad attribute: {e}"))?;
        match attr.key.as_ref() {
            "t" => {
                t = Some(
                    parse_f64(attr.value.as_bytes())
                        .ok_or("t (elapsed) is not a non-negative number")?,
                )
            }
            "ts" => {
                ts = Some(
                    parse_u64(attr.value.as_bytes())
                        .and_then(super::time::ms_to_us)
                        .ok_or("ts is not epoch milliseconds")?,
                )
            }
            "s" => success = attr.value.as_ref() != "false",
            "lb" if split => {
                label = attr
                    .normalized_value(quick_xml::XmlVersion::Implicit1_0)
                    .map(|v| v.into_owned().into_bytes())
                    .unwrap_or_else(|_| attr.value.as_bytes().to_vec())
            }
            _ => {}
        }
    }
    let (Some(ms), Some(ts)) = (t, ts) else {
        return Err(format!(
            "<{}> without t= and ts= attributes: no latency to compute (save the elapsed time and time stamp)",
            name.as_ref()
        ));
    };
    grouper.push(&label, Sample { t_us: ts, ms }, success);
    Ok(())
}
