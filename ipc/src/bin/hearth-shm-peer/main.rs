//! A minimal plugin-side process for the shared-segment tests: it attaches to the segment at
//! fd 3 and the doorbell at fd 4 exactly as a plugin does, runs one scenario, and reports on
//! stdout, one line per fact, so the kernel-side test can assert on what the child saw.
//!
//! Scenarios (first argument):
//! - `count-field <field> <rounds>`: read-modify-write increments of one stage field, each
//!   under that field's own seqlock (the field holds a decimal counter).
//! - `ring <events> <tag> [gate]`: read `events` tagged events through the doorbell (with
//!   `gate`, only after a line arrives on stdin); print each lag and a final summary.
//! - `echo <calls>`: answer `calls` tool calls: each ring event carries a frame reference;
//!   read the arguments from the arena, write them back reversed as the result, complete.
//! - `forge`: read through forged references and print each refusal, then print the line
//!   `still-works` after a valid read.
//! - `outlive`: wait for a line on stdin (sent after the kernel dropped its segment), then
//!   read a stage field and try to shrink the file; print both outcomes.

// Under `--cfg loom` the crate model-checks its protocols and leaves the segment out; the peer
// needs the real segment, so that build gets an empty binary.
#[cfg(not(loom))]
mod peer;

#[cfg(not(loom))]
fn main() -> peer::Outcome {
    peer::main()
}

#[cfg(loom)]
fn main() {}
