//! `--retry-doubtful`: the finished cells whose result is doubtful (taken while the machine was not
//! quiet, `summary.json`'s `validity`) are set aside beside themselves as `<cell>.doubtful-<n>`, so
//! that the campaign, resuming, runs exactly those cells again. Reports skip the set-aside copies.

use std::path::{Path, PathBuf};

use cqlbench_results::{Summary, SET_ASIDE, SUMMARY_FILE};

use crate::error::{CampaignError, IoContext};
use crate::plan::Plan;

/// Sets every doubtful finished cell of the plan aside; returns their new places.
pub fn set_aside(plan: &Plan, dir: &Path) -> Result<Vec<PathBuf>, CampaignError> {
    let mut moved = Vec::new();
    for config in &plan.configs {
        for cell in cell_dirs(&dir.join(&config.dir_name)) {
            let doubtful = Summary::read(&cell)
                .ok()
                .and_then(|s| s.validity)
                .is_some_and(|v| v.doubtful);
            if doubtful {
                let to = free_name(&cell);
                std::fs::rename(&cell, &to)
                    .context(|| format!("setting {} aside as {}", cell.display(), to.display()))?;
                moved.push(to);
            }
        }
    }
    Ok(moved)
}

/// The finished cells below a configuration's directory: rate directories, or their repeats (not
/// its populate run, hidden or partial directories, or cells already set aside).
fn cell_dirs(config_dir: &Path) -> Vec<PathBuf> {
    let mut cells = Vec::new();
    for rate in visible_subdirs(config_dir) {
        if rate.file_name().is_some_and(|n| n == "populate") {
            continue;
        }
        if rate.join(SUMMARY_FILE).is_file() {
            cells.push(rate);
        } else {
            cells.extend(
                visible_subdirs(&rate)
                    .into_iter()
                    .filter(|r| r.join(SUMMARY_FILE).is_file()),
            );
        }
    }
    cells
}

/// A missing directory has no cells to set aside.
fn visible_subdirs(dir: &Path) -> Vec<PathBuf> {
    cqlbench_results::result_subdirectories(dir).unwrap_or_default()
}

/// `<cell>.doubtful-<n>` with the first n not taken.
fn free_name(cell: &Path) -> PathBuf {
    let name = cell.file_name().unwrap_or_default().to_string_lossy();
    (1..)
        .map(|n| cell.with_file_name(format!("{name}{SET_ASIDE}{n}")))
        .find(|p| !p.exists())
        .unwrap_or_else(|| cell.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;
    use cqlbench_results::Validity;

    fn cell(dir: &Path, doubtful: bool) {
        std::fs::create_dir_all(dir).unwrap();
        let summary = Summary {
            version: cqlbench_results::FORMAT_VERSION,
            validity: Some(Validity {
                doubtful,
                ..Validity::default()
            }),
            ..Summary::default()
        };
        cqlbench_results::write_json(&dir.join(SUMMARY_FILE), &summary).unwrap();
    }

    #[test]
    fn only_doubtful_cells_are_set_aside_beside_themselves() {
        let text = "[[config]]\nname = \"G1\"\n[load]\nworkload = \"KeyValue\"\nrates = [1, 2]\nduration = \"1s\"\n";
        let plan = crate::parse_plan("p.toml", text).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let g1 = dir.path().join("G1");
        cell(&g1.join("1"), false);
        cell(&g1.join("2"), true);
        cell(&g1.join("populate"), true);
        cell(&g1.join("3").join("2"), true);
        std::fs::create_dir_all(g1.join("2.doubtful-1")).unwrap();
        let moved = set_aside(&plan, dir.path()).unwrap();
        assert_eq!(
            moved,
            [g1.join("2.doubtful-2"), g1.join("3").join("2.doubtful-1")]
        );
        assert!(g1.join("1").join(SUMMARY_FILE).is_file());
        assert!(!g1.join("2").exists());
        assert!(g1.join("populate").join(SUMMARY_FILE).is_file());
        // Run again: nothing doubtful is left to set aside.
        assert!(set_aside(&plan, dir.path()).unwrap().is_empty());
    }
}
