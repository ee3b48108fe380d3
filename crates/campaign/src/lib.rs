//! cqlbench-campaign: the seeds' whole experiment as one plan.
//!
//! A TOML plan names cluster configurations (`[[config]]`: Cassandra version, JDK, collector, heap,
//! JVM options) and a load (`[load]`: workload, `cqlbench run` options, and the rates — fixed, a
//! `[sweep]` from the unthrottled maximum, or an `[slo]` bisection). [`load_plan`] checks all of it
//! before anything starts; [`matrix`] lists the cells and estimates the time; [`run`] gives every
//! configuration a fresh cluster, populates it once, runs each cell and keeps, per cell, the load's
//! results with each node's GC log of the window, its analysis, CPU per operation, GC threads' CPU
//! share and write amplification. Cells are written atomically, so a campaign resumes where it
//! stopped; [`tables::render`] prints the seeds' four tables from the cells' summary.json.
//!
//! ```no_run
//! let plan = cqlbench_campaign::load_plan("examples/seed-000-one-machine.toml".as_ref())?;
//! print!("{}", cqlbench_campaign::matrix::describe(&plan, "results".as_ref()));
//! let home = cqlbench_cluster::Home::from_env();
//! let outcome = cqlbench_campaign::run(&plan, "results".as_ref(), &home, &Default::default(), &mut |l| eprintln!("{l}"))?;
//! print!("{}", outcome.tables);
//! # Ok::<(), cqlbench_campaign::CampaignError>(())
//! ```

pub mod doubtful;
mod environment;
mod error;
pub mod figures;
pub mod live;
pub mod matrix;
pub mod one_run;
pub mod plan;
mod runner;
mod slo;
pub mod tables;
mod wall_time;

pub use environment::record as record_environment;
pub use error::CampaignError;
pub use plan::{load_plan, parse_plan, parse_plan_with_k8s, ConfigPlan, LoadPlan, Plan, RateMode};
pub use runner::{next_cell, run, CampaignOptions, Outcome, PLAN_FILE};
pub use slo::{meets_slo, slo_capacity};
pub use wall_time::WallTime;
