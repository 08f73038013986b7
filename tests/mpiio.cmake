# MPI-IO conformance programs over libtessera_mpiio (tests/mpiio/): plain MPI-IO programs, each
# checked against an oracle that is not the library (POSIX reads of the file, brute-force byte
# maps, MPI_Pack_external). Every program runs both ways the README shows:
#   <name>_preload_np<P>  an executable that knows nothing of Tessera, launched with
#                         LD_PRELOAD=libtessera_mpiio.so (Open MPI: mpirun -x; MPICH: -genv)
#   <name>_link_np<P>     the same source linked with -Wl,--no-as-needed -ltessera_mpiio ahead
#                         of the MPI library
# Each program first checks that MPI_File_get_info shows Tessera's hints, so a run on the MPI
# library's own MPI-IO fails instead of passing.
if(NOT TARGET tessera_mpiio)
  return()
endif()

if(TESS_MPI_FLAVOUR STREQUAL mpich)
  set(TESS_MPIIO_PRELOAD -genv LD_PRELOAD $<TARGET_FILE:tessera_mpiio>)
else()
  set(TESS_MPIIO_PRELOAD -x LD_PRELOAD=$<TARGET_FILE:tessera_mpiio>)
endif()
# the MPI libraries leak at finalize from components they dlopen; under ASan the preloaded
# library comes before the sanitizer's runtime in the load order
set(TESS_MPIIO_ASAN "ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0")

# tess_add_mpiio_test(<name> NP <n>... [ARGS ...] [SUFFIX s] [SOURCES ...] [LIBS ...]
#                     [DEFINITIONS ...] [EXT c|f90] [ENV ...] [WAYS preload|link...]):
# tests/mpiio/<name>.<ext> (the programs: tess_mpiio_program, made once per name), run as
# <name>[_<s>]_<way>_np<n> for each way (default both)
function(tess_add_mpiio_test name)
  cmake_parse_arguments(T "" "TIMEOUT;EXT;SUFFIX" "NP;ARGS;SOURCES;ENV;LIBS;DEFINITIONS;WAYS"
                        ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  if(NOT T_EXT)
    set(T_EXT c)
  endif()
  if(NOT T_WAYS)
    set(T_WAYS preload link)
  endif()
  set(test ${name})
  if(T_SUFFIX)
    set(test ${name}_${T_SUFFIX})
  endif()
  if(NOT TARGET ${name})
    tess_mpiio_program(${name} SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/mpiio/${name}.${T_EXT}
                       ${T_SOURCES} LIBRARIES ${T_LIBS} DEFINITIONS ${T_DEFINITIONS}
                       INCLUDES ${CMAKE_CURRENT_SOURCE_DIR}/mpiio ${CMAKE_CURRENT_SOURCE_DIR})
  endif()
  foreach(how ${T_WAYS})
    set(exe ${name})
    set(launch_extra ${TESS_MPIIO_PRELOAD})
    if(how STREQUAL "link")
      set(exe ${name}_linked)
      set(launch_extra)
    endif()
    foreach(np ${T_NP})
      add_test(NAME ${test}_${how}_np${np}
               COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${TESS_MPIEXEC_FLAGS}
                       ${launch_extra} $<TARGET_FILE:${exe}> ${T_ARGS}
               WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
      tess_test_properties(${test}_${how}_np${np} "mpi;mpiio" OFF ${T_TIMEOUT} ${TESS_MPIIO_ASAN}
                           ${T_ENV})
    endforeach()
  endforeach()
endfunction()

# cases per routine (under the sanitizers one: every routine still runs)
if(TESS_SANITIZE)
  set(TESS_MPIIO_CASES 1)
else()
  set(TESS_MPIIO_CASES 3)
endif()
tess_add_mpiio_test(test_mpiio_access NP 1 2 ARGS ${TESS_MPIIO_CASES}
                    SOURCES ${TESS_RANDTYPE_SOURCES} LIBS tessera_static MPI::MPI_C
                    DEFINITIONS TESS_TEST_MPI=1)
tess_add_mpiio_test(test_mpiio_pointers NP 1 2 LIBS MPI::MPI_C)
tess_add_mpiio_test(test_mpiio_pointers SUFFIX rma NP 2 ARGS rma)
tess_add_mpiio_test(test_mpiio_errors NP 1 2 LIBS MPI::MPI_C)
foreach(err ENOSPC EDQUOT EROFS EIO EACCES)
  string(TOLOWER ${err} lower)
  tess_add_mpiio_test(test_mpiio_errors SUFFIX ${lower} NP 2 ARGS fault ${err})
endforeach()
tess_add_mpiio_test(test_mpiio_atomic NP 2 LIBS MPI::MPI_C)
tess_add_mpiio_test(test_mpiio_external32 NP 1 2 LIBS MPI::MPI_C)

# Fortran ("use mpi"): the MPI library's Fortran bindings over the library's C functions and
# handle table (MPI_File_c2f / MPI_File_f2c). MPI::MPI_Fortran: tests/CMakeLists.txt.
if(TARGET MPI::MPI_Fortran)
  tess_add_mpiio_test(test_mpiio_fortran EXT f90 NP 1 2 LIBS MPI::MPI_Fortran)
endif()
tess_add_mpiio_test(test_mpiio_misc NP 1 2 LIBS MPI::MPI_C)
# 2 GiB through memory: not under the sanitizers (their shadow memory doubles it for nothing),
# and one way only: the large counts take the same path whether the library was preloaded or
# linked (every other program runs both ways)
if(NOT TESS_SANITIZE)
  tess_add_mpiio_test(test_mpiio_big NP 1 LIBS MPI::MPI_C TIMEOUT 240 WAYS preload)
endif()

# Preloaded into a program that is not an MPI program at all (LD_PRELOAD reaches every process
# a shell starts): nothing runs at load time, nothing breaks.
add_test(NAME test_mpiio_preload_non_mpi_np1 COMMAND sh -c "echo ok | cat")
tess_test_properties(test_mpiio_preload_non_mpi_np1 "unit;mpiio" OFF 10
                     LD_PRELOAD=$<TARGET_FILE:tessera_mpiio> ${TESS_MPIIO_ASAN})
set_tests_properties(test_mpiio_preload_non_mpi_np1 PROPERTIES PASS_REGULAR_EXPRESSION "^ok\n$")
