/* The Paraver event type and value Extrae writes for an MPI function, so that the MPI
 * configuration files shipped with Paraver (cfgs/mpi/...) read vtrace's exports. */
#ifndef VT_PARAVER_MPI_H
#define VT_PARAVER_MPI_H

#include <stdint.h>

#define VT_PRV_MPI_P2P 50000001u
#define VT_PRV_MPI_COLLECTIVE 50000002u
#define VT_PRV_MPI_OTHER 50000003u
#define VT_PRV_MPI_RMA 50000004u
#define VT_PRV_MPI_IO 50000005u
/* Values of functions Extrae has none for start here (vtrace's own, named in the .pcf). */
#define VT_PRV_MPI_OWN_VALUES 1000u

/* *type and Extrae's value of NAME (a large-count "_c" form takes its base function's);
 * 0 when Extrae has no value for it (the type is still its class's). */
uint32_t vt__prv_mpi(const char *name, uint32_t *type);
/* "MPI Point-to-point", ... as Extrae labels the type. */
const char *vt__prv_mpi_type_label(uint32_t type);

#endif
