"""Open MPI's Fortran entry points of libvtrace (src/mpi/wrappers_ompi.c), for
maint/gen_wrappers.py, from the function table and maint/ompi_fortran.txt.

Open MPI 4.1's mpif.h and `use mpi` bindings are C functions of libmpi_mpifh
(ompi_send_f, with the weak aliases mpi_send_, mpi_send__, mpi_send, MPI_SEND) that call
PMPI_Send directly; its mpi_f08 entry points (mpi_send_f08_, libmpi_usempif08) call
ompi_send_f (or its alias pmpi_send_) with the same arguments. So libvtrace defines
ompi_x_f and its aliases, and mpi_x_f08_ where maint/ompi_fortran.txt says the f08 entry
point only forwards its arguments (maint/seed_ompi_fortran.py checks that in the
disassembly): each converts the Fortran arguments as Open MPI's binding does
(ompi/mpi/fortran/mpif-h/*.c), calls the body of the C entry point with its own return
address as call site (the program's Fortran code) and converts the results back.
The conversions (f_arg):
  - every argument by reference, in the C order, then ierror (optional in mpi_f08:
    NULL when absent), then one hidden length (int) per CHARACTER argument, in order;
  - strings in as ompi_fortran_string_f2c makes them: leading and trailing blanks
    dropped, NUL-terminated copy; spawn's argv (an array of strings ended by a blank
    one, or MPI_ARGV_NULL), spawn_multiple's commands (count strings) and argvs
    (argv(count, *): row i the arguments of command i, up to a blank string; or
    MPI_ARGVS_NULL), as ompi_fortran_argv_blank_f2c, _count_f2c and
    _multiple_argvs_f2c; MPI_ERRCODES_IGNORE (mpi_fortran_errcodes_ignore_);
  - arrays of datatypes (Alltoallw family) and of infos (spawn_multiple): converted
    element by element with PMPI_X_f2c; the send types are not read with MPI_IN_PLACE
    (NULL, as Open MPI passes them); as many as the C call reads: the communicator's
    (remote) size, a neighbour collective's in- and outdegree, spawn_multiple's count;
  - handles are MPI_Fint: PMPI_X_f2c, and PMPI_X_c2f back on success (Open MPI's
    handles are pointers, its Fortran handles indices);
  - buffers: the address of the common block mpi_fortran_bottom_ becomes MPI_BOTTOM,
    and for collectives that of mpi_fortran_in_place_ becomes MPI_IN_PLACE;
  - statuses: the address of mpi_fortran_status(es)_ignore_ becomes MPI_STATUS(ES)_IGNORE,
    else a C status copied out with PMPI_Status_c2f on success (for a test, only when
    the flag is set); arrays of requests are copied in and out;
  - logical out: 1 or 0 (gfortran's .true. and .false.); logical and integer in: as
    they are; integer arrays and integer out: as they are (MPI_Fint is int);
  - indices out (Waitany, Testany, Waitsome, Testsome) are made 1-based as Open MPI does.
"""
import os
import sys

HANDLES = {"MPI_Comm": "Comm", "MPI_Group": "Group", "MPI_Info": "Info", "MPI_Request": "Request",
           "MPIO_Request": "Request", "MPI_Message": "Message", "MPI_File": "File", "MPI_Win": "Win",
           "MPI_Datatype": "Type", "MPI_Op": "Op"}
COLL = ("coll", "icoll", "coll_init")


class Unsupported(Exception):
    pass


def peers(f, roles, role):
    """The number of elements of an array of datatypes (STYPES or RTYPES)."""
    comm = "PMPI_Comm_f2c(*%s)" % roles["COMM"]["name"]
    if "neighbor" in f["name"].lower():
        return "vt_f_degree(%s, %d)" % (comm, role == "RTYPES")
    return "vt_f_comm_peers(%s)" % comm


