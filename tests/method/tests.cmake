# The pmd method and `auto` (issue 4). test_pmd_method: byte-map oracle on random views and
# random cost models, Table I counters equal to the model's estimates, groups worked out by hand.
# test_pmd_auto: prefix sampling, decision reuse and log, hints, concurrent sieving writers,
# storage without locks. pmd_test_common.c: their models, profiles, hints and estimates.
tess_add_unit_test(test_pmd_method SLOW SOURCES ${TESS_RANDTYPE_SOURCES}
                   ${CMAKE_CURRENT_LIST_DIR}/pmd_test_common.c)
tess_add_unit_test(test_pmd_auto SOURCES ${TESS_RANDTYPE_SOURCES}
                   ${CMAKE_CURRENT_LIST_DIR}/pmd_test_common.c)
