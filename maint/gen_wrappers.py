#!/usr/bin/env python3
"""Generate the MPI entry points of libvtrace from maint/mpi_functions.txt.

    python3 maint/gen_wrappers.py maint/mpi_functions.txt src/mpi [maint/f08_direct.txt]

Writes src/mpi/wrappers.c (one thin function per MPI call, around a static inline body
that takes the call site), src/mpi/vt_fn.h (function ids), src/mpi/vt_fn_table.c (names
and record layouts, doc/format.md) and src/mpi/wrappers_f08.c (the mpi_f08 entry points
listed in f08_direct.txt, by default next to the table: see maint/seed_f08.py). The semantics
live in the table (class and argument roles); the per-class code below only says which
hand-written handler of src/tracing/handlers.h a class calls and with which roles.
"""
import os
import re
import sys

# class -> (record layout, code before the call, code after the call)
# {ROLE} is replaced by the argument with that role, {ROLE?x} by x when the role is absent.
# A call argument with role STATUS is replaced by vt_stp when the class template defines it.
ST = "MPI_Status vt_st; MPI_Status *vt_stp = vt_status({STATUS}, &vt_st);"
CLASSES = {
    "send": ("cptb", "", "vt_leave_send(&c, rc, {COMM}, {DEST}, {TAG}, {SCOUNT}, {STYPE});"),
    "isend": ("cptbr", "", "vt_leave_isend(&c, rc, {COMM}, {DEST}, {TAG}, {SCOUNT}, {STYPE}, {REQUEST}, 0);"),
    "send_init": ("cptbr", "", "vt_leave_isend(&c, rc, {COMM}, {DEST}, {TAG}, {SCOUNT}, {STYPE}, {REQUEST}, 1);"),
    "recv": ("cPTB", ST, "vt_leave_recv(&c, rc, {COMM}, vt_stp);"),
    "irecv": ("cr", "", "vt_leave_irecv(&c, rc, {COMM}, {SOURCE}, {TAG}, {REQUEST}, 0);"),
    "recv_init": ("cr", "", "vt_leave_irecv(&c, rc, {COMM}, {SOURCE}, {TAG}, {REQUEST}, 1);"),
    "sendrecv": ("cptbPTB", ST, "vt_leave_sendrecv(&c, rc, {COMM}, {DEST}, {STAG}, {SCOUNT}, {STYPE}, vt_stp);"),
    "sendrecv_replace": ("cptbPTB", ST, "vt_leave_sendrecv(&c, rc, {COMM}, {DEST}, {STAG}, {SCOUNT}, {STYPE}, vt_stp);"),
    "isendrecv": ("cptbr", "", "vt_leave_isendrecv(&c, rc, {COMM}, {DEST}, {STAG}, {SCOUNT}, {STYPE}, {SOURCE}, {RTAG}, "
                  "{RCOUNT}, {RTYPE}, {REQUEST});"),
    "isendrecv_replace": ("cptbr", "", "vt_leave_isendrecv(&c, rc, {COMM}, {DEST}, {STAG}, {SCOUNT}, {STYPE}, {SOURCE}, "
                          "{RTAG}, {SCOUNT}, {STYPE}, {REQUEST});"),
    "probe": ("cPTB", ST, "vt_leave_probe(&c, rc, {COMM}, 1, vt_stp, NULL);"),
    "iprobe": ("cPTB", ST, "vt_leave_probe(&c, rc, {COMM}, *{FLAG}, vt_stp, NULL);"),
    "mprobe": ("cPTBm", ST, "vt_leave_probe(&c, rc, {COMM}, 1, vt_stp, {MESSAGE});"),
    "improbe": ("cPTBm", ST, "vt_leave_probe(&c, rc, {COMM}, *{FLAG}, vt_stp, {MESSAGE});"),
    "mrecv": ("mPTB", "MPI_Message vt_msg = *{MESSAGE}; " + ST, "vt_leave_mrecv(&c, rc, vt_msg, vt_stp, NULL);"),
    "imrecv": ("mr", "MPI_Message vt_msg = *{MESSAGE};", "vt_leave_mrecv(&c, rc, vt_msg, NULL, {REQUEST});"),
    "wait": ("k", "MPI_Status vt_st; MPI_Status *vt_stp = vt_pre_reqs(&c, 1, {REQUEST}, {STATUS}, &vt_st);",
             "vt_post_all(&c, rc, 1);"),
    "test": ("k", "MPI_Status vt_st; MPI_Status *vt_stp = vt_pre_reqs(&c, 1, {REQUEST}, {STATUS}, &vt_st);",
             "vt_post_all(&c, rc, *{FLAG});"),
    "waitall": ("k", "MPI_Status *vt_stp = vt_pre_reqs(&c, {NREQ}, {REQUESTS}, {STATUSES}, NULL);",
                "vt_post_all(&c, rc, 1);", "STATUSES"),
    "testall": ("k", "MPI_Status *vt_stp = vt_pre_reqs(&c, {NREQ}, {REQUESTS}, {STATUSES}, NULL);",
                "vt_post_all(&c, rc, *{FLAG});", "STATUSES"),
    "waitany": ("k", "MPI_Status vt_st; MPI_Status *vt_stp = vt_pre_reqs(&c, {NREQ}, {REQUESTS}, {STATUS}, &vt_st);",
                "vt_post_any(&c, rc, *{INDEX}, 1, vt_stp);"),
    "testany": ("k", "MPI_Status vt_st; MPI_Status *vt_stp = vt_pre_reqs(&c, {NREQ}, {REQUESTS}, {STATUS}, &vt_st);",
                "vt_post_any(&c, rc, *{INDEX}, *{FLAG}, vt_stp);"),
    "waitsome": ("k", "MPI_Status *vt_stp = vt_pre_reqs(&c, {NREQ}, {REQUESTS}, {STATUSES}, NULL);",
                 "vt_post_some(&c, rc, *{OUTCOUNT}, {INDICES});", "STATUSES"),
    "testsome": ("k", "MPI_Status *vt_stp = vt_pre_reqs(&c, {NREQ}, {REQUESTS}, {STATUSES}, NULL);",
                 "vt_post_some(&c, rc, *{OUTCOUNT}, {INDICES});", "STATUSES"),
    "start": ("R", "", "vt_leave_start(&c, rc, 1, {REQUEST});"),
    "startall": ("R", "", "vt_leave_start(&c, rc, {NREQ}, {REQUESTS});"),
    "request_free": ("rk", "vt_pre_free(&c, *{REQUEST});", "vt_leave_request_free(&c, rc);"),
    "cancel": ("r", "", "vt_leave_cancel(&c, rc, *{REQUEST});"),
    "request_get_status": ("r", ST, "vt_leave_get_status(&c, rc, {REQUEST}, *{FLAG});"),
    "coll": ("coqbB", "", "vt_leave_coll(&c, rc, {KIND}, {COMM}, {ROOT?VT_NO_ROOT}, &vt_ca, NULL, 0);"),
    "icoll": ("coqbBr", "", "vt_leave_coll(&c, rc, {KIND}, {COMM}, {ROOT?VT_NO_ROOT}, &vt_ca, {REQUEST}, 0);"),
    "coll_init": ("coqbBr", "", "vt_leave_coll(&c, rc, {KIND}, {COMM}, {ROOT?VT_NO_ROOT}, &vt_ca, {REQUEST}, 1);"),
    "comm_new": ("cn", "", "vt_leave_comm_new(&c, rc, {COMM}, {NEWCOMM}, VT_NEW_COLLECTIVE, 0);"),
    "comm_new_group": ("cn", "", "vt_leave_comm_new(&c, rc, {COMM}, {NEWCOMM}, VT_NEW_GROUP, {TAG});"),
    "comm_idup": ("cnr", "", "vt_leave_comm_idup(&c, rc, {COMM}, {NEWCOMM}, {REQUEST});"),
    # (the communicator looked up before the call: after it the handle is gone, and one
    # never seen, such as MPI_Comm_get_parent's, can only be asked for its group now)
    "comm_free": ("c", "struct vt_comm *vt_cm = vt_enter_comm_free(*{COMM});", "vt_leave_comm_free(&c, rc, vt_cm);"),
    "io": ("fOb", ST, "vt_leave_io(&c, rc, {FILE}, {OFFSET?-1}, {XCOUNT}, {XTYPE}, vt_stp, NULL);"),
    "io_nb": ("fObr", "", "vt_leave_io(&c, rc, {FILE}, {OFFSET?-1}, {XCOUNT}, {XTYPE}, NULL, {REQUEST});"),
    "io_begin": ("fOb", "", "vt_leave_io(&c, rc, {FILE}, {OFFSET?-1}, {XCOUNT}, {XTYPE}, NULL, NULL);"),
    "io_end": ("fOb", ST, "vt_leave_io(&c, rc, {FILE}, -1, 0, MPI_BYTE, vt_stp, NULL);"),
    "file_open": ("cf", "", "vt_leave_file_open(&c, rc, {COMM}, {FILENAME}, {FILE});"),
    "file_close": ("f", "MPI_File vt_fh = *{FILE};", "vt_leave_file_close(&c, rc, vt_fh);"),
    "io_local": ("f", "", "vt_leave_file_local(&c, rc, {FILE});"),
    "rma": ("pb", "", "vt_leave_rma(&c, rc, {DEST}, {SCOUNT?1}, {STYPE});"),
    "local": ("", "", "vt_leave_plain(&c, rc);"),
    # recorded before the call, which ends the run: the trace is ended there (crash.h)
    "abort": ("", "vt_leave_abort(&c, {CODE});", ""),
}

