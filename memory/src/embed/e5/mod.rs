//! The companion embedder, multilingual-e5-small: its weights file, its tokenizer and the graph
//! runner. See `embedder.rs` for why recall has a second model.

mod embedder;
mod tokenizer;
mod weights_file;

#[cfg(test)]
mod tests;

pub use embedder::{E5_MAX_TOKENS, E5_SMALL_MODEL_NAME, E5Embedder};
