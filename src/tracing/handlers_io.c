/* Handlers of MPI-IO (the table of open files, written into the trace at the end) and of
 * one-sided calls. */
#include "vt_config.h"
#include "tracing/handlers_priv.h"
#include "tracing/requests.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ MPI-IO */

static struct open_file { MPI_File h; int open; } *files;
static uint32_t nfiles, capfiles;
static char **file_names;
static int32_t *file_comms;

static int64_t file_index(MPI_File fh)
{
    for (uint32_t i = nfiles; i-- > 0;)
        if (files[i].open && files[i].h == fh)
            return i;
    return -1;
}

void vt_leave_file_open(vt_call *c, int rc, MPI_Comm comm, const char *name, MPI_File *fh)
{
    int64_t exit = vt_now();
    uint8_t *p = rec_call(c, exit, 2 * VT_UVAR_MAX);
    if (p) {
        vt_comm *cm = comm_of(comm);
        if (nfiles == capfiles) {
            capfiles = capfiles ? capfiles * 2 : 8;
            files = realloc(files, capfiles * sizeof *files);
            file_names = realloc(file_names, capfiles * sizeof *file_names);
            file_comms = realloc(file_comms, capfiles * sizeof *file_comms);
        }
        files[nfiles] = (struct open_file){rc == MPI_SUCCESS ? *fh : MPI_FILE_NULL, rc == MPI_SUCCESS};
        file_names[nfiles] = strdup(name ? name : "");
        file_comms[nfiles] = (int32_t)cm->index;
        p = vt_put_uvar(p, cm->index);
        p = vt_put_uvar(p, nfiles++);
    }
    rec_done(c, p, exit, 0);
}

static uint8_t *put_file(uint8_t *p, MPI_File fh)
{
    int64_t i = file_index(fh);
    if (i < 0) {
        /* Opened before we started: give it an unnamed entry. */
        if (nfiles == capfiles) {
            capfiles = capfiles ? capfiles * 2 : 8;
            files = realloc(files, capfiles * sizeof *files);
            file_names = realloc(file_names, capfiles * sizeof *file_names);
            file_comms = realloc(file_comms, capfiles * sizeof *file_comms);
        }
        files[nfiles] = (struct open_file){fh, 1};
        file_names[nfiles] = strdup("");
        file_comms[nfiles] = 0;
        i = nfiles++;
    }
    return vt_put_uvar(p, (uint64_t)i);
}

void vt_leave_file_close(vt_call *c, int rc, MPI_File fh)
{
    int64_t exit = vt_now();
    uint8_t *p = rec_call(c, exit, VT_UVAR_MAX);
    if (p) {
        p = put_file(p, fh);
        int64_t i = file_index(fh);
        if (rc == MPI_SUCCESS && i >= 0)
            files[i].open = 0;
    }
    rec_done(c, p, exit, 0);
}

void vt_leave_file_local(vt_call *c, int rc, MPI_File fh)
{
    (void)rc;
    int64_t exit = vt_now();
    uint8_t *p = rec_call(c, exit, VT_UVAR_MAX);
    if (p)
        p = put_file(p, fh);
    rec_done(c, p, exit, 0);
}

void vt_leave_io(vt_call *c, int rc, MPI_File fh, MPI_Offset offset, MPI_Count count, MPI_Datatype type,
                 MPI_Status *st, MPI_Request *req)
{
    int64_t exit = vt_now();
    uint64_t bytes = st && rc == MPI_SUCCESS ? status_bytes(st) : type_bytes(count, type);
    uint8_t *p = rec_call(c, exit, 4 * VT_UVAR_MAX);
    if (p) {
        p = put_file(p, fh);
        p = vt_put_svar(p, offset);
        p = vt_put_uvar(p, bytes);
        if (req) {
            vt_req *r = rc == MPI_SUCCESS ? vt_req_add(*req, VT_REQ_IO, 0) : NULL;
            if (r)
                r->bytes = bytes;
            p = vt_put_uvar(p, r ? r->id : 0);
        }
    }
    rec_done(c, p, exit, bytes);
}

void vt_leave_rma(vt_call *c, int rc, int target, MPI_Count count, MPI_Datatype type)
{
    (void)rc;
    int64_t exit = vt_now();
    uint64_t bytes = type_bytes(count, type);
    uint8_t *p = rec_call(c, exit, 2 * VT_UVAR_MAX);
    if (p) {
        p = vt_put_svar(p, target);
        p = vt_put_uvar(p, bytes);
    }
    rec_done(c, p, exit, bytes);
}

uint32_t vt_files_count(void) { return nfiles; }

const char *vt_file_name(uint32_t i, int32_t *comm)
{
    *comm = file_comms[i];
    return file_names[i];
}
