/* An MPI handle as a hash key. MPICH's handles are ints, Open MPI's are pointers
 * (MPI_Comm, MPI_Request, MPI_Datatype...): the key is the handle's bits, zero-extended,
 * which for an int handle is (uint32_t)h as before. */
#ifndef VT_MPIHANDLE_H
#define VT_MPIHANDLE_H

#include <stdint.h>
#include <string.h>

static inline uint64_t vt_handle_bits(const void *h, size_t n)
{
    if (n == sizeof(uint32_t)) {
        uint32_t v;
        memcpy(&v, h, sizeof v);
        return v;
    }
    uint64_t v = 0;
    memcpy(&v, h, n < sizeof v ? n : sizeof v);
    return v;
}

/* h: an lvalue of a handle type */
#define VT_HANDLE_KEY(h) vt_handle_bits(&(h), sizeof(h))

#endif
