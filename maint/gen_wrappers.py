#!/usr/bin/env python3
"""Generate the MPI entry points of libvtrace from maint/mpi_functions.txt.

    python3 maint/gen_wrappers.py maint/mpi_functions.txt src/mpi

Writes src/mpi/wrappers.c (one thin function per MPI call), src/mpi/vt_fn.h (function
ids) and src/mpi/vt_fn_table.c (names and record layouts, doc/format.md). The semantics
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
    "irecv": ("cr", "", "vt_leave_irecv(&c, rc, {COMM}, {REQUEST}, 0);"),
    "recv_init": ("cr", "", "vt_leave_irecv(&c, rc, {COMM}, {REQUEST}, 1);"),
    "sendrecv": ("cptbPTB", ST, "vt_leave_sendrecv(&c, rc, {COMM}, {DEST}, {STAG}, {SCOUNT}, {STYPE}, vt_stp);"),
    "sendrecv_replace": ("cptbPTB", ST, "vt_leave_sendrecv(&c, rc, {COMM}, {DEST}, {STAG}, {SCOUNT}, {STYPE}, vt_stp);"),
    "isendrecv": ("cptbr", "", "vt_leave_isendrecv(&c, rc, {COMM}, {DEST}, {STAG}, {SCOUNT}, {STYPE}, {REQUEST});"),
    "isendrecv_replace": ("cptbr", "", "vt_leave_isendrecv(&c, rc, {COMM}, {DEST}, {STAG}, {SCOUNT}, {STYPE}, {REQUEST});"),
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
    "waitany": ("k", "MPI_Status vt_st; MPI_Status *vt_stp = vt_status({STATUS}, &vt_st); "
                     "vt_pre_reqs(&c, {NREQ}, {REQUESTS}, MPI_STATUSES_IGNORE, NULL);",
                "vt_post_any(&c, rc, *{INDEX}, 1, vt_stp);"),
    "testany": ("k", "MPI_Status vt_st; MPI_Status *vt_stp = vt_status({STATUS}, &vt_st); "
                     "vt_pre_reqs(&c, {NREQ}, {REQUESTS}, MPI_STATUSES_IGNORE, NULL);",
                "vt_post_any(&c, rc, *{INDEX}, *{FLAG}, vt_stp);"),
    "waitsome": ("k", "MPI_Status *vt_stp = vt_pre_reqs(&c, {NREQ}, {REQUESTS}, {STATUSES}, NULL);",
                 "vt_post_some(&c, rc, *{OUTCOUNT}, {INDICES});", "STATUSES"),
    "testsome": ("k", "MPI_Status *vt_stp = vt_pre_reqs(&c, {NREQ}, {REQUESTS}, {STATUSES}, NULL);",
                 "vt_post_some(&c, rc, *{OUTCOUNT}, {INDICES});", "STATUSES"),
    "start": ("R", "", "vt_leave_start(&c, rc, 1, {REQUEST});"),
    "startall": ("R", "", "vt_leave_start(&c, rc, {NREQ}, {REQUESTS});"),
    "request_free": ("r", "MPI_Request vt_req = *{REQUEST};", "vt_leave_request_free(&c, rc, vt_req);"),
    "cancel": ("r", "", "vt_leave_cancel(&c, rc, *{REQUEST});"),
    "request_get_status": ("r", ST, "vt_leave_get_status(&c, rc, {REQUEST}, *{FLAG});"),
    "coll": ("coqbB", "", "vt_leave_coll(&c, rc, {KIND}, {COMM}, {ROOT?VT_NO_ROOT}, &vt_ca, NULL, 0);"),
    "icoll": ("coqbBr", "", "vt_leave_coll(&c, rc, {KIND}, {COMM}, {ROOT?VT_NO_ROOT}, &vt_ca, {REQUEST}, 0);"),
    "coll_init": ("coqbBr", "", "vt_leave_coll(&c, rc, {KIND}, {COMM}, {ROOT?VT_NO_ROOT}, &vt_ca, {REQUEST}, 1);"),
    "comm_new": ("cn", "", "vt_leave_comm_new(&c, rc, {COMM}, {NEWCOMM}, VT_NEW_COLLECTIVE, 0);"),
    "comm_new_group": ("cn", "", "vt_leave_comm_new(&c, rc, {COMM}, {NEWCOMM}, VT_NEW_GROUP, {TAG});"),
    "comm_idup": ("cnr", "", "vt_leave_comm_idup(&c, rc, {COMM}, {NEWCOMM}, {REQUEST});"),
    "comm_free": ("c", "MPI_Comm vt_comm = *{COMM};", "vt_leave_comm_free(&c, rc, vt_comm);"),
    "io": ("fOb", ST, "vt_leave_io(&c, rc, {FILE}, {OFFSET?-1}, {XCOUNT}, {XTYPE}, vt_stp, NULL);"),
    "io_nb": ("fObr", "", "vt_leave_io(&c, rc, {FILE}, {OFFSET?-1}, {XCOUNT}, {XTYPE}, NULL, {REQUEST});"),
    "io_begin": ("fOb", "", "vt_leave_io(&c, rc, {FILE}, {OFFSET?-1}, {XCOUNT}, {XTYPE}, NULL, NULL);"),
    "io_end": ("fOb", ST, "vt_leave_io(&c, rc, {FILE}, -1, 0, MPI_BYTE, vt_stp, NULL);"),
    "file_open": ("cf", "", "vt_leave_file_open(&c, rc, {COMM}, {FILENAME}, {FILE});"),
    "file_close": ("f", "MPI_File vt_fh = *{FILE};", "vt_leave_file_close(&c, rc, vt_fh);"),
    "io_local": ("f", "", "vt_leave_file_local(&c, rc, {FILE});"),
    "rma": ("pb", "", "vt_leave_rma(&c, rc, {DEST}, {SCOUNT?1}, {STYPE});"),
    "local": ("", "", "vt_leave_plain(&c, rc);"),
}
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
        if cls not in CLASSES and cls not in ("init", "init_thread", "finalize", "counted"):
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


def wrapper(f, fid):
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
    if cls == "counted":
        return ("VT_EXPORT %s %s(%s)\n{\n    vt_count(%s);\n    return %s(%s);\n}\n"
                % (ret, name, params(f), fn, pname, plain))
    spec = CLASSES[cls]
    _, pre, post = spec[:3]
    status_role = spec[3] if len(spec) > 3 else ("STATUS" if "vt_stp" in pre else None)
    if cls in ("wait", "test"):
        status_role = "STATUS"
    if cls in ("waitany", "testany"):
        status_role = "STATUS"
    pre = expand(pre, f)
    post = expand(post, f)
    body = ["VT_EXPORT %s %s(%s)" % (ret, name, params(f)), "{", "    vt_call c;",
            "    if (!VT_ENTER(&c, %s))" % fn, "        return %s(%s);" % (pname, plain)]
    if cls in ("coll", "icoll", "coll_init"):
        body.append("    " + collargs(f))
    if pre:
        body.append("    " + pre)
    body.append("    %s rc = %s(%s);" % (ret, pname, call_args(f, status_role)))
    body.append("    " + post)
    body.append("    return rc;")
    body.append("}")
    return "\n".join(body) + "\n"


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
          " * Each function records through the handlers of src/tracing/handlers.h. */" % os.path.basename(table),
          '#include "handlers.h"', ""]
    for i, f in enumerate(funcs):
        wr.append(wrapper(f, i))
    for path, lines in (("vt_fn.h", hdr), ("vt_fn_table.c", tab), ("wrappers.c", wr)):
        tmp = os.path.join(outdir, path + ".tmp")
        with open(tmp, "w") as fh:
            fh.write("\n".join(lines))
        os.replace(tmp, os.path.join(outdir, path))
    print("gen_wrappers: %d functions -> %s" % (len(funcs), outdir))


if __name__ == "__main__":
    main()
