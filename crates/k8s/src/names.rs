//! Kubernetes name rules (DNS-1123) and label values.

/// A DNS-1123 label: at most 63 lower-case letters, digits and '-', starting and ending alphanumeric
/// (namespaces, Services, Jobs).
pub fn is_dns1123_label(name: &str) -> bool {
    let bytes = name.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 63
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        && bytes[0] != b'-'
        && bytes[bytes.len() - 1] != b'-'
}

/// A DNS-1123 subdomain: at most 253 characters, labels joined by '.' (StorageClasses, most objects).
pub fn is_dns1123_subdomain(name: &str) -> bool {
    name.len() <= 253
        && name.split('.').all(|label| {
            let bytes = label.as_bytes();
            !bytes.is_empty()
                && bytes
                    .iter()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
                && bytes[0] != b'-'
                && bytes[bytes.len() - 1] != b'-'
        })
}

/// A label value: at most 63 characters of letters, digits, '-', '_' and '.', starting and ending
/// alphanumeric (zone names as node-affinity labels).
pub fn is_label_value(value: &str) -> bool {
    let bytes = value.as_bytes();
    bytes.is_empty()
        || (bytes.len() <= 63
            && bytes
                .iter()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
            && bytes[0].is_ascii_alphanumeric()
            && bytes[bytes.len() - 1].is_ascii_alphanumeric())
}

/// A local cluster name (`k8s-gc-1`, `My_Plan-2`) as a DNS-1123 label: lower case, anything else '-'.
pub fn to_label(name: &str) -> String {
    let mapped: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    mapped.trim_matches('-').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_and_subdomains() {
        for good in ["a", "bench", "k8s-gc-1", "a1-b2", &"x".repeat(63)] {
            assert!(is_dns1123_label(good), "{good}");
            assert!(is_dns1123_subdomain(good), "{good}");
        }
        for bad in ["", "Bench", "-a", "a-", "a_b", "a.b", "ä", &"x".repeat(64)] {
            assert!(!is_dns1123_label(bad), "{bad}");
        }
        assert!(is_dns1123_subdomain("premium-rwo.example.com"));
        for bad in ["", "a..b", ".a", "a.", "Premium", "a_b", &"x".repeat(254)] {
            assert!(!is_dns1123_subdomain(bad), "{bad}");
        }
        assert!(is_label_value("us-east1-b") && is_label_value("eu_west.1a"));
        assert!(!is_label_value("-a") && !is_label_value("a b"));
        assert_eq!(to_label("My_Plan-2"), "my-plan-2");
        assert_eq!(to_label("__x__"), "x");
    }
}