# The piggyback transport (src/mpid/piggyback.h): with vt__pb set, these classes call
# vt_pb_* in place of the PMPI_ call ({PBMODE}: the send mode the name says).
PB_CALLS = {
    "send": "vt_pb_send(&c, {FNID}, {PBMODE}, {SBUF}, {SCOUNT}, {STYPE}, {DEST}, {TAG}, {COMM})",
    "isend": "vt_pb_isend(&c, {PBMODE}, {SBUF}, {SCOUNT}, {STYPE}, {DEST}, {TAG}, {COMM}, {REQUEST})",
    "send_init": "vt_pb_send_init(&c, {PBMODE}, {SBUF}, {SCOUNT}, {STYPE}, {DEST}, {TAG}, {COMM}, {REQUEST})",
    "recv": "vt_pb_recv(&c, {RBUF}, {RCOUNT}, {RTYPE}, {SOURCE}, {TAG}, {COMM}, vt_stp)",
    "irecv": "vt_pb_irecv(&c, {RBUF}, {RCOUNT}, {RTYPE}, {SOURCE}, {TAG}, {COMM}, {REQUEST})",
    "recv_init": "vt_pb_recv_init(&c, {RBUF}, {RCOUNT}, {RTYPE}, {SOURCE}, {TAG}, {COMM}, {REQUEST})",
    "sendrecv": "vt_pb_sendrecv(&c, {SBUF}, {SCOUNT}, {STYPE}, {DEST}, {STAG}, {RBUF}, {RCOUNT}, {RTYPE}, {SOURCE}, "
                "{RTAG}, {COMM}, vt_stp)",
    "sendrecv_replace": "vt_pb_sendrecv_replace(&c, {SBUF}, {SCOUNT}, {STYPE}, {DEST}, {STAG}, {SOURCE}, {RTAG}, "
                        "{COMM}, vt_stp)",
    "isendrecv": "vt_pb_isendrecv(&c, {SBUF}, {SCOUNT}, {STYPE}, {DEST}, {STAG}, {RBUF}, {RCOUNT}, {RTYPE}, "
                 "{SOURCE}, {RTAG}, {COMM}, {REQUEST})",
    "isendrecv_replace": "vt_pb_isendrecv_replace(&c, {SBUF}, {SCOUNT}, {STYPE}, {DEST}, {STAG}, {SOURCE}, {RTAG}, "
                         "{COMM}, {REQUEST})",
    "mrecv": "vt_pb_mrecv(&c, {RBUF}, {RCOUNT}, {RTYPE}, {MESSAGE}, vt_stp)",
    "imrecv": "vt_pb_imrecv(&c, {RBUF}, {RCOUNT}, {RTYPE}, {MESSAGE}, {REQUEST})",
    "request_free": "vt_pb_request_free({REQUEST})",
}
# Functions whose bodies inline their handler (tracing/handlers_p2p.h): the blocking
# ping-pong's two calls, where a second call's frame and arguments cost 30-40 instructions
# a call (issue 18). Others call the handler: inlining it everywhere would grow the library.
# They pass their function id as a constant (the record's code, the profile's entry).
INLINE_LEAVE = {"MPI_Send": ("vt_leave_send(&c, ", "vt_leave_inline_send(&c, VT_FN_MPI_Send, "),
                "MPI_Recv": ("vt_leave_recv(&c, ", "vt_leave_inline_recv(&c, VT_FN_MPI_Recv, ")}
