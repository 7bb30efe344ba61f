! Errors with `use mpi_f08` under MPI_ERRORS_RETURN: with ierror present a send to
! a rank that does not exist returns MPI_ERR_RANK (MPI_Error_class, MPI_Error_string
! into a CHARACTER); with ierror omitted the same call returns and the program goes
! on; a non-contiguous section given to MPI_Isend, which cannot copy it, fails with
! MPI_ERR_BUFFER as MPI_SUBARRAYS_SUPPORTED (.FALSE.) says. Also strings in and out
! (MPI_Comm_set_name/get_name) and MPI_Wtime.
program f08_errors
  use mpi_f08
  implicit none
  integer :: ierror, rank, nprocs, cls, n, x, v(6)
  character(len=MPI_MAX_ERROR_STRING) :: msg
  character(len=MPI_MAX_OBJECT_NAME) :: name
  type(MPI_Request) :: req
  double precision :: t
  call MPI_Init()
  t = MPI_Wtime()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierror)
  if (ierror /= MPI_SUCCESS) stop 1
  x = 1
  call MPI_Send(x, 1, MPI_INTEGER, nprocs + 5, 0, MPI_COMM_WORLD, ierror)
  call MPI_Error_class(ierror, cls)
  if (cls /= MPI_ERR_RANK) then
    print *, 'rank error', ierror, cls
    stop 2
  end if
  call MPI_Error_string(ierror, msg, n)
  if (n < 1 .or. len_trim(msg) /= n) stop 3
  ! the same error with ierror omitted: reported nowhere, and the program goes on
  call MPI_Send(x, 1, MPI_INTEGER, nprocs + 5, 0, MPI_COMM_WORLD)
  if (MPI_SUBARRAYS_SUPPORTED) stop 4
  v = 0
  call MPI_Isend(v(1:6:2), 3, MPI_INTEGER, rank, 0, MPI_COMM_WORLD, req, ierror)
  if (ierror /= MPI_ERR_BUFFER) then
    print *, 'isend of a section', ierror
    stop 5
  end if
  call MPI_Comm_set_name(MPI_COMM_WORLD, 'world of f08')
  call MPI_Comm_get_name(MPI_COMM_WORLD, name, n)
  if (name /= 'world of f08' .or. n /= 12) then
    print *, 'name ', name, n
    stop 6
  end if
  call MPI_Barrier(MPI_COMM_WORLD, ierror)
  if (ierror /= MPI_SUCCESS .or. MPI_Wtime() < t) stop 7
  call MPI_Finalize(ierror)
  print '(a,i0)', 'f08_errors ok ', rank
  if (rank == 0) print '(a)', trim(msg)
end program
