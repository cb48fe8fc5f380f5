//! Axes and labels for the hand-written charts: round value ticks, date
//! ticks at least once a month, and label placement that never overlaps.

use chrono::{DateTime, Datelike, Duration, NaiveDate, Utc};

/// Round ticks from 0 to at least `max`: steps of 1, 2, 2.5 or 5 × 10^k,
/// about `count` of them. The last tick is ≥ `max`, so it can be the
/// axis end.
pub fn value_ticks(max: f64, count: usize) -> Vec<f64> {
    let max = if max.is_finite() && max > 0.0 {
        max
    } else {
        1.0
    };
    let raw = max / count.max(1) as f64;
    let exponent = raw.log10().floor() as i32;
    let magnitude = 10f64.powi(exponent);
    // Steps in halves of the magnitude (2, 4, 5, 10, 20 halves), so that
    // every tick is a whole number of halves: computed as whole numbers
    // and scaled once, 0.6 is 0.6 and not 0.6000000000000001.
    let halves = [2.0, 4.0, 5.0, 10.0, 20.0]
        .into_iter()
        .find(|h| h / 2.0 * magnitude >= raw)
        .unwrap_or(20.0);
    let step = halves / 2.0 * magnitude;
    let n = (max / step).ceil().max(1.0) as usize;
    let at = |i: usize| {
        let units = i as f64 * halves;
        if exponent < 0 {
            units / (2.0 * 10f64.powi(-exponent))
        } else {
            units / 2.0 * magnitude
        }
    };
    (0..=n).map(at).collect()
}

/// A value tick's label: no more decimals than the step needs.
pub fn value_label(v: f64, step: f64) -> String {
    if step >= 1.0 || v == 0.0 {
        format!("{v:.0}")
    } else if step >= 0.1 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// One tick of a date axis: where, and its label (`None`: a tick mark
/// only, because the label would crowd its neighbours).
#[derive(Debug, Clone, PartialEq)]
pub struct DateTick {
    pub at: DateTime<Utc>,
    pub label: Option<String>,
}

fn midnight(d: NaiveDate) -> DateTime<Utc> {
    d.and_hms_opt(0, 0, 0).expect("midnight exists").and_utc()
}

fn first_of_next_month(d: NaiveDate) -> NaiveDate {
    let (y, m) = if d.month() == 12 {
        (d.year() + 1, 1)
    } else {
        (d.year(), d.month() + 1)
    };
    NaiveDate::from_ymd_opt(y, m, 1).expect("the 1st exists")
}

/// The step between two ticks of a time axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TimeStep {
    Minutes(i64),
    Hours(i64),
    Days,
    Weeks,
    Months,
}

/// The step for a span: minutes within three hours, hours within two days (runs of one day had no
/// tick at all: the axis ticked Mondays and months only), days within two
/// weeks, Mondays within ~10 weeks, else the first of every month, so
/// that there is always at least one tick a month.
fn time_step(span_days: f64) -> TimeStep {
    let minutes = span_days * 24.0 * 60.0;
    if minutes <= 180.0 {
        // Runs of one session (an hour of runs had one tick, "19:00").
        let n = [5, 10, 15, 30]
            .into_iter()
            .find(|n| minutes / *n as f64 <= 12.0)
            .unwrap_or(30);
        TimeStep::Minutes(n)
    } else if span_days <= 2.0 {
        let hours = span_days * 24.0;
        let n = [1, 2, 3, 6, 12]
            .into_iter()
            .find(|n| hours / *n as f64 <= 12.0)
            .unwrap_or(12);
        TimeStep::Hours(n)
    } else if span_days <= 14.0 {
        TimeStep::Days
    } else if span_days <= 70.0 {
        TimeStep::Weeks
    } else {
        TimeStep::Months
    }
}

