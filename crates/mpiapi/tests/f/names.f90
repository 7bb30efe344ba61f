! Strings from Fortran: MPI_Comm_set_name with a blank-padded name, MPI_Comm_get_name
! into a longer variable (blank-padded back, resultlen the trimmed length) and into a
! shorter one (truncated), MPI_Get_processor_name, MPI_Info_set/MPI_Info_get.
program names
  use mpi
  implicit none
  integer :: ierr, rank, dup, n, info
  character(len=MPI_MAX_OBJECT_NAME) :: name
  character(len=4) :: short
  character(len=MPI_MAX_PROCESSOR_NAME) :: host
  character(len=20) :: val
  logical :: flag
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_DUP(MPI_COMM_WORLD, dup, ierr)
  call MPI_COMM_SET_NAME(dup, 'my dup comm     ', ierr)
  name = 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'
  call MPI_COMM_GET_NAME(dup, name, n, ierr)
  if (name /= 'my dup comm' .or. n /= 11 .or. name(12:30) /= ' ') then
    print *, 'get_name [', trim(name), ']', n
    call MPI_ABORT(MPI_COMM_WORLD, 1, ierr)
  end if
  call MPI_COMM_GET_NAME(dup, short, n, ierr)
  if (short /= 'my d') call MPI_ABORT(MPI_COMM_WORLD, 2, ierr)
  call MPI_COMM_GET_NAME(MPI_COMM_WORLD, name, n, ierr)
  if (name /= 'MPI_COMM_WORLD' .or. n /= 14) call MPI_ABORT(MPI_COMM_WORLD, 3, ierr)
  call MPI_GET_PROCESSOR_NAME(host, n, ierr)
  if (n < 1 .or. len_trim(host) /= n) call MPI_ABORT(MPI_COMM_WORLD, 4, ierr)
  call MPI_INFO_CREATE(info, ierr)
  call MPI_INFO_SET(info, 'color  ', 'blue   ', ierr)
  call MPI_INFO_GET(info, 'color', 20, val, flag, ierr)
  if (.not. flag .or. val /= 'blue') call MPI_ABORT(MPI_COMM_WORLD, 5, ierr)
  call MPI_INFO_GET(info, 'size', 20, val, flag, ierr)
  if (flag) call MPI_ABORT(MPI_COMM_WORLD, 6, ierr)
  call MPI_INFO_FREE(info, ierr)
  call MPI_COMM_FREE(dup, ierr)
  call MPI_FINALIZE(ierr)
  print '(a,i0)', 'names ok ', rank
end program
