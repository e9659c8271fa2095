//! What consumers get: an item and the lease that names its reservation.

/// Names one delivery of an item: acks, releases and extends carry it, so that a consumer
/// whose lease ran out (and whose item went to someone else) cannot ack the new delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Lease {
    /// The item's id.
    pub id: u64,
    /// Which delivery of the item (1 for the first).
    pub delivery: u32,
}

/// An item as delivered (or peeked at).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueItem {
    /// The id the push returned: unique in the queue, increasing in commit order.
    pub id: u64,
    /// The pushed bytes.
    pub value: Vec<u8>,
    /// When it was pushed (milliseconds since the Unix epoch).
    pub pushed_at_ms: u64,
    /// How many times it was delivered, this delivery included (0 for a peek of a new item).
    pub deliveries: u32,
    /// For a reservation: when its lease runs out (milliseconds since the Unix epoch).
    pub lease_until_ms: Option<u64>,
}

impl QueueItem {
    /// The lease that acks, releases or extends this delivery.
    pub fn lease(&self) -> Lease {
        Lease {
            id: self.id,
            delivery: self.deliveries,
        }
    }
}
