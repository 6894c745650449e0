#!/usr/bin/env python3
"""Replays the script of test/unit/poly_oracle (C, src/model/poly.c) with the
min-plus algebra of the reference simulation shared/design/reference/mc.py (canon,
p_const, p_atom, p_addc, p_addv, p_min, p_vars, p_eval, and the `overflow` rule of
`runtime`) and compares every result: the set of terms, the number of variables, the
canonical order documented in poly.h, evaluations and equality decisions.

usage: poly_oracle.py [--break] < script
  mc.py is found in $VTRACE_SHARED/design/reference (default: ../shared next to the
  source tree's top directory, i.e. $srcdir/../shared). Exit 0: all equal; 1: first
  difference (printed); 77: mc.py not found (skip); 2: bad script.
  --break replaces canon by a version that keeps dominated terms, to show that the
  comparison can fail (the driver expects exit 1 then).
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def find_shared():
    shared = os.environ.get('VTRACE_SHARED')
    if not shared:
        top = os.environ.get('srcdir') or os.path.join(HERE, '..', '..')
        shared = os.path.join(top, '..', 'shared')
    ref = os.path.join(shared, 'design', 'reference')
    return ref if os.path.isfile(os.path.join(ref, 'mc.py')) else None


ref = find_shared()
if ref is None:
    print('poly_oracle.py: mc.py not found (set VTRACE_SHARED to the shared/ directory); skipping')
    sys.exit(77)
sys.path.insert(0, ref)
import mc  # noqa: E402

BROKEN = '--break' in sys.argv[1:]
if BROKEN:
    def broken_canon(terms):
        # keeps dominated terms: the deliberately wrong canonicalisation
        return tuple(sorted(set(terms), key=mc._key))
    mc.canon = broken_canon  # p_min and p_addv look canon up in mc's globals

MAX_TERMS = 16  # VT_POLY_MAX_TERMS / VT_POLY_MAX_VARS in poly.h
MAX_VARS = 16
KIND_ORDER = {k: i for i, k in enumerate('vCSPON')}


def parse_var(s):
    k, owner, seq = s.split(':')
    if k not in KIND_ORDER:
        raise ValueError('bad variable ' + s)
    return (k, int(owner), int(seq))


def var_key(v):  # the total order of poly.h: (kind, seq, owner)
    return (KIND_ORDER[v[0]], v[2], v[1])


def term_key(t):  # (c, variable set in colex order)
    c, vs = t
    return (c, tuple(sorted((var_key(v) for v in vs), reverse=True)))


def parse_poly(text):
    terms = []
    for tok in text.split(' '):
        parts = tok.split('+')
        terms.append((int(parts[0]), frozenset(parse_var(p) for p in parts[1:])))
    return terms


def overflow(p, m, K, r, seq):
    # mc.runtime's inner `overflow` (not reachable from outside runtime())
    if len(p) > K or len(mc.p_vars(p)) > m:
        return mc.p_atom(('O', r, seq))
    return p


class Mismatch(Exception):
    pass


def fmt(p):
    return ' '.join(str(c) + ''.join('+%s:%d:%d' % v for v in sorted(S, key=var_key))
                    for c, S in sorted(p, key=term_key))


def main():
    reg = {}
    m = K = None
    last = None  # (register, expected polynomial) of the previous operation
    nseq = nres = nbig = nover = nev = neq = 0
    lineno = 0
    seqno = None
    for line in sys.stdin:
        lineno += 1
        w = line.split()
        if not w:
            continue
        op = w[0]
        try:
            if op == 'seq':
                seqno = int(w[1])
                m, K = int(w[3]), int(w[5])
                reg = {}
                nseq += 1
            elif op == '=':
                if last is None:
                    raise Mismatch('result without an operation')
                d, exp = last
                last = None
                if w[2] == 'BIG':
                    if len(exp) <= MAX_TERMS and len(mc.p_vars(exp)) <= MAX_VARS:
                        raise Mismatch('C says BIG, reference has %d terms, %d variables: %s'
                                       % (len(exp), len(mc.p_vars(exp)), fmt(exp)))
                    nbig += 1
                    continue
                got = parse_poly(' '.join(w[2:]))
                if set(got) != set(exp) or len(got) != len(exp):
                    raise Mismatch('C: %s\n  reference: %s' % (' '.join(w[2:]), fmt(exp)))
                if int(w[1]) != len(mc.p_vars(exp)):
                    raise Mismatch('C nvars %s, reference %d' % (w[1], len(mc.p_vars(exp))))
                if [term_key(t) for t in got] != sorted(term_key(t) for t in got):
                    raise Mismatch('C terms not in the documented order: ' + ' '.join(w[2:]))
                nres += 1
            elif op == 'end':
                if int(w[1]) != nseq:
                    raise Mismatch('sequence count')
                print('poly_oracle.py: %d sequences, %d results equal to mc.py (%d big, '
                      '%d overflow steps), %d evaluations, %d equality decisions'
                      % (nseq, nres, nbig, nover, nev, neq))
                return 0
            elif op == 'eval':
                s, val, n = int(w[1]), int(w[2]), int(w[3])
                tab = {parse_var(w[4 + 2 * i]): int(w[5 + 2 * i]) for i in range(n)}
                exp = mc.p_eval(reg[s], lambda v: tab[v])
                if exp != val:
                    raise Mismatch('eval r%d: C %d, reference %d' % (s, val, exp))
                nev += 1
            elif op == 'eq':
                a, b, e = int(w[1]), int(w[2]), int(w[3])
                if (mc.canon(reg[a]) == mc.canon(reg[b])) != bool(e):
                    raise Mismatch('eq r%d r%d: C %d' % (a, b, e))
                neq += 1
            else:
                d = int(w[1])
                if op == 'const':
                    p = mc.p_const(int(w[2]))
                elif op == 'atom':
                    p = mc.p_atom(parse_var(w[2]))
                elif op == 'addc':
                    p = mc.p_addc(reg[d], int(w[2]))
                elif op == 'addv':
                    p = mc.p_addv(reg[d], parse_var(w[2]))
                elif op == 'min':
                    n = int(w[2])
                    p = mc.p_min(*[reg[int(x)] for x in w[3:3 + n]])
                elif op == 'ms':
                    n = int(w[2])
                    ins = []
                    for i in range(n):
                        s, add, v = w[3 + 3 * i], int(w[4 + 3 * i]), w[5 + 3 * i]
                        if s[0] == 'c':
                            src = mc.p_const(int(s[1:]))
                        elif s[0] == 'a':
                            src = mc.p_atom(parse_var(s[1:]))
                        else:
                            src = reg[int(s)]
                        q = mc.p_addc(src, add)
                        if v != '-':
                            q = mc.p_addv(q, parse_var(v))
                        ins.append(q)
                    p = mc.p_min(*ins)
                elif op == 'raw':
                    n = int(w[2])
                    i = 3
                    terms = []
                    for _ in range(n):
                        c, nv = int(w[i]), int(w[i + 1])
                        terms.append((c, frozenset(parse_var(x) for x in w[i + 2:i + 2 + nv])))
                        i += 2 + nv
                    p = mc.canon(terms)
                elif op == 'ovf':
                    before = reg[d]
                    p = overflow(before, m, K, int(w[2]), int(w[3]))
                    nover += p is not before
                else:
                    print('poly_oracle.py: line %d: unknown operation %r' % (lineno, op))
                    return 2
                reg[d] = p
                last = (d, p)
        except Mismatch as e:
            print('poly_oracle.py: difference in sequence %s, line %d: %s\n  %s'
                  % (seqno, lineno, line.strip()[:300], e))
            return 1
        except (IndexError, ValueError, KeyError) as e:
            print('poly_oracle.py: line %d: bad script (%s): %s' % (lineno, e, line.strip()[:200]))
            return 2
    print('poly_oracle.py: script ended early (the C program failed?)')
    return 2


if __name__ == '__main__':
    sys.exit(main())
