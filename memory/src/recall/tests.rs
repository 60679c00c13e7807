//! Cold context tests.
