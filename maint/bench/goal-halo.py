#!/usr/bin/env python3
"""A GOAL schedule (LogGOPSim's input, text form) of the halo exchange `vtrace synth -p
halo1d|halo2d` writes: per rank and iteration a computation, a receive from and a send
to each neighbour of the same grid (not periodic), and the next iteration after all of
them (the MPI_Waitall): 2 x neighbours + 1 operations a rank and iteration, as many as
the synthetic trace has records (an MPI_Irecv and an MPI_Isend per neighbour and the
MPI_Waitall).

    goal-halo.py halo1d|halo2d RANKS ITERATIONS BYTES COMPUTE_NS > FILE.goal
"""
import sys


def grid(pattern, n):
    if pattern == "halo1d":
        return n, 1
    py = max(d for d in range(1, int(n ** 0.5) + 1) if n % d == 0)
    return n // py, py


def neighbours(r, px, py):
    x, y = r % px, r // px
    out = []
    if x > 0:
        out.append(r - 1)
    if x + 1 < px:
        out.append(r + 1)
    if y > 0:
        out.append(r - px)
    if y + 1 < py:
        out.append(r + px)
    return out


def rank_schedule(r, px, py, iterations, nbytes, compute):
    peers = neighbours(r, px, py)
    lines = [f"rank {r} {{"]
    label = 0
    prev = []
    for _ in range(iterations):
        label += 1
        calc = label
        lines.append(f"l{calc}: calc {compute}")
        lines.extend(f"l{calc} requires l{p}" for p in prev)
        prev = []
        for peer in peers:
            label += 1
            lines.append(f"l{label}: recv {nbytes}b from {peer} tag 0")
            lines.append(f"l{label} requires l{calc}")
            prev.append(label)
        for peer in peers:
            label += 1
            lines.append(f"l{label}: send {nbytes}b to {peer} tag 0")
            lines.append(f"l{label} requires l{calc}")
            prev.append(label)
    lines.append("}")
    return "\n".join(lines)


def main(argv):
    if len(argv) != 6 or argv[1] not in ("halo1d", "halo2d"):
        sys.exit("usage: goal-halo.py halo1d|halo2d RANKS ITERATIONS BYTES COMPUTE_NS")
    pattern = argv[1]
    n, iterations, nbytes, compute = (int(a) for a in argv[2:])
    px, py = grid(pattern, n)
    out = sys.stdout
    out.write(f"num_ranks {n}\n\n")
    for r in range(n):
        out.write(rank_schedule(r, px, py, iterations, nbytes, compute))
        out.write("\n\n")


if __name__ == "__main__":
    main(sys.argv)