def f_string_arg(f, a):
    """A CHARACTER argument (const char *, char *[], char **[]): its hidden length follows
    ierror. Raises Unsupported for a string the routine writes."""
    t, n, arr = a["type"], a["name"], a["arr"]
    byname = {x["name"]: x for x in f["args"]}
    hidden = ["int %s_len" % n]
    if t == "const char *" and not arr:
        return ("char *%s" % n, ["char *%s_c = vt_f_str(%s, %s_len);" % (n, n, n), "NOMEM !%s_c" % n],
                "%s_c" % n, [], ["free(%s_c);" % n], hidden)
    if t in ("char *", "char **") and arr:
        # spawn's argv (strings up to a blank one, or MPI_ARGV_NULL), spawn_multiple's
        # commands (count strings, blank ones included) and argvs (MPI_ARGVS_NULL)
        argvs = t == "char **"
        null = "VT_F_ARGVS_NULL(%s)" % n if argvs else "VT_F_ARGV_NULL(%s)" % n
        if argvs:
            conv = "vt_f_argvs(%s, *count, %s_len, &%s_c)" % (n, n, n)
        elif "count" in byname:
            null, conv = "0", "vt_f_argv(%s, %s_len, %s_len, *count, &%s_c)" % (n, n, n, n)
        else:
            conv = "vt_f_argv(%s, %s_len, %s_len, -1, &%s_c)" % (n, n, n, n)
        return ("char *%s" % n,
                ["char *%s%s_c = NULL;" % ("**" if argvs else "*", n),
                 "const int %s_e = %s;" % (n, conv if null == "0" else "%s ? 0 : %s" % (null, conv)),
                 "NOMEM %s_e" % n],
                "%s_c" % n, [],
                ["vt_f_argvs_free(%s_c, *count);" % n if argvs else "vt_f_argv_free(%s_c);" % n], hidden)
    raise Unsupported("argument %s (%s%s)" % (n, t, arr))


