//! Shared pieces of Hearth's end-to-end tests (the test binaries live in `tests/tests` and `src/bin`).

#![deny(missing_docs)]
