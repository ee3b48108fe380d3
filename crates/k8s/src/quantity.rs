//! Kubernetes resource quantities ("16Gi", "500m", "2"), as far as a benchmark plan needs them.

/// Bytes of a memory or storage quantity: a decimal number with an optional suffix Ki, Mi, Gi, Ti, Pi, Ei
/// (powers of 1024) or k, M, G, T, P, E (powers of 1000). Fractions of a byte are rounded up.
pub fn parse_bytes(text: &str) -> Result<u64, String> {
    let (number, suffix) = split(text)?;
    let multiplier: f64 = match suffix {
        "" => 1.0,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        "Ki" => 1024.0,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        "Ei" => 1024f64.powi(6),
        _ => {
            return Err(format!(
                "{text:?} is not a size: use a number with Ki, Mi, Gi, Ti (or k, M, G, T), e.g. \"16Gi\""
            ))
        }
    };
    let bytes = (number * multiplier).ceil();
    if bytes < 1.0 || bytes > u64::MAX as f64 {
        return Err(format!("{text:?} is not a positive size"));
    }
    Ok(bytes as u64)
}

/// Millicores of a CPU quantity: "2", "1.5", "500m".
pub fn parse_millicores(text: &str) -> Result<u64, String> {
    let (number, suffix) = split(text)?;
    let millis = match suffix {
        "" => number * 1000.0,
        "m" => number,
        _ => {
            return Err(format!(
                "{text:?} is not a CPU amount: use cores (\"4\", \"1.5\") or millicores (\"500m\")"
            ))
        }
    };
    if millis < 1.0 || millis.fract() != 0.0 {
        return Err(format!(
            "{text:?} is not a positive whole number of millicores"
        ));
    }
    Ok(millis as u64)
}

fn split(text: &str) -> Result<(f64, &str), String> {
    let end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, suffix) = text.split_at(end);
    let valid = !number.is_empty()
        && number.matches('.').count() <= 1
        && number != "."
        && !number.ends_with('.');
    let value = number
        .parse::<f64>()
        .ok()
        .filter(|v| valid && v.is_finite())
        .ok_or_else(|| {
            format!("{text:?} is not a Kubernetes quantity (e.g. \"16Gi\", \"4\", \"500m\")")
        })?;
    Ok((value, suffix))
}

/// A heap in bytes as a quantity K8ssandra's `heap_max_size` takes ("8Gi", "1536Mi").
pub fn heap_quantity(bytes: u64) -> String {
    const GIB: u64 = 1 << 30;
    const MIB: u64 = 1 << 20;
    if bytes.is_multiple_of(GIB) {
        format!("{}Gi", bytes / GIB)
    } else if bytes.is_multiple_of(MIB) {
        format!("{}Mi", bytes / MIB)
    } else {
        format!("{}Ki", bytes.div_ceil(1024))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_bytes("16Gi").unwrap(), 16 << 30);
        assert_eq!(parse_bytes("1.5Gi").unwrap(), 3 << 29);
        assert_eq!(parse_bytes("8G").unwrap(), 8_000_000_000);
        assert_eq!(parse_bytes("512Mi").unwrap(), 512 << 20);
        assert_eq!(parse_bytes("1024").unwrap(), 1024);
        for bad in [
            "", "Gi", "16GB", "16 Gi", "-1Gi", "1.2.3Gi", "0", "16g", "1.",
        ] {
            assert!(parse_bytes(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn cpus() {
        assert_eq!(parse_millicores("4").unwrap(), 4000);
        assert_eq!(parse_millicores("1.5").unwrap(), 1500);
        assert_eq!(parse_millicores("500m").unwrap(), 500);
        for bad in ["", "0", "0.0001", "4 cores", "4Gi", "m"] {
            assert!(parse_millicores(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn heaps() {
        assert_eq!(heap_quantity(8 << 30), "8Gi");
        assert_eq!(heap_quantity(1536 << 20), "1536Mi");
    }
}
