! test_mpiio_fortran.f90 - MPI-IO from Fortran ("use mpi") over libtessera_mpiio.
!
! The MPI library's Fortran bindings call the C functions (PMPI_File_open, ...) and convert
! handles with MPI_File_c2f / MPI_File_f2c, which libtessera_mpiio defines over its handle
! table: so the integer handles a Fortran program holds are the library's, 0 is MPI_FILE_NULL,
! two open files have two handles, a closed one is MPI_FILE_NULL again, and every call made
! with a handle reaches the right file. Data written collectively is read back; the error
! class of a failed open comes through.
program test_mpiio_fortran
  use mpi
  implicit none
  integer :: ierr, rank, nprocs, fh, fh2, info, amode, count, cls, i
  logical :: found
  integer :: status(MPI_STATUS_SIZE)
  integer(kind=MPI_OFFSET_KIND) :: off, fsize
  integer :: buf(10), back(10)
  character(len=MPI_MAX_INFO_VAL) :: val
  character(len=64) :: path, path2

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  path = 'mio_fortran.dat'
  write (path2, '(a,i0,a)') 'mio_fortran_', rank, '.dat'

  call MPI_File_open(MPI_COMM_WORLD, path, ior(MPI_MODE_RDWR, MPI_MODE_CREATE), &
                     MPI_INFO_NULL, fh, ierr)
  call check(ierr == MPI_SUCCESS .and. fh /= MPI_FILE_NULL, 'open')
  call MPI_File_get_info(fh, info, ierr)
  call MPI_Info_get(info, 'tess_method', MPI_MAX_INFO_VAL, val, found, ierr)
  call check(found, 'not running on libtessera_mpiio (no tess_method hint)')
  call MPI_Info_free(info, ierr)

  buf = (/ (rank * 100 + i, i = 1, 10) /)
  off = rank * 40
  call MPI_File_write_at_all(fh, off, buf, 10, MPI_INTEGER, status, ierr)
  call check(ierr == MPI_SUCCESS, 'write_at_all')
  call MPI_Get_count(status, MPI_INTEGER, count, ierr)
  call check(count == 10, 'write_at_all status')
  call MPI_File_get_size(fh, fsize, ierr)
  call check(fsize == 40 * nprocs, 'get_size')
  back = 0
  call MPI_File_read_at(fh, off, back, 10, MPI_INTEGER, status, ierr)
  call check(ierr == MPI_SUCCESS .and. all(back == buf), 'read_at')
  call MPI_File_get_amode(fh, amode, ierr)
  call check(amode == ior(MPI_MODE_RDWR, MPI_MODE_CREATE), 'get_amode')

  ! a second file: its own handle, closed back to MPI_FILE_NULL
  call MPI_File_open(MPI_COMM_SELF, path2, ior(MPI_MODE_WRONLY, MPI_MODE_CREATE), &
                     MPI_INFO_NULL, fh2, ierr)
  call check(ierr == MPI_SUCCESS .and. fh2 /= fh .and. fh2 /= MPI_FILE_NULL, 'second open')
  call MPI_File_write(fh2, buf, 3, MPI_INTEGER, status, ierr)
  call MPI_File_get_size(fh2, fsize, ierr)
  call check(fsize == 12, 'second file size')
  call MPI_File_close(fh2, ierr)
  call check(ierr == MPI_SUCCESS .and. fh2 == MPI_FILE_NULL, 'second close')
  call MPI_File_delete(path2, MPI_INFO_NULL, ierr)
  call check(ierr == MPI_SUCCESS, 'delete')

  ! the first file still answers through its handle
  call MPI_File_get_size(fh, fsize, ierr)
  call check(fsize == 40 * nprocs, 'first file size')

  ! errors come back with their class
  call MPI_File_open(MPI_COMM_WORLD, 'mio_no_such_dir/x', MPI_MODE_RDONLY, MPI_INFO_NULL, &
                     fh2, ierr)
  call MPI_Error_class(ierr, cls, i)
  call check(cls == MPI_ERR_NO_SUCH_FILE, 'error class')

  call MPI_File_close(fh, ierr)
  call check(ierr == MPI_SUCCESS .and. fh == MPI_FILE_NULL, 'close')
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    call MPI_File_delete(path, MPI_INFO_NULL, ierr)
    print '(a,i0,a)', 'Fortran handles on ', nprocs, ' ranks: ok'
  end if
  call MPI_Finalize(ierr)

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    integer :: e
    if (.not. ok) then
      print '(a,a)', 'FAILED: ', what
      call MPI_Abort(MPI_COMM_WORLD, 1, e)
    end if
  end subroutine check

end program test_mpiio_fortran
