/*
 * collective.h - files opened with a communicator: attaching the group to a file, and the
 * collective forms of set_view and close (core/collective.c). Internal.
 */
#ifndef TESS_COLLECTIVE_H
#define TESS_COLLECTIVE_H

#include "core/file.h"
#include "method/comm.h"

/**
 * Make f collective over the group (comm, ctx): the collective hints of f (every rank must
 * give the same values), the aggregators, the workspace; installs the group operations on f.
 * Collective; takes over ctx (released on failure too). Returns the same verdict on every
 * rank; f->group is set only on success.
 */
int tessi_coll_attach(tess_file *f, const struct tessi_comm *comm, void *ctx);

#endif
