//! The memtable's index: a skip list whose nodes live inline in an [`Arena`] (after RocksDB's
//! `InlineSkipList`): each node is one arena allocation holding the entry's fields, its tower
//! of next pointers and the entry's bytes, so an insert allocates nothing from the system and
//! a dropped memtable frees a few blocks.
//!
//! Concurrency: **one writer at a time, any number of lock-free readers.** Inserts take the
//! writer lock (uncontended: the group commit's leader is the only inserter); readers and
//! cursors take no lock. A node is fully written before it is published by a `Release` store
//! of a predecessor's next pointer; readers load next pointers with `Acquire`, so whatever node
//! they reach is complete. Nodes never change after publication (only their next pointers,
//! atomically) and are never freed before the list drops, so a reader needs only a reference
//! to the list (or, for a [`Cursor`], an `Arc` of it).
//!
//! Node layout in the arena (aligned to 8): [`Node`] (40 bytes), then `height` next pointers,
//! then the entry's key and value (`data_len` bytes, the key's `key_len` first).
#![expect(
    unsafe_code,
    reason = "an intrusive skip list in arena memory: nodes are reached through raw pointers \
              that readers on other threads follow while the writer links new nodes"
)]

use std::cmp::Ordering as KeyOrdering;
use std::marker::PhantomData;
use std::mem::size_of;
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::arena::{Arena, ALIGN};
use super::order::{compare, Probe};
use crate::key::ValueKind;

/// Most levels a node may have: with [`BRANCHING`] 4, enough for ~16 million entries at the
/// expected search cost (more still work, a little slower).
pub const MAX_HEIGHT: usize = 12;
/// One node in this many at level `h` also links at level `h + 1`.
const BRANCHING: u64 = 4;

/// A node's fixed fields. Always accessed through a pointer with the whole allocation's
/// provenance (never through `&Node`, which would cover only these fields).
#[repr(C)]
struct Node {
    /// The key's [`super::order::key_prefix`].
    prefix: [u64; 2],
    seq: u64,
    key_len: u32,
    /// Key and value bytes.
    data_len: u32,
    kind: ValueKind,
    /// Number of next pointers after the fields (1..=[`MAX_HEIGHT`]).
    height: u8,
}

const HEADER: usize = size_of::<Node>();
const LINK: usize = size_of::<AtomicPtr<Node>>();

/// The head or a published node of a list borrowed for `'a`.
#[derive(Clone, Copy)]
pub struct NodeRef<'a> {
    ptr: NonNull<Node>,
    _list: PhantomData<&'a SkipList>,
}

impl<'a> NodeRef<'a> {
    /// Safety: `ptr` is the head or a published node of a list that lives for `'a`.
    unsafe fn new(ptr: NonNull<Node>) -> NodeRef<'a> {
        NodeRef {
            ptr,
            _list: PhantomData,
        }
    }

    /// The next pointer at `level` (`level < height`).
    fn link(self, level: usize) -> &'a AtomicPtr<Node> {
        debug_assert!(level < usize::from(self.fields().height));
        // SAFETY: the tower follows the fields and holds `height` initialized atomics, kept
        // by the list for `'a`.
        unsafe {
            &*self
                .ptr
                .as_ptr()
                .cast::<u8>()
                .add(HEADER + level * LINK)
                .cast::<AtomicPtr<Node>>()
        }
    }

    /// The node after this one at `level` (`level < height`).
    fn next_at(self, level: usize) -> Option<NodeRef<'a>> {
        let next = NonNull::new(self.link(level).load(Ordering::Acquire))?;
        // SAFETY: a non-null link points to a published node of the same list (Acquire pairs
        // with the Release that published it).
        Some(unsafe { NodeRef::new(next) })
    }

    fn fields(self) -> &'a Node {
        // SAFETY: a published node's fields are initialized and never written again; the
        // reference covers only the fields, not the links the writer may still store to.
        unsafe { self.ptr.as_ref() }
    }

    fn data(self) -> &'a [u8] {
        let n = self.fields();
        // SAFETY: `data_len` bytes follow the tower, written before publication, never after.
        unsafe {
            std::slice::from_raw_parts(
                self.ptr
                    .as_ptr()
                    .cast::<u8>()
                    .add(HEADER + usize::from(n.height) * LINK),
                n.data_len as usize,
            )
        }
    }

    fn cmp(self, probe: &Probe<'_>) -> KeyOrdering {
        compare(self.fields().prefix, self.key(), self.fields().seq, probe)
    }

    fn is(self, other: NodeRef<'_>) -> bool {
        self.ptr == other.ptr
    }

    /// The entry's user key.
    pub fn key(self) -> &'a [u8] {
        self.data()
            .get(..self.fields().key_len as usize)
            .unwrap_or_default()
    }

    /// The entry's value (a range tombstone's end key).
    pub fn value(self) -> &'a [u8] {
        self.data()
            .get(self.fields().key_len as usize..)
            .unwrap_or_default()
    }

    pub fn seq(self) -> u64 {
        self.fields().seq
    }

    pub fn kind(self) -> ValueKind {
        self.fields().kind
    }

    /// The entry after this one.
    pub fn next(self) -> Option<NodeRef<'a>> {
        self.next_at(0)
    }
}

