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

if(MPI_C_LIB_NAMES MATCHES "mpich")
  set(TESS_MPIIO_PRELOAD -genv LD_PRELOAD $<TARGET_FILE:tessera_mpiio>)
else()
  set(TESS_MPIIO_PRELOAD -x LD_PRELOAD=$<TARGET_FILE:tessera_mpiio>)
endif()

# tess_add_mpiio_test(<name> NP <n>... [ARGS ...] [SUFFIX s] [SOURCES ...] [LIBS ...]
#                     [EXT c|f90] [ENV ...]): tests/mpiio/<name>.<ext>, run as
# <name>[_<s>]_<how>_np<n> (the executables are made once per name)
function(tess_add_mpiio_test name)
  cmake_parse_arguments(T "" "TIMEOUT;EXT;SUFFIX" "NP;ARGS;SOURCES;ENV;LIBS" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  if(NOT T_EXT)
    set(T_EXT c)
  endif()
  set(test ${name})
  if(T_SUFFIX)
    set(test ${name}_${T_SUFFIX})
  endif()
  foreach(how preload link)
    set(exe ${name}_${how})
    if(NOT TARGET ${exe})
      add_executable(${exe} ${CMAKE_CURRENT_SOURCE_DIR}/mpiio/${name}.${T_EXT} ${T_SOURCES})
      target_include_directories(${exe} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/mpiio
                                                ${CMAKE_CURRENT_SOURCE_DIR})
      if(how STREQUAL "link")
        target_link_options(${exe} PRIVATE -Wl,--no-as-needed)
        target_link_libraries(${exe} PRIVATE tessera_mpiio)
      endif()
      target_link_libraries(${exe} PRIVATE ${T_LIBS})
    endif()
    set(launch_extra)
    if(how STREQUAL "preload")
      set(launch_extra ${TESS_MPIIO_PRELOAD})
    endif()
    # the MPI libraries leak at finalize from components they dlopen; under ASan the preloaded
    # library comes before the sanitizer's runtime in the load order
    set(env "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"
            "OMPI_MCA_rmaps_base_oversubscribe=1"
            "ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0" ${T_ENV})
    foreach(np ${T_NP})
      add_test(NAME ${test}_${how}_np${np}
               COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${TESS_MPIEXEC_FLAGS}
                       ${launch_extra} $<TARGET_FILE:${exe}> ${T_ARGS}
               WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
      set_tests_properties(${test}_${how}_np${np} PROPERTIES TIMEOUT ${T_TIMEOUT}
                           ENVIRONMENT "${env}" LABELS "mpi;mpiio")
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
                    SOURCES ${TESS_RANDTYPE_SOURCES} LIBS tessera_static MPI::MPI_C)
foreach(how preload link)
  target_compile_definitions(test_mpiio_access_${how} PRIVATE TESS_TEST_MPI=1)
endforeach()
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
# handle table (MPI_File_c2f / MPI_File_f2c).
include(CheckLanguage)
check_language(Fortran)
if(CMAKE_Fortran_COMPILER)
  enable_language(Fortran)
  find_package(MPI COMPONENTS Fortran)
endif()
if(TARGET MPI::MPI_Fortran)
  tess_add_mpiio_test(test_mpiio_fortran EXT f90 NP 1 2 LIBS MPI::MPI_Fortran)
endif()
tess_add_mpiio_test(test_mpiio_misc NP 1 2 LIBS MPI::MPI_C)
# 2 GiB through memory: not under the sanitizers (their shadow memory doubles it for nothing)
if(NOT TESS_SANITIZE)
  tess_add_mpiio_test(test_mpiio_big NP 1 LIBS MPI::MPI_C TIMEOUT 240)
endif()

# Preloaded into a program that is not an MPI program at all (LD_PRELOAD reaches every process
# a shell starts): nothing runs at load time, nothing breaks.
add_test(NAME test_mpiio_preload_non_mpi_np1 COMMAND sh -c "echo ok | cat")
set_tests_properties(test_mpiio_preload_non_mpi_np1 PROPERTIES LABELS "mpiio"
  PASS_REGULAR_EXPRESSION "^ok\n$"
  ENVIRONMENT "LD_PRELOAD=$<TARGET_FILE:tessera_mpiio>;ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0")
