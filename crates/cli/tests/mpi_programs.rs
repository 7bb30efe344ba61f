//! MPI programs of `crates/mpiapi/tests/c/` under `myrix mpiexec`, each checking its
//! own results: one-sided communication, topologies, communicators, sessions,
//! datatypes, requests, large counts, the tool interface, MPI-IO and partitioned
//! communication. Needs `cc`.

mod common;

use common::mpi::{alone, assert_every_rank, build, every_rank_ok, myrix, run, show};
use std::time::Duration;

/// One-sided communication (`rma.c`: fence, locks, counters, CAS lock, PSCW,
/// shared and dynamic windows, refusals) alone and on 2 and 4 ranks.
#[test]
fn one_sided_under_myrix_mpiexec() {
    let rma = build("rma");
    assert_every_rank(&run(alone(&rma), Duration::from_secs(60)), "rma", 1);
    for n in [2, 4] {
        let mut c = myrix();
        c.args(["mpiexec", "-n", &n.to_string()]).arg(&rma);
        assert_every_rank(&run(c, Duration::from_secs(120)), "rma", n);
    }
}

/// `rma_random.c` (random puts, gets and accumulates in fence and lock epochs,
/// checked against a serial reference) on 2, 3 and 4 ranks, two seeds each.
#[test]
fn random_one_sided_traffic_matches_a_serial_reference() {
    let exe = &build("rma_random");
    for n in [2usize, 3, 4] {
        for seed in ["1", "20261123"] {
            let mut c = myrix();
            c.args(["mpiexec", "-n", &n.to_string()]).arg(exe).arg(seed);
            let o = run(c, Duration::from_secs(120));
            assert_every_rank(&o, "rma_random", n);
        }
    }
}

/// `rma_one.c` (one-element accumulates: every pair type with MAXLOC, MINLOC,
/// REPLACE and NO_OP, basic types, concurrent accumulates from every rank to one
/// location, refusals) alone and on 2 and 4 ranks.
#[test]
fn one_element_accumulates_are_atomic_and_exact() {
    let exe = &build("rma_one");
    let o = run(alone(exe), Duration::from_secs(60));
    assert_every_rank(&o, "rma_one", 1);
    for n in [2usize, 4] {
        let mut c = myrix();
        c.args(["mpiexec", "-n", &n.to_string()]).arg(exe);
        let o = run(c, Duration::from_secs(120));
        assert_every_rank(&o, "rma_one", n);
    }
}

/// `topo.c` (topologies, neighbourhood collectives), `attr_info.c` (info
/// objects, attributes, error handlers, status accessors) and `type_grid.c`
/// (subarray and darray types) on 1, 2, 3, 4 and 6 ranks.
#[test]
fn topologies_info_and_attributes_under_myrix_mpiexec() {
    for prog in ["topo", "attr_info", "type_grid"] {
        let exe = build(prog);
        for n in [1usize, 2, 3, 4, 6] {
            let mut c = myrix();
            c.args(["mpiexec", "-n", &n.to_string()]).arg(&exe);
            let o = run(c, Duration::from_secs(120));
            assert!(o.status.success(), "{prog} n={n}: {}", show(&o));
            let text = String::from_utf8_lossy(&o.stdout);
            for r in 0..n {
                assert!(
                    text.lines().any(|l| l == format!("{prog} ok {r}")),
                    "{prog} n={n}: rank {r} did not finish:\n{}",
                    show(&o)
                );
            }
        }
    }
}

/// `MPI_Comm_create_group` (`comm_group.c`) at 1 to 5 ranks: two halves creating at
/// once with different tags, all ranks but one while that one never calls, a rank
/// alone, the empty group, and the error codes of bad arguments.
#[test]
fn communicators_created_by_their_group_alone() {
    every_rank_ok("comm_group", &[1, 2, 3, 4, 5]);
}

/// `MPI_Isendrecv` and `MPI_Isendrecv_replace` (`isendrecv.c`) at 1 to 4 ranks: a
/// ring at 0 B to 1 MiB with the send buffer overwritten at completion, a strided
/// type, a rank to itself, MPI_PROC_NULL, bad arguments.
#[test]
fn isendrecv_completes_both_halves() {
    every_rank_ok("isendrecv", &[1, 2, 3, 4]);
}

/// Cancelling sends, `MPI_DATATYPE_NULL` with count 0 and the MPI-4.1 buffers
/// (`cancel.c`) at 1 to 3 ranks: unmatched sends of 0 B to 1 MiB in three modes on
/// two communicators are cancelled and never received, received ones are not;
/// communicator, automatic and session buffers with their flushes.
#[test]
fn cancelled_sends_are_never_received() {
    every_rank_ok("cancel", &[1, 2, 3]);
}

/// The MPI-4 large-count forms (`large_count.c`) at 1 to 4 ranks: point-to-point in
/// every mode, the v-collectives with `MPI_Count`/`MPI_Aint` arrays (rooted ones read
/// at the root only, an intercommunicator's remote-sized arrays), and a count above
/// INT_MAX refused with MPI_ERR_COUNT.
#[test]
fn large_count_forms_match_the_int_forms() {
    every_rank_ok("large_count", &[1, 2, 3, 4]);
}

