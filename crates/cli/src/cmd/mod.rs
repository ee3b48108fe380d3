//! One module per subcommand.

pub mod campaign;
pub mod cluster;
pub mod gc;
pub mod report;
pub mod run;
