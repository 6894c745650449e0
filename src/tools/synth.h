/* vtrace synth: synthetic traces of regular MPI patterns at any rank count and length.
 * synth_gen.c simulates the pattern iteration by iteration over all ranks (O(ranks)
 * state: each rank's clock and the enter times of its latest sends) and hands each call
 * to the writer; synth_out.c encodes the records into one small buffer per rank and
 * appends a block to the rank's file when it fills (the run time's block writers,
 * format/blockio.c and evcols.c), opening files on demand when there are many ranks,
 * so memory is O(ranks), never O(events); cmd_synth.c is the command. */
#ifndef VT_SYNTH_H
#define VT_SYNTH_H

#include <stddef.h>
#include <stdint.h>

/* synth's function table (FUNCS of every rank file); the layouts are those of
 * maint/mpi_functions.txt. */
enum syn_fn { SYN_INIT, SYN_FINALIZE, SYN_ISEND, SYN_IRECV, SYN_WAITALL, SYN_ALLREDUCE, SYN_SEND, SYN_RECV, SYN_NFN };

enum syn_pattern { SYN_HALO1D, SYN_HALO2D, SYN_ALLREDUCE_P, SYN_PIPELINE, SYN_MASTER_WORKER };

typedef struct syn_params {
    enum syn_pattern pattern;
    uint32_t ranks;
    uint32_t iterations;
    uint32_t allreduce_every; /* halo patterns: an MPI_Allreduce after every N-th exchange (0 never) */
    int64_t compute;          /* ns of computation per iteration (master/worker: per task) */
    double jitter;            /* each burst is compute * (1 + jitter * u), u uniform in [-1, 1) */
    int64_t slow_rank;        /* -1: none */
    double slow_factor;       /* its bursts are this much longer */
    uint64_t bytes;           /* per message */
    int64_t latency;          /* ns; the model's L (VTRACE_MODEL_L) */
    int64_t g_ps;             /* ps per byte; the model's G */
    int64_t threshold;        /* VTRACE_THRESHOLD written into the trace */
    uint64_t seed;
    int zstd_level;           /* 0: EVENTS blocks; else EVENTS_COLS, zstd at this level */
} syn_params;

typedef struct syn_out syn_out;

/* Creates DIR (it may exist, empty or not: the files synth writes are replaced) and the
 * writer for P's ranks. Returns NULL with a message in ERR. */
syn_out *syn_out_open(const char *dir, const syn_params *p, char *err, size_t errlen);

/* A call record of rank R: returns where its layout fields go (room for
 * SYN_FIELDS_MAX bytes), to be ended by syn_rec_end with the end of the fields and the
 * bytes the profile counts. SITE indexes synth's call-site table (syn_site). */
#define SYN_FIELDS_MAX 256
uint8_t *syn_rec_begin(syn_out *o, uint32_t r, enum syn_fn fn, unsigned site, int64_t enter, int64_t exit);
/* Returns 0, or -1 when a block could not be written (the message: syn_out_error). */
int syn_rec_end(syn_out *o, uint32_t r, uint8_t *end, uint64_t bytes);
/* Next request id of rank R (from 1). */
uint64_t syn_req(syn_out *o, uint32_t r);
/* Next collective sequence number of rank R on MPI_COMM_WORLD. */
uint64_t syn_coll_seq(syn_out *o, uint32_t r);

/* Call sites (the RANKDEFS call-site table of every rank): one per place of the pattern. */
enum syn_site { SITE_INIT, SITE_FINALIZE, SITE_IRECV, SITE_ISEND, SITE_WAITALL, SITE_ALLREDUCE, SITE_SEND,
                SITE_RECV, SITE_TASK_SEND, SITE_TASK_RECV, SYN_NSITES };

/* Each rank's remaining blocks, RANKDEFS and END, then vtrace.defs (each rank's first
 * and last local times: T_INIT[r], T_FIN[r]) and config.txt. Returns 0 or -1. */
int syn_out_finish(syn_out *o, const int64_t *t_init, const int64_t *t_fin);
const char *syn_out_error(const syn_out *o);
uint64_t syn_out_records(const syn_out *o);
uint64_t syn_out_bytes(const syn_out *o);
void syn_out_free(syn_out *o);

/* The configuration text written into vtrace.defs (malloc'ed). */
char *syn_config_text(const syn_params *p);

/* Simulates P's pattern into O. Returns 0, or -1 (the message: syn_out_error). */
int syn_generate(const syn_params *p, syn_out *o);

#endif
