//! Workload files that ship inside cqlbench: easy-cass-stress's workloads in cqlbench's own format,
//! run by name (`cqlbench run LWT`) and listed by `cqlbench workloads`. Those that cannot be
//! expressed or run here are listed with the reason.

/// A workload file compiled into the binary.
pub struct Shipped {
    pub name: &'static str,
    pub text: &'static str,
}

macro_rules! shipped {
    ($($name:literal),* $(,)?) => {
        &[$(Shipped { name: $name, text: include_str!(concat!("../workloads/", $name, ".yaml")) }),*]
    };
}

/// easy-cass-stress's workloads besides BasicTimeSeries and KeyValue (built in).
pub const SHIPPED: &[Shipped] = shipped!(
    "AllowFiltering",
    "CountersWide",
    "LWT",
    "Locking",
    "Maps",
    "MaterializedViews",
    "RandomPartitionAccess",
    "RangeScan",
    "SAI",
    "Sets",
    "UdtTimeSeries",
);

/// easy-cass-stress's workloads that are not shipped, and why.
pub const NOT_SHIPPED: &[(&str, &str)] = &[
    (
        "CreateDrop",
        "creates and drops tables while it runs; a workload file's schema is made before the measured phase",
    ),
    (
        "DSESearch",
        "queries DSE Search (solr_query), which only DataStax Enterprise has",
    ),
    (
        "TxnCounter",
        "needs Accord transactions (BEGIN TRANSACTION), which no released Apache Cassandra has",
    ),
];

/// The shipped workload of this name (any case).
pub fn find(name: &str) -> Option<&'static Shipped> {
    SHIPPED.iter().find(|w| w.name.eq_ignore_ascii_case(name))
}

impl Shipped {
    /// The file's `description:` line.
    pub fn description(&self) -> &'static str {
        self.text
            .lines()
            .find_map(|l| l.strip_prefix("description:"))
            .map_or("", str::trim)
    }
}

#[cfg(test)]
mod tests {
    use super::SHIPPED;

    #[test]
    fn every_shipped_file_compiles_and_says_what_it_is() {
        for w in SHIPPED {
            let compiled = crate::load_text(
                w.name,
                &format!("{}.yaml", w.name),
                w.text,
                &Default::default(),
            )
            .unwrap_or_else(|e| panic!("{}: {e}", w.name));
            assert!(!compiled.ops.is_empty(), "{}", w.name);
            assert!(w.description().contains("easy-cass-stress"), "{}", w.name);
        }
    }
}
