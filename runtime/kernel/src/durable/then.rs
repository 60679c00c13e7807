//! What a write's caller is told once the commit that holds it is known.

use hearth_memory::StoreError;

/// Told the outcome of the commit that holds a write, after it.
pub(crate) type Then = Box<dyn FnOnce(&Result<(), StoreError>) + Send>;
