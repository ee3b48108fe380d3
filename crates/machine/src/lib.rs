//! cqlbench-machine: evidence that a run was taken on a quiet machine.
//!
//! A [`Sampler`] thread reads `/proc` once a second while the load runs: the machine's CPU times
//! (steal, iowait), every process's CPU, available memory and swap traffic. Processes are split into
//! the client (this process), the cluster's nodes (found by the CQL address they listen on, so a node
//! started by any tool counts as the cluster), and the others. [`verdict`] turns the window's samples
//! into `summary.json`'s `validity`: doubtful or not, with one sentence per reason.

mod accounting;
pub mod facts;
mod procfs;
mod sampler;
mod verdict;

pub use procfs::{clock_ticks_per_s, pids_listening_on};
pub use sampler::Sampler;
pub use verdict::{parse_thresholds, set_threshold, verdict, ThresholdError, THRESHOLD_NAMES};