# Code of the transport before the PMPI_ call or after it (before the handler).
PB_PRE = {
    "start": "if (VT_UNLIKELY(vt__pb)) vt_pb_start(&c, 1, {REQUEST});",
    "startall": "if (VT_UNLIKELY(vt__pb)) vt_pb_start(&c, {NREQ}, {REQUESTS});",
}
PB_POST = {
    "probe": "if (VT_UNLIKELY(vt__pb)) vt_pb_probed(rc, 1, vt_stp);",
    "iprobe": "if (VT_UNLIKELY(vt__pb)) vt_pb_probed(rc, *{FLAG}, vt_stp);",
    "mprobe": "if (VT_UNLIKELY(vt__pb)) vt_pb_probed(rc, 1, vt_stp);",
    "improbe": "if (VT_UNLIKELY(vt__pb)) vt_pb_probed(rc, *{FLAG}, vt_stp);",
    "request_get_status": "if (VT_UNLIKELY(vt__pb)) vt_pb_peeked({REQUEST}, rc, *{FLAG}, vt_stp);",
}


def pb_mode(name):
    base = re.sub(r"^MPI_I?", "", name).lower()   # MPI_Issend -> ssend
    for prefix, mode in (("ssend", "VT_PB_SYNC"), ("bsend", "VT_PB_BUFFERED"), ("rsend", "VT_PB_READY")):
        if base.startswith(prefix):
            return mode
    return "VT_PB_STANDARD"


def pb_call(f, plain_call):
    """The PMPI_ call of f's body, or the transport's in its place when vt__pb is set."""
    cls, name = f["cls"], f["name"]
    if cls == "buffer_attach":
        return "VT_UNLIKELY(vt__pb) ? vt_pb_buffer_attach(%s) : %s" % (
            ", ".join(a["name"] for a in f["args"]), plain_call)
    if cls == "buffer_detach":
        # always ours: a buffer attached while the transport ran is ours to give back
        return "vt_pb_buffer_detach%s(%s)" % ("_c" if name.endswith("_c") else "",
                                               ", ".join(a["name"] for a in f["args"]))
    if cls not in PB_CALLS:
        return plain_call
    return "VT_UNLIKELY(vt__pb) ? %s : %s" % (expand(PB_CALLS[cls].replace("{PBMODE}", pb_mode(name)).replace("{FNID}", "VT_FN_" + name), f), plain_call)
