//! Time: calendar arithmetic, ISO 8601 timestamps and the wall clock, without a date-time dependency.
//! One home for what the GC log reader, the load's `--start-at`, the campaign's log windows and the
//! result directories' names all need.

const NANOS_PER_SECOND: i64 = 1_000_000_000;

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
pub fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month_index = (month + 9) % 12;
    let day_of_year = (153 * month_index + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The date of a day count since 1970-01-01 (inverse of `days_from_civil`).
pub fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let shifted = days + 719_468;
    let era = shifted.div_euclid(146_097);
    let day_of_era = shifted - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

fn digits(bytes: &[u8]) -> Option<i64> {
    if bytes.is_empty() || !bytes.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(
        bytes
            .iter()
            .fold(0i64, |acc, digit| acc * 10 + i64::from(digit - b'0')),
    )
}

/// Parses `2026-11-22T00:05:42.394+0000` (also `+01:00`, `Z`, and any number of fraction digits) into
/// nanoseconds since the Unix epoch, UTC.
pub fn parse_iso8601(text: &[u8]) -> Option<i64> {
    if text.len() < 19 || text[4] != b'-' || text[7] != b'-' || text[10] != b'T' {
        return None;
    }
    if text[13] != b':' || text[16] != b':' {
        return None;
    }
    let year = digits(&text[0..4])?;
    let month = digits(&text[5..7])?;
    let day = digits(&text[8..10])?;
    let hour = digits(&text[11..13])?;
    let minute = digits(&text[14..16])?;
    let second = digits(&text[17..19])?;
    // Years outside 1970–2200 are garbage, and would overflow nanoseconds since the epoch.
    if !(1970..=2200).contains(&year) {
        return None;
    }
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 {
        return None;
    }
    let mut rest = &text[19..];
    let mut fraction_nanos = 0i64;
    if rest.first() == Some(&b'.') {
        let count = rest[1..].iter().take_while(|b| b.is_ascii_digit()).count();
        if count == 0 {
            return None;
        }
        let mut scale = 100_000_000i64;
        for digit in &rest[1..1 + count.min(9)] {
            fraction_nanos += i64::from(digit - b'0') * scale;
            scale /= 10;
        }
        rest = &rest[1 + count..];
    }
    let offset_seconds = match rest {
        [] | [b'Z'] => 0,
        [sign @ (b'+' | b'-'), tail @ ..] => {
            let (hours, minutes) = match tail {
                [h1, h2, b':', m1, m2] | [h1, h2, m1, m2] => ([*h1, *h2], [*m1, *m2]),
                _ => return None,
            };
            let value = digits(&hours)? * 3600 + digits(&minutes)? * 60;
            if *sign == b'-' {
                -value
            } else {
                value
            }
        }
        _ => return None,
    };
    let seconds = days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second
        - offset_seconds;
    seconds
        .checked_mul(NANOS_PER_SECOND)?
        .checked_add(fraction_nanos)
}

/// Formats nanoseconds since the Unix epoch as `2026-11-22T00:05:42.394123Z` (microseconds, UTC).
pub fn format_iso8601(epoch_nanos: i64) -> String {
    let seconds = epoch_nanos.div_euclid(NANOS_PER_SECOND);
    let micros = epoch_nanos.rem_euclid(NANOS_PER_SECOND) / 1000;
    let (year, month, day) = civil_from_days(seconds.div_euclid(86_400));
    let second_of_day = seconds.rem_euclid(86_400);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{micros:06}Z",
        second_of_day / 3600,
        second_of_day % 3600 / 60,
        second_of_day % 60
    )
}

/// The `.5` of `17:30:00.5+01:00`, and what follows it.
fn split_fraction(rest: &str) -> Option<(f64, &str)> {
    let Some(after_dot) = rest.strip_prefix('.') else {
        return Some((0.0, rest));
    };
    let end = after_dot
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(after_dot.len());
    if end == 0 {
        return None;
    }
    let fraction = format!("0.{}", &after_dot[..end]).parse::<f64>().ok()?;
    Some((fraction, &after_dot[end..]))
}

/// `Z` or `±hh:mm`, in seconds east of UTC.
fn zone_offset(zone: &str) -> Option<i64> {
    if matches!(zone, "Z" | "z") {
        return Some(0);
    }
    let sign = match zone.as_bytes().first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let r = &zone[1..];
    if r.len() != 5 || r.as_bytes()[2] != b':' {
        return None;
    }
    let hours: i64 = r[0..2].parse().ok()?;
    let minutes: i64 = r[3..5].parse().ok()?;
    (hours <= 23 && minutes <= 59).then_some(sign * (hours * 3600 + minutes * 60))
}

