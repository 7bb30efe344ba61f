! Error codes through ierror: with MPI_ERRORS_RETURN on MPI_COMM_WORLD a send to a
! rank that does not exist returns MPI_ERR_RANK and
! a negative count MPI_ERR_COUNT; MPI_Error_class and MPI_Error_string
! (a blank-padded message) describe them; a valid call afterwards returns MPI_SUCCESS.
program errors
  implicit none
  include 'mpif.h'
  integer :: ierr, rank, nprocs, cls, n, x
  character(len=MPI_MAX_ERROR_STRING) :: msg
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
  call MPI_COMM_SET_ERRHANDLER(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  if (ierr /= MPI_SUCCESS) stop 1
  x = 1
  call MPI_SEND(x, 1, MPI_INTEGER, nprocs + 5, 0, MPI_COMM_WORLD, ierr)
  call MPI_ERROR_CLASS(ierr, cls, n)
  if (cls /= MPI_ERR_RANK) then
    print *, 'rank error', ierr, cls
    stop 2
  end if
  call MPI_ERROR_STRING(ierr, msg, n, cls)
  if (n < 1 .or. len_trim(msg) /= n) stop 3
  call MPI_SEND(x, -1, MPI_INTEGER, 0, 0, MPI_COMM_WORLD, ierr)
  if (ierr /= MPI_ERR_COUNT) then
    print *, 'count error', ierr
    stop 4
  end if
  call MPI_BARRIER(MPI_COMM_WORLD, ierr)
  if (ierr /= MPI_SUCCESS) stop 5
  call MPI_FINALIZE(ierr)
  print '(a,i0)', 'errors ok ', rank
  if (rank == 0) print '(a)', msg(1:n)
end program
