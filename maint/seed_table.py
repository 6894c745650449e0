#!/usr/bin/env python3
"""Seed maint/mpi_functions.txt from an MPI library's C prototypes.

Run once per MPI version (or to pick up new functions); the table it writes is the
committed source of truth that maint/gen_wrappers.py reads, and may be edited by hand.

    python3 maint/seed_table.py /usr/include/x86_64-linux-gnu/mpich > maint/mpi_functions.txt

Each wrapped function gets a class (which hand-written handler family serves it) and a
role for every argument the handler needs (DEST, TAG, COMM, SCOUNT+STYPE, REQUEST, ...).
Functions that match no class are not wrapped and go straight to the MPI library.
"""
import re
import sys

COLL = ("Barrier|Bcast|Gather|Gatherv|Scatter|Scatterv|Allgather|Allgatherv|Alltoall|"
        "Alltoallv|Alltoallw|Reduce|Allreduce|Reduce_scatter|Reduce_scatter_block|Scan|Exscan|"
        "Neighbor_allgather|Neighbor_allgatherv|Neighbor_alltoall|Neighbor_alltoallv|Neighbor_alltoallw")
CLASSES = [
    (r"MPI_Init", "init"),
    (r"MPI_Init_thread", "init_thread"),
    (r"MPI_Finalize", "finalize"),
    (r"MPI_Abort", "abort"),
    (r"MPI_(Wtime|Comm_rank|Comm_size)", "counted"),
    (r"MPI_(Send|Bsend|Ssend|Rsend)(_c)?", "send"),
    (r"MPI_(Isend|Ibsend|Issend|Irsend)(_c)?", "isend"),
    (r"MPI_(Send|Bsend|Ssend|Rsend)_init(_c)?", "send_init"),
    (r"MPI_Recv(_c)?", "recv"),
    (r"MPI_Irecv(_c)?", "irecv"),
    (r"MPI_Recv_init(_c)?", "recv_init"),
    (r"MPI_Sendrecv(_c)?", "sendrecv"),
    (r"MPI_Sendrecv_replace(_c)?", "sendrecv_replace"),
    (r"MPI_Isendrecv(_c)?", "isendrecv"),
    (r"MPI_Isendrecv_replace(_c)?", "isendrecv_replace"),
    (r"MPI_Probe", "probe"),
    (r"MPI_Iprobe", "iprobe"),
    (r"MPI_Mprobe", "mprobe"),
    (r"MPI_Improbe", "improbe"),
    (r"MPI_Mrecv(_c)?", "mrecv"),
    (r"MPI_Imrecv(_c)?", "imrecv"),
    (r"MPI_Wait", "wait"),
    (r"MPI_Test", "test"),
    (r"MPI_Waitall", "waitall"),
    (r"MPI_Testall", "testall"),
    (r"MPI_Waitany", "waitany"),
    (r"MPI_Testany", "testany"),
    (r"MPI_Waitsome", "waitsome"),
    (r"MPI_Testsome", "testsome"),
    (r"MPI_Start", "start"),
    (r"MPI_Startall", "startall"),
    (r"MPI_Request_free", "request_free"),
    (r"MPI_Cancel", "cancel"),
    (r"MPI_Request_get_status", "request_get_status"),
    (r"MPI_(%s)(_c)?" % COLL, "coll"),
    (r"MPI_I(%s)(_c)?" % "|".join(x[0].lower() + x[1:]
                                   for x in COLL.split("|")), "icoll"),
    (r"MPI_(%s)_init(_c)?" % COLL, "coll_init"),
    (r"MPI_(Comm_dup|Comm_dup_with_info|Comm_split|Comm_split_type|Comm_create|Cart_create|Cart_sub|"
     r"Graph_create|Dist_graph_create|Dist_graph_create_adjacent|Intercomm_merge)", "comm_new"),
    (r"MPI_(Comm_create_group|Intercomm_create)", "comm_new_group"),
    (r"MPI_(Comm_idup|Comm_idup_with_info)", "comm_idup"),
    (r"MPI_(Comm_free|Comm_disconnect)", "comm_free"),
    (r"MPI_File_(read|write|read_at|write_at|read_all|write_all|read_at_all|write_at_all|"
     r"read_shared|write_shared|read_ordered|write_ordered)(_c)?", "io"),
    (r"MPI_File_(iread|iwrite|iread_at|iwrite_at|iread_all|iwrite_all|iread_at_all|iwrite_at_all|"
     r"iread_shared|iwrite_shared)(_c)?", "io_nb"),
    (r"MPI_File_(read|write|read_at|write_at)_(all|ordered)_begin(_c)?", "io_begin"),
    (r"MPI_File_(read|write|read_at|write_at)_(all|ordered)_end", "io_end"),
    (r"MPI_File_open", "file_open"),
    (r"MPI_File_close", "file_close"),
    (r"MPI_File_(sync|set_view|set_size|preallocate|seek|seek_shared|set_atomicity)", "io_local"),
    (r"MPI_(Put|Get|Accumulate|Get_accumulate|Rput|Rget|Raccumulate|Rget_accumulate)(_c)?", "rma"),
    (r"MPI_(Fetch_and_op|Compare_and_swap)", "rma"),
    (r"MPI_Win_(fence|start|complete|post|wait|test|lock|unlock|lock_all|unlock_all|flush|flush_all|"
     r"flush_local|flush_local_all|sync|create|allocate|allocate_shared|create_dynamic|free)(_c)?", "local"),
    (r"MPI_(Comm_accept|Comm_connect|Comm_spawn|Comm_spawn_multiple|Comm_join)", "local"),
]

