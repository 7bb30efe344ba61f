! Derived datatypes with `use mpi_f08`: a column of a matrix as MPI_Type_vector
! (TYPE(MPI_Datatype)), a struct of an INTEGER and a DOUBLE PRECISION built with
! MPI_Get_address / MPI_Aint_diff displacements and MPI_Type_create_struct,
! MPI_Type_size / MPI_Type_get_extent (INTEGER(MPI_ADDRESS_KIND)), MPI_Type_free
! leaving MPI_DATATYPE_NULL. Run on 2 ranks.
program f08_dtype
  use mpi_f08
  implicit none
  type pair
    integer :: i
    double precision :: d
  end type
  integer :: rank, sz, k, blens(2)
  integer :: a(4, 3)
  type(pair) :: p(2)
  type(MPI_Datatype) :: row, st, types(2)
  integer(kind=MPI_ADDRESS_KIND) :: base, addr, disps(2), lb, extent
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  ! a(2, :): 3 blocks of 1 INTEGER, 4 apart
  call MPI_Type_vector(3, 1, 4, MPI_INTEGER, row)
  call MPI_Type_commit(row)
  call MPI_Type_size(row, sz)
  call MPI_Type_get_extent(row, lb, extent)
  if (sz /= 12 .or. lb /= 0 .or. extent /= 36) then
    print *, 'vector', sz, lb, extent
    call MPI_Abort(MPI_COMM_WORLD, 1)
  end if
  call MPI_Get_address(p(1)%i, base)
  call MPI_Get_address(p(1)%d, addr)
  disps = [0_MPI_ADDRESS_KIND, MPI_Aint_diff(addr, base)]
  blens = [1, 1]
  types = [MPI_INTEGER, MPI_DOUBLE_PRECISION]
  call MPI_Type_create_struct(2, blens, disps, types, st)
  call MPI_Type_commit(st)
  if (rank == 0) then
    a = reshape([(k, k = 1, 12)], [4, 3])
    call MPI_Send(a(2, 1), 1, row, 1, 1, MPI_COMM_WORLD)
    p(1) = pair(5, 2.5d0)
    p(2) = pair(6, -1d0)
    call MPI_Send(p, 2, st, 1, 2, MPI_COMM_WORLD)
  else if (rank == 1) then
    a = 0
    call MPI_Recv(a(3, 1), 1, row, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    if (any(a(3, :) /= [2, 6, 10]) .or. any(a(1:2, :) /= 0) .or. any(a(4, :) /= 0)) then
      print *, 'column', a
      call MPI_Abort(MPI_COMM_WORLD, 2)
    end if
    p = pair(0, 0d0)
    call MPI_Recv(p, 2, st, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    if (p(1)%i /= 5 .or. p(1)%d /= 2.5d0 .or. p(2)%i /= 6 .or. p(2)%d /= -1d0) then
      print *, 'struct', p(1)%i, p(1)%d, p(2)%i, p(2)%d
      call MPI_Abort(MPI_COMM_WORLD, 3)
    end if
  end if
  call MPI_Type_free(row)
  call MPI_Type_free(st)
  if (row /= MPI_DATATYPE_NULL .or. st /= MPI_DATATYPE_NULL) call MPI_Abort(MPI_COMM_WORLD, 4)
  call MPI_Finalize()
  print '(a,i0)', 'f08_dtype ok ', rank
end program
