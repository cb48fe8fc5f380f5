//! A minimal, fast CSV record scanner for the hot loops (k6 CSV, JMeter
//! JTL): records are found with memchr, quoted fields (with `""` escapes
//! and embedded newlines, as JMeter writes multi-line failure messages)
//! take a slower byte-by-byte path only where a quote occurs.

/// Where the record starting at `start` ends: the index of its
/// terminating `\n` (outside quotes), or `None` when `buf` ends first.
pub(crate) fn record_end(buf: &[u8], start: usize) -> Option<usize> {
    let rest = &buf[start..];
    match memchr::memchr2(b'\n', b'"', rest) {
        None => None,
        Some(i) if rest[i] == b'\n' => Some(start + i),
        Some(_) => {
            // A quote before the newline: walk, tracking quotes.
            let mut in_quotes = false;
            for (i, &b) in rest.iter().enumerate() {
                match b {
                    b'"' => in_quotes = !in_quotes, // `""` toggles twice: fine
                    b'\n' if !in_quotes => return Some(start + i),
                    _ => {}
                }
            }
            None
        }
    }
}

/// Splits one record (without its newline) into at most `max` fields;
/// fields are byte ranges of `record`, quotes still in place (see
/// [`field_text`]). Stops early once `max` fields are found.
pub(crate) fn split_fields(record: &[u8], delim: u8, max: usize, out: &mut Vec<(usize, usize)>) {
    out.clear();
    let record = record.strip_suffix(b"\r").unwrap_or(record);
    if memchr::memchr(b'"', record).is_none() {
        let mut start = 0;
        for i in memchr::memchr_iter(delim, record) {
            out.push((start, i));
            start = i + 1;
            if out.len() == max {
                return;
            }
        }
        out.push((start, record.len()));
        return;
    }
    let mut start = 0;
    let mut in_quotes = false;
    for (i, &b) in record.iter().enumerate() {
        if b == b'"' {
            in_quotes = !in_quotes;
        } else if b == delim && !in_quotes {
            out.push((start, i));
            start = i + 1;
            if out.len() == max {
                return;
            }
        }
    }
    out.push((start, record.len()));
}

/// The text of a field: surrounding quotes removed, `""` unescaped.
pub(crate) fn field_text(raw: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    match raw.strip_prefix(b"\"").and_then(|r| r.strip_suffix(b"\"")) {
        Some(inner) if memchr::memchr(b'"', inner).is_some() => {
            let mut out = Vec::with_capacity(inner.len());
            let mut i = 0;
            while i < inner.len() {
                out.push(inner[i]);
                if inner[i] == b'"' && inner.get(i + 1) == Some(&b'"') {
                    i += 1;
                }
                i += 1;
            }
            std::borrow::Cow::Owned(out)
        }
        Some(inner) => std::borrow::Cow::Borrowed(inner),
        None => std::borrow::Cow::Borrowed(raw),
    }
}

/// What [`for_each_record`] did with one block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Scanned {
    /// Bytes consumed from the front of the block.
    pub consumed: usize,
    /// Where a last record without newline begins whose `f` failed: the
    /// writer was stopped mid-write, so the error is not reported; the
    /// caller warns about the cut-short line instead.
    pub cut_short_at: Option<usize>,
}

