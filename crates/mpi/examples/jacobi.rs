//! A 2-D Jacobi iteration through `myrix_mpi`'s Rust API: the square grid's interior
//! (`N` × `N` points, fixed values on its border) is cut into blocks over a process
//! grid of `PR` × `PC` ranks; the world is split into process rows and process
//! columns ([`Comm::split`]), the halos are exchanged with nonblocking sends and
//! receives in each (columns packed), and each step's residual — the largest change
//! of any point — is an allreduce with `Op::Max` over the world. Rank 0 reads the
//! arguments and broadcasts them.
//!
//! Rank 0 prints `jacobi: N=<n> steps=<k> ranks=<p> grid=<pr>x<pc> residual=<r>`
//! (`<r>` in Rust's round-trip notation) and the grid's sum (a reduce); with
//! `--check` it also gathers the whole grid (gather of the block shapes, gatherv of
//! the blocks), runs the same iteration alone and prints `check ok` when grid and
//! residual are bit for bit the serial ones (each point is combined from the same
//! four values in the same order, and a maximum does not round), else `check FAILED`
//! and exits 1.
//!
//! `myrix mpiexec -n 4 target/release/examples/jacobi [N] [steps] [--check]`, or
//! alone, or under `mpiexec.hydra`.

use myrix_mpi::world::{Comm, Error, Op, World};

const UP: i32 = 1;
const DOWN: i32 = 2;
const LEFT: i32 = 3;
const RIGHT: i32 = 4;

/// The fixed value at border point (i, j) of the grid with interior 0..n (a border
/// index is -1 or n).
fn border(i: i64, j: i64, n: i64) -> f64 {
    if i < 0 {
        1.0
    } else if j < 0 {
        0.5 + 0.25 * (i as f64 / n as f64)
    } else {
        0.0
    }
}

/// The start and length of part `k` of `n` points cut into `parts`.
fn part(n: usize, parts: usize, k: usize) -> (usize, usize) {
    let (q, r) = (n / parts, n % parts);
    (k * q + k.min(r), q + usize::from(k < r))
}

/// The process grid: `pr` rows of `pc` ranks, as square as `p` allows.
fn process_grid(p: usize) -> (usize, usize) {
    let mut pr = (p as f64).sqrt() as usize;
    while pr > 1 && p % pr != 0 {
        pr -= 1;
    }
    (pr.max(1), p / pr.max(1))
}

/// A block with a halo: `h` rows and `w` columns of the interior, stored
/// `(h + 2) × (w + 2)`.
struct Block {
    h: usize,
    w: usize,
    u: Vec<f64>,
}

impl Block {
    fn new(n: usize, r0: usize, c0: usize, h: usize, w: usize) -> Block {
        let mut u = vec![0.0; (h + 2) * (w + 2)];
        let n = n as i64;
        for i in 0..h + 2 {
            for j in 0..w + 2 {
                let (gi, gj) = (r0 as i64 + i as i64 - 1, c0 as i64 + j as i64 - 1);
                if gi < 0 || gj < 0 || gi >= n || gj >= n {
                    u[i * (w + 2) + j] = border(gi, gj, n);
                }
            }
        }
        Block { h, w, u }
    }

    fn at(&self, i: usize, j: usize) -> usize {
        i * (self.w + 2) + j
    }

    /// One Jacobi step of the interior from the halo'd values; the largest change.
    fn step(&mut self, next: &mut Vec<f64>) -> f64 {
        next.clone_from(&self.u);
        let mut most = 0.0f64;
        for i in 1..=self.h {
            for j in 1..=self.w {
                let v = 0.25
                    * (self.u[self.at(i - 1, j)]
                        + self.u[self.at(i + 1, j)]
                        + self.u[self.at(i, j - 1)]
                        + self.u[self.at(i, j + 1)]);
                most = most.max((v - self.u[self.at(i, j)]).abs());
                next[self.at(i, j)] = v;
            }
        }
        std::mem::swap(&mut self.u, next);
        most
    }

    fn column(&self, j: usize) -> Vec<f64> {
        (1..=self.h).map(|i| self.u[self.at(i, j)]).collect()
    }

    fn interior(&self) -> Vec<f64> {
        (1..=self.h)
            .flat_map(|i| (1..=self.w).map(move |j| (i, j)))
            .map(|(i, j)| self.u[self.at(i, j)])
            .collect()
    }
}

/// The halos from the neighbours: rows through `col` (the ranks of this process
/// column, ranked by process row), packed columns through `row`.
fn exchange(b: &mut Block, row: &mut Comm, col: &mut Comm) -> Result<(), Error> {
    let w = b.w + 2;
    let (me, rows) = (col.rank(), col.size());
    let top: Vec<f64> = b.u[w + 1..w + 1 + b.w].to_vec();
    let bottom: Vec<f64> = b.u[b.h * w + 1..b.h * w + 1 + b.w].to_vec();
    let (mut from_up, mut from_down) = (vec![0.0; b.w], vec![0.0; b.w]);
    col.scope(|s| -> Result<(), Error> {
        let mut open = Vec::new();
        if me > 0 {
            open.push(s.irecv_pod(Some(me - 1), Some(DOWN), &mut from_up)?);
            open.push(s.isend_pod(me - 1, UP, &top)?);
        }
        if me + 1 < rows {
            open.push(s.irecv_pod(Some(me + 1), Some(UP), &mut from_down)?);
            open.push(s.isend_pod(me + 1, DOWN, &bottom)?);
        }
        s.wait_all(open).map(drop)
    })??;
    if me > 0 {
        b.u[1..1 + b.w].copy_from_slice(&from_up);
    }
    if me + 1 < rows {
        let at = (b.h + 1) * w + 1;
        b.u[at..at + b.w].copy_from_slice(&from_down);
    }
    let (me, cols) = (row.rank(), row.size());
    let (first, last) = (b.column(1), b.column(b.w));
    let (mut from_left, mut from_right) = (vec![0.0; b.h], vec![0.0; b.h]);
    row.scope(|s| -> Result<(), Error> {
        let mut open = Vec::new();
        if me > 0 {
            open.push(s.irecv_pod(Some(me - 1), Some(RIGHT), &mut from_left)?);
            open.push(s.isend_pod(me - 1, LEFT, &first)?);
        }
        if me + 1 < cols {
            open.push(s.irecv_pod(Some(me + 1), Some(LEFT), &mut from_right)?);
            open.push(s.isend_pod(me + 1, RIGHT, &last)?);
        }
        s.wait_all(open).map(drop)
    })??;
    for i in 1..=b.h {
        if me > 0 {
            let at = b.at(i, 0);
            b.u[at] = from_left[i - 1];
        }
        if me + 1 < cols {
            let at = b.at(i, b.w + 1);
            b.u[at] = from_right[i - 1];
        }
    }
    Ok(())
}

