# The pmd method and `auto` (issue 4): byte-map oracle on random views and random cost models,
# Table I counters equal to the model's estimates, groups worked out by hand, prefix sampling,
# decision reuse and log, concurrent sieving writers, storage without locks.
tess_add_unit_test(test_pmd_method SLOW SOURCES ${TESS_RANDTYPE_SOURCES})
