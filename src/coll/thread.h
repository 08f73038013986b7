/*
 * thread.h - a group whose members are threads of one process: the transport table
 * tessi_thread_ops (tessera_group.h) over a team. It is the loopback group of the unit tests
 * (two-phase without mpirun) and the base of the thread-collective API (tess_team_*).
 *
 * Use: one thread creates a team of `size` (tessi_team_create), each member thread takes its
 * context for its rank (tessi_team_ctx) and passes (&tessi_thread_ops, ctx) wherever a group is
 * wanted, e.g. tess_file_open_group; the collective functions then block until every member
 * has called them, like MPI's. The team is released when its creator (tessi_team_release) and
 * every context (the table's free) have let go of it, in any order.
 *
 * Semantics: barrier, allreduce, allgather and alltoallv through shared slots between two
 * barriers (one mutex and condition variable per team, a generation count); the typed exchange
 * pulls: at xwait every member copies what each peer sends it, from the peer's segments to its
 * own (tessi_xfer_copy: the bytes of a type's stream, as pack and unpack move them), then all
 * wait for each other, so no buffer is reused while a peer reads it. Every member is on node 0.
 * A member that stops calling the collective functions blocks the others (as with MPI).
 */
#ifndef TESS_THREAD_H
#define TESS_THREAD_H

#include "coll/transport.h"

typedef struct tessi_team tessi_team;

extern const struct tess_group_ops tessi_thread_ops;

/** A team of size >= 1 members (local to the calling thread). */
int tessi_team_create(int size, tessi_team **out);

/**
 * The context of member `rank` for tessi_thread_ops (one per rank; each member's thread uses
 * its own). Takes a reference to the team, dropped by the table's free.
 */
int tessi_team_ctx(tessi_team *t, int rank, void **ctx);

/** Drop the creator's reference (the team goes when its contexts are freed too). */
void tessi_team_release(tessi_team *t);

#endif
