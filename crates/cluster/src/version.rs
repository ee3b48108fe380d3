//! Cassandra versions and the JDKs each one runs on (the supported-pairs table).

use serde::{Deserialize, Serialize};

use crate::error::{ClusterError, Result};

/// The release series decides configuration key names, JVM module flags and supported JDKs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Series {
    /// 3.11.x: JDK 8 only, Thrift classes in a jar of their own, the old configuration key names.
    V3_11,
    V4_0,
    V4_1,
    V5_0,
    V6_0,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CassandraVersion {
    pub raw: String,
    pub series: Series,
}

pub const DEFAULT_CASSANDRA_VERSION: &str = "5.0.9";

impl CassandraVersion {
    pub fn parse(raw: &str) -> Result<Self> {
        let raw = raw.trim();
        let unsupported = || ClusterError::UnsupportedVersion(raw.to_string());
        let mut parts = raw.splitn(3, ['.', '-']);
        let major = parts.next().ok_or_else(unsupported)?;
        let minor = parts.next().ok_or_else(unsupported)?;
        let rest = parts.next().ok_or_else(unsupported)?;
        let valid_rest = !rest.is_empty()
            && rest
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-');
        if !valid_rest {
            return Err(unsupported());
        }
        let series = match (major, minor) {
            ("3", "11") => Series::V3_11,
            ("4", "0") => Series::V4_0,
            ("4", "1") => Series::V4_1,
            ("5", "0") => Series::V5_0,
            ("6", "0") => Series::V6_0,
            _ => return Err(unsupported()),
        };
        Ok(Self {
            raw: raw.to_string(),
            series,
        })
    }

    /// JDK majors this series is verified to start on, preferred first. On JDK 25, 5.0 and 6.0 run with
    /// cqlbench's Security Manager shim (see the `compat` module).
    pub fn supported_jdks(&self) -> &'static [u32] {
        match self.series {
            Series::V3_11 => &[8],
            // JDK 8 is where most 3.11 → 4.x upgrades start; JDK 11 stays the default.
            Series::V4_0 | Series::V4_1 => &[11, 8],
            Series::V5_0 | Series::V6_0 => &[17, 21, 25],
        }
    }

    /// Why a JDK outside the table cannot work, when there is more to say than "not verified".
    fn why_not(&self, jdk_major: u32) -> Option<&'static str> {
        match self.series {
            Series::V4_0 | Series::V4_1 if jdk_major >= crate::jdk::NO_SECURITY_MANAGER_FROM => Some(
                "its start-up installs a Security Manager, which JDK 24 and newer refuse, and cqlbench's compatibility shim covers only 5.0 and 6.0",
            ),
            Series::V5_0 | Series::V6_0 if jdk_major >= crate::jdk::NO_SECURITY_MANAGER_FROM => Some(
                "its start-up installs a Security Manager, which JDK 24 and newer refuse; cqlbench's compatibility shim for that and the JPMS options it runs with are verified on JDK 25 only",
            ),
            _ => None,
        }
    }

    pub fn default_jdk(&self) -> u32 {
        self.supported_jdks()[0]
    }

    /// Pairs that cannot start at all, whatever `--force-jdk` says: 3.11 runs on JDK 8 alone (it
    /// fails on 9+ where the JDK's internals it uses are gone or closed).
    pub fn check_possible(&self, jdk_major: u32) -> Result<()> {
        if self.series == Series::V3_11 && jdk_major != 8 {
            return Err(ClusterError::ImpossiblePair(format!(
                "Cassandra {} runs only on JDK 8, not on JDK {jdk_major}: use --jdk 8 (cqlbench installs it from Debian's packages into its cache)",
                self.raw
            )));
        }
        Ok(())
    }

    /// Refuses a pair outside the table, naming the JDKs that would work.
    pub fn check_jdk(&self, jdk_major: u32) -> Result<()> {
        self.check_possible(jdk_major)?;
        let supported = self.supported_jdks();
        if supported.contains(&jdk_major) {
            return Ok(());
        }
        let working = supported
            .iter()
            .map(|j| format!("JDK {j}"))
            .collect::<Vec<_>>()
            .join(" or ");
        Err(ClusterError::UnsupportedPair {
            cassandra: self.raw.clone(),
            jdk: jdk_major,
            why: self
                .why_not(jdk_major)
                .map(|why| format!(" ({why})"))
                .unwrap_or_default(),
            working,
            suggestion: supported[0],
        })
    }

    /// 3.11 and 4.0 only know the old `*_in_ms`/`*_in_mb` configuration keys; 4.1+ prefer units in values.
    pub fn uses_old_yaml_keys(&self) -> bool {
        matches!(self.series, Series::V3_11 | Series::V4_0)
    }

    /// 3.11 reads `seeds` as bare addresses (a `:port` suffix arrived with 4.0), serves Thrift unless
    /// told not to, and needs `cassandra-thrift` beside `cassandra-all` on its classpath.
    pub fn is_3_11(&self) -> bool {
        self.series == Series::V3_11
    }

    /// Maven artifacts (of `org.apache.cassandra`, at this version) the node's classpath needs.
    pub fn artifacts(&self) -> &'static [&'static str] {
        match self.series {
            // Without cassandra-thrift 3.11 dies at start-up: ClassNotFoundException
            // org.apache.cassandra.thrift.Cassandra$Iface.
            Series::V3_11 => &["cassandra-all", "cassandra-thrift"],
            _ => &["cassandra-all"],
        }
    }
}