COLL_KINDS = ["Barrier", "Bcast", "Gather", "Gatherv", "Scatter", "Scatterv", "Allgather", "Allgatherv",
              "Alltoall", "Alltoallv", "Alltoallw", "Reduce", "Allreduce", "Reduce_scatter",
              "Reduce_scatter_block", "Scan", "Exscan", "Neighbor_allgather", "Neighbor_allgatherv",
              "Neighbor_alltoall", "Neighbor_alltoallv", "Neighbor_alltoallw"]


def parse_table(path):
    funcs = []
    for lineno, line in enumerate(open(path), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = [p.strip() for p in line.split("|")]
        if len(parts) != 4:
            sys.exit("%s:%d: expected 'name | class | return | args'" % (path, lineno))
        name, cls, ret, argtext = parts
        args = []
        for a in filter(None, (x.strip() for x in argtext.split(";"))):
            decl, _, role = a.partition(":")
            m = re.match(r"(.*?)(\w+)((\[[^\]]*\])*)$", decl.strip())
            if not m:
                sys.exit("%s:%d: cannot read argument %r" % (path, lineno, a))
            args.append(dict(type=m.group(1).strip(), name=m.group(2), arr=m.group(3), role=role or None))
        if cls not in CLASSES and cls not in ("init", "init_thread", "finalize", "counted", "buffer_attach",
                                              "buffer_detach"):
            sys.exit("%s:%d: unknown class %r" % (path, lineno, cls))
        funcs.append(dict(name=name, cls=cls, ret=ret, args=args))
    return funcs


def coll_kind(name):
    base = re.sub(r"^MPI_", "", name)
    base = re.sub(r"(_init)?(_c)?$", "", base)
    for k in COLL_KINDS:
        if base == k or base == "I" + k[0].lower() + k[1:]:
            return "VT_COLL_" + k.upper()
    sys.exit("no collective kind for " + name)


def expand(tmpl, f):
    roles = {a["role"]: a for a in f["args"] if a["role"]}
    name = f["name"]

    def sub(m):
        role, _, default = m.group(1).partition("?")
        if role == "KIND":
            return coll_kind(name)
        if role in ("XCOUNT", "XTYPE"):
            role = ("S" if "write" in name else "R") + role[1:]
        if role in roles:
            return roles[role]["name"]
        if default:
            return default
        sys.exit("%s (%s): the table gives no argument with role %s" % (name, f["cls"], role))
    return re.sub(r"\{([A-Z]+(\?[^}]*)?)\}", sub, tmpl)


def collargs(f):
    """vt_collargs initializer for collectives: counts, count arrays and types by role."""
    roles = {a["role"]: a for a in f["args"] if a["role"]}
    fields = []
    for side in "SR":
        if side + "BUF" in roles:
            fields.append(".%sbuf = %s" % (side.lower(), roles[side + "BUF"]["name"]))
        if side + "COUNT" in roles:
            fields.append(".%scount = %s" % (side.lower(), roles[side + "COUNT"]["name"]))
        if side + "COUNTS" in roles:
            a = roles[side + "COUNTS"]
            suffix = "_c" if "MPI_Count" in a["type"] else "_i"
            fields.append(".%scounts%s = %s" % (side.lower(), suffix, a["name"]))
        if side + "TYPE" in roles:
            fields.append(".%stype = %s" % (side.lower(), roles[side + "TYPE"]["name"]))
        if side + "TYPES" in roles:
            fields.append(".%stypes = %s" % (side.lower(), roles[side + "TYPES"]["name"]))
    return "vt_collargs vt_ca = { %s };" % ", ".join(fields) if fields else "vt_collargs vt_ca = { 0 };"


def params(f):
    if not f["args"]:
        return "void"
    return ", ".join("%s %s%s" % (a["type"], a["name"], a["arr"]) if not a["type"].endswith("*")
                     else "%s%s%s" % (a["type"], a["name"], a["arr"]) for a in f["args"])


def call_args(f, status_sub):
    out = []
    for a in f["args"]:
        if status_sub and a["role"] == status_sub:
            out.append("vt_stp")
        else:
            out.append(a["name"])
    return ", ".join(out)


def body(f):
    """The static inline body of one wrapped function: record around the PMPI_ call.
    vt_site is the call site, taken by the caller (the C entry point, or an mpi_f08 entry
    point of wrappers_f08.c), so inlining the body costs nothing."""
    name, cls, ret = f["name"], f["cls"], f["ret"]
    pname = "P" + name
    plain = call_args(f, None)
    fn = "VT_FN_" + name
    head = "VT_BODY %s vt_body_%s(%s)" % (ret, name, ", ".join(["const void *vt_site"] + (
        [params(f)] if f["args"] else [])))
    if cls == "counted":
        return "%s\n{\n    (void)vt_site;\n    vt_count(%s);\n    return %s(%s);\n}\n" % (head, fn, pname, plain)
    if cls in ("buffer_attach", "buffer_detach"):
        # counted in the profile, not an event; the transport enlarges the buffer
        return "%s\n{\n    (void)vt_site;\n    vt_count(%s);\n    return %s;\n}\n" % (
            head, fn, pb_call(f, "%s(%s)" % (pname, plain)))
    spec = CLASSES[cls]
    _, pre, post = spec[:3]
    status_role = spec[3] if len(spec) > 3 else ("STATUS" if "vt_stp" in pre else None)
    if cls in ("wait", "test"):
        status_role = "STATUS"
    if cls in ("waitany", "testany"):
        status_role = "STATUS"
    pre = expand(pre, f)
    post = expand(post, f)
    if name in INLINE_LEAVE:
        post = post.replace(*INLINE_LEAVE[name])
    lines = [head, "{", "    vt_call c;",
             "    if (!VT_ENTER(&c, %s, vt_site))" % fn, "        return %s(%s);" % (pname, plain)]
    if cls in ("coll", "icoll", "coll_init"):
        lines.append("    " + collargs(f))
    if pre:
        lines.append("    " + pre)
    if cls in PB_PRE:
        lines.append("    " + expand(PB_PRE[cls], f))
    lines.append("    %s rc = %s;" % (ret, pb_call(f, "%s(%s)" % (pname, call_args(f, status_role)))))
    if cls in PB_POST:
        lines.append("    " + expand(PB_POST[cls], f))
    lines.append("    " + post)
    lines.append("    return rc;")
    lines.append("}")
    return "\n".join(lines) + "\n"


def guarded(f, text):
    """text only where mpi.h declares f: configure writes VT_LACKS_<name> for the functions
    of the table that the MPI library lacks (src/vt_mpi_lacks.h; Open MPI 4.1 has no _c
    functions, no persistent collectives, no MPI_Isendrecv)."""
    return "#ifndef VT_LACKS_%s\n%s#endif\n" % (f["name"], text)


def entry(f):
    """The exported C entry point: the body, with the caller of MPI_X as call site."""
    name, cls, ret = f["name"], f["cls"], f["ret"]
    pname = "P" + name
    plain = call_args(f, None)
    fn = "VT_FN_" + name
    if cls in ("init", "init_thread"):
        provided = "*provided" if cls == "init_thread" else "MPI_THREAD_SINGLE"
        return ("VT_EXPORT %s %s(%s)\n{\n    int64_t vt_t = vt_init_begin();\n    int rc = %s(%s);\n"
                "    vt_init_end(%s, vt_t, VT_SITE(), rc, %s);\n    return rc;\n}\n"
                % (ret, name, params(f), pname, plain, fn, provided))
    if cls == "finalize":
        return ("VT_EXPORT int %s(void)\n{\n    vt_finalize_begin(%s, VT_SITE());\n    int rc = %s();\n"
                "    vt_finalize_end(rc);\n    return rc;\n}\n" % (name, fn, pname))
    return ("VT_EXPORT %s %s(%s)\n{\n    return vt_body_%s(%s);\n}\n"
            % (ret, name, params(f), name, ", ".join(["VT_SITE()"] + ([plain] if f["args"] else []))))


# ------------------------------------------------------------------ mpi_f08 entry points
# MPICH 4.0's mpi_f08 module calls PMPI_ directly for the routines without a choice buffer
# (mpi_wait_f08_ -> PMPI_Wait), so the C entry points above never see those calls.
# maint/f08_direct.txt (written by maint/seed_f08.py) lists them; for each line we export a
# function of the same name that converts the Fortran arguments as MPICH's binding does and
# calls the same body as the C entry point. The conversions were checked against the
# disassembly of libmpichfort.so.12 (MPICH 4.0.2), see f08_arg():
#   - every argument is passed by reference, in the C order, then the optional ierror
#     (NULL when absent); no hidden arguments (no strings among the shimmed routines);
#   - handles (type(MPI_Comm) ...) are one MPI_Fint: MPI_X_f2c / MPI_X_c2f around the call
#     (identity in MPICH, except MPI_File: ROMIO's MPI_File_f2c, which MPICH calls too);
#   - type(MPI_Status) has the layout of MPI_Status (asserted in wrappers_f08.c): MPICH
#     passes it through, and MPI_F08_STATUS(ES)_IGNORE become MPI_STATUS(ES)_IGNORE;
#   - logical out (flag): a C int, stored back as 0/1; logical in (reorder, high, periods,
#     remain_dims) and integer arrays: passed as they are, as MPICH does;
#   - indices out (Waitany, Testany, Waitsome, Testsome): as MPICH's own binding returns
#     them: 0-based up to MPICH 4.0 (pmodels/mpich#6270), 1-based from 4.1 (libmpichfort
#     4.2.1 adds 1 after PMPI_Waitany); MPI_UNDEFINED stays MPI_UNDEFINED (4.1 to 4.2.1's
#     binding adds 1 to it too, pmodels/mpich#6989, an MPICH bug not reproduced).
F08_HANDLES = {"MPI_Comm": "Comm", "MPI_Group": "Group", "MPI_Info": "Info", "MPI_Request": "Request",
               "MPI_Message": "Message", "MPI_File": "File", "MPI_Win": "Win"}


def parse_f08(path, funcs):
    """maint/f08_direct.txt: 'symbol MPI_Name' lines -> [(symbol, table entry)]."""
    byname = {f["name"]: f for f in funcs}
    out = []
    if not os.path.exists(path):
        return out
    for lineno, line in enumerate(open(path), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        if len(parts) != 2 or not re.fullmatch(r"mpi_\w+_f08(_large)?_", parts[0]):
            sys.exit("%s:%d: expected 'mpi_name_f08_ MPI_Name'" % (path, lineno))
        sym, cname = parts
        f = byname.get(cname)
        if f is None:
            sys.exit("%s:%d: %s is not in the function table" % (path, lineno, cname))
        if f["cls"] in ("init", "init_thread", "finalize"):
            sys.exit("%s:%d: %s: start and end are handled by the lazy start and the "
                     "MPI_COMM_SELF finalize hook, not by a shim" % (path, lineno, cname))
        out.append((sym, f))
    return out


def f08_arg(f, a):
    """One C argument -> (Fortran-side parameter, declarations before the call, the C
    argument, statements after the call)."""
    t, n, arr, role = a["type"], a["name"], a["arr"], a["role"]
    base = t.replace("const", "").replace("*", "").strip()
    ptr = t.endswith("*")
    roles = {x["role"]: x for x in f["args"] if x["role"]}
    where = "%s: argument %s (%s%s)" % (f["name"], n, t, arr)
    if base == "MPI_Status":
        if role == "STATUS" and ptr and not arr:
            return "MPI_F08_status *%s" % n, [], "vt_f08_status(%s)" % n, []
        if role == "STATUSES" and arr and not ptr:
            return "MPI_F08_status *%s" % n, [], "vt_f08_statuses(%s)" % n, []
    elif base in F08_HANDLES:
        h = F08_HANDLES[base]
        if not ptr and not arr:
            return "MPI_Fint *%s" % n, [], "%s_f2c(*%s)" % ("MPI_" + h, n), []
        if ptr and not arr:
            # in, out or both: converted in and back like MPICH's MPI_File_close binding;
            # an output the call does not set comes back unchanged.
            return ("MPI_Fint *%s" % n, ["%s %s_c = MPI_%s_f2c(*%s);" % (base, n, h, n)], "&%s_c" % n,
                    ["*%s = MPI_%s_c2f(%s_c);" % (n, h, n)])
        if arr and not ptr and base == "MPI_Request" and role == "REQUESTS" and "NREQ" in roles:
            # an array of handles: copied in and out (a stack array for up to VT_F08_SMALL)
            # (the count is read once, as MPICH does)
            return ("MPI_Fint *%s" % n,
                    ["const int %s_n = *%s;" % (n, roles["NREQ"]["name"]),
                     "MPI_Request %s_small[VT_F08_SMALL];" % n,
                     "MPI_Request *%s_c = vt_f08_reqs_in(%s, %s_n, %s_small);" % (n, n, n, n)],
                    "%s_c" % n, ["vt_f08_reqs_out(%s, %s_n, %s_c, %s_small);" % (n, n, n, n)])
    elif base == "int":
        if not ptr and not arr:      # integer, or logical in (passed as it is, as MPICH does)
            return "MPI_Fint *%s" % n, [], "*%s" % n, []
        if ptr and not arr and role == "INDEX":
            return "MPI_Fint *%s" % n, [], n, ["vt_f08_index_out(%s);" % n]
        if arr and not ptr and role == "INDICES" and "OUTCOUNT" in roles:
            return "MPI_Fint *%s" % n, [], n, ["vt_f08_indices_out(%s, *%s);" % (n, roles["OUTCOUNT"]["name"])]
        if ptr and not arr and role == "FLAG":   # logical out
            return "MPI_Fint *%s" % n, ["int %s_c = 0;" % n], "&%s_c" % n, ["*%s = %s_c != 0;" % (n, n)]
        if ptr != bool(arr):         # integer out, integer or logical array: as it is
            return "MPI_Fint *%s" % n, [], n, []
    elif base == "MPI_Offset" and not ptr and not arr:
        return "MPI_Offset *%s" % n, [], "*%s" % n, []
    elif base == "MPI_Count" and ptr and not arr:    # integer(MPI_COUNT_KIND) out: as it is
        return "MPI_Count *%s" % n, [], n, []
    elif base == "void" and ptr and not arr and f["cls"] == "buffer_detach":
        # type(c_ptr), intent(out), by reference: the address of the C pointer
        return "void *%s" % n, [], n, []
    sys.exit("%s: no mpi_f08 conversion for this argument kind; leave the function out of "
             "f08_direct.txt or teach f08_arg" % where)


def f08_shim(sym, f):
    name, ret = f["name"], f["ret"]
    parms, pre, args, post = [], [], [], []
    for a in f["args"]:
        p, d, c, o = f08_arg(f, a)
        parms.append(p)
        pre += d
        args.append(c)
        post += o
    call = "vt_body_%s(%s)" % (name, ", ".join(["__builtin_return_address(0)"] + args))
    if f["cls"] == "counted" and ret == "double" and not f["args"]:
        return "VT_EXPORT double %s(void);\nVT_EXPORT double %s(void)\n{\n    return %s;\n}\n" % (sym, sym, call)
    if ret != "int":
        sys.exit("%s: an mpi_f08 shim needs an int return" % name)
    parms.append("MPI_Fint *ierror")
    lines = ["VT_EXPORT void %s(%s);" % (sym, ", ".join(parms)),   # for -Wmissing-prototypes
             "VT_EXPORT void %s(%s)" % (sym, ", ".join(parms)), "{"]
    lines += ["    " + d for d in pre]
    lines.append("    int rc = %s;" % call)
    lines += ["    " + o for o in post]
    lines += ["    if (ierror)", "        *ierror = rc;", "}"]
    return "\n".join(lines) + "\n"


F08_PROLOGUE = """\
#include <stddef.h>
#include <stdlib.h>

/* type(MPI_Status) is passed to C as it is (MPICH's binding does the same). */
_Static_assert(sizeof(MPI_F08_status) == sizeof(MPI_Status), "MPI_F08_status is not MPI_Status");
_Static_assert(offsetof(MPI_F08_status, count_lo) == offsetof(MPI_Status, count_lo), "status layout");
_Static_assert(offsetof(MPI_F08_status, count_hi_and_cancelled) == offsetof(MPI_Status, count_hi_and_cancelled),
               "status layout");
_Static_assert(offsetof(MPI_F08_status, MPI_SOURCE) == offsetof(MPI_Status, MPI_SOURCE), "status layout");
_Static_assert(offsetof(MPI_F08_status, MPI_TAG) == offsetof(MPI_Status, MPI_TAG), "status layout");
_Static_assert(offsetof(MPI_F08_status, MPI_ERROR) == offsetof(MPI_Status, MPI_ERROR), "status layout");
/* integer and logical arguments and arrays are passed as they are */
_Static_assert(sizeof(MPI_Fint) == sizeof(int), "MPI_Fint is not int");

/* mpi_f08's MPI_STATUS_IGNORE and MPI_STATUSES_IGNORE are the objects these point to
 * (the addresses MPICH's binding compares with). MPICH 4.0 defines the two pointers in
 * libmpi, MPICH 4.1 and later only in libmpifort, which a C program does not load: weak
 * references keep libvtrace.so loadable without it (their address is then null). Only
 * Fortran code reaches these shims, and it has libmpifort loaded. */
#pragma weak MPI_F08_STATUS_IGNORE
#pragma weak MPI_F08_STATUSES_IGNORE
static inline MPI_Status *vt_f08_status(MPI_F08_status *s)
{
    return &MPI_F08_STATUS_IGNORE && s == MPI_F08_STATUS_IGNORE ? MPI_STATUS_IGNORE : (MPI_Status *)s;
}

static inline MPI_Status *vt_f08_statuses(MPI_F08_status *s)
{
    return &MPI_F08_STATUSES_IGNORE && s == MPI_F08_STATUSES_IGNORE ? MPI_STATUSES_IGNORE : (MPI_Status *)s;
}

/* The index base of MPICH's own binding (maint/gen_wrappers.py, f08_arg): libvtrace is
 * built against the MPICH it runs with (one build per MPI). */
#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION >= 40100000
#define VT_F08_INDEX_BASE 1
#else
#define VT_F08_INDEX_BASE 0
#endif

static inline void vt_f08_index_out(MPI_Fint *index)
{
    if (*index != MPI_UNDEFINED)
        *index += VT_F08_INDEX_BASE;
}

static inline void vt_f08_indices_out(MPI_Fint *indices, int outcount)
{
    for (int i = 0; outcount != MPI_UNDEFINED && i < outcount; i++)
        indices[i] += VT_F08_INDEX_BASE;
}

/* Arrays of requests are copied in and out, as MPICH does; up to VT_F08_SMALL on the
 * stack. Should the allocation of a larger copy fail, the call works on the Fortran array
 * itself, which is the same thing in MPICH (MPI_Request is MPI_Fint and f2c the identity). */
#define VT_F08_SMALL 16
_Static_assert(sizeof(MPI_Request) == sizeof(MPI_Fint), "MPI_Request is not MPI_Fint");

static inline MPI_Request *vt_f08_reqs_in(MPI_Fint *f, int n, MPI_Request *small)
{
    MPI_Request *c = n <= VT_F08_SMALL ? small : malloc(sizeof(MPI_Request) * (size_t)n);
    if (!c)
        return (MPI_Request *)f;
    for (int i = 0; i < n; i++)
        c[i] = MPI_Request_f2c(f[i]);
    return c;
}

static inline void vt_f08_reqs_out(MPI_Fint *f, int n, MPI_Request *c, MPI_Request *small)
{
    if (c == (MPI_Request *)f)
        return;
    for (int i = 0; i < n; i++)
        f[i] = MPI_Request_c2f(c[i]);
    if (c != small)
        free(c);
}
"""


# Frequent classes first: function ids below 112 encode in one byte (record code 16 + id).
HOT = ["send", "recv", "isend", "irecv", "wait", "waitall", "test", "testall", "waitany", "testany",
       "waitsome", "testsome", "sendrecv", "sendrecv_replace", "iprobe", "probe", "start", "startall",
       "coll", "icoll"]


def hot_rank(f):
    base = f["name"].endswith("_c")
    return (HOT.index(f["cls"]) if f["cls"] in HOT else len(HOT), base, f["name"])


def main():
    table, outdir = sys.argv[1], sys.argv[2]
    funcs = sorted(parse_table(table), key=hot_rank)
    hdr = ["/* Generated by maint/gen_wrappers.py from %s: do not edit. */" % os.path.basename(table),
           "#ifndef VT_FN_H", "#define VT_FN_H", "", "enum vt_fn {"]
    for i, f in enumerate(funcs):
        hdr.append("    VT_FN_%s = %d," % (f["name"], i))
    hdr += ["    VT_NFN = %d" % len(funcs), "};", "",
            "extern const char *const vt_fn_name[VT_NFN];",
            "extern const char *const vt_fn_layout[VT_NFN];", "", "#endif", ""]
    tab = ["/* Generated by maint/gen_wrappers.py from %s: do not edit. */" % os.path.basename(table),
           '#include "vt_fn.h"', "", "const char *const vt_fn_name[VT_NFN] = {"]
    tab += ['    "%s",' % f["name"] for f in funcs]
    tab += ["};", "", "const char *const vt_fn_layout[VT_NFN] = {"]
    for f in funcs:
        lay = CLASSES[f["cls"]][0] if f["cls"] in CLASSES else ""
        tab.append('    "%s", /* %s */' % (lay, f["name"]))
    tab += ["};", ""]
    wr = ["/* Generated by maint/gen_wrappers.py from %s: do not edit.\n"
          " * Each function records through the handlers of src/tracing/handlers.h.\n"
          " * First the bodies, one per function, static inline and taking the call site; then the\n"
          " * C entry points, each calling its body with its own return address. wrappers_f08.c\n"
          " * includes this file with VT_BODIES_ONLY defined, to call the same bodies from the\n"
          " * mpi_f08 entry points. */" % os.path.basename(table),
          '#include "vt_mpi_lacks.h"', '#include "tracing/handlers.h"', '#include "tracing/handlers_p2p.h"',
          '#include "mpid/pb_fast.h"', "",
          "/* Always inlined: the C hot path must cost what it cost before there were bodies. */",
          "#define VT_BODY static inline __attribute__((always_inline))", ""]
    wr += [guarded(f, body(f)) for f in funcs if f["cls"] not in ("init", "init_thread", "finalize")]
    wr += ["#ifndef VT_BODIES_ONLY", ""]
    wr += [guarded(f, entry(f)) for f in funcs]
    wr += ["#endif /* VT_BODIES_ONLY */", ""]
    f08list = sys.argv[3] if len(sys.argv) > 3 else os.path.join(os.path.dirname(table), "f08_direct.txt")
    shims = parse_f08(f08list, funcs)
    f8 = ["/* Generated by maint/gen_wrappers.py from %s and %s: do not edit.\n"
          " * The mpi_f08 entry points that MPICH 4.0 routes to PMPI_ directly (so that the C entry\n"
          " * points never see them): each converts its Fortran arguments as MPICH's binding does\n"
          " * (maint/gen_wrappers.py, f08_arg), calls the body of the C entry point with its own\n"
          " * return address as call site (the user's Fortran code), and converts the results\n"
          " * back. When the layer is not recording, the body calls the PMPI_ function, which is\n"
          " * what MPICH's binding does. */" % (os.path.basename(table), os.path.basename(f08list)),
          "#define VT_BODIES_ONLY", '#include "wrappers.c"', "",
          "/* MPICH's binding only: the shims follow libmpichfort's argument conventions and",
          " * status layout. Open MPI's Fortran entry points are in wrappers_ompi.c. */", "#if defined(MPICH)", F08_PROLOGUE]
    f8 += [guarded(f, f08_shim(sym, f)) for sym, f in shims]
    f8 += ["#endif /* MPICH */", ""]
    # Open MPI's Fortran entry points (maint/gen_ompi_fortran.py), listed beside the table
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import gen_ompi_fortran
    olist = os.path.join(os.path.dirname(table), "ompi_fortran.txt")
    otext, nompi = gen_ompi_fortran.generate(funcs, table, olist)
    # wrappers.c first: make's rule names it, the other four are never older
    for path, lines in (("wrappers.c", wr), ("vt_fn.h", hdr), ("vt_fn_table.c", tab), ("wrappers_f08.c", f8),
                        ("wrappers_ompi.c", [otext])):
        tmp = os.path.join(outdir, path + ".tmp")
        with open(tmp, "w") as fh:
            fh.write("\n".join(lines))
        os.replace(tmp, os.path.join(outdir, path))
    print("gen_wrappers: %d functions, %d mpi_f08 entry points, %d Open MPI Fortran functions -> %s"
          % (len(funcs), len(shims), nompi, outdir))


if __name__ == "__main__":
    main()