/// Writes `height` null links after the fields of the node at `node`.
///
/// Safety: `node` is a fresh allocation of at least `HEADER + height * LINK` bytes, aligned to
/// 8, that no other thread can reach yet.
unsafe fn init_links(node: NonNull<Node>, height: usize) {
    // SAFETY: the caller's contract: the links lie inside the allocation, aligned to 8 (the
    // fields' size is a multiple of 8), and nothing else touches them yet.
    unsafe {
        let links = node
            .as_ptr()
            .cast::<u8>()
            .add(HEADER)
            .cast::<AtomicPtr<Node>>();
        for level in 0..height {
            links.add(level).write(AtomicPtr::new(ptr::null_mut()));
        }
    }
}

/// The writer's side: the arena nodes are allocated from and the height generator.
struct Writer {
    arena: Arena,
    rng: u64,
}

/// An ordered set of entries (key, seq, kind, value) in internal order. `Send + Sync`.
pub struct SkipList {
    /// The head: a node with [`MAX_HEIGHT`] links and no entry, before every node.
    head: NonNull<Node>,
    /// Levels in use (1..=[`MAX_HEIGHT`]); readers may see it lag behind the head's links.
    height: AtomicUsize,
    len: AtomicUsize,
    writer: Mutex<Writer>,
}

// SAFETY: the list owns its arena (inside `writer`), which owns every node; nodes are written
// only under the writer lock before publication and read through atomics after it (module
// doc), so the list may be shared and sent between threads.
unsafe impl Send for SkipList {}
// SAFETY: as for `Send`.
unsafe impl Sync for SkipList {}

impl SkipList {
    pub fn new() -> SkipList {
        let mut arena = Arena::new();
        let head = arena.alloc(HEADER + MAX_HEIGHT * LINK).cast::<Node>();
        // SAFETY: a fresh allocation of the head's size, aligned to 8: the fields, then
        // `MAX_HEIGHT` links, all written here.
        unsafe {
            init_links(head, MAX_HEIGHT);
            head.as_ptr().write(Node {
                prefix: [0; 2],
                seq: 0,
                key_len: 0,
                data_len: 0,
                kind: ValueKind::Tombstone,
                height: MAX_HEIGHT as u8,
            });
        }
        SkipList {
            head,
            height: AtomicUsize::new(1),
            len: AtomicUsize::new(0),
            writer: Mutex::new(Writer {
                arena,
                rng: 0x9E37_79B9_7F4A_7C15,
            }),
        }
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.len.load(Ordering::Acquire)
    }

