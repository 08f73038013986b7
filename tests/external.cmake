# Unmodified MPI-IO programs over libtessera_mpiio (issue 9), each run with the library
# preloaded (LD_PRELOAD) and linked (-Wl,--no-as-needed -ltessera_mpiio ahead of the MPI
# library), judged by tests/external/run.sh:
#  - ROMIO's own test programs (src/mpi/romio/test of Debian's mpich source package, fetched by
#    the Makefile's setup step into TESS_ROMIO_TESTS), with the process counts of their runtests
#    script (MPICH: at most 2), plus the programs runtests leaves out
#    (tests/external/romio_extra.txt); skips and their reasons: tests/external/romio_skip.txt;
#  - our HDF5 and PnetCDF programs (bench/formats.c), whose files are compared byte for byte with
#    the files the same programs write on the MPI library's own MPI-IO.
# Not in sanitizer builds: the library built with ASan cannot be preloaded into programs
# without it.
set(TESS_ROMIO_TESTS "" CACHE PATH
    "ROMIO's test directory (src/mpi/romio/test of Debian's mpich source; `make setup` fetches it)")
if(NOT MPI_C_FOUND OR TESS_SANITIZE)
  return()
endif()
if(NOT TARGET tessera_mpiio)
  message(STATUS "external MPI-IO programs: no tessera_mpiio target in this tree, not run")
  return()
endif()

if(TESS_MPI_FLAVOUR STREQUAL openmpi)
  set(TESS_EXT_MAX_NP 4)
elseif(TESS_MPI_FLAVOUR STREQUAL mpich)
  set(TESS_EXT_MAX_NP 2) # MPICH busy-polls: at most 2 processes on this 2-core machine
else()
  message(STATUS "external MPI-IO programs: neither Open MPI nor MPICH, not run")
  return()
endif()
set(TESS_EXT_RUN ${CMAKE_CURRENT_SOURCE_DIR}/external/run.sh)

# tess_ext_test(<name> NP <n> TARGET <target> [CHECK c] [LARGE] [COMPARE file] [ARGS ...]):
# one CTest test per way of using the library, <name>_<preload|link>_np<n>. Labels: mpi and
# external; LARGE (4 GiB files): also `large`, which make check leaves out.
function(tess_ext_test name)
  cmake_parse_arguments(T "LARGE" "NP;TARGET;CHECK;COMPARE" "ARGS" ${ARGN})
  if(NOT T_CHECK)
    set(T_CHECK romio)
  endif()
  foreach(mode preload link)
    set(exe $<TARGET_FILE:${T_TARGET}>)
    if(mode STREQUAL link)
      set(exe $<TARGET_FILE:${T_TARGET}_linked>)
    endif()
    set(extra)
    if(T_COMPARE)
      set(extra --compare ${T_COMPARE} --native $<TARGET_FILE:${T_TARGET}>)
    endif()
    set(test ${name}_${mode}_np${T_NP})
    add_test(NAME ${test}
             COMMAND sh ${TESS_EXT_RUN} --mpi ${TESS_MPI_FLAVOUR} --mpiexec ${MPIEXEC_EXECUTABLE}
                     --np ${T_NP} --mode ${mode} --lib $<TARGET_FILE:tessera_mpiio>
                     --dir ${CMAKE_CURRENT_BINARY_DIR}/external/${test} --check ${T_CHECK}
                     ${extra} -- ${exe} ${T_ARGS}
             WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/external)
    set(labels mpi external)
    if(T_LARGE)
      list(APPEND labels large)
    endif()
    tess_test_properties(${test} "${labels}" OFF 300)
  endforeach()
endfunction()

