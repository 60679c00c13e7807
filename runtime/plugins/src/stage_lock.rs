//! `stage.lock` / `stage.unlock`: one lock per stage in the kernel, for plugins that serialise
//! their writes into the stage-context area across processes (the original's rules: a 30 s
//! wait, no re-lock by its holder, release only by it, force-released when the holder exits).
//! The holder is one process start (its arena owner id), so a restarted plugin never inherits
//! the lock of the process that died.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use hearth_rpc::{ErrorKind, HandlerError, methods};
use hearth_stages::Stage;
use parking_lot::{Condvar, Mutex};

/// How long `stage.lock` waits for the holder to release (the original's 30 s).
pub const STAGE_LOCK_WAIT: Duration = Duration::from_secs(30);

#[derive(Debug, Clone, PartialEq, Eq)]
struct Holder {
    owner: u32,
    plugin: String,
}

/// The per-stage locks, shared by every plugin process of the daemon.
pub(crate) struct StageLocks {
    held: Mutex<HashMap<Stage, Holder>>,
    released: Condvar,
    wait: Mutex<Duration>,
}

fn stage_of(method: &str, name: &str) -> Result<Stage, HandlerError> {
    Stage::from_name(name).ok_or_else(|| {
        HandlerError::invalid_arguments(format!(
            "{method}: no stage named {name:?} (stages: {})",
            Stage::ALL.map(Stage::as_str).join(", ")
        ))
    })
}

impl StageLocks {
    pub(crate) fn new() -> StageLocks {
        StageLocks {
            held: Mutex::new(HashMap::new()),
            released: Condvar::new(),
            wait: Mutex::new(STAGE_LOCK_WAIT),
        }
    }

    /// How long a `stage.lock` waits from now on.
    pub(crate) fn set_wait(&self, wait: Duration) {
        *self.wait.lock() = wait;
    }

    /// Takes `stage`'s lock for process `owner` of `plugin`, waiting up to the configured wait
    /// (or `deadline`, if sooner) while another process holds it.
    pub(crate) fn lock(
        &self,
        stage: &str,
        owner: u32,
        plugin: &str,
        deadline: Option<Instant>,
    ) -> Result<(), HandlerError> {
        let method = methods::STAGE_LOCK;
        let key = stage_of(method, stage)?;
        let wait = *self.wait.lock();
        let mut until = Instant::now() + wait;
        if let Some(d) = deadline {
            until = until.min(d);
        }
        let mut held = self.held.lock();
        loop {
            match held.get(&key) {
                None => {
                    held.insert(
                        key,
                        Holder {
                            owner,
                            plugin: plugin.to_owned(),
                        },
                    );
                    return Ok(());
                }
                Some(h) if h.owner == owner => {
                    return Err(HandlerError::new(
                        ErrorKind::InvalidRequest,
                        format!(
                            "{method} {stage}: plugin {plugin} already holds it; release it with \
                             stage.unlock first"
                        ),
                    ));
                }
                Some(h) => {
                    let holder = h.plugin.clone();
                    if self.released.wait_until(&mut held, until).timed_out()
                        && held.get(&key).is_some_and(|h| h.owner != owner)
                    {
                        return Err(HandlerError::new(
                            ErrorKind::Busy,
                            format!(
                                "{method} {stage}: plugin {holder} held it for the whole \
                                 {wait:?} wait; not taken"
                            ),
                        ));
                    }
                }
            }
        }
    }

    /// Releases `stage`'s lock, which process `owner` must hold.
    pub(crate) fn unlock(&self, stage: &str, owner: u32, plugin: &str) -> Result<(), HandlerError> {
        let method = methods::STAGE_UNLOCK;
        let key = stage_of(method, stage)?;
        let mut held = self.held.lock();
        match held.get(&key) {
            Some(h) if h.owner == owner => {
                held.remove(&key);
                drop(held);
                self.released.notify_all();
                Ok(())
            }
            Some(h) => Err(HandlerError::new(
                ErrorKind::Denied,
                format!(
                    "{method} {stage}: plugin {} holds it, not plugin {plugin}; only its holder \
                     releases it",
                    h.plugin
                ),
            )),
            None => Err(HandlerError::new(
                ErrorKind::InvalidRequest,
                format!("{method} {stage}: plugin {plugin} does not hold it (nobody does)"),
            )),
        }
    }

