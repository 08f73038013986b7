# The cost model, PMD plans, profiles and calibration (issue 4).
tess_add_unit_test(test_model)
tess_add_unit_test(test_pmd_grouping)
tess_add_unit_test(test_profile)
tess_add_unit_test(test_calibrate TIMEOUT 120)
