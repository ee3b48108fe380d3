//! Human-friendly quantities on cqlbench's command line.
//!
//! Every parser returns a typed error that names the input and what was expected, so that the CLI can
//! print one clear line. Suffixes follow the tools operators already use: `30s`/`5m`/`1h` for
//! durations (a bare number is seconds — tlp-stress's silent `-d 30s` → 0 minutes is the bug to avoid),
//! `k`/`M`/`B` for counts and rates (decimal), `K`/`M`/`G` for memory sizes (binary, like `-Xmx`).
//! [`time`] holds the calendar and timestamp arithmetic every crate shares.

use std::time::Duration;

pub mod time;

/// A quantity that could not be parsed; the message is meant for one line of CLI output.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {what} '{input}': {reason}")]
pub struct UnitError {
    pub what: &'static str,
    pub input: String,
    pub reason: String,
}

fn err(what: &'static str, input: &str, reason: impl Into<String>) -> UnitError {
    UnitError {
        what,
        input: input.to_string(),
        reason: reason.into(),
    }
}

/// Splits `"12.5ms"` into `(12.5, "ms")`.
fn split_number(input: &str) -> Option<(f64, &str)> {
    let trimmed = input.trim();
    let end = trimmed
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(trimmed.len());
    let (number, suffix) = trimmed.split_at(end);
    let value: f64 = number.parse().ok()?;
    Some((value, suffix.trim()))
}

