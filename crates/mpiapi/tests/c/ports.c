/* Ports between two separate jobs (MPI_Open_port, MPI_Comm_accept/connect,
 * MPI_Publish_name/MPI_Lookup_name), run by crates/cli/tests/mpi_dynproc.rs:
 *
 *   ports server FILE [SERVICE]   rank 0 opens a port, writes its name to FILE (and
 *                                 publishes it as SERVICE), the job accepts
 *   ports client FILE             rank 0 reads the port name from FILE, connects
 *   ports lookup SERVICE          rank 0 looks the port up by name, connects
 *   ports errors                  bad port and service names give their error codes
 *
 * Over the new intercommunicator: point-to-point both ways, a bcast from each side's
 * root, an allreduce, then MPI_Intercomm_merge (the server's group first) and an
 * allreduce over the merged communicator. Each rank prints "ports ok <rank>". */
#define _DEFAULT_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "ports: %s failed at line %d\n", #c, __LINE__); MPI_Abort(MPI_COMM_WORLD, 3); } } while (0)

static void exercise(MPI_Comm ic, int server, int rank, int size)
{
    int flag = 0, rsize = 0;
    CHECK(MPI_Comm_test_inter(ic, &flag) == MPI_SUCCESS && flag);
    CHECK(MPI_Comm_remote_size(ic, &rsize) == MPI_SUCCESS && rsize >= 1);
    int lsize = 0, lrank = -1;
    MPI_Comm_size(ic, &lsize);
    MPI_Comm_rank(ic, &lrank);
    CHECK(lsize == size && lrank == rank);

    /* Point-to-point both ways: each rank sends to remote rank (rank % rsize) and
     * receives from every remote rank that picks it. */
    int tag = server ? 1 : 2;
    int mine = (server ? 1000 : 2000) + rank;
    MPI_Request rq;
    MPI_Isend(&mine, 1, MPI_INT, rank % rsize, tag, ic, &rq);
    for (int r = 0; r < rsize; r++) {
        if (r % size != rank)
            continue;
        int got = -1;
        MPI_Status st;
        CHECK(MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, server ? 2 : 1, ic, &st) == MPI_SUCCESS);
        CHECK(got == (server ? 2000 : 1000) + st.MPI_SOURCE);
    }
    MPI_Wait(&rq, MPI_STATUS_IGNORE);

    /* A bcast from the server's root, then from the client's. */
    for (int from_server = 1; from_server >= 0; from_server--) {
        int v = 0;
        if (server == from_server) {
            v = 4242;
            MPI_Bcast(&v, 1, MPI_INT, rank == 0 ? MPI_ROOT : MPI_PROC_NULL, ic);
        } else {
            MPI_Bcast(&v, 1, MPI_INT, 0, ic);
            CHECK(v == 4242);
        }
    }
    /* Allreduce: each side gets the other side's sum of ranks + 1. */
    int one = rank + 1, sum = 0;
    CHECK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, ic) == MPI_SUCCESS);
    CHECK(sum == rsize * (rsize + 1) / 2);

    /* Merge: the server's group first. */
    MPI_Comm m;
    CHECK(MPI_Intercomm_merge(ic, server ? 0 : 1, &m) == MPI_SUCCESS);
    int msize = 0, mrank = -1;
    MPI_Comm_size(m, &msize);
    MPI_Comm_rank(m, &mrank);
    CHECK(msize == size + rsize);
    CHECK(mrank == (server ? rank : rsize + rank));
    int all = 0;
    one = mrank;
    CHECK(MPI_Allreduce(&one, &all, 1, MPI_INT, MPI_SUM, m) == MPI_SUCCESS);
    CHECK(all == msize * (msize - 1) / 2);
    MPI_Comm_free(&m);
}

