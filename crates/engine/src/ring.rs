//! The io_uring side of the transport (`--io uring`): one ring per worker
//! thread, through which its sockets connect, send and receive. Where epoll
//! says a socket is ready and the worker then calls `send`/`recv` itself,
//! here the worker queues operations and one `io_uring_enter` per loop turn
//! both submits them and waits for their completions: the system calls per
//! request fall from about two (plus epoll's share) to a fraction of one.
//!
//! Each socket has one multishot receive armed for its life: the kernel
//! picks a buffer from a ring of provided buffers for each arrival and posts
//! a completion naming it; the worker parses the bytes and hands the buffer
//! straight back. Sends point into the run's request bytes, which outlive
//! the ring. Every operation's user data carries its kind, its slot and the
//! slot's socket generation, so a completion of a socket already closed is
//! recognised and dropped. All `unsafe` of this transport lives here.

use io_uring::{cqueue, opcode, squeue, types, IoUring};
use socket2::SockAddr;
use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::io;
use std::net::SocketAddr;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU16, Ordering};
use std::time::Duration;

/// The provided-buffer group every receive draws from.
const GROUP: u16 = 0;
/// One provided buffer: responses larger than this arrive in pieces, each
/// fed to the parser as it comes.
const BUF_SIZE: usize = 16 * 1024;
const PAGE: usize = 4096;

/// What a completion finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Connect,
    Send,
    Recv,
}

/// One completion, decoded.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Done {
    pub op: Op,
    pub idx: usize,
    /// The slot's socket generation when the operation was queued.
    pub generation: u32,
    /// The operation's result: bytes, 0, or a negated errno.
    pub res: i32,
    /// The provided buffer holding a receive's bytes.
    pub buffer: Option<u16>,
    /// A multishot receive stays armed (else it has ended and is re-armed).
    pub more: bool,
}

const GEN_MASK: u64 = 0x3fff_ffff;

fn tag(op: Op, idx: usize, generation: u32) -> u64 {
    let code = match op {
        Op::Connect => 0u64,
        Op::Send => 1,
        Op::Recv => 2,
    };
    code << 62 | (u64::from(generation) & GEN_MASK) << 32 | idx as u64 & 0xffff_ffff
}

/// Whether a completion's generation is the slot's current one.
pub(crate) fn same_generation(done: u32, current: u32) -> bool {
    u64::from(done) == u64::from(current) & GEN_MASK
}

/// A worker's ring, its provided buffers and the target's address.
pub(crate) struct Ring {
    // Dropped first: the kernel lets go of the buffers before they are freed.
    ring: IoUring,
    bufs: Buffers,
    addr: SockAddr,
    /// Completions of the last wait, in the order the kernel posted them.
    done: Vec<Done>,
}

impl std::fmt::Debug for Ring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ring")
            .field("buffers", &self.bufs.count)
            .finish()
    }
}

impl Ring {
    /// A ring for `conns` sockets to `addr`.
    pub fn new(conns: usize, addr: SocketAddr) -> io::Result<Ring> {
        let entries = (conns * 2 + 8).next_power_of_two().clamp(64, 4096) as u32;
        // Completions are only reaped in our own io_uring_enter (no
        // interrupting task work): the ring is used by this thread alone.
        let ring = IoUring::builder()
            .setup_single_issuer()
            .setup_defer_taskrun()
            .setup_cqsize(entries * 4)
            .build(entries)
            .or_else(|_| IoUring::builder().setup_cqsize(entries * 4).build(entries))?;
        if !ring.params().is_feature_ext_arg() {
            return Err(io::Error::from_raw_os_error(libc::ENOSYS));
        }
        let count = (conns * 2).next_power_of_two().clamp(64, 1024);
        let bufs = Buffers::new(count)?;
        // SAFETY: the entries' memory is page-aligned, holds `count` entries
        // and lives in `bufs`, which the ring (dropped first) outlives never.
        unsafe {
            ring.submitter().register_buf_ring_with_flags(
                bufs.entries as u64,
                count as u16,
                GROUP,
                0,
            )?;
        }
        Ok(Ring {
            ring,
            bufs,
            addr: SockAddr::from(addr),
            done: Vec::with_capacity(entries as usize),
        })
    }