def f_arg(f, a):
    """One C argument -> (parameter, declarations, C argument, statements on success[,
    statements always run after the call[, hidden length parameters]]). A declaration
    'NOMEM cond': an allocation failed."""
    t, n, arr, role = a["type"], a["name"], a["arr"], a["role"]
    base = t.replace("const", "").replace("*", "").strip()
    ptr = t.count("*")
    roles = {x["role"]: x for x in f["args"] if x["role"]}
    if base == "char":
        return f_string_arg(f, a)
    if base == "void" and ptr == 1 and not arr:
        if f["cls"] in ("buffer_attach", "buffer_detach"):
            raise Unsupported("buffer_detach")   # by hand (vt_ompi_detach)
        conv = "VT_F2C_IN_PLACE(VT_F2C_BOTTOM(%s))" if f["cls"] in COLL else "VT_F2C_BOTTOM(%s)"
        return "void *%s" % n, [], conv % n, []
    if base == "MPI_Status":
        if ptr == 1 and not arr and role == "STATUS":
            cond = "%s_c && " % roles["FLAG"]["name"] if "FLAG" in roles and roles["FLAG"]["type"].endswith("*") else ""
            return ("MPI_Fint *%s" % n, ["MPI_Status %s_c;" % n],
                    "VT_F_STATUS_IGNORE(%s) ? MPI_STATUS_IGNORE : &%s_c" % (n, n),
                    ["if (%s!VT_F_STATUS_IGNORE(%s))" % (cond, n), "    PMPI_Status_c2f(&%s_c, %s);" % (n, n)])
        if not ptr and arr and role == "STATUSES":
            cnt = "%s_c" % roles["OUTCOUNT"]["name"] if "OUTCOUNT" in roles else "%s_n" % roles["REQUESTS"]["name"]
            cond = "%s_c && " % roles["FLAG"]["name"] if "FLAG" in roles else ""
            return ("MPI_Fint *%s" % n,
                    ["MPI_Status %s_small[VT_F_SMALL];" % n,
                     "MPI_Status *%s_c = VT_F_STATUSES_IGNORE(%s) ? MPI_STATUSES_IGNORE : "
                     "vt_f_statuses(%s_n, %s_small);" % (n, n, roles["REQUESTS"]["name"], n),
                     "NOMEM !%s_c && !VT_F_STATUSES_IGNORE(%s)" % (n, n)],
                    "%s_c" % n,
                    ["if (%s%s_c != MPI_STATUSES_IGNORE && %s != MPI_UNDEFINED)" % (cond, n, cnt),
                     "    for (int i = 0; i < %s; i++)" % cnt,
                     "        PMPI_Status_c2f(&%s_c[i], %s + i * (int)(sizeof(MPI_Status) / sizeof(MPI_Fint)));" % (n, n)],
                    ["if (%s_c != %s_small && %s_c != MPI_STATUSES_IGNORE)" % (n, n, n), "    free(%s_c);" % n])
    elif base in HANDLES:
        h = HANDLES[base]
        if not ptr and not arr:
            return "MPI_Fint *%s" % n, [], "PMPI_%s_f2c(*%s)" % (h, n), []
        if ptr == 1 and not arr:
            return ("MPI_Fint *%s" % n, ["%s %s_c = PMPI_%s_f2c(*%s);" % (base, n, h, n)], "&%s_c" % n,
                    ["*%s = PMPI_%s_c2f(%s_c);" % (n, h, n)])
        if arr and base == "MPI_Request" and role == "REQUESTS" and "NREQ" in roles:
            return ("MPI_Fint *%s" % n,
                    ["const int %s_n = *%s;" % (n, roles["NREQ"]["name"]),
                     "MPI_Request %s_small[VT_F_SMALL];" % n,
                     "MPI_Request *%s_c = vt_f_reqs_in(%s, %s_n, %s_small);" % (n, n, n, n),
                     "NOMEM !%s_c" % n],
                    "%s_c" % n, ["vt_f_reqs_out(%s, %s_n, %s_c);" % (n, n, n)],
                    ["if (%s_c != %s_small)" % (n, n), "    free(%s_c);" % n])
        if arr and not ptr and t.startswith("const ") and (role in ("STYPES", "RTYPES") or n == "array_of_info"):
            cnt = "*count" if n == "array_of_info" else peers(f, roles, role)
            skip = "VT_F_IN_PLACE(%s)" % roles["SBUF"]["name"] if role == "STYPES" and "SBUF" in roles and \
                "neighbor" not in f["name"].lower() else "0"
            conv = "vt_f_%s_in(%s, %s_n, %s_small)" % (h.lower(), n, n, n)
            if skip == "0":
                decl = ["const int %s_n = %s;" % (n, cnt), "%s %s_small[VT_F_SMALL];" % (base, n),
                        "%s *%s_c = %s;" % (base, n, conv), "NOMEM !%s_c" % n]
            else:
                decl = ["const int %s_n = %s ? 0 : %s;" % (n, skip, cnt), "%s %s_small[VT_F_SMALL];" % (base, n),
                        "%s *%s_c = %s ? NULL : %s;" % (base, n, skip, conv), "NOMEM !%s_c && !%s" % (n, skip)]
            return ("MPI_Fint *%s" % n, decl, "%s_c" % n, [],
                    ["if (%s_c != %s_small)" % (n, n), "    free(%s_c);" % n])
    elif base == "int":
        if arr and not ptr and n == "array_of_errcodes":
            return "MPI_Fint *%s" % n, [], "VT_F_ERRCODES_IGNORE(%s) ? MPI_ERRCODES_IGNORE : %s" % (n, n), []
        if not ptr and not arr:
            return "MPI_Fint *%s" % n, [], "*%s" % n, []
        if ptr == 1 and not arr and role == "FLAG":
            return "MPI_Fint *%s" % n, ["int %s_c = 0;" % n], "&%s_c" % n, ["*%s = %s_c ? 1 : 0;" % (n, n)]
        if ptr == 1 and not arr and role in ("INDEX", "OUTCOUNT"):
            post = ["*%s = %s_c;" % (n, n)]
            if role == "INDEX":
                post = ["*%s = %s_c == MPI_UNDEFINED ? MPI_UNDEFINED : %s_c + 1;" % (n, n, n)]
            return "MPI_Fint *%s" % n, ["int %s_c = MPI_UNDEFINED;" % n], "&%s_c" % n, post
        if arr and not ptr and role == "INDICES":
            cnt = roles["OUTCOUNT"]["name"]
            return ("MPI_Fint *%s" % n, [], n,
                    ["if (%s_c != MPI_UNDEFINED)" % cnt, "    for (int i = 0; i < %s_c; i++)" % cnt,
                     "        %s[i] += 1;" % n])
        if (ptr == 1) != bool(arr):
            return "MPI_Fint *%s" % n, [], n, []
    elif base in ("MPI_Offset", "MPI_Aint", "MPI_Count") and not arr:
        if not ptr:
            return "%s *%s" % (base, n), [], "*%s" % n, []
        if ptr == 1:
            return "%s *%s" % (base, n), [], n, []
    elif base in ("MPI_Aint",) and arr and not ptr:
        return "%s *%s" % (base, n), [], n, []
    raise Unsupported("argument %s (%s%s)" % (n, t, arr))


