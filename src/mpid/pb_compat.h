/* The MPI-4 large-count (_c) calls the transport makes, for an MPI library whose mpi.h
 * lacks them (Open MPI 4.1, 5.0): configure writes VT_LACKS_MPI_<name> (src/vt_mpi_lacks.h)
 * for each, and here each one calls the int version when the counts fit in an int, and
 * returns MPI_ERR_COUNT when they do not (the library's own int interface could not
 * carry such a message either). With MPICH nothing here is compiled. */
#ifndef VT_PB_COMPAT_H
#define VT_PB_COMPAT_H

#include <limits.h>
#include <mpi.h>

#include "vt_mpi_lacks.h"

#define VT_BIG(n) ((n) > INT_MAX)

#define VT_SEND_C(name)                                                                                   \
    static inline int PMPI_##name##_c(const void *b, MPI_Count n, MPI_Datatype t, int d, int tag, MPI_Comm c) \
    {                                                                                                      \
        return VT_BIG(n) ? MPI_ERR_COUNT : PMPI_##name(b, (int)n, t, d, tag, c);                           \
    }
#define VT_ISEND_C(name)                                                                                  \
    static inline int PMPI_##name##_c(const void *b, MPI_Count n, MPI_Datatype t, int d, int tag, MPI_Comm c, \
                                      MPI_Request *r)                                                      \
    {                                                                                                      \
        return VT_BIG(n) ? MPI_ERR_COUNT : PMPI_##name(b, (int)n, t, d, tag, c, r);                        \
    }

#ifdef VT_LACKS_MPI_Send_c
VT_SEND_C(Send)
#endif
#ifdef VT_LACKS_MPI_Ssend_c
VT_SEND_C(Ssend)
#endif
#ifdef VT_LACKS_MPI_Bsend_c
VT_SEND_C(Bsend)
#endif
#ifdef VT_LACKS_MPI_Rsend_c
VT_SEND_C(Rsend)
#endif
#ifdef VT_LACKS_MPI_Isend_c
VT_ISEND_C(Isend)
#endif
#ifdef VT_LACKS_MPI_Issend_c
VT_ISEND_C(Issend)
#endif
#ifdef VT_LACKS_MPI_Ibsend_c
VT_ISEND_C(Ibsend)
#endif
#ifdef VT_LACKS_MPI_Irsend_c
VT_ISEND_C(Irsend)
#endif
#ifdef VT_LACKS_MPI_Send_init_c
VT_ISEND_C(Send_init)
#endif
#ifdef VT_LACKS_MPI_Ssend_init_c
VT_ISEND_C(Ssend_init)
#endif
#ifdef VT_LACKS_MPI_Bsend_init_c
VT_ISEND_C(Bsend_init)
#endif
#ifdef VT_LACKS_MPI_Rsend_init_c
VT_ISEND_C(Rsend_init)
#endif
#ifdef VT_LACKS_MPI_Recv_c
static inline int PMPI_Recv_c(void *b, MPI_Count n, MPI_Datatype t, int s, int tag, MPI_Comm c, MPI_Status *st)
{
    return VT_BIG(n) ? MPI_ERR_COUNT : PMPI_Recv(b, (int)n, t, s, tag, c, st);
}
#endif
#ifdef VT_LACKS_MPI_Irecv_c
static inline int PMPI_Irecv_c(void *b, MPI_Count n, MPI_Datatype t, int s, int tag, MPI_Comm c, MPI_Request *r)
{
    return VT_BIG(n) ? MPI_ERR_COUNT : PMPI_Irecv(b, (int)n, t, s, tag, c, r);
}
#endif
#ifdef VT_LACKS_MPI_Recv_init_c
static inline int PMPI_Recv_init_c(void *b, MPI_Count n, MPI_Datatype t, int s, int tag, MPI_Comm c,
                                   MPI_Request *r)
{
    return VT_BIG(n) ? MPI_ERR_COUNT : PMPI_Recv_init(b, (int)n, t, s, tag, c, r);
}
#endif
#ifdef VT_LACKS_MPI_Mrecv_c
static inline int PMPI_Mrecv_c(void *b, MPI_Count n, MPI_Datatype t, MPI_Message *m, MPI_Status *st)
{
    return VT_BIG(n) ? MPI_ERR_COUNT : PMPI_Mrecv(b, (int)n, t, m, st);
}
#endif
#ifdef VT_LACKS_MPI_Imrecv_c
static inline int PMPI_Imrecv_c(void *b, MPI_Count n, MPI_Datatype t, MPI_Message *m, MPI_Request *r)
{
    return VT_BIG(n) ? MPI_ERR_COUNT : PMPI_Imrecv(b, (int)n, t, m, r);
}
#endif
#ifdef VT_LACKS_MPI_Sendrecv_c
static inline int PMPI_Sendrecv_c(const void *sb, MPI_Count sn, MPI_Datatype st, int d, int stag, void *rb,
                                  MPI_Count rn, MPI_Datatype rt, int s, int rtag, MPI_Comm c, MPI_Status *status)
{
    return VT_BIG(sn) || VT_BIG(rn) ? MPI_ERR_COUNT
                                    : PMPI_Sendrecv(sb, (int)sn, st, d, stag, rb, (int)rn, rt, s, rtag, c, status);
}
#endif
#ifdef VT_LACKS_MPI_Sendrecv_replace_c
static inline int PMPI_Sendrecv_replace_c(void *b, MPI_Count n, MPI_Datatype t, int d, int stag, int s, int rtag,
                                          MPI_Comm c, MPI_Status *status)
{
    return VT_BIG(n) ? MPI_ERR_COUNT : PMPI_Sendrecv_replace(b, (int)n, t, d, stag, s, rtag, c, status);
}
#endif
/* Open MPI 5.0 has MPI_Isendrecv(_replace) (MPI-4) but not their _c versions; 4.1 has
 * neither (pb_p2p.c leaves them out) */