    fn push(&mut self, entry: &squeue::Entry) {
        loop {
            // SAFETY: every entry's pointers (the address, the request
            // bytes) stay valid until its completion; see `connect`/`send`.
            if unsafe { self.ring.submission().push(entry) }.is_ok() {
                return;
            }
            // The queue is full: hand it to the kernel and try again.
            let _ = self.ring.submit();
        }
    }

    /// Queues the connect of slot `idx`'s new socket to the target.
    pub fn connect(&mut self, idx: usize, generation: u32, fd: RawFd) {
        // The address lives in `self`, which outlives the ring's operations.
        let e = opcode::Connect::new(types::Fd(fd), self.addr.as_ptr(), self.addr.len())
            .build()
            .user_data(tag(Op::Connect, idx, generation));
        self.push(&e);
    }

    /// Queues a send of `bytes`, which should stay unchanged until its
    /// completion (the run's request bytes, or a connection's own wire that
    /// is rewritten only once its request is answered). The kernel only
    /// reads them, so a slice freed early could at worst send stale bytes
    /// or fail with EFAULT: it cannot corrupt this process's memory.
    pub fn send(&mut self, idx: usize, generation: u32, fd: RawFd, bytes: &[u8]) {
        let len = bytes.len().min(u32::MAX as usize) as u32;
        let e = opcode::Send::new(types::Fd(fd), bytes.as_ptr(), len)
            .flags(libc::MSG_NOSIGNAL)
            .build()
            .user_data(tag(Op::Send, idx, generation));
        self.push(&e);
    }

    /// Arms the multishot receive of a connected socket.
    pub fn recv(&mut self, idx: usize, generation: u32, fd: RawFd) {
        let e = opcode::RecvMulti::new(types::Fd(fd), GROUP)
            .build()
            .user_data(tag(Op::Recv, idx, generation));
        self.push(&e);
    }

    /// Submits what is queued and waits up to `timeout` for a completion,
    /// in one system call; then collects every completion posted.
    pub fn wait(&mut self, timeout: Duration) {
        let ts = types::Timespec::from(timeout);
        let args = types::SubmitArgs::new().timespec(&ts);
        // ETIME (nothing came in time) and EINTR are ordinary; anything else
        // shows as connections timing out rather than as a busy loop.
        let _ = self.ring.submitter().submit_with_args(1, &args);
        self.done.clear();
        for cqe in self.ring.completion() {
            self.done.push(decode(&cqe));
        }
    }

    /// Takes the completions of the last wait (give the vector back with
    /// [`Ring::give_back`] to keep its allocation).
    pub fn take_done(&mut self) -> Vec<Done> {
        std::mem::take(&mut self.done)
    }

    pub fn give_back(&mut self, done: Vec<Done>) {
        self.done = done;
    }

    /// The bytes a receive completion put in buffer `bid`.
    pub fn bytes(&self, bid: u16, len: usize) -> &[u8] {
        self.bufs.slice(bid, len)
    }

    /// Returns buffer `bid` to the kernel for the next receive.
    pub fn recycle(&mut self, bid: u16) {
        self.bufs.recycle(bid);
    }
}

fn decode(cqe: &cqueue::Entry) -> Done {
    let data = cqe.user_data();
    Done {
        op: match data >> 62 {
            0 => Op::Connect,
            1 => Op::Send,
            _ => Op::Recv,
        },
        idx: (data & 0xffff_ffff) as usize,
        generation: ((data >> 32) & GEN_MASK) as u32,
        res: cqe.result(),
        buffer: cqueue::buffer_select(cqe.flags()),
        more: cqueue::more(cqe.flags()),
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // Every receive still armed could write into the buffers: cancel
        // them all, waiting, before the buffers are freed. If that fails the
        // buffers are leaked instead (the ring's own teardown is asynchronous).
        let cancelled = self.ring.submitter().register_sync_cancel(
            Some(types::Timespec::from(Duration::from_secs(1))),
            types::CancelBuilder::any(),
        );
        match cancelled {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {}
            Err(_) => self.bufs.leak = true,
        }
        let _ = self.ring.submitter().unregister_buf_ring(GROUP);
    }
}

