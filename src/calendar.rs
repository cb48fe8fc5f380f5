//! Dates and weeks, written one way everywhere: the formats perfdash
//! prints and the ISO weeks it groups runs by.
//!
//! Every time perfdash handles is UTC. A week is an ISO 8601 week, Monday
//! to Sunday (the review meets weekly; the heatmap has a column a week).
//! Until issue 16 the weekly review and the heatmap each had their own
//! week helper, five files spelled `%Y-%m-%d` by hand, and one warning wrote
//! RFC 3339 times with `+00:00` where every other output writes `Z`.

use chrono::{DateTime, Datelike, Days, NaiveDate, Utc, Weekday};

/// A day as `2026-11-27`: pages, chart axes, triage files.
pub fn date(d: NaiveDate) -> String {
    d.format("%Y-%m-%d").to_string()
}

/// A moment for people: `2026-11-27 03:02 UTC`.
pub fn datetime(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%d %H:%M UTC").to_string()
}

/// A day and its time of day, `2026-12-01 14:05`: a run among others of
/// the same day, where the date alone cannot tell them apart.
pub fn date_and_time(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%d %H:%M").to_string()
}

/// A moment for machines: RFC 3339 to the second with `Z`,
/// `2026-11-27T03:02:00Z` (analysis.json, run.toml, messages).
pub fn rfc3339(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// A moment as a run gave it, for messages about that time: RFC 3339
/// with `Z`, with the fraction of a second only when it has one
/// (`2099-01-05T03:00:00.250Z`), so that the time a warning quotes is
/// the time in the file.
pub fn rfc3339_as_given(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true)
}

/// Reads an RFC 3339 time with its offset (`2026-05-04T03:00:00Z`,
/// `2026-05-04T05:00:00+02:00`, surrounding blanks ignored) as UTC: the
/// one reader of times that users write (`started_at` in `run.toml`,
/// `PERFDASH_NOW`, `perfdash record --started-at`, annotation times). A
/// year outside 0000–9999 once in UTC is refused (RFC 3339 has four-digit
/// years; an offset can still carry `0000-01-01T00:00+01:00` out of
/// them, and every date format after it would have to cope). `Err` is the
/// reason, to follow the value in a message: `is not an RFC 3339 …`.
pub fn parse_rfc3339(text: &str) -> Result<DateTime<Utc>, String> {
    let t = DateTime::parse_from_rfc3339(text.trim())
        .map_err(|e| {
            format!("is not an RFC 3339 date-time with an offset ({e}), e.g. 2026-05-04T03:00:00Z")
        })?
        .with_timezone(&Utc);
    if !(0..=9999).contains(&t.year()) {
        return Err("is outside the years 0000–9999 in UTC".into());
    }
    Ok(t)
}

/// A run id from its start, `2026-11-27T0302Z`: sorts by time, is a safe
/// folder name on every system, and reads back with
/// `ingest::run_time_from_id`.
pub fn run_id(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%dT%H%MZ").to_string()
}

/// A JUnit `timestamp` attribute: the Ant JUnit schema's `xs:dateTime`
/// pattern has no zone, so the UTC time is written without one.
pub fn junit_timestamp(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%S").to_string()
}

/// The ISO week of a day as `2026-W48`: the form `--week` takes.
pub fn iso_week_label(d: NaiveDate) -> String {
    let w = d.iso_week();
    format!("{}-W{:02}", w.year(), w.week())
}

/// The Monday that starts the ISO week of `d`.
pub fn week_monday(d: NaiveDate) -> NaiveDate {
    d - Days::new(u64::from(d.weekday().num_days_from_monday()))
}

/// The Monday of ISO week `week` of `year`; `None` when the year has no
/// such week (most years have 52, some 53).
pub fn iso_week_monday(year: i32, week: u32) -> Option<NaiveDate> {
    NaiveDate::from_isoywd_opt(year, week, Weekday::Mon)
}

