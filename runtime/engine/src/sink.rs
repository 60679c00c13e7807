//! A typed delivery point: a service thread hands its results to a [`Sink<T>`] and never learns
//! where they go. Whoever wires the graph decides (an edge, a wrapped enum, a test's channel),
//! so two services never need to know each other's result types.

use std::fmt;
use std::sync::Arc;

/// Delivers values of one type; cheap to clone, callable from any thread.
///
/// ```
/// use hearth_engine::Sink;
///
/// let (tx, rx) = std::sync::mpsc::channel();
/// let numbers: Sink<u32> = Sink::new(move |n| tx.send(n).expect("receiver alive"));
/// let labelled: Sink<&str> = numbers.map(|s: &str| s.len() as u32);
/// labelled.send("four");
/// assert_eq!(rx.recv(), Ok(4));
/// ```
pub struct Sink<T> {
    deliver: Arc<dyn Fn(T) + Send + Sync>,
}

impl<T> Clone for Sink<T> {
    fn clone(&self) -> Self {
        Self {
            deliver: self.deliver.clone(),
        }
    }
}

impl<T> fmt::Debug for Sink<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sink")
            .field("item", &std::any::type_name::<T>())
            .finish()
    }
}

impl<T: 'static> Sink<T> {
    /// A sink that calls `deliver` with every value.
    pub fn new(deliver: impl Fn(T) + Send + Sync + 'static) -> Self {
        Self {
            deliver: Arc::new(deliver),
        }
    }

    /// Delivers one value.
    pub fn send(&self, value: T) {
        (self.deliver)(value);
    }

    /// A sink of `U` that converts each value and delivers it here.
    pub fn map<U: 'static>(&self, convert: impl Fn(U) -> T + Send + Sync + 'static) -> Sink<U> {
        let inner = self.clone();
        Sink::new(move |value| inner.send(convert(value)))
    }
}
