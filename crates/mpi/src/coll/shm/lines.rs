//! One-step moves of at most a line ([`INLINE`] bytes) written and read in place:
//! the *heads* of the small v-forms (`mpiapi`'s `coll_vshm.rs`: sizes, and the
//! blocks that fit beside them). The writer fills its line through a closure and the
//! reader gets a slice of the writer's line, so a small Gatherv or Scatterv costs no
//! staging buffer and no copy beyond the caller's own (the regular gather and bcast
//! take whole buffers of the same length everywhere, which a head is not).

use super::{Area, ShmColl, INLINE};
use crate::coll::CollError;

impl ShmColl {
    /// One step of a gather of lines: every rank but `root` fills its line's
    /// [`INLINE`] data bytes (`fill`, called once, off the root); the root gets each
    /// other rank's in rank order (`take(q, line)`, read in place).
    pub fn gather_line(
        &mut self,
        root: usize,
        fill: impl FnOnce(&mut [u8]),
        mut take: impl FnMut(usize, &[u8]),
    ) -> Result<(), CollError> {
        self.check_root(root)?;
        if self.g.n == 1 {
            return Ok(());
        }
        let s = self.next();
        if self.me == root {
            self.post(s);
            for q in (0..self.g.n).filter(|&q| q != root) {
                self.wait(q, s);
                take(q, self.read(q, s, Area::Line, 0, INLINE));
            }
        } else {
            self.claim(s, Area::Line);
            fill(self.area_mut(s, Area::Line, 0, INLINE));
            self.post(s);
        }
        Ok(())
    }

    /// One step of a bcast of a line: `root` fills its line's [`INLINE`] data bytes
    /// (`fill`, called at the root only); every other rank reads them in place
    /// (`take`, called off the root only).
    pub fn bcast_line(
        &mut self,
        root: usize,
        fill: impl FnOnce(&mut [u8]),
        take: impl FnOnce(&[u8]),
    ) -> Result<(), CollError> {
        self.check_root(root)?;
        if self.g.n == 1 {
            return Ok(());
        }
        let s = self.next();
        if self.me == root {
            self.claim(s, Area::Line);
            fill(self.area_mut(s, Area::Line, 0, INLINE));
            self.post(s);
        } else {
            // Posting s says "done reading s - 1"; the root's line for s stays
            // until this rank posts s + 1 (the claim rule).
            self.post(s);
            self.wait(root, s);
            take(self.read(root, s, Area::Line, 0, INLINE));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::heap::HeapMem;
    use super::super::{Geometry, ShmColl};
    use super::INLINE;

    /// Ranks as threads over heap memory: 300 rounds of a gather of lines and a bcast
    /// of a line, every root, mixed with regular barriers (the steps interleave
    /// with theirs), so lines are reused many times over (64 per rank); every byte
    /// each reader sees is the one its writer put there in that round.
    #[test]
    fn lines_gathered_and_broadcast_in_place() {
        for n in 1..=4usize {
            let g = Geometry {
                n,
                slot: 64 * n,
                depth: 2,
            };
            let mem = HeapMem::new(g.len());
            std::thread::scope(|sc| {
                for me in 0..n {
                    let mem = mem.clone();
                    sc.spawn(move || {
                        let mut c = ShmColl::new(Box::new(mem), g, me).unwrap();
                        let byte =
                            |q: usize, round: usize, i: usize| (q * 31 + round * 7 + i) as u8;
                        for round in 0..300 {
                            let root = round % n;
                            let mut seen = vec![false; n];
                            c.gather_line(
                                root,
                                |l| {
                                    assert_eq!(l.len(), INLINE);
                                    for (i, b) in l.iter_mut().enumerate() {
                                        *b = byte(me, round, i);
                                    }
                                },
                                |q, l| {
                                    assert_ne!(q, root);
                                    seen[q] = true;
                                    for (i, &b) in l.iter().enumerate() {
                                        assert_eq!(
                                            b,
                                            byte(q, round, i),
                                            "n={n} round {round} q={q}"
                                        );
                                    }
                                },
                            )
                            .unwrap();
                            let want: Vec<bool> = (0..n).map(|q| me == root && q != root).collect();
                            assert_eq!(seen, want, "n={n} round {round}: who was read");
                            let mut got = None;
                            c.bcast_line(
                                root,
                                |l| {
                                    l.iter_mut()
                                        .enumerate()
                                        .for_each(|(i, b)| *b = byte(root, round + 1, i))
                                },
                                |l| got = Some(l.to_vec()),
                            )
                            .unwrap();
                            if me != root {
                                let want: Vec<u8> =
                                    (0..INLINE).map(|i| byte(root, round + 1, i)).collect();
                                assert_eq!(got, Some(want), "n={n} round {round}: bcast");
                            } else {
                                assert_eq!(got, None);
                            }
                            if round % 3 == 0 {
                                c.barrier();
                            }
                        }
                        assert!(c.gather_line(n, |_| {}, |_, _| {}).is_err());
                        assert!(c.bcast_line(n, |_| {}, |_| {}).is_err());
                    });
                }
            });
        }
    }
}