    /// Takes the writer lock for a run of inserts.
    pub fn inserter(&self) -> Inserter<'_> {
        Inserter {
            list: self,
            writer: self.writer.lock().unwrap_or_else(PoisonError::into_inner),
        }
    }

    /// Bytes of arena blocks allocated (takes the writer lock).
    #[cfg(test)]
    pub fn allocated(&self) -> usize {
        self.writer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .arena
            .allocated()
    }

    fn head(&self) -> NodeRef<'_> {
        // SAFETY: the head lives as long as the list.
        unsafe { NodeRef::new(self.head) }
    }

    fn top_level(&self) -> usize {
        self.height.load(Ordering::Relaxed).clamp(1, MAX_HEIGHT) - 1
    }

    /// The first entry.
    pub fn first(&self) -> Option<NodeRef<'_>> {
        self.head().next()
    }

    /// The first entry `>= probe`.
    pub fn seek(&self, probe: &Probe<'_>) -> Option<NodeRef<'_>> {
        self.find_ge(probe, None)
    }

    /// The first node `>= probe`; fills `prev[level]` with the last node `< probe` at each
    /// level in use when asked (leaving the others as they are).
    fn find_ge<'a>(
        &'a self,
        probe: &Probe<'_>,
        mut prev: Option<&mut [NodeRef<'a>; MAX_HEIGHT]>,
    ) -> Option<NodeRef<'a>> {
        let mut x = self.head();
        let mut level = self.top_level();
        loop {
            let next = x.next_at(level);
            match next {
                Some(n) if n.cmp(probe).is_lt() => x = n,
                _ => {
                    if let Some(slot) = prev.as_deref_mut().and_then(|p| p.get_mut(level)) {
                        *slot = x;
                    }
                    if level == 0 {
                        return next;
                    }
                    level -= 1;
                }
            }
        }
    }

    /// The last entry `< probe` (`inclusive`: `<= probe`).
    pub fn seek_before(&self, probe: &Probe<'_>, inclusive: bool) -> Option<NodeRef<'_>> {
        let past: fn(KeyOrdering) -> bool = if inclusive {
            KeyOrdering::is_gt
        } else {
            KeyOrdering::is_ge
        };
        let head = self.head();
        let mut x = head;
        let mut level = self.top_level();
        loop {
            match x.next_at(level) {
                Some(n) if !past(n.cmp(probe)) => x = n,
                _ if level > 0 => level -= 1,
                _ => return (!x.is(head)).then_some(x),
            }
        }
    }

    /// The last entry.
    pub fn last(&self) -> Option<NodeRef<'_>> {
        let head = self.head();
        let mut x = head;
        let mut level = self.top_level();
        loop {
            match x.next_at(level) {
                Some(n) => x = n,
                None if level > 0 => level -= 1,
                None => return (!x.is(head)).then_some(x),
            }
        }
    }
}

/// Inserts into a [`SkipList`] while holding its writer lock.
pub struct Inserter<'a> {
    list: &'a SkipList,
    writer: MutexGuard<'a, Writer>,
}

