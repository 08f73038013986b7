# Thread-collective I/O (tessera_team.h): every interface against a byte map, over plain pthreads
# teams; bad input on one member is an error on every member.
tess_add_unit_test(test_team TIMEOUT 120)
