//! What a write's caller is told once the commit that holds it is known.

use hearth_memory::StoreError;

/// Told the outcome of the commit that holds a write, after it.
pub(crate) type Then = Box<dyn FnOnce(&Result<(), StoreError>) + Send>;

/// Sends `result` to `reply` once the commit holding its writes is known; a commit that failed
/// is sent as `lost(why)` instead, since what `result` reports was not stored.
pub(crate) fn answer_at_commit<T: Send + 'static, E: Send + 'static>(
    reply: crossbeam_channel::Sender<Result<T, E>>,
    result: Result<T, E>,
    lost: impl FnOnce(String) -> E + Send + 'static,
) -> Then {
    Box::new(move |committed| {
        let answer = match committed {
            Ok(()) => result,
            Err(e) => Err(lost(e.to_string())),
        };
        let _ = reply.send(answer);
    })
}
