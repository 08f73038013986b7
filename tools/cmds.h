/*
 * cmds.h - entry points of the `tessera` subcommands that live in tools/ (tools/tessera.c
 * dispatches to them; the benchmark entry points are declared in bench/bench.h). Each receives
 * the arguments after its command words, argv[0] being the last word, and returns the exit
 * status: 0 success, 1 failure, 2 bad usage.
 */
#ifndef TESS_CMDS_H
#define TESS_CMDS_H

/** `tessera calibrate [--quick] [--out FILE] [path]`: measure the cost model, save a profile. */
int tess_cmd_calibrate(int argc, char **argv);

#endif