    /// The process `owner` exited: every lock it held is released. Returns how many.
    pub(crate) fn release_owner(&self, owner: u32) -> usize {
        let mut held = self.held.lock();
        let before = held.len();
        held.retain(|_, h| h.owner != owner);
        let freed = before - held.len();
        drop(held);
        if freed > 0 {
            self.released.notify_all();
        }
        freed
    }

    /// The plugin holding `stage`'s lock, if any.
    pub(crate) fn holder(&self, stage: Stage) -> Option<String> {
        self.held.lock().get(&stage).map(|h| h.plugin.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::sync::Arc;

    #[test]
    fn a_waiter_gets_the_lock_when_its_holder_releases_it_and_times_out_otherwise() {
        let locks = Arc::new(StageLocks::new());
        locks.set_wait(Duration::from_millis(200));
        locks.lock("pre_action", 1, "a", None).expect("free lock");
        let err = locks.lock("pre_action", 2, "b", None).expect_err("held");
        assert_eq!(err.kind, ErrorKind::Busy, "{err:?}");
        assert!(err.message.contains("plugin a held it"), "{}", err.message);
        // Another stage's lock is independent.
        locks
            .lock("before_output", 2, "b", None)
            .expect("other stage");

        locks.set_wait(Duration::from_secs(60));
        let waiter = {
            let locks = Arc::clone(&locks);
            std::thread::spawn(move || locks.lock("pre_action", 2, "b", None))
        };
        // Still waiting while a holds it (it cannot finish: its wait is a minute).
        std::thread::sleep(Duration::from_millis(50));
        assert!(!waiter.is_finished(), "b took a lock a holds");
        locks.unlock("pre_action", 1, "a").expect("holder releases");
        waiter
            .join()
            .expect("waiter")
            .expect("got it after the release");
        assert_eq!(locks.holder(Stage::PreAction).as_deref(), Some("b"));
    }

    #[test]
    fn no_re_lock_release_only_by_the_holder_and_force_release_by_owner() {
        let locks = StageLocks::new();
        locks.lock("after_toolcall", 7, "a", None).expect("lock");
        let again = locks
            .lock("after_toolcall", 7, "a", None)
            .expect_err("re-lock");
        assert_eq!(again.kind, ErrorKind::InvalidRequest);
        let foreign = locks.unlock("after_toolcall", 8, "b").expect_err("not b's");
        assert_eq!(foreign.kind, ErrorKind::Denied);
        assert!(
            foreign.message.contains("plugin a holds it"),
            "{}",
            foreign.message
        );
        assert_eq!(locks.holder(Stage::AfterToolcall).as_deref(), Some("a"));
        assert_eq!(locks.release_owner(8), 0);
        assert_eq!(locks.release_owner(7), 1);
        assert_eq!(locks.holder(Stage::AfterToolcall), None);
        let none = locks
            .unlock("after_toolcall", 7, "a")
            .expect_err("not held");
        assert_eq!(none.kind, ErrorKind::InvalidRequest);
        let bad = locks
            .lock("lunch", 7, "a", None)
            .expect_err("no such stage");
        assert_eq!(bad.kind, ErrorKind::InvalidArguments);
        assert!(bad.message.contains("pre_action"), "{}", bad.message);
    }

    #[test]
    fn a_deadline_sooner_than_the_wait_ends_the_wait() {
        let locks = StageLocks::new();
        locks.lock("on_input", 1, "a", None).expect("lock");
        let started = Instant::now();
        let err = locks
            .lock(
                "on_input",
                2,
                "b",
                Some(Instant::now() + Duration::from_millis(100)),
            )
            .expect_err("held");
        assert_eq!(err.kind, ErrorKind::Busy);
        assert!(started.elapsed() < STAGE_LOCK_WAIT);
    }
}
