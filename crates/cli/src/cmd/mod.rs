//! One module per subcommand.

pub mod campaign;
pub mod cluster;
pub mod gc;
pub mod k8s;
pub mod probe;
pub mod report;
pub mod run;
