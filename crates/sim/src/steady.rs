//! Steady-state detection for one load point: MSER-5 (White's marginal standard error
//! rule on batches of 5) over the latencies of the measured messages, in the order they
//! arrived. It tells whether the fixed warm-up was long enough; it never changes what is
//! measured.

/// Observations per batch.
const BATCH: usize = 5;

/// How many leading observations MSER-5 would discard from `xs`: the truncation point
/// that minimises the standard error of the mean of what is left, looked for in the
/// series' first half (as the rule prescribes: the few batches at the end are too noisy
/// to judge by). `None` for fewer than 10 batches. A truncation at the end of that half
/// means the series did not settle: the warm-up was too short or the point is not in a
/// steady state at all.
pub fn mser5(xs: &[u64]) -> Option<usize> {
    let k = xs.len() / BATCH;
    if k < 10 {
        return None;
    }
    let b: Vec<f64> = xs
        .chunks_exact(BATCH)
        .map(|c| c.iter().sum::<u64>() as f64 / BATCH as f64)
        .collect();
    // Suffix sums give every truncation's mean and spread in one pass.
    let (mut s, mut s2) = (0.0, 0.0);
    let mut best = (f64::INFINITY, 0);
    for d in (0..k).rev() {
        s += b[d];
        s2 += b[d] * b[d];
        if d > k / 2 {
            continue;
        }
        let n = (k - d) as f64;
        let ssd = (s2 - s * s / n).max(0.0);
        let mser = ssd / (n * n);
        // Ties go to the earlier truncation: discard no more than needed.
        if mser <= best.0 {
            best = (mser, d);
        }
    }
    Some(best.1 * BATCH)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flat_series_keeps_everything() {
        let xs: Vec<u64> = (0..1000).map(|i| 100 + (i * 7919 % 13)).collect();
        assert!(mser5(&xs).unwrap() < 250);
    }

    #[test]
    fn a_transient_is_cut_off() {
        // 200 observations decaying from 1000 to the level, then 800 at the level.
        let mut xs: Vec<u64> = (0..200).map(|i| 1000 - i * 4).collect();
        xs.extend((0..800).map(|i| 200 + (i * 31 % 7)));
        let d = mser5(&xs).unwrap();
        assert!((150..=250).contains(&d), "{d}");
    }

    #[test]
    fn a_growing_series_never_settles() {
        // Latency growing all along, as at saturation: cut as far as the rule looks.
        let xs: Vec<u64> = (0..1000).map(|i| 100 + i * 3).collect();
        assert_eq!(mser5(&xs).unwrap(), 500);
    }

    #[test]
    fn short_series_are_not_judged() {
        assert_eq!(mser5(&[1; 49]), None);
        assert!(mser5(&[1; 50]).is_some());
    }
}