# ------------------------------------------------------------------ ROMIO's test programs
if(EXISTS "${TESS_ROMIO_TESTS}/runtests.in")
  set(romio ${TESS_ROMIO_TESTS})
  set(gen ${CMAKE_CURRENT_BINARY_DIR}/romio)
  # What ROMIO's configure substitutes into the .in sources (its values for LP64 Linux).
  set(LL lld)
  set(F77GETARG "call getarg(i,str)")
  set(F77IARGC "iargc()")
  set(F77MPIOINC "")
  set(FORTRAN_MPI_OFFSET "integer*8")
  foreach(in misc.c large_file.c)
    configure_file(${romio}/${in}.in ${gen}/${in} @ONLY)
  endforeach()
  # Fortran programs (MPI::MPI_Fortran: tests/CMakeLists.txt)
  if(TARGET MPI::MPI_Fortran)
    foreach(f fcoll_test fmisc pfcoll_test fperf)
      configure_file(${romio}/${f}.f.in ${gen}/${f}.f @ONLY)
    endforeach()
  endif()

  # The tests: every `$mpirun -np N ./name args` line of runtests, then our extra list.
  file(STRINGS ${romio}/runtests.in lines REGEX "^[ \t]*\\$mpirun -np [0-9]+ \\./")
  set(tests)
  foreach(line ${lines})
    string(REGEX MATCH "-np ([0-9]+) \\./([A-Za-z0-9_-]+)[ \t]*(.*)$" m "${line}")
    list(APPEND tests "${CMAKE_MATCH_2}|${CMAKE_MATCH_1}|romio|-|${CMAKE_MATCH_3}")
  endforeach()
  file(STRINGS ${CMAKE_CURRENT_SOURCE_DIR}/external/romio_extra.txt lines REGEX "^[^#]")
  foreach(line ${lines})
    string(REGEX MATCH "^([^ ]+) +([0-9]+) +([^ ]+) +([^ ]+) +(.*)$" m "${line}")
    set(args "${CMAKE_MATCH_5}")
    if(args STREQUAL "(none)")
      set(args "")
    endif()
    list(APPEND tests "${CMAKE_MATCH_1}|${CMAKE_MATCH_2}|${CMAKE_MATCH_3}|${CMAKE_MATCH_4}|${args}")
  endforeach()
  file(STRINGS ${CMAKE_CURRENT_SOURCE_DIR}/external/romio_skip.txt skips REGEX "^[^#]")

  foreach(entry ${tests})
    string(REPLACE "|" ";" f "${entry}")
    list(GET f 0 name)
    list(GET f 1 np)
    list(GET f 2 check)
    list(GET f 3 label)
    list(GET f 4 args)
    if(np GREATER TESS_EXT_MAX_NP)
      set(np ${TESS_EXT_MAX_NP})
    endif()
    set(large)
    if(label STREQUAL "large")
      set(large LARGE)
    endif()
    string(REPLACE "$FILENAME" "testfile" args "${args}")
    string(REPLACE "$srcdir" "${romio}" args "${args}")
    separate_arguments(args UNIX_COMMAND "${args}")
    # a skipped test is a test that reports its reason and exits 77 (CTest: "Skipped")
    set(reason "")
    foreach(s ${skips})
      if(s MATCHES "^${name}[ \t]+(all|${TESS_MPI_FLAVOUR})[ \t]+(.*)$")
        set(reason "${CMAKE_MATCH_2}")
      endif()
    endforeach()
    if(reason)
      set(test romio_${name}_skipped_np${np})
      add_test(NAME ${test}
               COMMAND sh -c "echo \"skipped under ${TESS_MPI_FLAVOUR}: $1\"; exit 77" sh "${reason}")
      tess_test_properties(${test} "mpi;external" OFF 10)
      continue()
    endif()
    if(EXISTS ${romio}/${name}.c)
      set(src ${romio}/${name}.c)
    elseif(EXISTS ${gen}/${name}.c)
      set(src ${gen}/${name}.c)
    elseif(EXISTS ${gen}/${name}.f)
      set(src ${gen}/${name}.f)
    else()
      continue() # a Fortran program without a Fortran compiler
    endif()
    set(libs MPI::MPI_C)
    if(src MATCHES "\\.f$")
      set(libs MPI::MPI_Fortran)
    endif()
    tess_mpiio_program(romio_${name} SOURCES ${src} LIBRARIES ${libs} FOREIGN
                       INCLUDES ${CMAKE_CURRENT_SOURCE_DIR}/external/mpi1_compat)
    tess_ext_test(romio_${name} NP ${np} TARGET romio_${name} CHECK ${check} ${large}
                  ARGS ${args})
  endforeach()
