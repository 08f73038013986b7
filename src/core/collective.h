/*
 * collective.h - files opened with a communicator: attaching the group to a file, and the
 * collective forms of set_view and close (core/collective.c). Internal.
 */
#ifndef TESS_COLLECTIVE_H
#define TESS_COLLECTIVE_H

#include "core/file.h"
#include "method/comm.h"

/**
 * Make f collective over the group (comm, ctx): parse the collective hints of info (every rank
 * must give the same values), place the aggregators, allocate the workspace. Collective; takes
 * over ctx (released on failure too). Returns the same verdict on every rank; f->coll is set
 * only on success.
 */
int tessi_coll_attach(tess_file *f, const struct tessi_comm *comm, void *ctx,
                      const tess_info *info);

/**
 * Collective part of tess_file_close: agree on rc (this process's close result) over the group,
 * then release the collective state and the group. Returns the agreed verdict.
 */
int tessi_coll_close(tess_file *f, int rc);

/**
 * Collective tess_file_set_view: the view is installed on every rank or on none (an illegal
 * view on one rank is an error everywhere).
 */
int tessi_coll_set_view(tess_file *f, int64_t disp, tess_type *etype, tess_type *filetype);

/**
 * Add the collective hints in use on f to out (tess_file_get_info): the group's, or for a file
 * without a group the defaults with one aggregator.
 */
int tessi_coll_get_info(const tess_file *f, tess_info *out);

#endif