impl std::fmt::Display for CassandraVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.raw)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_known_series() {
        assert_eq!(
            CassandraVersion::parse("4.0.19").unwrap().series,
            Series::V4_0
        );
        assert_eq!(
            CassandraVersion::parse("4.1.10").unwrap().series,
            Series::V4_1
        );
        assert_eq!(
            CassandraVersion::parse("5.0.9").unwrap().series,
            Series::V5_0
        );
        assert_eq!(
            CassandraVersion::parse("6.0-alpha2").unwrap().series,
            Series::V6_0
        );
        assert_eq!(
            CassandraVersion::parse("3.11.19").unwrap().series,
            Series::V3_11
        );
    }

    #[test]
    fn cassandra_3_11_runs_on_jdk8_only_even_when_forced() {
        let v = CassandraVersion::parse("3.11.19").unwrap();
        assert_eq!(v.default_jdk(), 8);
        assert!(v.check_jdk(8).is_ok());
        for jdk in [11, 17, 21, 25] {
            let message = v.check_possible(jdk).unwrap_err().to_string();
            assert!(
                message.contains("runs only on JDK 8") && message.contains(&format!("JDK {jdk}")),
                "{message}"
            );
            assert!(!message.contains("--force-jdk"), "{message}");
            assert_eq!(v.check_jdk(jdk).unwrap_err().to_string(), message);
        }
        assert_eq!(v.artifacts(), ["cassandra-all", "cassandra-thrift"]);
        assert!(v.uses_old_yaml_keys());
        // 4.x runs on JDK 8 too, JDK 11 staying the default.
        for raw in ["4.0.19", "4.1.10"] {
            let v = CassandraVersion::parse(raw).unwrap();
            assert!(v.check_jdk(8).is_ok(), "{raw}");
            assert_eq!(v.default_jdk(), 11);
            assert_eq!(v.artifacts(), ["cassandra-all"]);
        }
    }

    #[test]
    fn rejects_unknown_series_and_garbage() {
        for bad in ["3.0.29", "2.2.19", "5.1.0", "5.0", "", "5.0.9;rm", "latest"] {
            assert!(CassandraVersion::parse(bad).is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn refusal_names_working_jdks() {
        let v = CassandraVersion::parse("5.0.9").unwrap();
        let message = v.check_jdk(11).unwrap_err().to_string();
        assert!(message.contains("JDK 17 or JDK 21 or JDK 25"), "{message}");
        assert!(message.contains("--force-jdk"), "{message}");
        assert!(v.check_jdk(21).is_ok());
        assert!(v.check_jdk(25).is_ok());
        assert!(CassandraVersion::parse("6.0-alpha2")
            .unwrap()
            .check_jdk(25)
            .is_ok());
        for (version, jdk) in [
            ("5.0.9", 24),
            ("5.0.9", 26),
            ("6.0-alpha2", 24),
            ("6.0-alpha2", 27),
        ] {
            let message = CassandraVersion::parse(version)
                .unwrap()
                .check_jdk(jdk)
                .unwrap_err()
                .to_string();
            for part in [
                &format!("Cassandra {version} is not supported on JDK {jdk} ("),
                "Security Manager",
                "verified on JDK 25 only",
                "JDK 17 or JDK 21 or JDK 25",
            ] {
                assert!(message.contains(part), "{part} missing: {message}");
            }
            assert!(!message.contains('\n'), "{message}");
        }
        // Below JDK 24 there is no Security Manager story to tell.
        assert!(!v
            .check_jdk(11)
            .unwrap_err()
            .to_string()
            .contains("Security Manager"));
        let old = CassandraVersion::parse("4.0.19").unwrap();
        assert!(old
            .check_jdk(17)
            .unwrap_err()
            .to_string()
            .contains("JDK 11"));
        for raw in ["4.0.19", "4.1.10"] {
            let message = CassandraVersion::parse(raw)
                .unwrap()
                .check_jdk(25)
                .unwrap_err()
                .to_string();
            assert!(message.contains("Security Manager"), "{message}");
            assert!(message.contains("5.0 and 6.0"), "{message}");
            assert!(!message.contains('\n'), "{message}");
        }
    }
}
