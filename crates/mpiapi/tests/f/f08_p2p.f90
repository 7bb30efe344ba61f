! Point-to-point with `use mpi_f08`: MPI_Send/MPI_Recv in a ring with TYPE(MPI_Status)
! fields (MPI_SOURCE, MPI_TAG) and MPI_Get_count; MPI_ANY_SOURCE; a
! non-contiguous row section sent and received by a blocking call (copied through a
! temporary); MPI_Isend/MPI_Irecv with a TYPE(MPI_Request) array completed by
! MPI_Waitall (statuses, then MPI_STATUSES_IGNORE) and MPI_Test (LOGICAL flag);
! requests become MPI_REQUEST_NULL. ierror is left out throughout. Needs >= 2 ranks.
program f08_p2p
  use mpi_f08
  implicit none
  integer :: rank, nprocs, right, left, i, n, x, y
  integer :: m(3, 4), row(4)
  double precision :: d(5), e(5)
  type(MPI_Status) :: st, sts(4)
  type(MPI_Request) :: reqs(4), r1
  logical :: done
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)
  ! a ring: even ranks send first, odd ranks receive first
  x = 100 + rank
  if (mod(rank, 2) == 0) then
    call MPI_Send(x, 1, MPI_INTEGER, right, 7, MPI_COMM_WORLD)
    call MPI_Recv(y, 1, MPI_INTEGER, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, st)
  else
    call MPI_Recv(y, 1, MPI_INTEGER, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, st)
    call MPI_Send(x, 1, MPI_INTEGER, right, 7, MPI_COMM_WORLD)
  end if
  ! (MPI_ERROR is not set by a single-request call such as MPI_Recv: the standard
  ! leaves it as it was, so it is not checked here.)
  if (y /= 100 + left .or. st%MPI_SOURCE /= left .or. st%MPI_TAG /= 7) then
    print *, 'ring', y, st%MPI_SOURCE, st%MPI_TAG
    call MPI_Abort(MPI_COMM_WORLD, 1)
  end if
  call MPI_Get_count(st, MPI_INTEGER, n)
  if (n /= 1) call MPI_Abort(MPI_COMM_WORLD, 2)
  ! row 2 of m is m(2, :): four INTEGERs three apart in memory
  if (rank == 0) then
    m = reshape([(i, i = 1, 12)], [3, 4])
    call MPI_Send(m(2, :), 4, MPI_INTEGER, 1, 8, MPI_COMM_WORLD)
  else if (rank == 1) then
    m = -1
    call MPI_Recv(m(3, :), 4, MPI_INTEGER, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    row = [2, 5, 8, 11]
    if (any(m(3, :) /= row) .or. any(m(1:2, :) /= -1)) then
      print *, 'section', m
      call MPI_Abort(MPI_COMM_WORLD, 3)
    end if
  end if
  ! nonblocking exchange with both neighbours
  d = [(dble(rank * 10 + i), i = 1, 5)]
  e = 0
  call MPI_Irecv(y, 1, MPI_INTEGER, left, 9, MPI_COMM_WORLD, reqs(1))
  call MPI_Irecv(e, 5, MPI_DOUBLE_PRECISION, right, 10, MPI_COMM_WORLD, reqs(2))
  call MPI_Isend(x, 1, MPI_INTEGER, right, 9, MPI_COMM_WORLD, reqs(3))
  call MPI_Isend(d, 5, MPI_DOUBLE_PRECISION, left, 10, MPI_COMM_WORLD, reqs(4))
  call MPI_Waitall(4, reqs, sts)
  if (y /= 100 + left .or. any(e /= [(dble(right * 10 + i), i = 1, 5)])) then
    print *, 'waitall', y, e
    call MPI_Abort(MPI_COMM_WORLD, 4)
  end if
  if (sts(1)%MPI_SOURCE /= left .or. sts(2)%MPI_SOURCE /= right .or. sts(2)%MPI_TAG /= 10) then
    print *, 'statuses', sts(1)%MPI_SOURCE, sts(2)%MPI_SOURCE, sts(2)%MPI_TAG
    call MPI_Abort(MPI_COMM_WORLD, 5)
  end if
  do i = 1, 4
    if (reqs(i) /= MPI_REQUEST_NULL) call MPI_Abort(MPI_COMM_WORLD, 6)
  end do
  call MPI_Irecv(y, 1, MPI_INTEGER, left, 11, MPI_COMM_WORLD, reqs(1))
  call MPI_Isend(rank, 1, MPI_INTEGER, right, 11, MPI_COMM_WORLD, reqs(2))
  call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE)
  if (y /= left) call MPI_Abort(MPI_COMM_WORLD, 7)
  call MPI_Irecv(y, 1, MPI_INTEGER, left, 12, MPI_COMM_WORLD, r1)
  call MPI_Send(x + 1, 1, MPI_INTEGER, right, 12, MPI_COMM_WORLD)
  done = .false.
  do while (.not. done)
    call MPI_Test(r1, done, st)
  end do
  if (y /= 101 + left .or. st%MPI_SOURCE /= left .or. r1 /= MPI_REQUEST_NULL) &
    call MPI_Abort(MPI_COMM_WORLD, 8)
  call MPI_Finalize()
  print '(a,i0)', 'f08_p2p ok ', rank
end program
