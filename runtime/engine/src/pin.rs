//! Pinning worker threads to cores. Failure is never fatal: an unpinned worker still works, it only
//! loses cache locality.

use nix::sched::{CpuSet, sched_getaffinity, sched_setaffinity};
use nix::unistd::Pid;

/// Cores the process may run on, ascending (empty if the kernel will not say).
pub(crate) fn allowed_cores() -> Vec<usize> {
    match sched_getaffinity(Pid::from_raw(0)) {
        Ok(set) => (0..CpuSet::count())
            .filter(|&core| set.is_set(core).unwrap_or(false))
            .collect(),
        Err(error) => {
            tracing::warn!(%error, "cannot read the CPU affinity; workers stay unpinned");
            Vec::new()
        }
    }
}

/// The core worker `worker` should run on: workers are dealt over the allowed cores in order, and
/// wrap around when there are more workers than cores.
pub(crate) fn core_for(worker: usize, allowed: &[usize]) -> Option<usize> {
    (!allowed.is_empty()).then(|| allowed[worker % allowed.len()])
}

/// Restricts the calling thread to `core`.
pub(crate) fn pin_current_thread(core: usize) -> nix::Result<()> {
    let mut set = CpuSet::new();
    set.set(core)?;
    sched_setaffinity(Pid::from_raw(0), &set)
}

#[cfg(test)]
mod tests {
    use super::core_for;

    #[test]
    fn workers_are_dealt_over_allowed_cores_and_wrap() {
        let allowed = [2, 5, 7];
        let cores: Vec<_> = (0..5).map(|w| core_for(w, &allowed)).collect();
        assert_eq!(cores, [Some(2), Some(5), Some(7), Some(2), Some(5)]);
        assert_eq!(core_for(0, &[]), None);
    }
}
