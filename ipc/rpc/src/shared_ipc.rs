//! The wire forms of arena references and the shared segment's own types are one shape; these
//! conversions are the only place the two meet (behind the `ipc` feature, so a plugin author
//! linking the control plane alone does not pull in the segment code).

use hearth_ipc::{ArenaRef, CallFrame};

use crate::params::{SharedFrame, SharedRef};

impl From<SharedRef> for ArenaRef {
    fn from(r: SharedRef) -> ArenaRef {
        ArenaRef {
            offset: r.offset,
            len: r.len,
            generation: r.generation,
            flags: r.flags,
        }
    }
}

impl From<ArenaRef> for SharedRef {
    fn from(r: ArenaRef) -> SharedRef {
        SharedRef {
            offset: r.offset,
            len: r.len,
            generation: r.generation,
            flags: r.flags,
        }
    }
}

impl From<SharedFrame> for CallFrame {
    fn from(f: SharedFrame) -> CallFrame {
        CallFrame {
            frame: f.frame.into(),
            args_len: f.args_len,
        }
    }
}

impl From<CallFrame> for SharedFrame {
    fn from(f: CallFrame) -> SharedFrame {
        SharedFrame {
            frame: f.frame.into(),
            args_len: f.args_len,
        }
    }
}
