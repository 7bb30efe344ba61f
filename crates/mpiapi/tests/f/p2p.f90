! Point-to-point from Fortran (mpif.h): MPI_Send/MPI_Recv with a status checked
! (source, tag, MPI_Get_count), MPI_Isend/MPI_Irecv/MPI_Waitall, MPI_Waitany's
! 1-based index, MPI_STATUS_IGNORE, MPI_Sendrecv around a ring, MPI_Wtime.
program p2p
  implicit none
  include 'mpif.h'
  integer :: ierr, rank, nprocs, i, n, idx, next, prev
  integer :: status(MPI_STATUS_SIZE), statuses(MPI_STATUS_SIZE, 2), reqs(2)
  double precision :: a(100), b(100), t0
  integer :: got(2), sendv
  t0 = MPI_WTIME()
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
  if (nprocs < 2) stop 'needs 2 ranks'
  if (rank == 0) then
    do i = 1, 100
      a(i) = i * 0.5d0
    end do
    call MPI_SEND(a, 100, MPI_DOUBLE_PRECISION, 1, 7, MPI_COMM_WORLD, ierr)
  else if (rank == 1) then
    b = 0
    call MPI_RECV(b, 100, MPI_DOUBLE_PRECISION, MPI_ANY_SOURCE, MPI_ANY_TAG, &
                  MPI_COMM_WORLD, status, ierr)
    call MPI_GET_COUNT(status, MPI_DOUBLE_PRECISION, n, ierr)
    if (status(MPI_SOURCE) /= 0 .or. status(MPI_TAG) /= 7 .or. n /= 100) then
      print *, 'bad status', status(MPI_SOURCE), status(MPI_TAG), n
      call MPI_ABORT(MPI_COMM_WORLD, 1, ierr)
    end if
    do i = 1, 100
      if (b(i) /= i * 0.5d0) call MPI_ABORT(MPI_COMM_WORLD, 2, ierr)
    end do
  end if
  ! a ring: everyone sends its rank to the next one, nonblocking
  next = mod(rank + 1, nprocs)
  prev = mod(rank + nprocs - 1, nprocs)
  sendv = rank * 10
  got = -1
  call MPI_IRECV(got(1), 1, MPI_INTEGER, prev, 3, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_ISEND(sendv, 1, MPI_INTEGER, next, 3, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_WAITALL(2, reqs, statuses, ierr)
  if (got(1) /= prev * 10 .or. statuses(MPI_SOURCE, 1) /= prev) then
    print *, 'ring', got(1), statuses(MPI_SOURCE, 1)
    call MPI_ABORT(MPI_COMM_WORLD, 3, ierr)
  end if
  if (reqs(1) /= MPI_REQUEST_NULL .or. reqs(2) /= MPI_REQUEST_NULL) &
    call MPI_ABORT(MPI_COMM_WORLD, 4, ierr)
  ! Waitany: the only active request is the second, index 2 in Fortran
  reqs(1) = MPI_REQUEST_NULL
  call MPI_IRECV(got(2), 1, MPI_INTEGER, prev, 4, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_SEND(sendv, 1, MPI_INTEGER, next, 4, MPI_COMM_WORLD, ierr)
  call MPI_WAITANY(2, reqs, idx, MPI_STATUS_IGNORE, ierr)
  if (idx /= 2 .or. got(2) /= prev * 10) then
    print *, 'waitany', idx, got(2)
    call MPI_ABORT(MPI_COMM_WORLD, 5, ierr)
  end if
  call MPI_SENDRECV(sendv, 1, MPI_INTEGER, next, 5, got(1), 1, MPI_INTEGER, prev, 5, &
                    MPI_COMM_WORLD, status, ierr)
  if (got(1) /= prev * 10 .or. status(MPI_TAG) /= 5) call MPI_ABORT(MPI_COMM_WORLD, 6, ierr)
  if (MPI_WTIME() < t0) call MPI_ABORT(MPI_COMM_WORLD, 7, ierr)
  call MPI_FINALIZE(ierr)
  if (ierr /= MPI_SUCCESS) stop 1
  print '(a,i0)', 'p2p ok ', rank
end program