/// Parses a duration: `250us`, `500ms`, `30s`, `30m`, `2h`, `1d`, or a bare number of seconds. Zero is allowed.
pub fn parse_duration(input: &str) -> Result<Duration, UnitError> {
    const WHAT: &str = "duration";
    let (value, suffix) = split_number(input).ok_or_else(|| {
        err(
            WHAT,
            input,
            "expected a number with an optional unit: us, ms, s, m, h, d",
        )
    })?;
    let seconds_per_unit = match suffix {
        "us" | "µs" => 1e-6,
        "ms" => 0.001,
        "" | "s" | "sec" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        "d" => 86400.0,
        other => {
            return Err(err(
                WHAT,
                input,
                format!("unknown unit '{other}' (use us, ms, s, m, h, d)"),
            ))
        }
    };
    let seconds = value * seconds_per_unit;
    if !seconds.is_finite() || seconds > 1e9 {
        return Err(err(WHAT, input, "too large"));
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// Parses a count with a decimal suffix: `200000`, `1k`, `100M`, `2B` (also `G`, `T`), `2.01k`, `2.05M`.
/// The arithmetic is exact on the decimal digits, so every decimal that names a whole number is accepted
/// (binary floating point would make `2.01k` 2009.9999…).
pub fn parse_count(input: &str) -> Result<u64, UnitError> {
    const WHAT: &str = "count";
    if input.trim_start().starts_with('-') {
        return Err(err(WHAT, input, "must not be negative"));
    }
    let trimmed = input.trim();
    let end = trimmed
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(trimmed.len());
    let (number, suffix) = trimmed.split_at(end);
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    let digits_only = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() && fraction.is_empty() || !digits_only(fraction) {
        return Err(err(
            WHAT,
            input,
            "expected a number with an optional suffix k, M or B",
        ));
    }
    let exponent = decimal_suffix_exponent(suffix.trim()).ok_or_else(|| {
        err(
            WHAT,
            input,
            format!("unknown suffix '{}' (use k, M or B)", suffix.trim()),
        )
    })?;
    // The digits the suffix moves in front of the point, then the ones that must be zero.
    let (moved, rest) = fraction.split_at(fraction.len().min(exponent as usize));
    if rest.bytes().any(|b| b != b'0') {
        return Err(err(WHAT, input, "must be a whole number"));
    }
    let mut value: u128 = 0;
    let padded = moved
        .bytes()
        .chain(std::iter::repeat(b'0'))
        .take(exponent as usize);
    for digit in whole.bytes().chain(padded) {
        value = value * 10 + u128::from(digit - b'0');
        if value > 1_000_000_000_000_000_000 {
            return Err(err(WHAT, input, "too large"));
        }
    }
    Ok(value as u64)
}

/// The power of ten a decimal suffix stands for.
fn decimal_suffix_exponent(suffix: &str) -> Option<u32> {
    match suffix {
        "" => Some(0),
        "k" | "K" => Some(3),
        "m" | "M" => Some(6),
        "b" | "B" | "g" | "G" => Some(9),
        "t" | "T" => Some(12),
        _ => None,
    }
}

/// Parses a rate in operations per second: `25000`, `25k`, `1.5k`. Must be positive.
pub fn parse_rate(input: &str) -> Result<f64, UnitError> {
    let value = parse_decimal(input, "rate")?;
    if value <= 0.0 {
        return Err(err("rate", input, "must be greater than zero"));
    }
    Ok(value)
}

fn parse_decimal(input: &str, what: &'static str) -> Result<f64, UnitError> {
    if input.trim_start().starts_with('-') {
        return Err(err(what, input, "must not be negative"));
    }
    let (value, suffix) = split_number(input).ok_or_else(|| {
        err(
            what,
            input,
            "expected a number with an optional suffix k, M or B",
        )
    })?;
    let exponent = decimal_suffix_exponent(suffix).ok_or_else(|| {
        err(
            what,
            input,
            format!("unknown suffix '{suffix}' (use k, M or B)"),
        )
    })?;
    let result = value * 10f64.powi(exponent as i32);
    if !result.is_finite() || result > 1e18 {
        return Err(err(what, input, "too large"));
    }
    Ok(result)
}

/// Parses a memory size in bytes with a binary suffix as the JVM's `-Xmx` takes it: `512M`, `1G`, `31g`,
/// `1024K`, or a bare number of bytes.
pub fn parse_size(input: &str) -> Result<u64, UnitError> {
    const WHAT: &str = "size";
    if input.trim_start().starts_with('-') {
        return Err(err(WHAT, input, "must not be negative"));
    }
    let (value, suffix) = split_number(input).ok_or_else(|| {
        err(
            WHAT,
            input,
            "expected a number with a unit K, M or G (e.g. 512M)",
        )
    })?;
    let multiplier: u64 = match suffix.to_ascii_uppercase().trim_end_matches('B') {
        "" => 1,
        "K" | "KI" => 1 << 10,
        "M" | "MI" => 1 << 20,
        "G" | "GI" => 1 << 30,
        "T" | "TI" => 1 << 40,
        _ => {
            return Err(err(
                WHAT,
                input,
                format!("unknown unit '{suffix}' (use K, M or G)"),
            ))
        }
    };
    let bytes = value * multiplier as f64;
    if bytes.fract() != 0.0 || !bytes.is_finite() || bytes > u64::MAX as f64 / 2.0 {
        return Err(err(WHAT, input, "must be a whole number of bytes"));
    }
    Ok(bytes as u64)
}

/// Formats a byte count the way the JVM's `-Xmx` accepts it, using the largest exact unit (`512M`, `1G`).
pub fn format_jvm_size(bytes: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1 << 30, "G"), (1 << 20, "M"), (1 << 10, "K")];
    for (unit, name) in UNITS {
        if bytes >= unit && bytes.is_multiple_of(unit) {
            return format!("{}{}", bytes / unit, name);
        }
    }
    bytes.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_take_units_and_bare_seconds() {
        assert_eq!(parse_duration("30s").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_duration("30m").unwrap(), Duration::from_secs(1800));
        assert_eq!(parse_duration("2h").unwrap(), Duration::from_secs(7200));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("500us").unwrap(), Duration::from_micros(500));
        assert_eq!(parse_duration("45").unwrap(), Duration::from_secs(45));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
    }

    #[test]
    fn bad_durations_are_errors_not_zero() {
        for bad in ["", "s", "30x", "-5s", "abc", "1e999"] {
            assert!(parse_duration(bad).is_err(), "{bad} should be refused");
        }
        let message = parse_duration("30x").unwrap_err().to_string();
        assert!(
            message.contains("30x") && message.contains("unit"),
            "{message}"
        );
    }

    #[test]
    fn counts_take_decimal_suffixes() {
        assert_eq!(parse_count("200000").unwrap(), 200_000);
        assert_eq!(parse_count("100M").unwrap(), 100_000_000);
        assert_eq!(parse_count("1k").unwrap(), 1_000);
        assert_eq!(parse_count("2B").unwrap(), 2_000_000_000);
        assert_eq!(parse_count("1.5k").unwrap(), 1_500);
        assert!(parse_count("1.5").is_err());
        assert!(parse_count("-3").is_err());
        assert!(parse_count("5q").is_err());
    }

    #[test]
    fn counts_accept_every_decimal_that_names_a_whole_number() {
        let table: [(&str, u64); 12] = [
            ("2.01k", 2_010),
            ("2.05M", 2_050_000),
            ("0.001k", 1),
            ("1.999k", 1_999),
            ("4.1M", 4_100_000),
            ("0.3k", 300),
            ("1.23456789B", 1_234_567_890),
            ("7.000k", 7_000),
            ("12.00", 12),
            ("0.5M", 500_000),
            (".5k", 500),
            ("3.", 3),
        ];
        for (text, expected) in table {
            assert_eq!(parse_count(text), Ok(expected), "{text}");
        }
        for not_whole in ["2.0001k", "12.50", "1.5", "0.1", "1.0000001M", "."] {
            assert!(
                parse_count(not_whole).is_err(),
                "{not_whole} should be refused"
            );
        }
        assert!(parse_count("2000000T")
            .unwrap_err()
            .to_string()
            .contains("too large"));
    }

    #[test]
    fn rates_must_be_positive() {
        assert_eq!(parse_rate("25k").unwrap(), 25_000.0);
        assert_eq!(parse_rate("3000").unwrap(), 3_000.0);
        assert!(parse_rate("-5")
            .unwrap_err()
            .to_string()
            .contains("negative"));
        assert!(parse_rate("0").is_err());
    }

    #[test]
    fn sizes_are_binary_like_the_jvm() {
        assert_eq!(parse_size("512M").unwrap(), 512 << 20);
        assert_eq!(parse_size("1G").unwrap(), 1 << 30);
        assert_eq!(parse_size("31g").unwrap(), 31 << 30);
        assert_eq!(parse_size("1024k").unwrap(), 1 << 20);
        assert_eq!(parse_size("2GB").unwrap(), 2 << 30);
        assert!(parse_size("12X").is_err());
        assert!(parse_size("-1G").is_err());
    }

    #[test]
    fn jvm_sizes_use_the_largest_exact_unit() {
        assert_eq!(format_jvm_size(512 << 20), "512M");
        assert_eq!(format_jvm_size(1 << 30), "1G");
        assert_eq!(format_jvm_size(1536 << 20), "1536M");
        assert_eq!(format_jvm_size(1000), "1000");
    }
}
