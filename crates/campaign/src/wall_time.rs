//! Where a campaign's wall time went. The measured windows are what the operator runs a campaign
//! for; everything else (clusters starting, populating, warm-ups, the probe, each cell's figures) is
//! the price of getting them, and the share shows whether a plan's cells are long enough to be worth
//! their set-up.

use std::time::{Duration, Instant};

use crate::matrix::format_duration;

/// A campaign's wall time by what it was spent on.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WallTime {
    /// From the start of the campaign to its end.
    pub total: Duration,
    /// Inside the cells' measured windows.
    pub measured: Duration,
    /// The rest of each cell's load run: connecting, schema, warm-up, the final drain.
    pub warmup: Duration,
    /// Clusters starting, stopping and being removed.
    pub clusters: Duration,
    /// Writing the plan's populate rows.
    pub populate: Duration,
    /// The machine probe before the first cell.
    pub probe: Duration,
    /// Each cell's node figures (its GC log cut to the window and analysed, CPU, disk).
    pub cell_figures: Duration,
}

impl WallTime {
    /// The measured windows' share of the whole, 0 to 1 (0 for a campaign that measured nothing).
    pub fn measured_share(&self) -> f64 {
        if self.total.is_zero() {
            return 0.0;
        }
        self.measured.as_secs_f64() / self.total.as_secs_f64()
    }

    /// A cell's load run: `measured_s` in its window, the rest of `whole` warming up and winding down.
    pub(crate) fn add_load_run(&mut self, measured_s: f64, whole: Duration) {
        let measured = Duration::from_secs_f64(measured_s.max(0.0));
        self.measured += measured;
        self.warmup += whole.saturating_sub(measured);
    }

    /// What none of the named parts accounts for (the report, the directory, resumed cells' checks).
    pub fn other(&self) -> Duration {
        self.total.saturating_sub(
            self.measured
                + self.warmup
                + self.clusters
                + self.populate
                + self.probe
                + self.cell_figures,
        )
    }

    /// One line: the share first, then where the rest went.
    pub fn describe(&self) -> String {
        let parts = [
            ("warm-ups", self.warmup),
            ("clusters", self.clusters),
            ("populate", self.populate),
            ("probe", self.probe),
            ("cell figures", self.cell_figures),
            ("other", self.other()),
        ];
        let rest: Vec<String> = parts
            .iter()
            .filter(|(_, time)| !time.is_zero())
            .map(|(name, time)| format!("{name} {}", format_duration(*time)))
            .collect();
        format!(
            "time in measured windows: {} of {} ({:.1} %){}",
            format_duration(self.measured),
            format_duration(self.total),
            100.0 * self.measured_share(),
            if rest.is_empty() {
                String::new()
            } else {
                format!("; the rest: {}", rest.join(", "))
            }
        )
    }
}

/// Times a step and adds it to one of the parts.
pub(crate) fn timed<T>(part: &mut Duration, step: impl FnOnce() -> T) -> T {
    let started = Instant::now();
    let result = step();
    *part += started.elapsed();
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seconds(s: u64) -> Duration {
        Duration::from_secs(s)
    }

    #[test]
    fn the_share_and_the_rest_add_up_to_the_whole() {
        let wall = WallTime {
            total: seconds(400),
            measured: seconds(300),
            warmup: seconds(40),
            clusters: seconds(30),
            populate: seconds(0),
            probe: seconds(20),
            cell_figures: seconds(6),
        };
        assert_eq!(wall.other(), seconds(4));
        assert!((wall.measured_share() - 0.75).abs() < 1e-12);
        assert_eq!(
            wall.describe(),
            "time in measured windows: 5m 00s of 6m 40s (75.0 %); the rest: warm-ups 40s, \
             clusters 30s, probe 20s, cell figures 6s, other 4s"
        );
    }

    #[test]
    fn parts_counted_twice_never_make_other_negative() {
        let wall = WallTime {
            total: seconds(10),
            measured: seconds(9),
            warmup: seconds(2),
            ..WallTime::default()
        };
        assert_eq!(wall.other(), Duration::ZERO);
        assert_eq!(WallTime::default().measured_share(), 0.0);
    }

    #[test]
    fn timed_adds_the_step_s_duration() {
        let mut part = seconds(1);
        let value = timed(&mut part, || {
            std::thread::sleep(Duration::from_millis(20));
            7
        });
        assert_eq!(value, 7);
        assert!(part >= Duration::from_millis(1020), "{part:?}");
    }
}
