! Collectives from Fortran (`use mpi`): MPI_Bcast, MPI_Allreduce with MPI_IN_PLACE,
! MPI_Reduce with MPI_IN_PLACE at the root, MPI_Allgather, MPI_Alltoall,
! MPI_Comm_split/MPI_Comm_free (handles out and in), MPI_Barrier.
program coll
  use mpi
  implicit none
  integer :: ierr, rank, nprocs, i, sub, subrank, subsize
  integer :: v(4), w
  integer, allocatable :: all(:), a2a_in(:), a2a_out(:)
  double precision :: x(3)
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
  v = 0
  if (rank == 0) v = (/ 11, 22, 33, 44 /)
  call MPI_BCAST(v, 4, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  if (any(v /= (/ 11, 22, 33, 44 /))) call MPI_ABORT(MPI_COMM_WORLD, 1, ierr)
  ! in place: each rank contributes rank+1 (and 2*(rank+1), 0.5)
  x = (/ dble(rank + 1), dble(2 * (rank + 1)), 0.5d0 /)
  call MPI_ALLREDUCE(MPI_IN_PLACE, x, 3, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (x(1) /= nprocs * (nprocs + 1) / 2 .or. x(2) /= nprocs * (nprocs + 1) &
      .or. x(3) /= 0.5d0 * nprocs) then
    print *, 'allreduce', x
    call MPI_ABORT(MPI_COMM_WORLD, 2, ierr)
  end if
  w = rank
  if (rank == 0) then
    call MPI_REDUCE(MPI_IN_PLACE, w, 1, MPI_INTEGER, MPI_MAX, 0, MPI_COMM_WORLD, ierr)
    if (w /= nprocs - 1) call MPI_ABORT(MPI_COMM_WORLD, 3, ierr)
  else
    call MPI_REDUCE(w, w, 1, MPI_INTEGER, MPI_MAX, 0, MPI_COMM_WORLD, ierr)
  end if
  allocate(all(nprocs), a2a_in(nprocs), a2a_out(nprocs))
  call MPI_ALLGATHER(rank * 3, 1, MPI_INTEGER, all, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  do i = 1, nprocs
    if (all(i) /= (i - 1) * 3) call MPI_ABORT(MPI_COMM_WORLD, 4, ierr)
    a2a_in(i) = rank * 100 + (i - 1)
  end do
  call MPI_ALLTOALL(a2a_in, 1, MPI_INTEGER, a2a_out, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  do i = 1, nprocs
    if (a2a_out(i) /= (i - 1) * 100 + rank) call MPI_ABORT(MPI_COMM_WORLD, 5, ierr)
  end do
  call MPI_COMM_SPLIT(MPI_COMM_WORLD, mod(rank, 2), -rank, sub, ierr)
  call MPI_COMM_RANK(sub, subrank, ierr)
  call MPI_COMM_SIZE(sub, subsize, ierr)
  ! key -rank: the highest world rank of each half is rank 0 of its communicator
  if (subsize /= (nprocs + 1 - mod(rank, 2)) / 2 .or. subrank /= subsize - 1 - rank / 2) then
    print *, 'split', rank, subrank, subsize
    call MPI_ABORT(MPI_COMM_WORLD, 6, ierr)
  end if
  call MPI_COMM_FREE(sub, ierr)
  if (sub /= MPI_COMM_NULL) call MPI_ABORT(MPI_COMM_WORLD, 7, ierr)
  call MPI_BARRIER(MPI_COMM_WORLD, ierr)
  call MPI_FINALIZE(ierr)
  print '(a,i0)', 'coll ok ', rank
end program
