//! Shared pieces of Hearth's benches: latency samples summarised as percentiles, and the
//! same-run baseline comparison every bench prints (DESIGN §5: budgets are ratios to a floor
//! measured in the same run, because absolute times drift on a shared machine).

#![deny(missing_docs)]

pub mod counting_alloc;
pub mod sse_feed;

use std::time::Duration;

pub mod daemon;
pub mod line_pipe;
pub mod web_client;

/// Runs `round` `rounds` times, pushing each one's duration to `samples`; the total.
pub fn timed(rounds: u64, samples: &mut Vec<Duration>, mut round: impl FnMut()) -> Duration {
    let start = std::time::Instant::now();
    let mut last = start;
    for _ in 0..rounds {
        round();
        let now = std::time::Instant::now();
        samples.push(now - last);
        last = now;
    }
    start.elapsed()
}

/// Sorted latency samples.
#[derive(Clone, Debug)]
pub struct Samples {
    sorted: Vec<Duration>,
}

impl Samples {
    /// The samples, sorted; a bench must have taken at least one.
    pub fn new(mut samples: Vec<Duration>) -> Self {
        assert!(!samples.is_empty(), "a bench needs at least one sample");
        samples.sort_unstable();
        Self { sorted: samples }
    }

    /// The `p`-th percentile (0–100), nearest rank.
    pub fn percentile(&self, p: f64) -> Duration {
        let rank = ((p / 100.0) * self.sorted.len() as f64).ceil() as usize;
        self.sorted[rank.clamp(1, self.sorted.len()) - 1]
    }

    /// The median.
    pub fn p50(&self) -> Duration {
        self.percentile(50.0)
    }

    /// The 99th percentile.
    pub fn p99(&self) -> Duration {
        self.percentile(99.0)
    }

    /// The fastest sample.
    pub fn min(&self) -> Duration {
        self.sorted[0]
    }

    /// The slowest sample.
    pub fn max(&self) -> Duration {
        self.sorted[self.sorted.len() - 1]
    }

    /// How many samples.
    pub fn len(&self) -> usize {
        self.sorted.len()
    }

    /// Never true once built; kept beside `len`.
    pub fn is_empty(&self) -> bool {
        self.sorted.is_empty()
    }

    /// `p50 / p99 / p999 (min..max)` in microseconds.
    pub fn line(&self) -> String {
        format!(
            "p50 {:>9.2} µs  p99 {:>9.2} µs  p999 {:>9.2} µs  (min {:.2} .. max {:.2}, n={})",
            us(self.p50()),
            us(self.p99()),
            us(self.percentile(99.9)),
            us(self.min()),
            us(self.max()),
            self.len()
        )
    }
}

/// `d` in microseconds.
pub fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// Prints a measured path beside its same-run baseline and the p50 ratio.
pub fn report(
    title: &str,
    subject: &Samples,
    baseline_name: &str,
    baseline: &Samples,
    budget: Option<f64>,
) {
    let ratio = us(subject.p50()) / us(baseline.p50()).max(1e-9);
    println!("== {title}");
    println!("   hearth    {}", subject.line());
    println!("   baseline  {}   [{baseline_name}]", baseline.line());
    match budget {
        Some(b) => println!(
            "   ratio p50 {ratio:.2}x (budget ≤ {b:.2}x): {}",
            if ratio <= b {
                "within budget"
            } else {
                "OVER BUDGET"
            }
        ),
        None => println!("   ratio p50 {ratio:.2}x"),
    }
}

/// Pins the calling thread to `core` (best effort; benches still run unpinned).
pub fn pin_to_core(core: usize) -> bool {
    let mut set = nix::sched::CpuSet::new();
    if set.set(core).is_err() {
        return false;
    }
    nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &set).is_ok()
}

/// Two distinct cores (the first two this process may run on), or the same one twice when only
/// one is available (said on stdout, since latencies then include sharing a core).
pub fn two_cores() -> (usize, usize) {
    let allowed: Vec<usize> = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0))
        .map(|set| {
            (0..nix::sched::CpuSet::count())
                .filter(|&core| set.is_set(core).unwrap_or(false))
                .collect()
        })
        .unwrap_or_default();
    match allowed.as_slice() {
        [] => (0, 0),
        [only] => {
            println!("   warning: one core available; both sides share it");
            (*only, *only)
        }
        [first, second, ..] => (*first, *second),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let s = Samples::new((1..=100).map(Duration::from_micros).collect());
        assert_eq!(s.p50(), Duration::from_micros(50));
        assert_eq!(s.p99(), Duration::from_micros(99));
        assert_eq!(s.percentile(100.0), Duration::from_micros(100));
        assert_eq!(s.percentile(0.0), Duration::from_micros(1));
    }
}
