! Collectives and communicators with `use mpi_f08`: MPI_Bcast, MPI_Allreduce and
! MPI_Reduce (root) with MPI_IN_PLACE, MPI_Allgather into a 2-D array, a strided
! section as an MPI_Allreduce receive buffer (copied in and out), MPI_Comm_split
! and MPI_Comm_dup compared with MPI_Comm_compare and the handle operators
! ==, /=, and MPI_Comm_free leaving MPI_COMM_NULL.
program f08_coll
  use mpi_f08
  implicit none
  integer :: ierror, rank, nprocs, i, res, subrank, subsize
  integer :: v(4), w, grid(2, 3)
  integer, allocatable :: all(:, :)
  double precision :: x(3), s(2, 3)
  type(MPI_Comm) :: sub, dup
  call MPI_Init(ierror)
  if (ierror /= MPI_SUCCESS) stop 1
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierror)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  v = 0
  if (rank == 0) v = [11, 22, 33, 44]
  call MPI_Bcast(v, 4, MPI_INTEGER, 0, MPI_COMM_WORLD, ierror)
  if (any(v /= [11, 22, 33, 44]) .or. ierror /= MPI_SUCCESS) call MPI_Abort(MPI_COMM_WORLD, 1)
  x = [dble(rank + 1), dble(2 * (rank + 1)), 0.5d0]
  call MPI_Allreduce(MPI_IN_PLACE, x, 3, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
  if (x(1) /= nprocs * (nprocs + 1) / 2 .or. x(2) /= nprocs * (nprocs + 1) &
      .or. x(3) /= 0.5d0 * nprocs) then
    print *, 'allreduce', x
    call MPI_Abort(MPI_COMM_WORLD, 2)
  end if
  w = rank
  if (rank == 0) then
    call MPI_Reduce(MPI_IN_PLACE, w, 1, MPI_INTEGER, MPI_MAX, 0, MPI_COMM_WORLD)
    if (w /= nprocs - 1) call MPI_Abort(MPI_COMM_WORLD, 3)
  else
    call MPI_Reduce(w, w, 1, MPI_INTEGER, MPI_MAX, 0, MPI_COMM_WORLD)
  end if
  allocate(all(2, nprocs))
  call MPI_Allgather([rank, -rank], 2, MPI_INTEGER, all, 2, MPI_INTEGER, MPI_COMM_WORLD)
  do i = 1, nprocs
    if (all(1, i) /= i - 1 .or. all(2, i) /= 1 - i) call MPI_Abort(MPI_COMM_WORLD, 4)
  end do
  ! row 2 of s is strided; rows 1 must stay untouched
  s(1, :) = -7
  s(2, :) = [1d0, 2d0, 3d0] * (rank + 1)
  call MPI_Allreduce(MPI_IN_PLACE, s(2, :), 3, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
  if (any(s(2, :) /= [1d0, 2d0, 3d0] * (nprocs * (nprocs + 1) / 2)) .or. any(s(1, :) /= -7)) then
    print *, 'section', s
    call MPI_Abort(MPI_COMM_WORLD, 5)
  end if
  grid = 0
  call MPI_Allreduce([1, 2, 3], grid(1, :), 3, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (any(grid(1, :) /= [1, 2, 3] * nprocs) .or. any(grid(2, :) /= 0)) call MPI_Abort(MPI_COMM_WORLD, 6)
  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), -rank, sub)
  call MPI_Comm_rank(sub, subrank)
  call MPI_Comm_size(sub, subsize)
  if (subsize /= (nprocs + 1 - mod(rank, 2)) / 2 .or. subrank /= subsize - 1 - rank / 2) then
    print *, 'split', rank, subrank, subsize
    call MPI_Abort(MPI_COMM_WORLD, 7)
  end if
  call MPI_Comm_compare(sub, MPI_COMM_WORLD, res)
  if (nprocs == 1 .and. res /= MPI_CONGRUENT) call MPI_Abort(MPI_COMM_WORLD, 8)
  if (nprocs > 1 .and. res /= MPI_UNEQUAL) call MPI_Abort(MPI_COMM_WORLD, 9)
  if (sub == MPI_COMM_WORLD .or. .not. (sub /= MPI_COMM_WORLD)) call MPI_Abort(MPI_COMM_WORLD, 10)
  call MPI_Comm_dup(MPI_COMM_WORLD, dup)
  call MPI_Comm_compare(dup, MPI_COMM_WORLD, res)
  if (res /= MPI_CONGRUENT .or. dup == MPI_COMM_WORLD) call MPI_Abort(MPI_COMM_WORLD, 11)
  call MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, res)
  if (res /= MPI_IDENT) call MPI_Abort(MPI_COMM_WORLD, 12)
  call MPI_Comm_free(sub)
  call MPI_Comm_free(dup, ierror)
  if (sub /= MPI_COMM_NULL .or. .not. (dup == MPI_COMM_NULL)) call MPI_Abort(MPI_COMM_WORLD, 13)
  call MPI_Barrier(MPI_COMM_WORLD)
  call MPI_Finalize()
  print '(a,i0)', 'f08_coll ok ', rank
end program
