//! From the evidence to the verdict: doubtful or not, and why, in one sentence per reason.

use cqlbench_results::{Evidence, Validity, ValidityThresholds};

/// The names `--validity-thresholds` and a plan's `[validity]` take.
pub const THRESHOLD_NAMES: [&str; 6] = [
    "other-cpu",
    "busy-share",
    "steal",
    "client-cpu",
    "lateness-p99-ms",
    "swap-pages-per-s",
];

#[derive(Debug, thiserror::Error)]
pub enum ThresholdError {
    #[error("unknown validity threshold '{name}' (known: {})", THRESHOLD_NAMES.join(", "))]
    Unknown { name: String },
    #[error("validity threshold {name}: '{value}' is not a number of at least 0")]
    BadValue { name: String, value: String },
    #[error("validity threshold '{given}': write NAME=VALUE (e.g. other-cpu=0.3)")]
    Malformed { given: String },
}

/// Sets one threshold by name.
pub fn set_threshold(
    thresholds: &mut ValidityThresholds,
    name: &str,
    value: &str,
) -> Result<(), ThresholdError> {
    let slot = match name {
        "other-cpu" => &mut thresholds.other_cpu,
        "busy-share" => &mut thresholds.busy_share,
        "steal" => &mut thresholds.steal,
        "client-cpu" => &mut thresholds.client_cpu,
        "lateness-p99-ms" => &mut thresholds.lateness_p99_ms,
        "swap-pages-per-s" => &mut thresholds.swap_pages_per_s,
        _ => {
            return Err(ThresholdError::Unknown {
                name: name.to_string(),
            })
        }
    };
    *slot = value
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0)
        .ok_or_else(|| ThresholdError::BadValue {
            name: name.to_string(),
            value: value.to_string(),
        })?;
    Ok(())
}

/// `other-cpu=0.3,steal=0.1` over the defaults.
pub fn parse_thresholds(text: &str) -> Result<ValidityThresholds, ThresholdError> {
    let mut thresholds = ValidityThresholds::default();
    for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let (name, value) = item
            .split_once('=')
            .ok_or_else(|| ThresholdError::Malformed {
                given: item.to_string(),
            })?;
        set_threshold(&mut thresholds, name.trim(), value)?;
    }
    Ok(thresholds)
}

fn percent(share: f64) -> String {
    format!("{:.0} %", share * 100.0)
}

/// The verdict on a run with this evidence; `lateness_p99_ms` is the client's own send lateness and
/// `threads` its load threads.
pub fn verdict(
    evidence: Evidence,
    thresholds: ValidityThresholds,
    lateness_p99_ms: Option<f64>,
    threads: usize,
) -> Validity {
    let mut reasons = Vec::new();
    let seconds = evidence.seconds;
    if seconds > 0.0 && evidence.busy_seconds >= thresholds.busy_share * seconds {
        let busy: Vec<f64> = evidence
            .per_second
            .iter()
            .filter(|s| s.other_cpu >= thresholds.other_cpu)
            .map(|s| s.other_cpu)
            .collect();
        let share = busy.iter().sum::<f64>() / busy.len().max(1) as f64;
        let named: Vec<String> = evidence
            .top_other
            .iter()
            .take(3)
            .map(|p| format!("{} (pid {}) {:.1} s", p.name, p.pid, p.cpu_s))
            .collect();
        reasons.push(format!(
            "other processes used {} of the CPU for {:.0} s of the {:.0} s window{}",
            percent(share),
            evidence.busy_seconds,
            seconds,
            if named.is_empty() {
                String::new()
            } else {
                format!(" (most: {})", named.join(", "))
            }
        ));
    }
    if seconds > 0.0 && evidence.steal >= thresholds.steal {
        reasons.push(format!("steal time {}", percent(evidence.steal)));
    }
    let client_share = evidence.client_cpu_cores / threads.max(1) as f64;
    if seconds > 0.0 && client_share >= thresholds.client_cpu {
        reasons.push(format!(
            "client CPU at {} of its {threads} load thread(s)' cores",
            percent(client_share)
        ));
    }
    if let Some(p99) = lateness_p99_ms.filter(|p| *p >= thresholds.lateness_p99_ms) {
        reasons.push(format!("client lateness p99 {p99:.1} ms"));
    }
    if seconds > 0.0 && evidence.swap_pages_per_s >= thresholds.swap_pages_per_s {
        reasons.push(format!(
            "swapping: {:.0} pages/s",
            evidence.swap_pages_per_s
        ));
    }
    Validity {
        doubtful: !reasons.is_empty(),
        reasons,
        evidence: Some(evidence),
        thresholds: Some(thresholds),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cqlbench_results::{EvidenceSecond, ProcessCpu};

    fn second(other_cpu: f64) -> EvidenceSecond {
        EvidenceSecond {
            other_cpu,
            ..EvidenceSecond::default()
        }
    }

    fn evidence(others: &[f64]) -> Evidence {
        let t = ValidityThresholds::default();
        Evidence {
            seconds: others.len() as f64,
            cores: 2,
            busy_seconds: others.iter().filter(|o| **o >= t.other_cpu).count() as f64,
            per_second: others.iter().map(|o| second(*o)).collect(),
            top_other: vec![ProcessCpu {
                pid: 42,
                name: "python3".into(),
                cpu_s: 6.1,
            }],
            ..Evidence::default()
        }
    }

    #[test]
    fn a_busy_process_for_a_third_of_the_window_makes_it_doubtful_a_quiet_window_does_not() {
        let t = ValidityThresholds::default();
        let quiet = verdict(evidence(&[0.02; 30]), t, Some(0.4), 1);
        assert!(!quiet.doubtful, "{:?}", quiet.reasons);
        let mut others = vec![0.02; 30];
        others[10..20].fill(0.5);
        let busy = verdict(evidence(&others), t, Some(0.4), 1);
        assert!(busy.doubtful);
        assert_eq!(
            busy.reasons,
            ["other processes used 50 % of the CPU for 10 s of the 30 s window (most: python3 (pid 42) 6.1 s)"]
        );
    }

    #[test]
    fn steal_client_cpu_lateness_and_swap_each_give_a_reason() {
        let mut e = evidence(&[0.0; 10]);
        e.steal = 0.12;
        e.client_cpu_cores = 1.9;
        e.swap_pages_per_s = 30.0;
        let v = verdict(e, ValidityThresholds::default(), Some(8.0), 2);
        assert_eq!(
            v.reasons,
            [
                "steal time 12 %",
                "client CPU at 95 % of its 2 load thread(s)' cores",
                "client lateness p99 8.0 ms",
                "swapping: 30 pages/s"
            ]
        );
    }

    #[test]
    fn thresholds_are_set_by_name_and_bad_ones_refused() {
        let t = parse_thresholds("other-cpu=0.5, steal=0.1").unwrap();
        assert_eq!((t.other_cpu, t.steal), (0.5, 0.1));
        assert_eq!(t.busy_share, ValidityThresholds::default().busy_share);
        let unknown = parse_thresholds("other_cpu=0.5").unwrap_err().to_string();
        assert!(
            unknown.contains("unknown validity threshold 'other_cpu'")
                && unknown.contains("other-cpu"),
            "{unknown}"
        );
        assert!(parse_thresholds("steal=-1")
            .unwrap_err()
            .to_string()
            .contains("at least 0"));
        assert!(parse_thresholds("steal")
            .unwrap_err()
            .to_string()
            .contains("NAME=VALUE"));
    }
}
