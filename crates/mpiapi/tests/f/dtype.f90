! A derived datatype from Fortran: a row of a column-major matrix as MPI_Type_vector,
! sent from rank 0 and received into a contiguous array on rank 1; MPI_Type_size and
! MPI_Type_get_extent (INTEGER(KIND=MPI_ADDRESS_KIND)); MPI_Type_create_struct.
program dtype
  implicit none
  include 'mpif.h'
  integer :: ierr, rank, i, j, row, sz, st, status(MPI_STATUS_SIZE), n
  integer :: blocks(2), types(2)
  integer(kind=MPI_ADDRESS_KIND) :: lb, extent, disps(2)
  real :: m(5, 4), r(4)
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  ! row 3 of m: 4 elements, stride 5
  call MPI_TYPE_VECTOR(4, 1, 5, MPI_REAL, row, ierr)
  call MPI_TYPE_COMMIT(row, ierr)
  call MPI_TYPE_SIZE(row, sz, ierr)
  call MPI_TYPE_GET_EXTENT(row, lb, extent, ierr)
  if (sz /= 16 .or. lb /= 0 .or. extent /= (3 * 5 + 1) * 4) then
    print *, 'vector', sz, lb, extent
    call MPI_ABORT(MPI_COMM_WORLD, 1, ierr)
  end if
  ! a struct of one INTEGER then two DOUBLE PRECISION 8 bytes on
  blocks = (/ 1, 2 /)
  disps = (/ 0_MPI_ADDRESS_KIND, 8_MPI_ADDRESS_KIND /)
  types = (/ MPI_INTEGER, MPI_DOUBLE_PRECISION /)
  call MPI_TYPE_CREATE_STRUCT(2, blocks, disps, types, st, ierr)
  call MPI_TYPE_SIZE(st, sz, ierr)
  if (ierr /= MPI_SUCCESS .or. sz /= 20) call MPI_ABORT(MPI_COMM_WORLD, 2, ierr)
  call MPI_TYPE_FREE(st, ierr)
  if (st /= MPI_DATATYPE_NULL) call MPI_ABORT(MPI_COMM_WORLD, 3, ierr)
  if (rank == 0) then
    do j = 1, 4
      do i = 1, 5
        m(i, j) = i * 10 + j
      end do
    end do
    call MPI_SEND(m(3, 1), 1, row, 1, 0, MPI_COMM_WORLD, ierr)
  else if (rank == 1) then
    call MPI_RECV(r, 4, MPI_REAL, 0, 0, MPI_COMM_WORLD, status, ierr)
    call MPI_GET_COUNT(status, MPI_REAL, n, ierr)
    do j = 1, 4
      if (r(j) /= 30 + j) call MPI_ABORT(MPI_COMM_WORLD, 4, ierr)
    end do
    if (n /= 4) call MPI_ABORT(MPI_COMM_WORLD, 5, ierr)
  end if
  call MPI_TYPE_FREE(row, ierr)
  call MPI_FINALIZE(ierr)
  print '(a,i0)', 'dtype ok ', rank
end program
