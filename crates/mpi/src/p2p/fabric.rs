//! The seam between MPI's matching engine ([`super`]) and the transports that move
//! messages between ranks (`crate::channel`: postboxes and pools in RSM segments;
//! an in-memory fabric for tests). The engine decides *where* a message goes
//! (matching, unexpected buffering); a fabric decides *how* its bytes travel.
//!
//! Rules every fabric keeps:
//! * Messages from one source are announced ([`Event::Arrived`]) in the order that
//!   source sent them (MPI's non-overtaking rule rests on this).
//! * A message of at most [`Fabric::eager_limit`] bytes may be held back by the
//!   fabric until it is taken; the engine takes such messages as soon as they arrive.
//!   A longer message's data moves only after [`Fabric::take`], and the fabric keeps
//!   announcing later messages from the same source while it waits (rendezvous).
//! * [`Fabric::take`] is the match: for a `sync` envelope it is what lets the
//!   sender's [`Event::SyncMatched`] fire.
//! * No method blocks: [`Fabric::progress`] does what can be done now and returns.
//! * A message's [`MsgToken::seq`] is the number of messages its source's fabric
//!   accepted for this rank before it (calls of [`Fabric::send`] or
//!   [`Fabric::send_eager`] that returned `Ok`), from 0: the sender can name a message
//!   to its receiver (the cancel protocol, `super::cancel`).

pub use super::layout::Layout;

/// A rank in MPI_COMM_WORLD.
pub type Rank = u32;

/// What the receiver learns before any data: the match fields and the length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Envelope {
    /// The communicator's context id (point-to-point and collective traffic of one
    /// communicator use different ids).
    pub ctx: u32,
    pub tag: i32,
    /// Bytes of data.
    pub len: usize,
    /// A synchronous send (MPI_Ssend/Issend): completes only once matched.
    pub sync: bool,
}

/// Names one announced message until its data has been taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MsgToken {
    pub src: Rank,
    /// The message's number on its channel (from 0, per source).
    pub seq: u64,
}

/// Names one send until it completes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SendId(pub u64);

/// What a fabric reports from [`Fabric::progress`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// A new message's envelope.
    Arrived { token: MsgToken, env: Envelope },
    /// All of a taken message's data is in the buffer given to [`Fabric::take`].
    Received { token: MsgToken },
    /// The send's buffer may be reused: every byte has left it.
    SendDone { send: SendId },
    /// A sync send's message was matched (taken) by its receiver.
    SyncMatched { send: SendId },
    /// The peer is gone (its process died, or the network lost it); every send to it
    /// and every message expected from it fails.
    PeerLost { rank: Rank, why: String },
}

/// A transport error that is not about one peer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FabricError {
    #[error("rank {0} does not exist")]
    NoSuchRank(Rank),
    #[error("message {0:?} is unknown or already taken")]
    UnknownMessage(MsgToken),
    #[error("rank {rank} is gone: {why}")]
    PeerLost { rank: Rank, why: String },
    #[error("{0}")]
    Other(String),
}

/// The engine's side of [`Fabric::progress_claiming`]: the posted receives, offered
/// each new message before it is announced.
pub trait Claim {
    /// A new message from `src` with envelope `env`, wholly here and the next one from
    /// `src` the engine has not seen: the buffer (pointer, capacity) of the posted
    /// receive that matches it first, now removed from matching, or `None` (the
    /// message is announced as usual). The buffer is valid for writing `cap` bytes
    /// until [`Claim::claimed`].
    fn claim(&mut self, src: Rank, env: &Envelope) -> Option<(*mut u8, usize)>;
    /// The message of the last `Some` from [`Claim::claim`] is in its buffer (its first
    /// `min(len, cap)` bytes), or, with `false`, could not be copied (the fabric
    /// reports the peer lost).
    fn claimed(&mut self, ok: bool);
}

/// A process of another job joining this fabric (MPI's dynamic processes: ports,
/// spawn, join): its card (as [`Fabric::card`] gave it there) and this process's
/// rank in that process's numbering (the slot it writes there).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewPeer {
    pub card: String,
    pub slot_there: Rank,
}

