//! The ring's geometry, chosen by its creator and recorded in the region header.

use crate::IpcError;

use super::layout::{HEADER_LEN, SLOT_LEN};

/// Geometry of an event ring. Both capacities are powers of two so every index is a mask,
/// never a division, on the publish path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RingConfig {
    /// Number of event slots: how many events a reader can fall behind before it lags.
    pub slot_count: u32,
    /// Bytes of payload history. Payloads are stored 8-byte aligned, so each event uses
    /// `len` rounded up to a multiple of 8.
    pub payload_capacity: u32,
    /// Largest payload one event may carry; longer ones are refused with
    /// [`PublishError::TooLarge`](crate::PublishError::TooLarge). At most `payload_capacity`.
    pub max_event_len: u32,
}

impl Default for RingConfig {
    /// 8192 slots and 256 KiB of payload; one event may use at most a quarter of the payload
    /// area (64 KiB), so a single large event never evicts more than a quarter of the history.
    fn default() -> Self {
        RingConfig {
            slot_count: 8192,
            payload_capacity: 256 * 1024,
            max_event_len: 64 * 1024,
        }
    }
}

/// Bounds chosen so the region length always fits a u32 offset table and a usize on 32-bit
/// targets.
const MAX_SLOTS: u32 = 1 << 20;
const MAX_PAYLOAD: u32 = 1 << 30;

impl RingConfig {
    /// A config with `max_event_len` defaulted to a quarter of the payload capacity.
    pub fn new(slot_count: u32, payload_capacity: u32) -> RingConfig {
        RingConfig {
            slot_count,
            payload_capacity,
            max_event_len: payload_capacity / 4,
        }
    }

    /// Check every field; the ring is only ever built from a validated config.
    pub fn validate(&self) -> Result<(), IpcError> {
        let invalid = |field, value: u32, rule| {
            Err(IpcError::InvalidConfig {
                field,
                value: u64::from(value),
                rule,
            })
        };
        if !self.slot_count.is_power_of_two() || !(2..=MAX_SLOTS).contains(&self.slot_count) {
            return invalid(
                "slot_count",
                self.slot_count,
                "must be a power of two in 2..=1048576",
            );
        }
        if !self.payload_capacity.is_power_of_two()
            || !(8..=MAX_PAYLOAD).contains(&self.payload_capacity)
        {
            return invalid(
                "payload_capacity",
                self.payload_capacity,
                "must be a power of two in 8..=1073741824",
            );
        }
        if self.max_event_len > self.payload_capacity {
            return invalid(
                "max_event_len",
                self.max_event_len,
                "must not exceed payload_capacity",
            );
        }
        Ok(())
    }

    /// Byte offset of the slot table from the region start.
    pub(crate) const fn slots_offset(&self) -> usize {
        HEADER_LEN
    }

    /// Byte offset of the payload area from the region start (64-byte aligned, because the
    /// slot table is a whole number of 64-byte lines: at least 2 slots of 32 bytes).
    pub(crate) const fn payload_offset(&self) -> usize {
        HEADER_LEN + self.slot_count as usize * SLOT_LEN
    }

    /// Total bytes a region for this config needs. Fails for an invalid config.
    pub fn region_len(&self) -> Result<usize, IpcError> {
        self.validate()?;
        Ok(self.payload_offset() + self.payload_capacity as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_region_is_header_slots_payload() {
        let c = RingConfig::default();
        c.validate().expect("default is valid");
        assert_eq!(c.region_len().expect("valid"), 256 + 8192 * 32 + 256 * 1024);
        assert_eq!(c.payload_offset() % 64, 0);
    }

    #[test]
    fn out_of_range_fields_are_named() {
        let bad = [
            (RingConfig::new(3, 1024), "slot_count"),
            (RingConfig::new(1, 1024), "slot_count"),
            (RingConfig::new(4, 1000), "payload_capacity"),
            (RingConfig::new(4, 4), "payload_capacity"),
            (
                RingConfig {
                    max_event_len: 2048,
                    ..RingConfig::new(4, 1024)
                },
                "max_event_len",
            ),
        ];
        for (config, expected) in bad {
            match config.validate() {
                Err(IpcError::InvalidConfig { field, .. }) => assert_eq!(field, expected),
                other => panic!("{config:?} gave {other:?}"),
            }
        }
        assert!(RingConfig::new(2, 8).validate().is_ok());
    }
}