/// The first day strictly after `d` that is a `weekday`.
pub fn next_weekday(d: NaiveDate, weekday: Weekday) -> NaiveDate {
    let ahead = (7 + weekday.num_days_from_monday() - d.weekday().num_days_from_monday()) % 7;
    d + Days::new(if ahead == 0 { 7 } else { u64::from(ahead) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_times_are_read_one_way() {
        let utc = parse_rfc3339(" 2026-05-04T05:00:00+02:00\n").unwrap();
        assert_eq!(rfc3339(utc), "2026-05-04T03:00:00Z");
        assert!(
            parse_rfc3339("2026-05-04T03:00:00")
                .unwrap_err()
                .contains("with an offset")
        );
        assert!(
            parse_rfc3339("yesterday")
                .unwrap_err()
                .starts_with("is not an RFC 3339")
        );
        assert!(
            parse_rfc3339("0000-01-01T00:00:00+01:00")
                .unwrap_err()
                .contains("0000–9999")
        );
        assert!(parse_rfc3339("9999-12-31T23:59:00-01:00").is_err());
        assert!(parse_rfc3339("0000-01-01T00:00:00Z").is_ok());
    }
    use chrono::TimeZone;
    use proptest::prelude::*;

    fn day(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).unwrap()
    }

    #[test]
    fn formats() {
        let t = Utc.with_ymd_and_hms(2026, 11, 27, 3, 2, 9).unwrap();
        assert_eq!(date(t.date_naive()), "2026-11-27");
        assert_eq!(datetime(t), "2026-11-27 03:02 UTC");
        assert_eq!(rfc3339(t), "2026-11-27T03:02:09Z");
        assert_eq!(rfc3339_as_given(t), "2026-11-27T03:02:09Z");
        let t_ms = t + chrono::Duration::milliseconds(250);
        assert_eq!(rfc3339(t_ms), "2026-11-27T03:02:09Z");
        assert_eq!(rfc3339_as_given(t_ms), "2026-11-27T03:02:09.250Z");
        assert_eq!(run_id(t), "2026-11-27T0302Z");
        assert_eq!(junit_timestamp(t), "2026-11-27T03:02:09");
    }

    #[test]
    fn iso_weeks_at_year_boundaries() {
        // 2026-01-01 is a Thursday: ISO week 1 of 2026 starts 2025-12-29.
        assert_eq!(iso_week_label(day(2026, 1, 1)), "2026-W01");
        assert_eq!(iso_week_label(day(2025, 12, 29)), "2026-W01");
        assert_eq!(week_monday(day(2026, 1, 1)), day(2025, 12, 29));
        // 2026 has 53 ISO weeks; 2027-01-03 (a Sunday) still belongs to its last.
        assert_eq!(iso_week_label(day(2027, 1, 3)), "2026-W53");
        assert_eq!(iso_week_monday(2026, 53), Some(day(2026, 12, 28)));
        assert_eq!(iso_week_monday(2025, 53), None);
        assert_eq!(iso_week_monday(2026, 47), Some(day(2026, 11, 16)));
    }

    #[test]
    fn next_weekday_is_strictly_after() {
        let friday = day(2026, 11, 27);
        assert_eq!(next_weekday(friday, Weekday::Tue), day(2026, 12, 1));
        assert_eq!(next_weekday(friday, Weekday::Fri), day(2026, 12, 4));
        assert_eq!(next_weekday(friday, Weekday::Sat), day(2026, 11, 28));
    }

    proptest! {
        /// The two week helpers there used to be (the weekly review went
        /// through the ISO week number, the heatmap counted back to Monday)
        /// are one rule: both ways give the same Monday, the same label.
        #[test]
        fn week_monday_is_the_iso_weeks_monday(days in 0i64..40_000) {
            let d = day(1970, 1, 1) + chrono::Duration::days(days);
            let w = d.iso_week();
            let monday = week_monday(d);
            prop_assert_eq!(Some(monday), iso_week_monday(w.year(), w.week()));
            prop_assert_eq!(iso_week_label(monday), iso_week_label(d));
            prop_assert!(monday <= d && d < monday + Days::new(7));
            let next = next_weekday(d, Weekday::Tue);
            prop_assert!(next > d && next <= d + Days::new(7) && next.weekday() == Weekday::Tue);
        }
    }
}