impl Inserter<'_> {
    /// Inserts an entry. Returns the arena bytes its node took, or `None` (nothing inserted)
    /// if an entry with the same key and sequence number is already there: sequence numbers
    /// are unique in a database, so it is the same entry.
    ///
    /// Panics if the key and value together exceed `u32::MAX` bytes (a write batch's limits
    /// keep entries far below).
    pub fn insert(&mut self, key: &[u8], value: &[u8], seq: u64, kind: ValueKind) -> Option<usize> {
        let data_len = key.len() + value.len();
        let (Ok(key_len), Ok(data_len32)) = (u32::try_from(key.len()), u32::try_from(data_len))
        else {
            panic!("memtable entry of {data_len} bytes is too large");
        };
        let probe = Probe::new(key, seq);
        let list = self.list;
        let mut prev = [list.head(); MAX_HEIGHT];
        if list
            .find_ge(&probe, Some(&mut prev))
            .is_some_and(|n| n.cmp(&probe).is_eq())
        {
            return None;
        }
        let height = self.random_height();
        let size = HEADER + height * LINK + data_len;
        let ptr = self.writer.arena.alloc(size).cast::<Node>();
        // SAFETY: `ptr` is a fresh allocation of `size` bytes aligned to 8, not yet reachable
        // by any reader: the fields, then `height` links (null until linked), then the data.
        unsafe {
            init_links(ptr, height);
            ptr.as_ptr().write(Node {
                prefix: probe.prefix,
                seq,
                key_len,
                data_len: data_len32,
                kind,
                height: height as u8,
            });
            let data = ptr.as_ptr().cast::<u8>().add(HEADER + height * LINK);
            ptr::copy_nonoverlapping(key.as_ptr(), data, key.len());
            ptr::copy_nonoverlapping(value.as_ptr(), data.add(key.len()), value.len());
        }
        // SAFETY: written above; published below (until then only this thread sees it).
        let node = unsafe { NodeRef::new(ptr) };
        if height > list.height.load(Ordering::Relaxed) {
            // Levels above the old height have the head as predecessor (`prev` starts so).
            list.height.store(height, Ordering::Relaxed);
        }
        for (level, before) in prev.iter().enumerate().take(height) {
            // The node's own link first, then publication: a reader reaching the node at this
            // level (through `before`) finds its link already set.
            node.link(level).store(
                before.link(level).load(Ordering::Relaxed),
                Ordering::Relaxed,
            );
            before.link(level).store(ptr.as_ptr(), Ordering::Release);
        }
        list.len.fetch_add(1, Ordering::Release);
        Some(size.next_multiple_of(ALIGN))
    }

    /// 1 with probability 3/4, 2 with 3/16, ... up to [`MAX_HEIGHT`] (xorshift64*).
    fn random_height(&mut self) -> usize {
        let w = &mut *self.writer;
        let mut height = 1;
        loop {
            w.rng ^= w.rng >> 12;
            w.rng ^= w.rng << 25;
            w.rng ^= w.rng >> 27;
            let r = w.rng.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 32;
            if height >= MAX_HEIGHT || r % BRANCHING != 0 {
                return height;
            }
            height += 1;
        }
    }
}

/// A position in a list that holds the list alive: what an iterator keeps between calls.
pub struct Cursor {
    list: Arc<SkipList>,
    /// A node of `list` (never the head), `None` when unpositioned or past either end.
    at: Option<NonNull<Node>>,
}

// SAFETY: `at` is only a position in `list`, which the cursor owns a share of; reading through
// it is as safe as reading through the list (see `SkipList`'s `Send`/`Sync`).
unsafe impl Send for Cursor {}
// SAFETY: as for `Send`.
unsafe impl Sync for Cursor {}

impl Cursor {
    /// An unpositioned cursor over `list`.
    pub fn new(list: Arc<SkipList>) -> Cursor {
        Cursor { list, at: None }
    }