/// The serial iteration: the grid's interior and the last step's residual.
fn serial(n: usize, steps: u64) -> (Vec<f64>, f64) {
    let mut b = Block::new(n, 0, 0, n, n);
    let mut next = Vec::new();
    let mut r = 0.0;
    for _ in 0..steps {
        r = b.step(&mut next);
    }
    (b.interior(), r)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let check = args.iter().any(|a| a == "--check");
    let nums: Vec<u64> = args.iter().filter_map(|a| a.parse().ok()).collect();
    let mut world = match World::init() {
        Ok(w) => w,
        Err(e) => {
            eprintln!("jacobi: {e}");
            std::process::exit(3);
        }
    };
    match run(&mut world, &nums, check) {
        Ok(true) => {}
        Ok(false) => {
            world.abort(1, "the parallel grid differs from the serial one");
        }
        Err(e) => {
            eprintln!("jacobi: rank {}: {e} ({})", world.rank(), e.class());
            world.abort(5, &e.to_string());
        }
    }
    if let Err(e) = world.finalize() {
        eprintln!("jacobi: finalize: {e}");
        std::process::exit(6);
    }
}

/// `Ok(false)`: the check failed.
fn run(world: &mut World, nums: &[u64], check: bool) -> Result<bool, Error> {
    // Rank 0's arguments win: [N, steps, check].
    let mut params = [0u64; 3];
    if world.rank() == 0 {
        params = [
            nums.first().copied().unwrap_or(64).max(1),
            nums.get(1).copied().unwrap_or(200),
            u64::from(check),
        ];
    }
    world.bcast(0, &mut params)?;
    let [n, steps, check] = params;
    let (n, check) = (n as usize, check == 1);
    let p = world.size() as usize;
    let (pr, pc) = process_grid(p);
    let me = world.rank() as usize;
    let (prow, pcol) = (me / pc, me % pc);
    // Process rows (ranked by column) and process columns (ranked by row).
    let mut row = world
        .split(Some(prow as u32), pcol as i32)?
        .expect("a color");
    let mut col = world
        .split(Some(pcol as u32), prow as i32)?
        .expect("a color");
    let ((r0, h), (c0, w)) = (part(n, pr, prow), part(n, pc, pcol));
    let mut b = Block::new(n, r0, c0, h, w);
    let mut next = Vec::new();
    let mut residual = 0.0;
    for _ in 0..steps {
        exchange(&mut b, &mut row, &mut col)?;
        residual = world.allreduce_one(b.step(&mut next), Op::Max)?;
    }
    let mut sum = [0.0f64];
    world.reduce(0, &[b.interior().iter().sum::<f64>()], &mut sum, Op::Sum)?;
    if world.rank() == 0 {
        println!("jacobi: N={n} steps={steps} ranks={p} grid={pr}x{pc} residual={residual:?}");
        println!("jacobi: sum of the grid {:.6}", sum[0]);
    }
    if !check {
        return Ok(true);
    }
    // Every block's shape to rank 0, then the blocks themselves.
    let mut shapes = vec![0u64; if me == 0 { 4 * p } else { 0 }];
    world.gather(0, &[r0 as u64, c0 as u64, h as u64, w as u64], &mut shapes)?;
    let counts: Vec<usize> = shapes
        .chunks_exact(4)
        .map(|s| (s[2] * s[3]) as usize)
        .collect();
    let mut all = vec![0.0f64; if me == 0 { n * n } else { 0 }];
    world.gatherv(0, &b.interior(), &mut all, &counts)?;
    if me != 0 {
        return Ok(true);
    }
    let mut grid = vec![0.0f64; n * n];
    let mut at = 0;
    for s in shapes.chunks_exact(4) {
        let [r0, c0, h, w] = [s[0], s[1], s[2], s[3]].map(|x| x as usize);
        for i in 0..h {
            grid[(r0 + i) * n + c0..(r0 + i) * n + c0 + w].copy_from_slice(&all[at..at + w]);
            at += w;
        }
    }
    let (want, want_r) = serial(n, steps);
    let same = grid
        .iter()
        .zip(&want)
        .all(|(a, b)| a.to_bits() == b.to_bits());
    if same && residual.to_bits() == want_r.to_bits() {
        println!("check ok: the grid and residual {want_r:?} are the serial computation's");
        Ok(true)
    } else {
        println!("check FAILED: residual {residual:?}, serial {want_r:?}, grids equal: {same}");
        Ok(false)
    }
}
