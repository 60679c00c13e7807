//! References into the arena and the call frame built on one.

crate::shm_layout! {
/// A reference to bytes in the exchange arena: what travels in a ring event or an RPC frame
/// instead of the bytes themselves. The original's `SharedRef`, 16 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct ArenaRef {
    /// Byte offset from the segment start (not the arena start) of the first block.
    pub offset: u32,
    /// Bytes referenced, from `offset`.
    pub len: u32,
    /// Generation of the block when the reference was made.
    pub generation: u32,
    /// [`ArenaRef::BINARY`], [`ArenaRef::JSON`], [`ArenaRef::EXPAND`].
    pub flags: u32,
}
}

impl ArenaRef {
    /// The bytes are opaque binary.
    pub const BINARY: u32 = 1;
    /// The bytes are JSON.
    pub const JSON: u32 = 1 << 1;
    /// An expansion block holding a result too large for its frame; the kernel frees it
    /// separately from the frame.
    pub const EXPAND: u32 = 1 << 2;

    /// The same block, flagged.
    pub fn with_flags(self, flags: u32) -> ArenaRef {
        ArenaRef { flags, ..self }
    }

    /// The first `len` bytes of the same allocation (e.g. a result inside its frame).
    pub fn prefix(self, len: u32) -> ArenaRef {
        ArenaRef { len, ..self }
    }
}

/// A tool call's frame as the kernel hands it to a plugin: the argument bytes at 0 and room
/// for the result from [`result_offset`](Self::result_offset) to the frame's end. When it
/// travels in a ring event it is [`ENCODED_LEN`](Self::ENCODED_LEN) little-endian bytes: the
/// reference's four words, then `args_len`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct CallFrame {
    /// The whole frame.
    pub frame: ArenaRef,
    /// Bytes of arguments at its start.
    pub args_len: u32,
}

impl CallFrame {
    /// Bytes of the encoded form.
    pub const ENCODED_LEN: usize = 20;

    /// Where the result starts: the first word boundary after the arguments.
    pub fn result_offset(&self) -> u32 {
        self.args_len.next_multiple_of(8)
    }

    /// Bytes of room for the result.
    pub fn result_room(&self) -> u32 {
        self.frame.len.saturating_sub(self.result_offset())
    }

    /// The encoded form (for a ring event's payload).
    pub fn encode(&self) -> [u8; Self::ENCODED_LEN] {
        let r = self.frame;
        let mut bytes = [0u8; Self::ENCODED_LEN];
        for (chunk, word) in
            bytes
                .chunks_exact_mut(4)
                .zip([r.offset, r.len, r.generation, r.flags, self.args_len])
        {
            chunk.copy_from_slice(&word.to_le_bytes());
        }
        bytes
    }

    /// Decode the first [`ENCODED_LEN`](Self::ENCODED_LEN) bytes; `None` if there are fewer.
    /// The result is only a claim: every access through it is checked.
    pub fn decode(bytes: &[u8]) -> Option<CallFrame> {
        let word = |i: usize| {
            let chunk = bytes.get(i * 4..i * 4 + 4)?;
            Some(u32::from_le_bytes(chunk.try_into().ok()?))
        };
        Some(CallFrame {
            frame: ArenaRef {
                offset: word(0)?,
                len: word(1)?,
                generation: word(2)?,
                flags: word(3)?,
            },
            args_len: word(4)?,
        })
    }
}