/// A message of more than INT_MAX bytes (`large_msg.c`, 2 GiB per rank) through
/// `MPI_Isend_c`/`MPI_Irecv_c`, every byte checked, its count read in 64 bits.
#[test]
fn a_message_above_int_max_goes_through() {
    every_rank_ok("large_msg", &[2]);
}

/// The tool information interface (`mpit.c`): before `MPI_Init` and after
/// `MPI_Finalize`, counted initializations, no variables, the documented codes.
#[test]
fn tool_interface_answers_without_variables() {
    every_rank_ok("mpit", &[1, 2]);
}

/// MPI-4 sessions without MPI_Init (`session.c`) at 1 to 4 ranks: process sets,
/// communicators from their groups, two sessions at once, session error handlers,
/// and no second start after the last session ended.
#[test]
fn sessions_start_mpi_without_init() {
    every_rank_ok("session", &[1, 2, 3, 4]);
}

/// A session beside the World model (`session_world.c`): MPI_Finalize while the
/// session is open leaves its communicator working; its end tears down.
#[test]
fn sessions_outlive_mpi_finalize() {
    every_rank_ok("session_world", &[1, 2, 3]);
}

/// `MPI_Type_get_envelope` / `MPI_Type_get_contents` and their `_c` forms
/// (`type_decode.c`) at 1 to 4 ranks: every constructor decoded, its arguments given
/// back, inner types handed back as new handles, rebuilt types carrying the same data.
#[test]
fn datatypes_decode_to_their_constructor_arguments() {
    every_rank_ok("type_decode", &[1, 2, 3, 4]);
}

/// Generalized requests (`greq.c`) at 1 to 4 ranks: query/free/cancel callbacks
/// called as the standard says from Wait, Test, Waitall, Waitany, Testall,
/// Request_get_status, Request_free and Cancel.
#[test]
fn generalized_requests_call_their_callbacks() {
    every_rank_ok("greq", &[1, 2, 3, 4]);
}

/// Nonblocking `MPI_Comm_idup` (`comm_idup.c`) at 1 to 4 ranks: eight in flight on
/// one communicator, overlapping communicators duplicated in opposite orders, an idup
/// across an Iallreduce and a blocking dup, an intercommunicator's, each new
/// communicator's traffic its own.
#[test]
fn comm_idup_does_not_block() {
    every_rank_ok("comm_idup", &[1, 2, 3, 4]);
}

/// Intercommunicators (`intercomm.c`) at 2, 3, 4 and 5 ranks, the two groups of
/// uneven sizes at 3, 4 and 5: creation, point-to-point across the groups, merge
/// ordering, every blocking collective, dup/split/create/free.
#[test]
fn intercommunicators() {
    let exe = build("intercomm");
    for n in [2usize, 3, 4, 5] {
        let mut c = myrix();
        c.args(["mpiexec", "-n", &n.to_string()]).arg(&exe);
        let o = run(c, Duration::from_secs(120));
        assert_every_rank(&o, "intercomm", n);
    }
}

/// `rma_stack.c`: windows and attachments on the caller's stack (shared in place
/// from a stack of the library's own), attachments sharing a page, a lock after a
/// fence no access used; alone and on 2 and 3 ranks.
#[test]
fn one_sided_windows_on_the_stack() {
    let exe = &build("rma_stack");
    for n in [1usize, 2, 3] {
        let o = if n == 1 {
            run(alone(exe), Duration::from_secs(60))
        } else {
            let mut c = myrix();
            c.args(["mpiexec", "-n", &n.to_string()]).arg(exe);
            run(c, Duration::from_secs(60))
        };
        assert_every_rank(&o, "rma_stack", n);
    }
}

/// MPI-IO (`io.c`) at 1, 2 and 4 ranks: a collective write through a strided view
/// read back byte for byte, the shared and ordered pointers, nonblocking, split and
/// large-count forms, sizes, hints, file error handlers and the error classes.
#[test]
fn mpi_io_over_posix_files() {
    every_rank_ok("io", &[1, 2, 4]);
}

/// MPI-IO data representations (`io_datarep.c`) at 1 and 3 ranks: external32 and
/// a registered representation converted on the way in and out, checked on disk and
/// read back, and their refusals.
#[test]
fn mpi_io_data_representations() {
    every_rank_ok("io_datarep", &[1, 3]);
}

/// MPI-4 partitioned communication (`partitioned.c`) at 1 to 4 ranks: equal and
/// different partition counts on the two sides, partitions marked out of order with
/// each marking call, MPI_Parrived before the wait (strided buffers too), requests
/// of one tag matched in init order, several rounds, MPI_PROC_NULL, bad arguments.
#[test]
fn partitioned_transfers_match_in_init_order() {
    every_rank_ok("partitioned", &[1, 2, 3, 4]);
}
