//! One module per subcommand.

pub mod cluster;
pub mod gc;
pub mod report;
pub mod run;