else()
  message(STATUS "ROMIO's tests: not fetched (TESS_ROMIO_TESTS='${TESS_ROMIO_TESTS}'; make setup)")
endif()

# ------------------------------------------------------- HDF5 and PnetCDF (bench/formats.c)
# HDF5 built for this MPI (Debian: hdf5-openmpi, hdf5-mpich); PnetCDF when libpnetcdf was built
# for this MPI (Debian builds it for Open MPI only): its DT_NEEDED names this MPI's library.
if(PkgConfig_FOUND)
  pkg_check_modules(TESS_HDF5 IMPORTED_TARGET hdf5-${TESS_MPI_FLAVOUR})
  pkg_check_modules(TESS_PNETCDF IMPORTED_TARGET pnetcdf)
endif()
if(TESS_PNETCDF_FOUND)
  find_library(TESS_PNETCDF_LIB pnetcdf HINTS ${TESS_PNETCDF_LIBRARY_DIRS})
  execute_process(COMMAND ${CMAKE_OBJDUMP} -p ${TESS_PNETCDF_LIB} OUTPUT_VARIABLE needed
                  ERROR_QUIET)
  set(mpi_soname "libmpi\\.so")
  if(TESS_MPI_FLAVOUR STREQUAL mpich)
    set(mpi_soname "libmpich\\.so")
  endif()
  if(NOT needed MATCHES "NEEDED +${mpi_soname}")
    message(STATUS "PnetCDF: ${TESS_PNETCDF_LIB} is not built for ${TESS_MPI_FLAVOUR}, not used")
    set(TESS_PNETCDF_FOUND OFF)
  endif()
endif()
if(TESS_HDF5_FOUND OR TESS_PNETCDF_FOUND)
  set(libs MPI::MPI_C)
  set(defs)
  set(formats) # what it is built with (`tessera bench mpiio` runs only those rows)
  if(TESS_HDF5_FOUND)
    list(APPEND libs PkgConfig::TESS_HDF5)
    list(APPEND defs TESS_HAVE_HDF5=1)
    list(APPEND formats h5)
  endif()
  if(TESS_PNETCDF_FOUND)
    list(APPEND libs PkgConfig::TESS_PNETCDF)
    list(APPEND defs TESS_HAVE_PNETCDF=1)
    list(APPEND formats nc)
  endif()
  # tessera_bench_options (tools/tessera.cmake): the benchmarks' option parser, no Tessera in it
  tess_mpiio_program(tessera_formats SOURCES ${PROJECT_SOURCE_DIR}/bench/formats.c
                     LIBRARIES ${libs} tessera_bench_options DEFINITIONS ${defs})
  string(REPLACE ";" "," formats "${formats}")
  set_target_properties(tessera_formats PROPERTIES OUTPUT_NAME tessera-formats
                                                   TESS_FORMATS "${formats}")
  foreach(np 1 ${TESS_EXT_MAX_NP})
    if(TESS_HDF5_FOUND)
      tess_ext_test(hdf5 NP ${np} TARGET tessera_formats CHECK status COMPARE data.h5
                    ARGS --format h5 --test --file data.h5)
    endif()
    if(TESS_PNETCDF_FOUND)
      tess_ext_test(pnetcdf NP ${np} TARGET tessera_formats CHECK status COMPARE data.nc
                    ARGS --format nc --test --file data.nc)
    endif()
  endforeach()
endif()