static int errors(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    char port[MPI_MAX_PORT_NAME];
    int cls = 0;
    MPI_Comm ic;
    int rc = MPI_Comm_connect("no such port", MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_PORT);
    CHECK(MPI_Open_port(MPI_INFO_NULL, port) == MPI_SUCCESS);
    CHECK(MPI_Close_port(port) == MPI_SUCCESS);
    /* A closed port: nothing listens. */
    rc = MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_PORT);
    rc = MPI_Close_port(port);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_PORT);
    rc = MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_PORT);
    rc = MPI_Lookup_name("myrix-ports-test-no-such-service", MPI_INFO_NULL, port);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_NAME);
    rc = MPI_Unpublish_name("myrix-ports-test-no-such-service", MPI_INFO_NULL, "x");
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_SERVICE);
    CHECK(MPI_Open_port(MPI_INFO_NULL, NULL) != MPI_SUCCESS);
    CHECK(MPI_Comm_connect(NULL, MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic) != MPI_SUCCESS);
    CHECK(MPI_Comm_accept(port, MPI_INFO_NULL, 5, MPI_COMM_SELF, &ic) != MPI_SUCCESS);
    CHECK(MPI_Comm_join(-1, &ic) != MPI_SUCCESS);
    CHECK(MPI_Publish_name(NULL, MPI_INFO_NULL, port) != MPI_SUCCESS);
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2) {
        fprintf(stderr, "usage: ports server FILE [SERVICE] | client FILE | lookup SERVICE | errors\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char port[MPI_MAX_PORT_NAME] = "";
    MPI_Comm ic = MPI_COMM_NULL;
    if (strcmp(argv[1], "errors") == 0) {
        errors();
    } else if (strcmp(argv[1], "server") == 0 && argc >= 3) {
        if (rank == 0) {
            CHECK(MPI_Open_port(MPI_INFO_NULL, port) == MPI_SUCCESS);
            CHECK(strlen(port) > 0 && strlen(port) < MPI_MAX_PORT_NAME);
            if (argc >= 4)
                CHECK(MPI_Publish_name(argv[3], MPI_INFO_NULL, port) == MPI_SUCCESS);
            char tmp[4096];
            snprintf(tmp, sizeof tmp, "%s.tmp", argv[2]);
            FILE *f = fopen(tmp, "w");
            CHECK(f != NULL);
            fputs(port, f);
            fclose(f);
            CHECK(rename(tmp, argv[2]) == 0);
        }
        CHECK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic) == MPI_SUCCESS);
        exercise(ic, 1, rank, size);
        CHECK(MPI_Comm_disconnect(&ic) == MPI_SUCCESS && ic == MPI_COMM_NULL);
        if (rank == 0) {
            if (argc >= 4)
                CHECK(MPI_Unpublish_name(argv[3], MPI_INFO_NULL, port) == MPI_SUCCESS);
            CHECK(MPI_Close_port(port) == MPI_SUCCESS);
        }
    } else if (strcmp(argv[1], "client") == 0 && argc >= 3) {
        if (rank == 0) {
            /* Wait (at most 60 s) for the server's file. */
            FILE *f = NULL;
            for (int i = 0; i < 6000 && !(f = fopen(argv[2], "r")); i++)
                usleep(10000);
            CHECK(f != NULL);
            CHECK(fgets(port, sizeof port, f) != NULL);
            fclose(f);
        }
        CHECK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic) == MPI_SUCCESS);
        exercise(ic, 0, rank, size);
        CHECK(MPI_Comm_disconnect(&ic) == MPI_SUCCESS);
    } else if (strcmp(argv[1], "lookup") == 0 && argc >= 3) {
        if (rank == 0) {
            MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
            int rc = MPI_ERR_NAME;
            for (int i = 0; i < 6000 && rc != MPI_SUCCESS; i++) {
                rc = MPI_Lookup_name(argv[2], MPI_INFO_NULL, port);
                if (rc != MPI_SUCCESS)
                    usleep(10000);
            }
            CHECK(rc == MPI_SUCCESS);
            MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
        }
        CHECK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic) == MPI_SUCCESS);
        exercise(ic, 0, rank, size);
        CHECK(MPI_Comm_disconnect(&ic) == MPI_SUCCESS);
    } else {
        fprintf(stderr, "ports: unknown mode %s\n", argv[1]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    printf("ports ok %d\n", rank);
    MPI_Finalize();
    return 0;
}
