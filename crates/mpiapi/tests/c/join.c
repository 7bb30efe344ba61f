/* MPI_Comm_join over a Unix-domain socket, run by crates/cli/tests/mpi_dynproc.rs:
 *
 *   join both PATH     ranks 0 and 1 of one job meet on a socket at PATH
 *   join listen PATH   this process listens at PATH (a separate job dials)
 *   join dial PATH     this process connects to PATH (waits up to 60 s for it)
 *
 * Over the intercommunicator: a message each way, then MPI_Intercomm_merge and an
 * allreduce. Each process prints "join ok <rank>". */
#define _DEFAULT_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "join: %s failed at line %d\n", #c, __LINE__); MPI_Abort(MPI_COMM_WORLD, 3); } } while (0)

static struct sockaddr_un addr(const char *path)
{
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    CHECK(strlen(path) < sizeof a.sun_path);
    strcpy(a.sun_path, path);
    return a;
}

/* A listening socket at PATH (made under PATH.tmp, then renamed: a dialer never
 * sees a socket that does not listen yet). */
static int listen_at(const char *path)
{
    char tmp[200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    unlink(tmp);
    struct sockaddr_un a = addr(tmp);
    int l = socket(AF_UNIX, SOCK_STREAM, 0);
    CHECK(l >= 0);
    CHECK(bind(l, (struct sockaddr *)&a, sizeof a) == 0);
    CHECK(listen(l, 1) == 0);
    CHECK(rename(tmp, path) == 0);
    return l;
}

static int dial(const char *path)
{
    struct sockaddr_un a = addr(path);
    for (int i = 0; i < 6000; i++) {
        int s = socket(AF_UNIX, SOCK_STREAM, 0);
        CHECK(s >= 0);
        if (connect(s, (struct sockaddr *)&a, sizeof a) == 0)
            return s;
        close(s);
        usleep(10000);
    }
    CHECK(!"the listener came up");
    return -1;
}

static void exercise(MPI_Comm ic, int tag)
{
    int rsize = 0, flag = 0;
    CHECK(MPI_Comm_test_inter(ic, &flag) == MPI_SUCCESS && flag);
    CHECK(MPI_Comm_remote_size(ic, &rsize) == MPI_SUCCESS && rsize == 1);
    int mine = tag, theirs = -1;
    CHECK(MPI_Sendrecv(&mine, 1, MPI_INT, 0, 7, &theirs, 1, MPI_INT, 0, 7, ic, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(theirs != mine && (theirs == 100 || theirs == 200));
    MPI_Comm m;
    CHECK(MPI_Intercomm_merge(ic, mine == 200, &m) == MPI_SUCCESS);
    int msize = 0, mrank = -1;
    MPI_Comm_size(m, &msize);
    MPI_Comm_rank(m, &mrank);
    CHECK(msize == 2 && mrank == (mine == 200));
    int sum = 0;
    CHECK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, m) == MPI_SUCCESS);
    CHECK(sum == 300);
    MPI_Comm_free(&m);
    CHECK(MPI_Comm_disconnect(&ic) == MPI_SUCCESS);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(argc >= 3);
    const char *path = argv[2];
    int fd = -1, tag = 0;
    if (strcmp(argv[1], "both") == 0) {
        CHECK(size == 2);
        int l = -1;
        if (rank == 0) {
            unlink(path);
            l = listen_at(path);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            fd = accept(l, NULL, NULL);
            close(l);
            unlink(path);
        } else {
            fd = dial(path);
        }
        tag = rank == 0 ? 100 : 200;
    } else if (strcmp(argv[1], "listen") == 0) {
        int l = listen_at(path);
        fd = accept(l, NULL, NULL);
        close(l);
        unlink(path);
        tag = 100;
    } else {
        fd = dial(path);
        tag = 200;
    }
    CHECK(fd >= 0);
    MPI_Comm ic;
    CHECK(MPI_Comm_join(fd, &ic) == MPI_SUCCESS);
    exercise(ic, tag);
    close(fd);
    printf("join ok %d\n", rank);
    MPI_Finalize();
    return 0;
}