#if defined(VT_LACKS_MPI_Isendrecv_c) && !defined(VT_LACKS_MPI_Isendrecv)
static inline int PMPI_Isendrecv_c(const void *sb, MPI_Count sn, MPI_Datatype st, int d, int stag, void *rb,
                                   MPI_Count rn, MPI_Datatype rt, int s, int rtag, MPI_Comm c, MPI_Request *req)
{
    return VT_BIG(sn) || VT_BIG(rn) ? MPI_ERR_COUNT
                                    : PMPI_Isendrecv(sb, (int)sn, st, d, stag, rb, (int)rn, rt, s, rtag, c, req);
}
#endif
#if defined(VT_LACKS_MPI_Isendrecv_replace_c) && !defined(VT_LACKS_MPI_Isendrecv_replace)
static inline int PMPI_Isendrecv_replace_c(void *b, MPI_Count n, MPI_Datatype t, int d, int stag, int s, int rtag,
                                           MPI_Comm c, MPI_Request *req)
{
    return VT_BIG(n) ? MPI_ERR_COUNT : PMPI_Isendrecv_replace(b, (int)n, t, d, stag, s, rtag, c, req);
}
#endif
#ifdef VT_LACKS_MPI_Buffer_attach_c
static inline int PMPI_Buffer_attach_c(void *b, MPI_Count size)
{
    return VT_BIG(size) ? MPI_ERR_COUNT : PMPI_Buffer_attach(b, (int)size);
}
#endif
#ifdef VT_LACKS_MPI_Buffer_detach_c
static inline int PMPI_Buffer_detach_c(void *addr, MPI_Count *size)
{
    int n = 0;
    int rc = PMPI_Buffer_detach(addr, &n);
    *size = n;
    return rc;
}
#endif
#ifdef VT_LACKS_MPI_Type_size_c
static inline int PMPI_Type_size_c(MPI_Datatype t, MPI_Count *size) { return PMPI_Type_size_x(t, size); }
#endif
#ifdef VT_LACKS_MPI_Type_get_extent_c
static inline int PMPI_Type_get_extent_c(MPI_Datatype t, MPI_Count *lb, MPI_Count *extent)
{
    return PMPI_Type_get_extent_x(t, lb, extent);
}
#endif
#ifdef VT_LACKS_MPI_Type_get_true_extent_c
static inline int PMPI_Type_get_true_extent_c(MPI_Datatype t, MPI_Count *lb, MPI_Count *extent)
{
    return PMPI_Type_get_true_extent_x(t, lb, extent);
}
#endif
#ifdef VT_LACKS_MPI_Type_create_hindexed_c
static inline int PMPI_Type_create_hindexed_c(MPI_Count n, const MPI_Count bl[], const MPI_Count disp[],
                                              MPI_Datatype t, MPI_Datatype *out)
{
    if (n != 1 || VT_BIG(bl[0]))    /* the transport builds one block */
        return MPI_ERR_COUNT;
    int b = (int)bl[0];
    MPI_Aint d = (MPI_Aint)disp[0];
    return PMPI_Type_create_hindexed(1, &b, &d, t, out);
}
#endif
#ifdef VT_LACKS_MPI_Type_create_struct_c
static inline int PMPI_Type_create_struct_c(MPI_Count n, const MPI_Count bl[], const MPI_Count disp[],
                                            const MPI_Datatype t[], MPI_Datatype *out)
{
    if (n != 2 || VT_BIG(bl[0]) || VT_BIG(bl[1]))    /* the transport builds header + user data */
        return MPI_ERR_COUNT;
    int b[2] = {(int)bl[0], (int)bl[1]};
    MPI_Aint d[2] = {(MPI_Aint)disp[0], (MPI_Aint)disp[1]};
    return PMPI_Type_create_struct(2, b, d, t, out);
}
#endif
#ifdef VT_LACKS_MPI_Pack_c
static inline int PMPI_Pack_c(const void *in, MPI_Count n, MPI_Datatype t, void *out, MPI_Count outsize,
                              MPI_Count *pos, MPI_Comm c)
{
    if (VT_BIG(n) || VT_BIG(outsize) || VT_BIG(*pos))
        return MPI_ERR_COUNT;
    int p = (int)*pos;
    int rc = PMPI_Pack(in, (int)n, t, out, (int)outsize, &p, c);
    *pos = p;
    return rc;
}
#endif
#ifdef VT_LACKS_MPI_Unpack_c
static inline int PMPI_Unpack_c(const void *in, MPI_Count insize, MPI_Count *pos, void *out, MPI_Count n,
                                MPI_Datatype t, MPI_Comm c)
{
    if (VT_BIG(n) || VT_BIG(insize) || VT_BIG(*pos))
        return MPI_ERR_COUNT;
    int p = (int)*pos;
    int rc = PMPI_Unpack(in, (int)insize, &p, out, (int)n, t, c);
    *pos = p;
    return rc;
}
#endif

#endif