def shim(f):
    """The static function of one MPI function (raises Unsupported)."""
    name = f["name"]
    if f["cls"] in ("init", "init_thread", "finalize", "buffer_attach", "buffer_detach"):
        raise Unsupported("by hand")
    if f["ret"] == "double" and not f["args"]:
        return ("static inline double vt_ompi_%s(const void *site)\n{\n    return vt_body_%s(site);\n}\n"
                % (name, name), "double", [])
    if f["ret"] != "int":
        raise Unsupported("return type %s" % f["ret"])
    parms, pre, args, post, clean, hidden = [], [], [], [], [], []
    for a in f["args"]:
        p, d, c, o, *cl = f_arg(f, a)
        hidden += cl[1] if len(cl) > 1 else []
        parms.append(p)
        for x in d:
            if x.startswith("NOMEM "):
                pre += ["if (%s) {" % x[6:]] + ["    " + y for y in clean] + \
                       ["    vt_f_nomem(ierror);", "    return;", "}"]
            else:
                pre.append(x)
        args.append(c)
        post += o
        clean += cl[0] if cl else []
    parms.append("MPI_Fint *ierror")
    parms += hidden
    lines = ["static inline void vt_ompi_%s(%s, const void *site)" % (name, ", ".join(parms)), "{"]
    lines += ["    " + d for d in pre]
    lines.append("    int rc = vt_body_%s(%s);" % (name, ", ".join(["site"] + args)))
    if post:
        lines.append("    if (rc == MPI_SUCCESS) {")
        lines += ["        " + o for o in post]
        lines.append("    }")
    lines += ["    " + x for x in clean]
    lines += ["    if (ierror)", "        *ierror = rc;", "}"]
    return "\n".join(lines) + "\n", "void", parms


def entries(name, ret, parms, f08, sym_base=None):
    """The exported names of one shim: ompi_x_f with its mpif.h aliases, and mpi_x_f08_."""
    b = sym_base or name[4:].lower()
    decl = ", ".join(parms) if parms else "void"
    call = ", ".join([p.split()[-1].lstrip("*") for p in parms] + ["__builtin_return_address(0)"])
    ret_kw = "return " if ret != "void" else ""
    out = ["VT_EXPORT %s ompi_%s_f(%s);" % (ret, b, decl),
           "VT_EXPORT %s ompi_%s_f(%s)\n{\n    %svt_ompi_%s(%s);\n}" % (ret, b, decl, ret_kw, name, call)]
    for alias in ("mpi_%s" % b, "mpi_%s_" % b, "mpi_%s__" % b, "MPI_%s" % b.upper()):
        out.append("VT_EXPORT %s %s(%s) __attribute__((alias(\"ompi_%s_f\")));" % (ret, alias, decl, b))
    if f08:
        out.append("VT_EXPORT %s mpi_%s_f08_(%s);" % (ret, b, decl))
        out.append("VT_EXPORT %s mpi_%s_f08_(%s)\n{\n    %svt_ompi_%s(%s);\n}" % (ret, b, decl, ret_kw, name, call))
    return "\n".join(out) + "\n"


