//! The campaign's environment record: enough to reproduce a result, or to distrust it.

use std::path::Path;

use cqlbench_cluster::Home;
use cqlbench_machine::facts::{cpu_model, disk_of, kernel, kernel_build, meminfo_kib};
use cqlbench_results::{Disks, Environment, EnvironmentConfig, FoundJdk};

use crate::plan::Plan;

/// `java -version`'s banner: vendor, full build and VM (e.g. `OpenJDK 64-Bit Server VM (build
/// 17.0.15+6-Debian-1deb12u1, mixed mode, sharing)`), which the major version alone does not tell.
fn java_version_banner(java: &Path) -> Option<Vec<String>> {
    let output = std::process::Command::new(java)
        .arg("-version")
        .stdin(std::process::Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&output.stderr);
    Some(
        text.lines()
            .map(|l| l.trim().to_string())
            .filter(|l| !l.is_empty())
            .collect(),
    )
}

/// Everything about the machine and the software that a reader of the results needs.
pub fn record(plan: &Plan, dir: &Path, home: &Home) -> Environment {
    let jdks_found = cqlbench_cluster::jdk::discover(home)
        .iter()
        .map(|j| FoundJdk {
            major: j.major,
            version: j.version.clone(),
            build: java_version_banner(&j.java()),
            home: j.home.clone(),
        })
        .collect();
    let configs = plan
        .configs
        .iter()
        .map(|c| EnvironmentConfig {
            name: c.name.clone(),
            directory: c.dir_name.clone(),
            spec: c.spec.clone(),
        })
        .collect();
    Environment {
        version: cqlbench_results::FORMAT_VERSION,
        cqlbench_version: env!("CARGO_PKG_VERSION").to_string(),
        recorded_at_unix_s: cqlbench_units::time::unix_now(),
        cpu_model: cpu_model(),
        cores: std::thread::available_parallelism().map(|n| n.get()).ok(),
        memory_kib: meminfo_kib("MemTotal:"),
        kernel: kernel(),
        kernel_build: kernel_build(),
        disk: Disks {
            results: disk_of(dir),
            clusters: disk_of(home.root()),
        },
        jdks_found,
        configs,
        workload: plan.load.workload.clone(),
        load_args: plan.load.args.clone(),
        plan: plan.source.clone(),
        probe: None,
        cost: plan.cost.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_record_names_machine_disk_jdk_builds_and_plan() {
        let text = "[[config]]\nname = \"G1\"\n[load]\nworkload = \"KeyValue\"\nrates = [1]\nduration = \"1s\"\n";
        let plan = crate::parse_plan("p.toml", text).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let record =
            serde_json::to_value(record(&plan, dir.path(), &Home::new(dir.path()))).unwrap();
        assert_eq!(record["plan"], text);
        assert!(record["cores"].as_u64().unwrap_or(0) >= 1, "{record}");
        assert!(record["memory_kib"].as_u64().unwrap_or(0) > 0, "{record}");
        assert!(
            !record["kernel"].as_str().unwrap_or("").is_empty(),
            "{record}"
        );
        assert!(record["disk"]["results"]["device"].is_string(), "{record}");
        for jdk in record["jdks_found"].as_array().unwrap() {
            let banner = jdk["build"].to_string();
            assert!(banner.contains(&format!("{}", jdk["major"])), "{banner}");
        }
    }
}