/// Moves messages between the ranks of a job.
pub trait Fabric {
    /// This process's rank.
    fn rank(&self) -> Rank;
    /// How many ranks the job has.
    fn size(&self) -> Rank;
    /// The longest message the fabric may buffer without a matching receive.
    fn eager_limit(&self) -> usize;

    /// Starts sending `env.len` bytes from `data` to `dest` (which may be this rank).
    /// [`Event::SendDone`] follows (and [`Event::SyncMatched`] for a sync send).
    ///
    /// # Safety
    /// `data` is valid for reading `env.len` bytes until `SendDone` is reported.
    unsafe fn send(
        &mut self,
        dest: Rank,
        env: Envelope,
        data: *const u8,
    ) -> Result<SendId, FabricError>;

    /// As [`Fabric::send`], but `Ok(None)` when every byte has left `data` before the
    /// call returns: then no id is given and no event follows (the engine completes
    /// the send at once, without an event round). The message is ordered after every
    /// earlier send to `dest` all the same. The default is [`Fabric::send`].
    ///
    /// # Safety
    /// As [`Fabric::send`].
    unsafe fn send_eager(
        &mut self,
        dest: Rank,
        env: Envelope,
        data: *const u8,
    ) -> Result<Option<SendId>, FabricError> {
        // SAFETY: the caller's contract, forwarded.
        unsafe { self.send(dest, env, data) }.map(Some)
    }

    /// The next message from `src` (not this rank), if the fabric has it wholly here,
    /// short, and has not announced it yet, and `accept` takes its envelope: its first
    /// `min(len, cap)` bytes go to `buf` and it is consumed as if announced and taken
    /// (it is never announced). `Ok(None)`: nothing changed (nothing there, not short,
    /// refused, or an earlier message from `src` still being delivered). The caller
    /// keeps MPI's matching rules: nothing earlier queued or posted may match it. The
    /// default has no such path.
    ///
    /// # Safety
    /// `buf` is valid for writing `cap` bytes during the call.
    unsafe fn recv_now(
        &mut self,
        src: Rank,
        accept: &mut dyn FnMut(&Envelope) -> bool,
        buf: *mut u8,
        cap: usize,
    ) -> Result<Option<Envelope>, FabricError> {
        let _ = (src, accept, buf, cap);
        Ok(None)
    }

    /// Matches message `token`: its first `min(len, cap)` bytes go to `buf`, the rest
    /// is dropped (the engine reports the truncation). Returns `true` when the data is
    /// already all in `buf` (no [`Event::Received`] follows), `false` when
    /// `Received` will be reported.
    ///
    /// # Safety
    /// `buf` is valid for writing `cap` bytes until the data is reported received.
    unsafe fn take(
        &mut self,
        token: MsgToken,
        buf: *mut u8,
        cap: usize,
    ) -> Result<bool, FabricError>;

    /// Whether [`Fabric::send_layout`] and [`Fabric::take_layout`] work: the C layer
    /// otherwise packs a non-contiguous buffer itself. The default is no.
    fn layouts(&self) -> bool {
        false
    }

    /// As [`Fabric::send`], the bytes gathered from `lay` (its packed form,
    /// `env.len == lay.len()`) as they are written out.
    ///
    /// # Safety
    /// `lay` and its memory stay valid for reading until `SendDone` is reported.
    unsafe fn send_layout(
        &mut self,
        dest: Rank,
        env: Envelope,
        lay: *const Layout,
    ) -> Result<SendId, FabricError> {
        let _ = (dest, env, lay);
        Err(FabricError::Other(
            "this transport takes no datatype layouts".into(),
        ))
    }

    /// As [`Fabric::take`], the bytes scattered into `lay` (the first `min(len,
    /// cap)` of the packed form, `cap <= lay.len()`) as they come in.
    ///
    /// # Safety
    /// `lay` and its memory stay valid for writing until the data is reported
    /// received.
    unsafe fn take_layout(
        &mut self,
        token: MsgToken,
        lay: *const Layout,
        cap: usize,
    ) -> Result<bool, FabricError> {
        let _ = (token, lay, cap);
        Err(FabricError::Other(
            "this transport takes no datatype layouts".into(),
        ))
    }

    /// Does what can be done now; appends what happened to `events`. Returns whether
    /// anything moved (the caller's spin-wait backs off when nothing does).
    fn progress(&mut self, events: &mut Vec<Event>) -> Result<bool, FabricError>;