/// Calls `f(record, offset_in_buf)` for each complete record of `buf`
/// from 0. At EOF a last record without newline is passed too; if `f`
/// fails on it, the record is taken as cut short (see
/// [`Scanned::cut_short_at`]) rather than as an error.
pub(crate) fn for_each_record<E>(
    buf: &[u8],
    eof: bool,
    mut f: impl FnMut(&[u8], usize) -> Result<(), E>,
) -> Result<Scanned, E> {
    let mut pos = 0;
    while pos < buf.len() {
        match record_end(buf, pos) {
            Some(end) => {
                f(&buf[pos..end], pos)?;
                pos = end + 1;
            }
            None if eof => {
                let cut_short_at = f(&buf[pos..], pos).is_err().then_some(pos);
                return Ok(Scanned {
                    consumed: buf.len(),
                    cut_short_at,
                });
            }
            None => break,
        }
    }
    Ok(Scanned {
        consumed: pos,
        cut_short_at: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_multiline_field() {
        let buf = b"1,\"a,\nb\"\"c\",x\n2,y,z\n";
        let end = record_end(buf, 0).unwrap();
        let record = &buf[..end];
        let mut f = Vec::new();
        split_fields(record, b',', 10, &mut f);
        assert_eq!(f.len(), 3);
        assert_eq!(&*field_text(&record[f[1].0..f[1].1]), b"a,\nb\"c");
        assert_eq!(record_end(buf, end + 1), Some(buf.len() - 1));
        assert_eq!(record_end(b"1,\"open\n", 0), None);
    }

    /// Every record of `buf` as our scanner reads it (field texts).
    fn scan_all(buf: &[u8]) -> Vec<Vec<Vec<u8>>> {
        let mut records = Vec::new();
        let mut fields = Vec::new();
        let scanned = for_each_record::<()>(buf, true, |record, _| {
            split_fields(record, b',', usize::MAX, &mut fields);
            records.push(
                fields
                    .iter()
                    .map(|&(a, b)| {
                        field_text(&record.strip_suffix(b"\r").unwrap_or(record)[a..b]).into_owned()
                    })
                    .collect(),
            );
            Ok(())
        })
        .unwrap();
        assert_eq!(scanned.consumed, buf.len());
        records
    }

    /// Field text with the characters that make CSV hard.
    fn field() -> impl proptest::strategy::Strategy<Value = String> {
        proptest::string::string_regex("[a-c ,\"\n\r;é]{0,6}").unwrap()
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

        /// Differential: what the `csv` crate writes, our scanner reads back
        /// field for field, as the `csv` crate's own reader does (quoted
        /// fields with `""`, commas, CR and LF inside, CRLF line ends).
        #[test]
        fn reads_what_the_csv_crate_writes(
            records in proptest::collection::vec(proptest::collection::vec(field(), 1..5), 1..6),
            crlf in proptest::bool::ANY,
        ) {
            let mut writer = csv::WriterBuilder::new()
                .flexible(true)
                .terminator(if crlf { csv::Terminator::CRLF } else { csv::Terminator::Any(b'\n') })
                .from_writer(Vec::new());
            for r in &records {
                writer.write_record(r).unwrap();
            }
            let buf = writer.into_inner().unwrap();
            let theirs: Vec<Vec<Vec<u8>>> = csv::ReaderBuilder::new()
                .has_headers(false)
                .flexible(true)
                .from_reader(buf.as_slice())
                .byte_records()
                .map(|r| r.unwrap().iter().map(<[u8]>::to_vec).collect())
                .collect();
            let ours = scan_all(&buf);
            let written: Vec<Vec<Vec<u8>>> = records
                .iter()
                .map(|r| r.iter().map(|f| f.as_bytes().to_vec()).collect())
                .collect();
            proptest::prop_assert_eq!(&ours, &theirs, "input {:?}", String::from_utf8_lossy(&buf));
            proptest::prop_assert_eq!(&ours, &written);
        }

        /// Any bytes at all: the scanner never panics, and record by record
        /// it consumes the whole buffer.
        #[test]
        fn any_bytes_are_scanned_without_panic(buf in proptest::collection::vec(
            proptest::sample::select(b"ab,\"\r\n".to_vec()), 0..64)) {
            let mut fields = Vec::new();
            let scanned = for_each_record::<()>(&buf, true, |record, _| {
                split_fields(record, b',', 8, &mut fields);
                for &(a, b) in &fields {
                    let _ = field_text(&record[a..b]);
                }
                Ok(())
            })
            .unwrap();
            proptest::prop_assert_eq!(scanned.consumed, buf.len());
        }
    }

    #[test]
    fn stops_at_max_fields() {
        let mut f = Vec::new();
        split_fields(b"a,b,c,d\r", b',', 2, &mut f);
        assert_eq!(f, vec![(0, 1), (2, 3)]);
        split_fields(b"a\tb", b'\t', 9, &mut f);
        assert_eq!(f, vec![(0, 1), (2, 3)]);
    }
}