def parse_list(path, funcs):
    """maint/ompi_fortran.txt: 'MPI_Name [f08]' lines -> [(table entry, f08)]."""
    byname = {f["name"]: f for f in funcs}
    out = []
    if not os.path.exists(path):
        return out
    for lineno, line in enumerate(open(path), 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if words[0] not in byname or words[1:] not in ([], ["f08"]):
            sys.exit("%s:%d: expected 'MPI_Name [f08]' with a function of the table" % (path, lineno))
        out.append((byname[words[0]], bool(words[1:])))
    return out


PROLOGUE = r"""
#include <stdlib.h>
#include <string.h>

/* Open MPI's Fortran constants: the addresses of its common blocks (libmpi). */
extern MPI_Fint mpi_fortran_bottom_, mpi_fortran_in_place_, mpi_fortran_status_ignore_,
    mpi_fortran_statuses_ignore_;
#define VT_F2C_BOTTOM(p) ((void *)(p) == (void *)&mpi_fortran_bottom_ ? MPI_BOTTOM : (void *)(p))
#define VT_F2C_IN_PLACE(p) ((void *)(p) == (void *)&mpi_fortran_in_place_ ? MPI_IN_PLACE : (void *)(p))
#define VT_F_STATUS_IGNORE(p) ((void *)(p) == (void *)&mpi_fortran_status_ignore_)
#define VT_F_STATUSES_IGNORE(p) ((void *)(p) == (void *)&mpi_fortran_statuses_ignore_)
#define VT_F_IN_PLACE(p) ((void *)(p) == (void *)&mpi_fortran_in_place_)
extern char mpi_fortran_argv_null_, mpi_fortran_argvs_null_;
extern MPI_Fint mpi_fortran_errcodes_ignore_;
#define VT_F_ARGV_NULL(p) ((void *)(p) == (void *)&mpi_fortran_argv_null_)
#define VT_F_ARGVS_NULL(p) ((void *)(p) == (void *)&mpi_fortran_argvs_null_)
#define VT_F_ERRCODES_IGNORE(p) ((void *)(p) == (void *)&mpi_fortran_errcodes_ignore_)
_Static_assert(sizeof(MPI_Fint) == sizeof(int), "MPI_Fint is not int");
_Static_assert(sizeof(MPI_Status) % sizeof(MPI_Fint) == 0, "MPI_Status is not MPI_STATUS_SIZE integers");

/* Arrays of requests and statuses: up to VT_F_SMALL on the stack, else malloc'ed. */
#define VT_F_SMALL 16

/* What Open MPI's binding answers when its own copy cannot be allocated. */
static void vt_f_nomem(MPI_Fint *ierror)
{
    if (ierror)
        *ierror = MPI_ERR_NO_MEM;
}

static inline MPI_Request *vt_f_reqs_in(const MPI_Fint *f, int n, MPI_Request *small)
{
    MPI_Request *c = n <= VT_F_SMALL ? small : malloc(sizeof(MPI_Request) * (size_t)(n > 0 ? n : 1));
    if (c)
        for (int i = 0; i < n; i++)
            c[i] = PMPI_Request_f2c(f[i]);
    return c;
}

/* (c, not small: called on success only; the failure path frees below) */
static inline void vt_f_reqs_out(MPI_Fint *f, int n, const MPI_Request *c)
{
    for (int i = 0; i < n; i++)
        f[i] = PMPI_Request_c2f(c[i]);
}

static inline MPI_Status *vt_f_statuses(int n, MPI_Status *small)
{
    return n <= VT_F_SMALL ? small : malloc(sizeof(MPI_Status) * (size_t)(n > 0 ? n : 1));
}

/* Arrays of datatypes and infos, element by element. */
static inline MPI_Datatype *vt_f_type_in(const MPI_Fint *f, int n, MPI_Datatype *small)
{
    MPI_Datatype *c = n <= VT_F_SMALL ? small : malloc(sizeof(MPI_Datatype) * (size_t)n);
    if (c)
        for (int i = 0; i < n; i++)
            c[i] = PMPI_Type_f2c(f[i]);
    return c;
}

static inline MPI_Info *vt_f_info_in(const MPI_Fint *f, int n, MPI_Info *small)
{
    MPI_Info *c = n <= VT_F_SMALL ? small : malloc(sizeof(MPI_Info) * (size_t)n);
    if (c)
        for (int i = 0; i < n; i++)
            c[i] = PMPI_Info_f2c(f[i]);
    return c;
}

/* How many datatypes an Alltoallw reads: the group's size, the remote one for an
 * intercommunicator; none for an invalid communicator (the C call reports it). */
static int vt_f_comm_peers(MPI_Comm comm)
{
    int inter = 0, n = 0;
    if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS)
        return 0;
    if ((inter ? PMPI_Comm_remote_size(comm, &n) : PMPI_Comm_size(comm, &n)) != MPI_SUCCESS)
        return 0;
    return n;
}

/* A neighbour collective's outdegree (in = 0) or indegree (in = 1); 0 without a topology. */
static int vt_f_degree(MPI_Comm comm, int in)
{
    int topo = MPI_UNDEFINED, n = 0, indeg = 0, outdeg = 0, weighted = 0, rank = 0;
    if (comm == MPI_COMM_NULL || PMPI_Topo_test(comm, &topo) != MPI_SUCCESS)
        return 0;
    if (topo == MPI_CART && PMPI_Cartdim_get(comm, &n) == MPI_SUCCESS)
        return 2 * n;
    if (topo == MPI_GRAPH && PMPI_Comm_rank(comm, &rank) == MPI_SUCCESS &&
        PMPI_Graph_neighbors_count(comm, rank, &n) == MPI_SUCCESS)
        return n;
    if (topo == MPI_DIST_GRAPH && PMPI_Dist_graph_neighbors_count(comm, &indeg, &outdeg, &weighted) == MPI_SUCCESS)
        return in ? indeg : outdeg;
    return 0;
}

/* A Fortran string as ompi_fortran_string_f2c makes it: leading and trailing blanks
 * dropped, NUL-terminated (NULL: no memory). */
static char *vt_f_str(const char *f, int len)
{
    while (len > 0 && *f == ' ') {
        f++;
        len--;
    }
    while (len > 0 && f[len - 1] == ' ')
        len--;
    char *c = malloc((size_t)len + 1);
    if (c) {
        if (len > 0)
            memcpy(c, f, (size_t)len);
        c[len] = '\0';
    }
    return c;
}

static void vt_f_argv_free(char **v)
{
    if (v) {
        for (char **p = v; *p; p++)
            free(*p);
        free(v);
    }
}

/* An argument vector from Fortran strings of len characters, advance bytes apart: n of
 * them, or (n < 0) up to the first blank one (ompi_fortran_argv_count_f2c and
 * _blank_f2c). *out stays NULL when there is none, as Open MPI's. 0, or MPI_ERR_NO_MEM. */
static int vt_f_argv(const char *f, int len, int advance, int n, char ***out)
{
    char **v = NULL;
    int argc = 0;
    for (; n < 0 || argc < n; f += advance) {
        char *s = vt_f_str(f, len);
        char **w = s && (n >= 0 || *s) ? realloc(v, sizeof(char *) * ((size_t)argc + 2)) : NULL;
        if (!w) {
            int blank = s && !*s;
            free(s);
            if (blank)
                break;
            vt_f_argv_free(v);
            return MPI_ERR_NO_MEM;
        }
        v = w;
        v[argc++] = s;
        v[argc] = NULL;
    }
    *out = v;
    return 0;
}

/* argv(count, *) of spawn_multiple: row i holds the arguments of command i, up to a
 * blank string (ompi_fortran_multiple_argvs_f2c). */
static int vt_f_argvs(const char *f, int count, int len, char ****out)
{
    char ***v = calloc((size_t)(count > 0 ? count : 1), sizeof(char **));
    if (!v)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < count; i++)
        if (vt_f_argv(f + (size_t)i * (size_t)len, len, len * count, -1, &v[i]) != 0) {
            for (int j = 0; j < i; j++)
                vt_f_argv_free(v[j]);
            free(v);
            return MPI_ERR_NO_MEM;
        }
    *out = v;
    return 0;
}

static void vt_f_argvs_free(char ***v, int count)
{
    if (v) {
        for (int i = 0; i < count; i++)
            vt_f_argv_free(v[i]);
        free(v);
    }
}
"""

# By hand: start and end (the layer's own MPI_Init path, so the trace starts at MPI_Init
# as for C), and the buffer calls (the transport enlarges the attached buffer).
HAND = r"""
static inline void vt_ompi_MPI_Init(MPI_Fint *ierror, const void *site)
{
    int argc = 0;
    char **argv = NULL;
    int64_t t = vt_init_begin();
    int rc = PMPI_Init(&argc, &argv);
    vt_init_end(VT_FN_MPI_Init, t, site, rc, MPI_THREAD_SINGLE);
    if (ierror)
        *ierror = rc;
}

static inline void vt_ompi_MPI_Init_thread(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierror,
                                           const void *site)
{
    int argc = 0, prov = MPI_THREAD_SINGLE;
    char **argv = NULL;
    int64_t t = vt_init_begin();
    int rc = PMPI_Init_thread(&argc, &argv, *required, &prov);
    vt_init_end(VT_FN_MPI_Init_thread, t, site, rc, prov);
    if (rc == MPI_SUCCESS)
        *provided = prov;
    if (ierror)
        *ierror = rc;
}

static inline void vt_ompi_MPI_Finalize(MPI_Fint *ierror, const void *site)
{
    vt_finalize_begin(VT_FN_MPI_Finalize, site);
    int rc = PMPI_Finalize();
    vt_finalize_end(rc);
    if (ierror)
        *ierror = rc;
}

static inline void vt_ompi_MPI_Buffer_attach(void *buffer, MPI_Fint *size, MPI_Fint *ierror, const void *site)
{
    int rc = vt_body_MPI_Buffer_attach(site, buffer, *size);
    if (ierror)
        *ierror = rc;
}

/* mpif.h: the buffer's address is not given back (Open MPI's binding does the same) */
static inline void vt_ompi_MPI_Buffer_detach(void *buffer, MPI_Fint *size, MPI_Fint *ierror, const void *site)
{
    void *addr;
    (void)buffer;
    int rc = vt_body_MPI_Buffer_detach(site, &addr, size);
    if (ierror)
        *ierror = rc;
}

/* mpi_f08: type(c_ptr), intent(out): set on success */
VT_EXPORT void mpi_buffer_detach_f08_(void **buffer_addr, MPI_Fint *size, MPI_Fint *ierror);
VT_EXPORT void mpi_buffer_detach_f08_(void **buffer_addr, MPI_Fint *size, MPI_Fint *ierror)
{
    void *addr;
    int rc = vt_body_MPI_Buffer_detach(__builtin_return_address(0), &addr, size);
    if (rc == MPI_SUCCESS)
        *buffer_addr = addr;
    if (ierror)
        *ierror = rc;
}
"""
HAND_PARMS = {
    "MPI_Init": ["MPI_Fint *ierror"],
    "MPI_Init_thread": ["MPI_Fint *required", "MPI_Fint *provided", "MPI_Fint *ierror"],
    "MPI_Finalize": ["MPI_Fint *ierror"],
    "MPI_Buffer_attach": ["void *buffer", "MPI_Fint *size", "MPI_Fint *ierror"],
    "MPI_Buffer_detach": ["void *buffer", "MPI_Fint *size", "MPI_Fint *ierror"],
}


def generate(funcs, table, listpath):
    """The text of src/mpi/wrappers_ompi.c and the number of functions."""
    out = ["/* Generated by maint/gen_wrappers.py (gen_ompi_fortran.py) from %s and %s: do not edit.\n"
           " * Open MPI's Fortran entry points (mpif.h, use mpi, use mpi_f08), whose bindings call\n"
           " * PMPI_ directly: each converts its arguments as Open MPI's binding does and calls the\n"
           " * body of the C entry point with its own return address as call site. */"
           % (os.path.basename(table), os.path.basename(listpath)),
           "#define VT_BODIES_ONLY", '#include "wrappers.c"', "", "#if defined(OPEN_MPI)", PROLOGUE, HAND]
    n = 0
    for f, f08 in parse_list(listpath, funcs):
        if f["name"] in HAND_PARMS:
            text = entries(f["name"], "void", HAND_PARMS[f["name"]], f08 and f["name"] != "MPI_Buffer_detach")
        else:
            try:
                body, ret, parms = shim(f)
            except Unsupported as e:
                sys.exit("%s: %s: no conversion for Open MPI's Fortran binding (%s); leave it out"
                         % (listpath, f["name"], e))
            text = body + entries(f["name"], ret, parms, f08)
        out.append("#ifndef VT_LACKS_%s\n%s#endif\n" % (f["name"], text))
        n += 1
    out += ["#endif /* OPEN_MPI */", ""]
    return "\n".join(out), n
