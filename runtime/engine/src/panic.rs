//! The text of a caught panic, for the reports every panic boundary (node, service thread,
//! provider call) writes: one wording, whichever boundary caught it.

use std::any::Any;

/// The message of a panic payload caught by `catch_unwind` (a `&str` or `String` panic), or a
/// fixed placeholder for any other payload type.
///
/// ```
/// let payload = std::panic::catch_unwind(|| panic!("boom {}", 1)).unwrap_err();
/// assert_eq!(hearth_engine::panic_message(&*payload), "boom 1");
/// ```
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(message) = payload.downcast_ref::<&str>() {
        (*message).to_owned()
    } else if let Some(message) = payload.downcast_ref::<String>() {
        message.clone()
    } else {
        "non-string panic payload".to_owned()
    }
}
