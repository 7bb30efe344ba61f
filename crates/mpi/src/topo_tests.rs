use super::*;

fn dc(n: i64, dims: &[i64]) -> Result<Vec<i64>, TopoError> {
    let mut d = dims.to_vec();
    dims_create(n, &mut d).map(|()| d)
}

#[test]
fn dims_create_matches_the_standard_examples() {
    assert_eq!(dc(6, &[0, 0]).unwrap(), vec![3, 2]);
    assert_eq!(dc(7, &[0, 0]).unwrap(), vec![7, 1]);
    assert_eq!(dc(6, &[0, 3, 0]).unwrap(), vec![2, 3, 1]);
    assert!(matches!(dc(7, &[0, 3, 0]), Err(TopoError::Dims(_))));
    assert_eq!(dc(16, &[0, 0, 0]).unwrap(), vec![4, 2, 2]);
    assert_eq!(dc(12, &[0, 0, 0]).unwrap(), vec![3, 2, 2]);
    // Equal spreads: the larger smallest factor, then the next (MPICH's answers,
    // from its topo/dims5 list).
    assert_eq!(dc(20, &[0, 0, 0, 0]).unwrap(), vec![5, 2, 2, 1]);
    assert_eq!(dc(110, &[0, 0, 0, 0]).unwrap(), vec![11, 5, 2, 1]);
    assert_eq!(dc(5040, &[0, 0, 0]).unwrap(), vec![21, 16, 15]);
    assert_eq!(dc(6240, &[0, 0, 0]).unwrap(), vec![26, 16, 15]);
    assert_eq!(dc(10800, &[0, 0, 0]).unwrap(), vec![27, 20, 20]);
    assert_eq!(dc(100320, &[0, 0, 0]).unwrap(), vec![57, 44, 40]);
    assert_eq!(dc(1, &[0, 0]).unwrap(), vec![1, 1]);
    assert_eq!(dc(4, &[2, 2]).unwrap(), vec![2, 2]);
    assert_eq!(dc(1, &[]).unwrap(), Vec::<i64>::new());
    assert!(dc(2, &[]).is_err());
    assert!(matches!(dc(4, &[-1, 0]), Err(TopoError::Dims(_))));
    assert!(matches!(dc(0, &[0]), Err(TopoError::Arg(_))));
    assert!(dc(5, &[2, 2]).is_err());
}

#[test]
fn dims_create_is_balanced_and_non_increasing_for_many_sizes() {
    for n in 1..=300i64 {
        for k in 1..=4usize {
            let d = dc(n, &vec![0; k]).unwrap();
            assert_eq!(d.iter().product::<i64>(), n);
            assert!(d.windows(2).all(|w| w[0] >= w[1]), "{n} {k}: {d:?}");
            // No other non-increasing factorization has a smaller spread.
            let spread = d[0] - d[k - 1];
            let mut all = Vec::new();
            enumerate(n, k, n, &mut Vec::new(), &mut all);
            let best = all.iter().map(|v| v[0] - v[k - 1]).min().unwrap();
            assert_eq!(spread, best, "{n} {k}: {d:?}");
        }
    }
    // A large prime and a large power of two stay quick.
    assert_eq!(dc(2_147_483_647, &[0, 0]).unwrap(), vec![2_147_483_647, 1]);
    assert_eq!(dc(1 << 30, &[0; 6]).unwrap(), vec![32, 32, 32, 32, 32, 32]);
}

fn enumerate(rem: i64, k: usize, cap: i64, cur: &mut Vec<i64>, out: &mut Vec<Vec<i64>>) {
    if k == 0 {
        if rem == 1 {
            out.push(cur.clone());
        }
        return;
    }
    for d in (1..=cap.min(rem)).rev() {
        if rem % d == 0 {
            cur.push(d);
            enumerate(rem / d, k - 1, d, cur, out);
            cur.pop();
        }
    }
}

#[test]
fn cart_rank_and_coords_are_inverse_row_major() {
    let c = Cart::new(&[3, 2, 4], &[false, true, false], 30).unwrap();
    assert_eq!(c.size(), 24);
    for r in 0..24 {
        let co = c.coords(r).unwrap();
        let ci: Vec<i64> = co.iter().map(|&x| x as i64).collect();
        assert_eq!(c.rank(&ci).unwrap(), r);
    }
    assert_eq!(c.coords(5).unwrap(), vec![0, 1, 1]);
    assert!(c.coords(24).is_err());
    // Periodic dimension wraps; the others refuse.
    assert_eq!(c.rank(&[0, -1, 0]).unwrap(), c.rank(&[0, 1, 0]).unwrap());
    assert!(c.rank(&[3, 0, 0]).is_err());
    assert!(c.rank(&[0, 0]).is_err());
    assert!(Cart::new(&[3, 0], &[false, false], 9).is_err());
    assert!(Cart::new(&[3, 4], &[false, false], 11).is_err());
}