/// A ring of provided buffers: a page-aligned array of entries the kernel
/// reads (the shared tail is in entry 0's reserved field) and the buffers'
/// memory.
struct Buffers {
    entries: *mut types::BufRingEntry,
    data: *mut u8,
    count: usize,
    /// Our tail: entries before it are the kernel's to use.
    tail: u16,
    /// Set when the kernel might still write into `data`: never freed.
    leak: bool,
}

impl Buffers {
    fn layouts(count: usize) -> (Layout, Layout) {
        let entries = std::mem::size_of::<types::BufRingEntry>() * count;
        let round = |n: usize| n.div_ceil(PAGE) * PAGE;
        (
            Layout::from_size_align(round(entries), PAGE).expect("valid layout"),
            Layout::from_size_align(BUF_SIZE * count, PAGE).expect("valid layout"),
        )
    }

    fn new(count: usize) -> io::Result<Buffers> {
        let (le, ld) = Buffers::layouts(count);
        // SAFETY: both layouts have a non-zero size.
        let (entries, data) = unsafe { (alloc_zeroed(le), alloc_zeroed(ld)) };
        if entries.is_null() || data.is_null() {
            return Err(io::Error::from(io::ErrorKind::OutOfMemory));
        }
        let mut bufs = Buffers {
            entries: entries.cast(),
            data,
            count,
            tail: 0,
            leak: false,
        };
        for bid in 0..count {
            bufs.recycle(bid as u16);
        }
        Ok(bufs)
    }

    fn slice(&self, bid: u16, len: usize) -> &[u8] {
        let bid = usize::from(bid) % self.count;
        // SAFETY: buffer `bid` is `BUF_SIZE` bytes inside `data`; the kernel
        // wrote `len <= BUF_SIZE` of them and posted the completion before
        // we read, and does not touch it again until it is recycled.
        unsafe { std::slice::from_raw_parts(self.data.add(bid * BUF_SIZE), len.min(BUF_SIZE)) }
    }

    /// Puts buffer `bid` at the tail and publishes the new tail.
    fn recycle(&mut self, bid: u16) {
        let bid = usize::from(bid) % self.count;
        let slot = usize::from(self.tail) & (self.count - 1);
        // SAFETY: `slot < count` entries, all allocated; the kernel only
        // reads entries before the published tail, and this one is past it.
        unsafe {
            let entry = &mut *self.entries.add(slot);
            entry.set_addr(self.data.add(bid * BUF_SIZE) as u64);
            entry.set_len(BUF_SIZE as u32);
            entry.set_bid(bid as u16);
        }
        self.tail = self.tail.wrapping_add(1);
        // SAFETY: the tail is the u16 in entry 0's reserved field, naturally
        // aligned; the kernel reads it with acquire ordering, so the entry
        // written above is visible before the new tail.
        unsafe {
            let tail = types::BufRingEntry::tail(self.entries).cast_mut();
            AtomicU16::from_ptr(tail).store(self.tail, Ordering::Release);
        }
    }
}

impl Drop for Buffers {
    fn drop(&mut self) {
        if self.leak {
            return;
        }
        let (le, ld) = Buffers::layouts(self.count);
        // SAFETY: allocated in `new` with these layouts; the ring that used
        // them is gone and no receive is armed (see `Ring`'s drop).
        unsafe {
            dealloc(self.entries.cast(), le);
            dealloc(self.data, ld);
        }
    }
}

/// Why io_uring cannot carry a run here, or None when it can: a ring with
/// provided buffers is set up and dropped (EPERM or ENOSYS under seccomp or
/// `kernel.io_uring_disabled`; kernels before 6.0 lack multishot receive).
pub(crate) fn unavailable() -> Option<String> {
    if kernel_before(6, 0) {
        return Some("io_uring multishot receive needs Linux 6.0 or later".into());
    }
    match Ring::new(1, SocketAddr::from(([127, 0, 0, 1], 9))) {
        Ok(_) => None,
        Err(e) => Some(format!("io_uring is unavailable here ({e})")),
    }
}

fn kernel_before(major: u32, minor: u32) -> bool {
    let Ok(release) = std::fs::read_to_string("/proc/sys/kernel/osrelease") else {
        return false;
    };
    let mut parts = release
        .trim()
        .split(['.', '-'])
        .map(|p| p.parse::<u32>().unwrap_or(0));
    let (a, b) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    (a, b) < (major, minor)
}