/// Days in a month of the proleptic Gregorian calendar; `None` for a month that is not one.
fn days_in_month(year: i64, month: i64) -> Option<i64> {
    Some(match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        _ => return None,
    })
}

/// An RFC 3339 time (`2026-11-22T17:30:00Z`, `2026-11-22 18:30:00.5+01:00`) in seconds since the
/// epoch; `None` when the text is not one (a zone is required, dates must exist).
pub fn parse_rfc3339(text: &str) -> Option<f64> {
    let b = text.as_bytes();
    let shape_ok = b.len() >= 20
        && b[4] == b'-'
        && b[7] == b'-'
        && matches!(b[10], b'T' | b't' | b' ')
        && b[13] == b':'
        && b[16] == b':';
    if !shape_ok {
        return None;
    }
    let digits = |range: std::ops::Range<usize>| -> Option<i64> {
        let part = text.get(range)?;
        if part.bytes().all(|c| c.is_ascii_digit()) {
            part.parse().ok()
        } else {
            None
        }
    };
    let (year, month, day) = (digits(0..4)?, digits(5..7)?, digits(8..10)?);
    let (hour, minute, second) = (digits(11..13)?, digits(14..16)?, digits(17..19)?);
    let (fraction, zone) = split_fraction(&text[19..])?;
    let offset_s = zone_offset(zone)?;
    let month_days = days_in_month(year, month)?;
    if day < 1 || day > month_days || hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let seconds =
        days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offset_s;
    Some(seconds as f64 + fraction)
}

/// Now, in seconds since the Unix epoch.
pub fn unix_now() -> f64 {
    unix_seconds(std::time::SystemTime::now())
}

/// A wall-clock time as seconds since the Unix epoch (what `--start-at`, summary.json and
/// `cluster pause` print), 0 before the epoch.
pub fn unix_seconds(time: std::time::SystemTime) -> f64 {
    time.duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// `YYYYMMDD-HHMMSS` in UTC of a time in whole seconds since the epoch (names of result directories).
pub fn compact_utc(unix_s: u64) -> String {
    let (days, rem) = ((unix_s / 86_400) as i64, unix_s % 86_400);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}{month:02}{day:02}-{:02}{:02}{:02}",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_round_trip_and_offsets() {
        let utc = parse_iso8601(b"2026-11-22T00:05:42.394+0000").unwrap();
        assert_eq!(format_iso8601(utc), "2026-11-22T00:05:42.394000Z");
        let plus_one = parse_iso8601(b"2026-11-22T01:05:42.394+0100").unwrap();
        assert_eq!(utc, plus_one);
        assert_eq!(
            parse_iso8601(b"1970-01-01T00:00:01.000Z"),
            Some(NANOS_PER_SECOND)
        );
        assert_eq!(
            parse_iso8601(b"2000-02-29T00:00:00.000+00:00"),
            Some(951_782_400 * NANOS_PER_SECOND)
        );
        assert_eq!(parse_iso8601(b"2026-13-22T00:05:42.394+0000"), None);
        assert_eq!(parse_iso8601(b"2026-11-22T00:05"), None);
    }

    #[test]
    fn rfc3339_needs_a_zone_and_a_real_date() {
        assert_eq!(parse_rfc3339("2025-11-22T17:30:00Z"), Some(1_763_832_600.0));
        assert_eq!(
            parse_rfc3339("2025-11-22 18:30:00.25+01:00"),
            Some(1_763_832_600.25)
        );
        for bad in [
            "2025-11-22T17:30:00",
            "2025-02-29T00:00:00Z",
            "2025-11-22T17:30:00+0100",
            "2025-11-22T24:00:00Z",
            "2025-11-22T17:30:00.Z",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
        assert_eq!(parse_rfc3339("2024-02-29T00:00:00Z"), Some(1_709_164_800.0));
    }

    #[test]
    fn calendar_days_round_trip() {
        for days in [-719_468, -1, 0, 1, 10_957, 20_779, 2_932_896] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days, "{y}-{m}-{d}");
        }
        assert_eq!(days_from_civil(2026, 11, 22), 20_779);
        assert_eq!(compact_utc(1_795_306_102), "20261122-000822");
    }
}
