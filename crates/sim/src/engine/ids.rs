//! Newtype ids for the engine's arrays, and [`IdVec`], a `Vec` indexed by one of them.
//! Ids are `u32` with `NONE` for "no such thing", so arrays stay flat (no `Option`
//! padding). An array must never be indexed by an id of another kind.

use std::marker::PhantomData;
use std::ops::{Index, IndexMut};

pub(crate) trait Id: Copy {
    fn idx(self) -> usize;
}

macro_rules! id {
    ($(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub(crate) struct $name(pub u32);

        impl $name {
            pub const NONE: $name = $name(u32::MAX);
            #[inline]
            #[allow(dead_code)]
            pub fn is_none(self) -> bool {
                self.0 == u32::MAX
            }
            #[inline]
            #[allow(dead_code)]
            pub fn is_some(self) -> bool {
                self.0 != u32::MAX
            }
        }

        impl Id for $name {
            #[inline]
            fn idx(self) -> usize {
                self.0 as usize
            }
        }
    };
}

id!(
    /// A directed channel. Laid out host by host (injection, then ejection), then link
    /// by link (a to b, then b to a): see the constructors.
    ChannelId
);
id!(
    /// A switch port, numbered switch after switch (`Ports::port`); as an input it is
    /// where a channel ends, as an output where one starts.
    PortId
);
id!(
    /// A packet's slot in [`super::packets::Packets`].
    PacketId
);

impl ChannelId {
    /// Host `h`'s channel into its switch.
    #[inline]
    pub fn host_inject(h: u32) -> ChannelId {
        ChannelId(2 * h)
    }

    /// The channel from the switch to host `h`.
    #[inline]
    pub fn host_eject(h: u32) -> ChannelId {
        ChannelId(2 * h + 1)
    }

    /// Link `link`'s channel from its end `a` to its end `b` (`reverse`: b to a), in a
    /// network of `hosts` hosts.
    #[inline]
    pub fn link(hosts: usize, link: usize, reverse: bool) -> ChannelId {
        ChannelId((2 * hosts + 2 * link + reverse as usize) as u32)
    }
}

/// A `Vec` indexed by an id of kind `I`.
#[derive(Clone, Debug)]
pub(crate) struct IdVec<I, T> {
    v: Vec<T>,
    _id: PhantomData<fn(I)>,
}

impl<I: Id, T> IdVec<I, T> {
    pub fn from_vec(v: Vec<T>) -> Self {
        IdVec {
            v,
            _id: PhantomData,
        }
    }

    pub fn len(&self) -> usize {
        self.v.len()
    }

    pub fn iter(&self) -> std::slice::Iter<'_, T> {
        self.v.iter()
    }

    pub fn as_slice(&self) -> &[T] {
        &self.v
    }
}

impl<I: Id, T: Clone> IdVec<I, T> {
    pub fn filled(x: T, n: usize) -> Self {
        IdVec::from_vec(vec![x; n])
    }
}

impl<I: Id, T> Index<I> for IdVec<I, T> {
    type Output = T;
    #[inline]
    fn index(&self, i: I) -> &T {
        &self.v[i.idx()]
    }
}

impl<I: Id, T> IndexMut<I> for IdVec<I, T> {
    #[inline]
    fn index_mut(&mut self, i: I) -> &mut T {
        &mut self.v[i.idx()]
    }
}