/// Date ticks between `from` and `to`, spread over `width` pixels, at the
/// step `time_step` picks: `14:00` (with the day, `Dec 1 14:00`, where
/// the day changes), `Dec 1`, `Nov 16`, `Sep`. Labels are dropped, evenly,
/// until they are at least `min_gap` pixels apart (more for the longer
/// labels of hours); the first label says the year (or the day).
pub fn date_ticks(
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    width: f64,
    min_gap: f64,
) -> Vec<DateTick> {
    let span_days = (to - from).num_seconds() as f64 / 86_400.0;
    let step = time_step(span_days);
    let mut ticks: Vec<DateTime<Utc>> = Vec::new();
    let mut t = match step {
        TimeStep::Minutes(n) => {
            let day = midnight(from.date_naive());
            let minutes = (from - day).num_minutes();
            day + Duration::minutes(minutes - minutes % n)
        }
        TimeStep::Hours(n) => {
            let day = midnight(from.date_naive());
            let hours = (from - day).num_hours();
            day + Duration::hours(hours - hours % n)
        }
        TimeStep::Days => midnight(from.date_naive()),
        TimeStep::Weeks => midnight(crate::calendar::week_monday(from.date_naive())),
        TimeStep::Months => {
            midnight(NaiveDate::from_ymd_opt(from.year(), from.month(), 1).expect("the 1st exists"))
        }
    };
    while t <= to {
        if t >= from {
            ticks.push(t);
        }
        t = match step {
            TimeStep::Minutes(n) => t + Duration::minutes(n),
            TimeStep::Hours(n) => t + Duration::hours(n),
            TimeStep::Days => t + Duration::days(1),
            TimeStep::Weeks => t + Duration::days(7),
            TimeStep::Months => midnight(first_of_next_month(t.date_naive())),
        };
    }
    if ticks.is_empty() {
        return Vec::new();
    }
    let step_days = match step {
        TimeStep::Minutes(n) => n as f64 / 1440.0,
        TimeStep::Hours(n) => n as f64 / 24.0,
        TimeStep::Days => 1.0,
        TimeStep::Weeks => 7.0,
        TimeStep::Months => 30.4,
    };
    let px_per_tick = if span_days > 0.0 {
        width * step_days / span_days
    } else {
        width
    };
    let min_gap = match step {
        TimeStep::Minutes(_) | TimeStep::Hours(_) => min_gap.max(100.0),
        _ => min_gap,
    };
    // Every k-th tick is labelled, k the smallest that leaves room.
    let every = ((min_gap / px_per_tick.max(1.0)).ceil() as usize).max(1);
    let mut shown_year = None;
    let mut shown_day = None;
    ticks
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let label = (i % every == 0).then(|| {
                let d = t.date_naive();
                let new_year = shown_year != Some(d.year());
                let new_day = shown_day != Some(d);
                shown_year = Some(d.year());
                shown_day = Some(d);
                let format = match (step, new_year, new_day) {
                    (TimeStep::Minutes(_) | TimeStep::Hours(_), _, true) => "%b %-d %H:%M",
                    (TimeStep::Minutes(_) | TimeStep::Hours(_), _, false) => "%H:%M",
                    (TimeStep::Days | TimeStep::Weeks, true, _) => "%b %-d, %Y",
                    (TimeStep::Days | TimeStep::Weeks, false, _) => "%b %-d",
                    (TimeStep::Months, true, _) => "%b %Y",
                    (TimeStep::Months, false, _) => "%b",
                };
                t.format(format).to_string()
            });
            DateTick { at: *t, label }
        })
        .collect()
}

/// Places labels of the given `(x, width)` in rows so that none overlap:
/// each goes to the first row whose last label ends `gap` pixels before
/// it; beyond `max_rows` it is left out (`None`), never drawn on top of
/// another. Labels must come in x order.
pub fn place_in_rows(labels: &[(f64, f64)], gap: f64, max_rows: usize) -> Vec<Option<usize>> {
    let mut ends: Vec<f64> = Vec::new();
    labels
        .iter()
        .map(|&(x, w)| {
            if let Some(row) = ends.iter().position(|end| x >= end + gap) {
                ends[row] = x + w;
                Some(row)
            } else if ends.len() < max_rows {
                ends.push(x + w);
                Some(ends.len() - 1)
            } else {
                None
            }
        })
        .collect()
}

/// Spreads labels at the given y positions apart so that no two are
/// closer than `gap`, keeping their order and staying within
/// `[top, bottom]` as far as they fit (direct labels at a chart's edge).
pub fn spread(ys: &[f64], gap: f64, top: f64, bottom: f64) -> Vec<f64> {
    let mut order: Vec<usize> = (0..ys.len()).collect();
    order.sort_by(|&a, &b| ys[a].total_cmp(&ys[b]));
    let mut placed = vec![0.0; ys.len()];
    let mut last = f64::NEG_INFINITY;
    for &i in &order {
        let y = ys[i].max(top).max(last + gap);
        placed[i] = y;
        last = y;
    }
    // Pushed past the bottom: shift the whole stack up.
    let over = last - bottom;
    if over > 0.0 {
        for y in &mut placed {
            *y -= over;
        }
    }
    placed
}