    /// As [`Fabric::progress`], but a new eager, non-sync message that is wholly here
    /// may first be offered to `claim`: when it names a buffer the data goes straight
    /// there and the message is never announced (no event, no take). A fabric offers a
    /// message only if no earlier message of its source is announced in this same
    /// call (the engine must see that one first: the non-overtaking rule). Many
    /// messages in a row can so land in one call. The default offers none.
    fn progress_claiming(
        &mut self,
        events: &mut Vec<Event>,
        claim: &mut dyn Claim,
    ) -> Result<bool, FabricError> {
        let _ = claim;
        self.progress(events)
    }

    /// What a process of another job needs to reach this one ([`NewPeer::card`]);
    /// `None` when this transport cannot take such processes.
    fn card(&self) -> Option<String> {
        None
    }

    /// Appends `peers` (processes of other jobs) as ranks `size()..size() + n`;
    /// returns the first. Either all are added or none.
    fn add_peers(&mut self, peers: &[NewPeer]) -> Result<Rank, FabricError> {
        let _ = peers;
        Err(FabricError::Other(
            "this transport cannot reach processes of another job".into(),
        ))
    }

    /// Rank `r` (added by [`Fabric::add_peers`]) was disconnected: its later exit is
    /// no loss to report.
    fn retire(&mut self, r: Rank) {
        let _ = r;
    }
}

/// A boxed fabric is a fabric: the C library picks its transport at run time.
impl<F: Fabric + ?Sized> Fabric for Box<F> {
    fn rank(&self) -> Rank {
        (**self).rank()
    }
    fn size(&self) -> Rank {
        (**self).size()
    }
    fn eager_limit(&self) -> usize {
        (**self).eager_limit()
    }
    unsafe fn send(
        &mut self,
        dest: Rank,
        env: Envelope,
        data: *const u8,
    ) -> Result<SendId, FabricError> {
        // SAFETY: the caller's contract, forwarded.
        unsafe { (**self).send(dest, env, data) }
    }
    unsafe fn send_eager(
        &mut self,
        dest: Rank,
        env: Envelope,
        data: *const u8,
    ) -> Result<Option<SendId>, FabricError> {
        // SAFETY: the caller's contract, forwarded.
        unsafe { (**self).send_eager(dest, env, data) }
    }
    unsafe fn recv_now(
        &mut self,
        src: Rank,
        accept: &mut dyn FnMut(&Envelope) -> bool,
        buf: *mut u8,
        cap: usize,
    ) -> Result<Option<Envelope>, FabricError> {
        // SAFETY: the caller's contract, forwarded.
        unsafe { (**self).recv_now(src, accept, buf, cap) }
    }
    unsafe fn take(
        &mut self,
        token: MsgToken,
        buf: *mut u8,
        cap: usize,
    ) -> Result<bool, FabricError> {
        // SAFETY: the caller's contract, forwarded.
        unsafe { (**self).take(token, buf, cap) }
    }
    fn layouts(&self) -> bool {
        (**self).layouts()
    }
    unsafe fn send_layout(
        &mut self,
        dest: Rank,
        env: Envelope,
        lay: *const Layout,
    ) -> Result<SendId, FabricError> {
        // SAFETY: the caller's contract, forwarded.
        unsafe { (**self).send_layout(dest, env, lay) }
    }
    unsafe fn take_layout(
        &mut self,
        token: MsgToken,
        lay: *const Layout,
        cap: usize,
    ) -> Result<bool, FabricError> {
        // SAFETY: the caller's contract, forwarded.
        unsafe { (**self).take_layout(token, lay, cap) }
    }
    fn progress(&mut self, events: &mut Vec<Event>) -> Result<bool, FabricError> {
        (**self).progress(events)
    }
    fn progress_claiming(
        &mut self,
        events: &mut Vec<Event>,
        claim: &mut dyn Claim,
    ) -> Result<bool, FabricError> {
        (**self).progress_claiming(events, claim)
    }
    fn card(&self) -> Option<String> {
        (**self).card()
    }
    fn add_peers(&mut self, peers: &[NewPeer]) -> Result<Rank, FabricError> {
        (**self).add_peers(peers)
    }
    fn retire(&mut self, r: Rank) {
        (**self).retire(r)
    }
}
