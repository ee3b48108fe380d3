//! Values kept per key from one operation to the next (a workload file's `state`): what a
//! compare-and-set expects and sets. One table per run, shared by the client's threads; a key's
//! slot is its drawn number modulo the table's size.

use std::sync::atomic::{AtomicI64, Ordering};

/// At most this many keys have a slot of their own (8 MiB); more keys share slots.
pub const MAX_SLOTS: u64 = 1 << 20;

/// A key's slot and the value it takes when its operation succeeds.
pub type StateUpdate = (u32, i64);

#[derive(Debug)]
pub struct StateTable {
    slots: Box<[AtomicI64]>,
}

impl StateTable {
    /// A table for `keys` distinct keys (at most [`MAX_SLOTS`] slots), every value 0.
    pub fn new(keys: u64) -> Self {
        let len = keys.clamp(1, MAX_SLOTS) as usize;
        StateTable {
            slots: (0..len).map(|_| AtomicI64::new(0)).collect(),
        }
    }

    /// The slot of a key's drawn number.
    pub fn slot(&self, key: i64) -> u32 {
        key.rem_euclid(self.slots.len() as i64) as u32
    }

    pub fn get(&self, slot: u32) -> i64 {
        self.slots[slot as usize].load(Ordering::Relaxed)
    }

    pub fn set(&self, (slot, value): StateUpdate) {
        self.slots[slot as usize].store(value, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::StateTable;

    #[test]
    fn a_key_keeps_its_value_and_keys_beyond_the_size_share_slots() {
        let table = StateTable::new(10);
        let slot = table.slot(13);
        assert_eq!((slot, table.get(slot)), (3, 0));
        table.set((slot, 7));
        assert_eq!(table.get(table.slot(3)), 7);
        assert_eq!(table.slot(-1), 9);
    }
}
