//! Login throttling: after a few wrong passwords from one address, that address waits, twice as
//! long after each further failure (capped), so guessing a password is slow; a right password
//! clears the count.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Wrong passwords allowed before the first wait.
pub const FREE_TRIES: u32 = 5;
const FIRST_WAIT: Duration = Duration::from_secs(30);
const MAX_WAIT: Duration = Duration::from_secs(15 * 60);
/// Addresses remembered at most; the oldest go first (a flood of addresses stays bounded).
const MAX_TRACKED: usize = 4096;

#[derive(Clone, Copy)]
struct Failures {
    count: u32,
    until: Option<Instant>,
    last: Instant,
}

/// Failed logins by client address.
#[derive(Default)]
pub struct Throttle {
    by_addr: Mutex<HashMap<IpAddr, Failures>>,
}

impl Throttle {
    /// How long `addr` must still wait before it may try, if at all.
    pub fn wait_for(&self, addr: IpAddr, now: Instant) -> Option<Duration> {
        let map = self.by_addr.lock().unwrap_or_else(|p| p.into_inner());
        map.get(&addr)?
            .until
            .and_then(|until| until.checked_duration_since(now))
            .filter(|d| !d.is_zero())
    }

    /// Records a wrong password from `addr`.
    pub fn failed(&self, addr: IpAddr, now: Instant) {
        let mut map = self.by_addr.lock().unwrap_or_else(|p| p.into_inner());
        if map.len() >= MAX_TRACKED
            && !map.contains_key(&addr)
            && let Some(oldest) = map.iter().min_by_key(|(_, f)| f.last).map(|(a, _)| *a)
        {
            map.remove(&oldest);
        }
        let f = map.entry(addr).or_insert(Failures {
            count: 0,
            until: None,
            last: now,
        });
        f.count += 1;
        f.last = now;
        if f.count >= FREE_TRIES {
            let doublings = (f.count - FREE_TRIES).min(10);
            let wait = (FIRST_WAIT * 2u32.pow(doublings)).min(MAX_WAIT);
            f.until = Some(now + wait);
        }
    }

    /// A right password from `addr`: its count starts again.
    pub fn succeeded(&self, addr: IpAddr) {
        self.by_addr
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&addr);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_begin_after_the_free_tries_and_double() {
        let t = Throttle::default();
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        let now = Instant::now();
        for _ in 0..FREE_TRIES - 1 {
            t.failed(a, now);
        }
        assert_eq!(t.wait_for(a, now), None);
        t.failed(a, now);
        assert_eq!(t.wait_for(a, now), Some(FIRST_WAIT));
        t.failed(a, now);
        assert_eq!(t.wait_for(a, now), Some(FIRST_WAIT * 2));
        assert_eq!(t.wait_for("10.0.0.2".parse().unwrap(), now), None);
        assert_eq!(t.wait_for(a, now + MAX_WAIT), None);
        t.succeeded(a);
        assert_eq!(t.wait_for(a, now), None);
    }
}