#[test]
fn cart_shift_gives_proc_null_at_open_edges_and_wraps_periodic_ones() {
    let c = Cart::new(&[4, 3], &[false, true], 12).unwrap();
    // Rank 0 is (0,0).
    assert_eq!(c.shift(0, 0, 1).unwrap(), (None, Some(3)));
    assert_eq!(c.shift(0, 1, 1).unwrap(), (Some(2), Some(1)));
    assert_eq!(c.shift(11, 0, 1).unwrap(), (Some(8), None));
    assert_eq!(c.shift(4, 0, 2).unwrap(), (None, Some(10)));
    assert_eq!(c.shift(4, 0, -1).unwrap(), (Some(7), Some(1)));
    assert_eq!(c.shift(4, 1, 7).unwrap(), (Some(3), Some(5)));
    assert_eq!(c.shift(4, 0, 0).unwrap(), (Some(4), Some(4)));
    assert!(c.shift(4, 2, 1).is_err());
    assert_eq!(c.shift(4, 0, i64::MIN).unwrap(), (None, None));
}

#[test]
fn cart_sub_groups_by_dropped_coordinates() {
    let c = Cart::new(&[2, 3], &[true, false], 6).unwrap();
    // Keep the columns dimension: rows become the colors.
    for r in 0..6 {
        let (s, color, key) = c.sub(r, &[false, true]).unwrap();
        assert_eq!(s.dims, vec![3]);
        assert_eq!(s.periods, vec![false]);
        assert_eq!(color, r / 3);
        assert_eq!(key, r % 3);
        let (s, color, key) = c.sub(r, &[true, false]).unwrap();
        assert_eq!((s.dims, color, key), (vec![2], r % 3, r / 3));
    }
    let (s, color, key) = c.sub(4, &[false, false]).unwrap();
    assert_eq!((s.dims.len(), color, key), (0, 4, 0));
}

#[test]
fn cart_neighbor_tags_pair_up_even_on_a_periodic_pair() {
    let t = Topology::Cart(Cart::new(&[2], &[true], 2).unwrap());
    let n0 = t.neighbors(0).unwrap();
    let n1 = t.neighbors(1).unwrap();
    assert_eq!(n0.sources, vec![Some(1), Some(1)]);
    // What rank 0 sends to its -1 neighbour arrives in rank 1's +1 slot.
    assert_eq!(n0.send_tags[0], n1.recv_tags[1]);
    assert_eq!(n0.send_tags[1], n1.recv_tags[0]);
}

#[test]
fn graph_checks_and_neighbors() {
    // The standard's example: 4 nodes.
    let g = Graph::new(&[2, 3, 4, 6], &[1, 3, 0, 3, 0, 2], 4).unwrap();
    assert_eq!(g.neighbors(0).unwrap(), &[1, 3]);
    assert_eq!(g.neighbors(3).unwrap(), &[0, 2]);
    assert!(g.neighbors(4).is_err());
    assert!(Graph::new(&[2, 1], &[0, 1], 4).is_err());
    assert!(Graph::new(&[1, 2], &[0, 2], 4).is_err());
    assert!(Graph::new(&[1, 2], &[0], 4).is_err());
    assert!(Graph::new(&[0, 0, 0], &[], 2).is_err());
}

#[test]
fn dist_graph_views_agree_on_edge_order() {
    let edges = [(0, 1, 5), (1, 0, 6), (0, 1, 7), (2, 2, 1)];
    let g0 = DistGraph::from_edges(0, &edges, true);
    let g1 = DistGraph::from_edges(1, &edges, true);
    let g2 = DistGraph::from_edges(2, &edges, true);
    assert_eq!(g0.destinations, vec![1, 1]);
    assert_eq!(g0.dest_weights, vec![5, 7]);
    assert_eq!(g1.sources, vec![0, 0]);
    assert_eq!(g1.source_weights, vec![5, 7]);
    assert_eq!(
        (g2.sources.clone(), g2.destinations.clone()),
        (vec![2], vec![2])
    );
}