SEND_SIDE = {"send", "isend", "send_init", "sendrecv", "sendrecv_replace", "isendrecv",
             "isendrecv_replace", "rma"}
ROLE_BY_NAME = {
    "sendbuf": "SBUF", "recvbuf": "RBUF", "buffer": "RBUF",
    "sendcount": "SCOUNT", "recvcount": "RCOUNT", "sendcounts": "SCOUNTS", "recvcounts": "RCOUNTS",
    "sendtype": "STYPE", "recvtype": "RTYPE", "sendtypes": "STYPES", "recvtypes": "RTYPES",
    "dest": "DEST", "source": "SOURCE", "tag": "TAG", "sendtag": "STAG", "recvtag": "RTAG",
    "comm": "COMM", "local_comm": "COMM", "intercomm": "COMM", "comm_old": "COMM",
    "request": "REQUEST", "status": "STATUS",
    "array_of_requests": "REQUESTS", "array_of_statuses": "STATUSES",
    "flag": "FLAG", "index": "INDEX", "indx": "INDEX", "outcount": "OUTCOUNT",
    "array_of_indices": "INDICES", "incount": "NREQ",
    "root": "ROOT", "message": "MESSAGE", "fh": "FILE", "offset": "OFFSET", "filename": "FILENAME",
    "newcomm": "NEWCOMM", "newintercomm": "NEWCOMM", "comm_cart": "NEWCOMM", "comm_graph": "NEWCOMM",
    "comm_dist_graph": "NEWCOMM", "comm_new": "NEWCOMM", "newintracomm": "NEWCOMM",
    "target_rank": "DEST", "origin_count": "SCOUNT", "origin_datatype": "STYPE",
    "errorcode": "CODE",
}


def roles_for(cls, name, args):
    out = []
    for typ, full in args:
        an = full.split("[")[0]
        role = ROLE_BY_NAME.get(an)
        if an == "buf":
            role = "SBUF" if cls in SEND_SIDE or cls.startswith("io") and "write" in name else "RBUF"
        elif an == "count":
            if cls in ("waitall", "testall", "waitany", "testany", "startall"):
                role = "NREQ"
            elif cls in SEND_SIDE or cls in ("coll", "icoll", "coll_init") or "write" in name:
                role = "SCOUNT"
            else:
                role = "RCOUNT"
        elif an == "datatype":
            role = "STYPE" if (cls in SEND_SIDE or cls in ("coll", "icoll", "coll_init") or "write" in name) else "RTYPE"
        elif an in ("request", "array_of_requests") and cls in ("start",):
            role = "REQUEST"
        if cls == "comm_new" and name == "MPI_Intercomm_merge" and an == "intercomm":
            role = "COMM"
        out.append((typ, full, role))
    return out


def parse(path):
    text = open(path).read()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    protos = {}
    for m in re.finditer(r"^(int|double)\s+(MPI_\w+)\s*\(([^;]*?)\)\s*[A-Z_]*\w*(\([^;]*\))?\s*[A-Z_]*;", text, re.M):
        ret, name, arglist = m.group(1), m.group(2), " ".join(m.group(3).split())
        args = []
        if "..." in arglist:
            continue  # variadic (MPI_Pcontrol): not wrapped
        if arglist.strip() != "void":
            for a in arglist.split(","):
                a = a.strip()
                am = re.match(r"(.*?)(\w+)((\s*\[[^\]]*\])*)$", a)
                if not am:
                    raise SystemExit("cannot parse argument %r of %s" % (a, name))
                args.append((am.group(1).strip(), am.group(2) + am.group(3).replace(" ", "")))
        protos[name] = (ret, args)
    return protos


def classify(name):
    for pat, cls in CLASSES:
        if re.fullmatch(pat, name):
            return cls
    return None


def main():
    inc = sys.argv[1]
    protos = {}
    protos.update(parse(inc + "/mpi_proto.h"))
    protos.update(parse(inc + "/mpio.h"))
    print("# vtrace function table: one wrapped MPI function per line.")
    print("# name | class | return type | arguments 'type name:ROLE' separated by ';' ")
    print("# Seeded by maint/seed_table.py from %s; edit by hand, then ./autogen.sh." % inc)
    n = 0
    for name in sorted(protos):
        cls = classify(name)
        if not cls:
            continue
        ret, args = protos[name]
        parts = []
        for typ, an, role in roles_for(cls, name, args):
            parts.append("%s %s%s" % (typ, an, (":" + role) if role else ""))
        print("%s | %s | %s | %s" % (name, cls, ret, "; ".join(parts)))
        n += 1
    print("# %d functions" % n, file=sys.stderr)


if __name__ == "__main__":
    main()
