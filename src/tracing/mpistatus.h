/* A status's byte count and cancelled flag, without library calls where the MPI
 * library's status layout is known. MPICH keeps them in two public fields (mpi.h:
 * count_lo, count_hi_and_cancelled); reading them directly saves a call per receive on
 * the hot path. */
#ifndef VT_MPISTATUS_H
#define VT_MPISTATUS_H

#include <mpi.h>
#include <stdint.h>

static inline MPI_Count vt_status_bytes(const MPI_Status *st)
{
#if defined(MPICH)
    return (MPI_Count)(((uint64_t)(unsigned)st->count_lo) |
                       ((uint64_t)((unsigned)st->count_hi_and_cancelled >> 1) << 32));
#else
    MPI_Count n = 0;
    if (PMPI_Get_elements_x(st, MPI_BYTE, &n) != MPI_SUCCESS || n == MPI_UNDEFINED)
        return 0;
    return n;
#endif
}

static inline int vt_status_cancelled(const MPI_Status *st)
{
#if defined(MPICH)
    return st->count_hi_and_cancelled & 1;
#else
    int c = 0;
    PMPI_Test_cancelled(st, &c);
    return c;
#endif
}

static inline void vt_status_set_bytes(MPI_Status *st, MPI_Count n)
{
#if defined(MPICH)
    st->count_lo = (int)(unsigned)((uint64_t)n & 0xffffffffu);
    st->count_hi_and_cancelled = (st->count_hi_and_cancelled & 1) | (int)(((uint64_t)n >> 32) << 1);
#else
    PMPI_Status_set_elements_x(st, MPI_BYTE, n);
#endif
}

#endif