    /// The entry under the cursor.
    pub fn current(&self) -> Option<NodeRef<'_>> {
        // SAFETY: `at` is a published node of `self.list`, which `self` keeps alive.
        self.at.map(|p| unsafe { NodeRef::new(p) })
    }

    pub fn seek_to_first(&mut self) {
        self.at = self.list.first().map(|n| n.ptr);
    }

    pub fn seek_to_last(&mut self) {
        self.at = self.list.last().map(|n| n.ptr);
    }

    /// To the first entry `>= probe`.
    pub fn seek(&mut self, probe: &Probe<'_>) {
        self.at = self.list.seek(probe).map(|n| n.ptr);
    }

    /// To the last entry `<= probe`.
    pub fn seek_for_prev(&mut self, probe: &Probe<'_>) {
        self.at = self.list.seek_before(probe, true).map(|n| n.ptr);
    }

    /// To the next entry (`O(1)`); an unpositioned cursor stays so.
    pub fn next(&mut self) {
        self.at = self.current().and_then(NodeRef::next).map(|n| n.ptr);
    }

    /// To the previous entry (`O(log n)`: a search); an unpositioned cursor stays so.
    pub fn prev(&mut self) {
        self.at = self.current().and_then(|n| {
            let probe = Probe {
                key: n.key(),
                seq: n.seq(),
                prefix: n.fields().prefix,
            };
            self.list.seek_before(&probe, false).map(|p| p.ptr)
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Few entries under Miri (it runs these tests to check the unsafe code), more natively.
    const N: u64 = if cfg!(miri) { 200 } else { 20_000 };

    fn key(i: u64) -> [u8; 8] {
        // Scrambled, so inserts land all over the list.
        (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 16).to_be_bytes()
    }

    fn keys_of(list: &SkipList) -> Vec<(Vec<u8>, u64)> {
        let mut out = Vec::new();
        let mut e = list.first();
        while let Some(n) = e {
            out.push((n.key().to_vec(), n.seq()));
            e = n.next();
        }
        out
    }

    #[test]
    fn entries_come_out_in_internal_order_and_searches_find_their_neighbours() {
        let list = SkipList::new();
        let mut want = Vec::new();
        {
            let mut ins = list.inserter();
            for i in 0..N {
                let k = key(i % (N / 2)); // every key twice, at two sequence numbers
                assert!(ins
                    .insert(&k, &i.to_le_bytes(), i, ValueKind::Value)
                    .is_some());
                want.push((k.to_vec(), i));
            }
        }
        want.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        assert_eq!(keys_of(&list), want);
        assert_eq!(list.len(), want.len());
        let last = list.last().map(|n| (n.key().to_vec(), n.seq()));
        assert_eq!(last.as_ref(), want.last());
        for (i, (k, s)) in want.iter().enumerate().step_by(7) {
            let at = Probe::new(k, *s);
            let found = list.seek(&at).map(|n| (n.key().to_vec(), n.seq()));
            assert_eq!(found.as_ref(), Some(&want[i]));
            let before = list
                .seek_before(&at, false)
                .map(|n| (n.key().to_vec(), n.seq()));
            assert_eq!(before.as_ref(), i.checked_sub(1).map(|j| &want[j]));
            let at_or_before = list
                .seek_before(&at, true)
                .map(|n| (n.key().to_vec(), n.seq()));
            assert_eq!(at_or_before.as_ref(), Some(&want[i]));
            assert_eq!(
                list.seek(&at)
                    .map(|n| u64::from_le_bytes(n.value().try_into().unwrap())),
                Some(*s)
            );
        }
    }

    #[test]
    fn a_cursor_walks_both_ways_and_outlives_its_list_handle() {
        let list = Arc::new(SkipList::new());
        {
            let mut ins = list.inserter();
            for i in 0..100u64 {
                ins.insert(&i.to_be_bytes(), b"", i, ValueKind::Tombstone);
            }
        }
        let mut cursor = Cursor::new(Arc::clone(&list));
        drop(list);
        cursor.seek_to_last();
        let mut back = Vec::new();
        while let Some(n) = cursor.current() {
            back.push(n.seq());
            cursor.prev();
        }
        assert_eq!(back, (0..100).rev().collect::<Vec<_>>());
        cursor.seek(&Probe::new(&50u64.to_be_bytes(), u64::MAX));
        cursor.next();
        assert_eq!(cursor.current().map(|n| n.seq()), Some(51));
        cursor.seek_for_prev(&Probe::new(&50u64.to_be_bytes(), 0));
        assert_eq!(cursor.current().map(|n| n.seq()), Some(50));
    }

    #[test]
    fn readers_see_ordered_complete_entries_while_a_writer_inserts() {
        let list = Arc::new(SkipList::new());
        let writer = {
            let list = Arc::clone(&list);
            std::thread::spawn(move || {
                for i in 0..N {
                    let k = key(i);
                    list.inserter().insert(&k, &k, i, ValueKind::Value).unwrap();
                }
            })
        };
        let mut rounds = 0;
        while rounds < 3 || !writer.is_finished() {
            rounds += 1;
            let mut cursor = Cursor::new(Arc::clone(&list));
            cursor.seek_to_first();
            let mut prev: Option<Vec<u8>> = None;
            let mut n = 0;
            while let Some(e) = cursor.current() {
                assert_eq!(e.key(), e.value(), "an entry read before it was complete");
                if let Some(p) = &prev {
                    assert!(p.as_slice() < e.key());
                }
                prev = Some(e.key().to_vec());
                n += 1;
                cursor.next();
            }
            assert!(n <= list.len() + 1);
        }
        writer.join().unwrap();
        assert_eq!(list.len(), N as usize);
    }
}