/// Text width estimate for label placement: `chars` at `size` px in the
/// site's sans-serif (about 0.6 em a character, generous for digits).
pub fn text_width(text: &str, size: f64) -> f64 {
    text.chars().count() as f64 * size * 0.6
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn value_ticks_are_round_and_cover_the_maximum() {
        assert_eq!(value_ticks(93.0, 6), [0.0, 20.0, 40.0, 60.0, 80.0, 100.0]);
        assert_eq!(value_ticks(1.3, 5), [0.0, 0.5, 1.0, 1.5]);
        let t = value_ticks(1234.0, 6);
        assert!(*t.last().unwrap() >= 1234.0 && t.len() <= 8, "{t:?}");
        assert_eq!(value_ticks(f64::NAN, 5), [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]);
        assert_eq!(value_label(2.5, 0.5), "2.5");
        assert_eq!(value_label(40.0, 20.0), "40");
    }

    #[test]
    fn date_ticks_fall_at_least_once_a_month_and_labels_never_crowd() {
        let from = Utc.with_ymd_and_hms(2026, 6, 1, 3, 0, 0).unwrap();
        let to = Utc.with_ymd_and_hms(2026, 11, 27, 3, 0, 0).unwrap();
        let ticks = date_ticks(from, to, 800.0, 60.0);
        let months: Vec<u32> = ticks.iter().map(|t| t.at.month()).collect();
        assert_eq!(months, [7, 8, 9, 10, 11], "every month after the first day");
        assert_eq!(ticks[0].label.as_deref(), Some("Jul 2026"));
        assert_eq!(ticks[1].label.as_deref(), Some("Aug"));

        // Three years in 800 px: a tick every month, labels thinned out
        // evenly to at least 60 px apart.
        let long = date_ticks(from - Duration::days(3 * 365), to, 800.0, 60.0);
        let mut month = long[0].at.date_naive();
        for t in &long[1..] {
            assert_eq!(t.at.date_naive(), first_of_next_month(month));
            month = t.at.date_naive();
        }
        let px =
            |t: &DateTick| (t.at - long[0].at).num_days() as f64 * 800.0 / (3.0 * 365.0 + 179.0);
        let labelled: Vec<f64> = long.iter().filter(|t| t.label.is_some()).map(px).collect();
        assert!(labelled.len() >= 6, "{labelled:?}");
        assert!(
            labelled.windows(2).all(|w| w[1] - w[0] >= 55.0),
            "{labelled:?}"
        );

        // Four weeks: Mondays.
        let short = date_ticks(to - Duration::days(28), to, 800.0, 60.0);
        assert!(short.iter().all(|t| t.at.weekday() == chrono::Weekday::Mon));
        assert_eq!(short.len(), 4);
        assert_eq!(short[0].label.as_deref(), Some("Nov 2, 2026"));

        // Runs of one day: hours, the day said at the first label.
        let day = Utc.with_ymd_and_hms(2026, 12, 1, 9, 10, 0).unwrap();
        let hours = date_ticks(day, day + Duration::hours(5), 800.0, 60.0);
        let at: Vec<String> = hours
            .iter()
            .map(|t| t.at.format("%H:%M").to_string())
            .collect();
        assert_eq!(at, ["10:00", "11:00", "12:00", "13:00", "14:00"]);
        assert_eq!(hours[0].label.as_deref(), Some("Dec 1 10:00"));
        assert_eq!(hours[1].label.as_deref(), Some("11:00"));
        // Fifty minutes of runs: a tick every five minutes, a label every
        // ten (80 px apart is under the 100 px the labels need).
        let session = date_ticks(day, day + Duration::minutes(50), 800.0, 60.0);
        assert_eq!(session.len(), 11);
        assert_eq!(session[0].at.format("%H:%M").to_string(), "09:10");
        let labels: Vec<&str> = session.iter().filter_map(|t| t.label.as_deref()).collect();
        assert_eq!(
            labels,
            ["Dec 1 09:10", "09:20", "09:30", "09:40", "09:50", "10:00"]
        );
        // A week: days.
        let days = date_ticks(day, day + Duration::days(6), 800.0, 60.0);
        assert_eq!(days.len(), 6);
        assert_eq!(days[0].label.as_deref(), Some("Dec 2, 2026"));
    }

    #[test]
    fn labels_in_rows_never_overlap() {
        let labels = [
            (0.0, 100.0),
            (50.0, 100.0),
            (120.0, 50.0),
            (130.0, 40.0),
            (140.0, 40.0),
        ];
        let rows = place_in_rows(&labels, 10.0, 2);
        assert_eq!(rows, [Some(0), Some(1), Some(0), None, None]);
        let spread_out = spread(&[100.0, 104.0, 300.0, 102.0], 14.0, 0.0, 400.0);
        let mut sorted = spread_out.clone();
        sorted.sort_by(f64::total_cmp);
        assert!(
            sorted.windows(2).all(|w| w[1] - w[0] >= 14.0 - 1e-9),
            "{spread_out:?}"
        );
        assert_eq!(spread_out[2], 300.0);
        let squeezed = spread(&[395.0, 398.0], 14.0, 0.0, 400.0);
        assert!(squeezed.iter().all(|y| *y <= 400.0) && (squeezed[1] - squeezed[0]).abs() >= 14.0);
    }
}
