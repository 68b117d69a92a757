/* The ``sequence`` group executor (GLORIA) for count states, compiled (docs/engine.md,
 * "Shared sequence execution", "The compiled pass").
 *
 * The same computation as run.py's _Run, step for step, for groups whose queries' states
 * hold counts only (COUNT(*), COUNT(E)): a record is 1 + NC counts (the trends, then the
 * events of each counted type over them), a coefficient the same shape. Per window:
 * start pieces per (member, type); per expression (space, type V, Q-set) a list of
 * (snapshot id, coefficient); snapshots in an arena of M records each (zero: no trend).
 * A window opens at the first time stamp of it where a member's trend starts (run.py).
 * At each time stamp every increment is computed from the state before it (the Q-set's
 * sources merged and extended once where its members match the same events; else each
 * matching member's own increment kept as an event-level snapshot), then the start pieces
 * and increments applied, then the snapshots of the time stamp's types taken, then the
 * extended expressions longer than R (run.REBASE_LENGTH) rebased. The counters
 * (propagations shared / alone / own, splits, snapshots, evaluations, rebases, windows) are
 * run.py's.
 *
 * Counts are exact up to 2**128 and NANV past it; NANV stands for a value past CAP (every
 * operation is an addition or a product of counts, zero times anything is zero), and a
 * window's results are kept past CAP as NaN: counts only grow, so they are exactly the
 * saturated values of the query alone (run.py's module docstring).
 *
 * run(ts, idx, masks, pstarts, prog, within, slide, per_window)
 *   ts: int64 time stamps of the key set's rows; idx: int64 rows to visit (partition by
 *   partition, in time order; None: every row); masks: bool buffers over the rows, each
 *   matching one or more (member, type) pairs (prog); pstarts: int64 visited positions
 *   where the partitions start (the first 0); prog: int64 buffer describing the group:
 *     M T NC S X R (R: run.REBASE_LENGTH), then per type its counted index (-1: not
 *     counted), then per member
 *     (n, start types...) (n, end types...) (n, counted index of each COUNT(E) key...),
 *     per space (snapshot type, member mask), per expression (space, type, member mask,
 *     n, sources...: -1 the space's latest snapshot, else an expression), per member and
 *     type (n, expressions holding the member's value of the type...), per mask (n,
 *     member, type, member, type, ...): the variables it is the mask of.
 * returns (mem, part, k, values, counters, by_type, windows) as bytes: int64 member,
 *   partition index and window index of each (member, window) with a trend; per such
 *   result 1 + the most COUNT(E) keys of a member counts (trends, then each COUNT(E) key
 *   of the member in order, zero after them) as (low, high) uint64 pairs, all ones for a saturated count; counters
 *   (windows, shared, alone, own, split, snapshots, evaluations, rebases); by_type int64
 *   (shared, alone, own) per type; with per_window int64 (partition, window, shared,
 *   alone, own) per window with a propagation, else None. None where a window spans more
 *   than MAX_OPEN slides.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../pymodule.h"

#define MAX_OPEN 4096
#define MAXW 65

/* a * b for counts: zero when either is zero, NANV when either is NANV or it passes 2**128 */
static inline u128 mulc(u128 a, u128 b) {
    if (!a || !b) return 0;
    if (a == NANV || b == NANV) return NANV;
    if (!(a >> 64) && !(b >> 64)) return (u128)(uint64_t)a * (uint64_t)b;
    u128 r;
    if (__builtin_mul_overflow(a, b, &r)) return NANV;
    return r;
}

typedef struct {
    int64_t *sid;
    u128 *coef; /* len * W */
    int len, cap;
} Expr;

typedef struct {
    u128 *start; /* M * T * W */
    Expr *ex;    /* X */
    u128 *snap;  /* nsnap * M * W */
    int64_t nsnap, capsnap;
    int64_t *latest; /* S */
    int64_t shared, alone, own;
    int noted;
} Win;

typedef struct {
    int M, T, NC, S, X, R, W, width;
    const int64_t *cidx;
    /* members */
    uint64_t *startmask; /* per member, bit t: a start type */
    int *nend, **ends, *ncv, **cv;
    /* spaces */
    int *stype;
    uint64_t *sq;
    /* expressions */
    int *xspace, *xtype, *nsrc, **src;
    uint64_t *xq;
    /* holders[(j * T + t)] */
    int *nhold, **hold;
    /* per type: expressions into it, spaces snapshotting it */
    int *ninto, **into, *nsnapof, **snapof;
    /* windows */
    Win *win;
    int64_t cap, lo, count, head, part;
    /* scratch */
    Expr *inc;
    int *incx, ninc;
    u128 *tmp, *acc;
    int64_t *kq; /* T * M: events of each type each member matches at this time stamp */
    char *tseen;
    /* output */
    CountRows out; /* the window results */
    int64_t *pw;
    Py_ssize_t npw, pwcap;
    int per_window;
    int64_t *bytype;
    int64_t windows, shared, alone, own, split, snapshots, evaluations, rebases;
    int failed;
} Run;

static int expr_reserve(Run *r, Expr *e, int need) {
    if (need <= e->cap) return 0;
    int cap = e->cap ? e->cap : 4;
    while (cap < need) cap *= 2;
    int64_t *s = realloc(e->sid, (size_t)cap * sizeof(int64_t));
    if (!s) return r->failed = -1;
    e->sid = s;
    u128 *c = realloc(e->coef, (size_t)cap * r->W * sizeof(u128));
    if (!c) return r->failed = -1;
    e->coef = c;
    e->cap = cap;
    return 0;
}

/* e[sid] += coef (an entry of its own where it has none) */
static void expr_merge(Run *r, Expr *e, int64_t sid, const u128 *coef) {
    const int W = r->W;
    for (int a = 0; a < e->len; a++) {
        if (e->sid[a] == sid) {
            u128 *c = e->coef + (size_t)a * W;
            for (int i = 0; i < W; i++) c[i] = add_exact(c[i], coef[i]);
            return;
        }
    }
    if (expr_reserve(r, e, e->len + 1) < 0) return;
    e->sid[e->len] = sid;
    memcpy(e->coef + (size_t)e->len * W, coef, W * sizeof(u128));
    e->len++;
}

/* a new snapshot of `vals` (M records) in window w; its id */
static int64_t take(Run *r, Win *w, const u128 *vals) {
    const size_t rec = (size_t)r->M * r->W;
    if (w->nsnap == w->capsnap) {
        int64_t cap = w->capsnap ? 2 * w->capsnap : 16;
        u128 *s = realloc(w->snap, (size_t)cap * rec * sizeof(u128));
        if (!s) {
            r->failed = -1;
            return 0;
        }
        w->snap = s;
        w->capsnap = cap;
    }
    memcpy(w->snap + (size_t)w->nsnap * rec, vals, rec * sizeof(u128));
    return w->nsnap++;
}

/* acc += expression e evaluated for member j */
static void evaluate(Run *r, Win *w, const Expr *e, int j, u128 *acc) {
    const int W = r->W;
    r->evaluations++;
    for (int a = 0; a < e->len; a++) {
        const u128 *s = w->snap + ((size_t)e->sid[a] * r->M + j) * W;
        if (!s[0]) continue;
        const u128 *c = e->coef + (size_t)a * W;
        acc[0] = add_exact(acc[0], mulc(c[0], s[0]));
        for (int i = 1; i < W; i++) acc[i] = add_exact(acc[i], add_exact(mulc(c[0], s[i]), mulc(c[i], s[0])));
    }
}

/* out = member j's record of type t in window w */
static void value(Run *r, Win *w, int j, int t, u128 *out) {
    memcpy(out, w->start + ((size_t)j * r->T + t) * r->W, r->W * sizeof(u128));
    int h = j * r->T + t;
    for (int a = 0; a < r->nhold[h]; a++) {
        const Expr *e = &w->ex[r->hold[h][a]];
        if (e->len) evaluate(r, w, e, j, out);
    }
}

/* rec extended by k events of type t */
static void extend(Run *r, u128 *rec, int t, int64_t k) {
    u128 kk = (u128)k, c = rec[0];
    for (int i = 0; i < r->W; i++) rec[i] = mulc(rec[i], kk);
    if (r->cidx[t] >= 0) {
        int i = 1 + (int)r->cidx[t];
        rec[i] = add_exact(rec[i], mulc(c, kk));
    }
}

static void note(Run *r, Win *w, int t, int64_t shared, int64_t alone, int64_t own) {
    r->shared += shared;
    r->alone += alone;
    r->own += own;
    r->bytype[3 * t] += shared;
    r->bytype[3 * t + 1] += alone;
    r->bytype[3 * t + 2] += own;
    w->shared += shared;
    w->alone += alone;
    w->own += own;
    w->noted = 1;
}

static inline Win *slot(Run *r, int64_t k) { return &r->win[RING_SLOT(r, k)]; }

static int push(Run *r, int j, int64_t k, const u128 *res) {
    return count_rows_push(&r->out, j, r->part, k, res, r->width);
}

static int close_window(Run *r, int64_t k) {
    Win *w = slot(r, k);
    u128 res[MAXW];
    for (int j = 0; j < r->M; j++) {
        u128 tot[MAXW];
        memset(tot, 0, r->W * sizeof(u128));
        for (int e = 0; e < r->nend[j]; e++) {
            value(r, w, j, r->ends[j][e], r->tmp);
            for (int i = 0; i < r->W; i++) tot[i] = add_exact(tot[i], r->tmp[i]);
        }
        if (!tot[0]) continue;
        memset(res, 0, r->width * sizeof(u128));
        res[0] = keep(tot[0]);
        for (int c = 0; c < r->ncv[j]; c++) res[1 + c] = keep(tot[1 + r->cv[j][c]]);
        if (push(r, j, k, res) < 0) return -1;
    }
    if (r->per_window && w->noted) {
        int64_t *p = grow_rows(&r->pw, &r->npw, &r->pwcap, 5);
        if (!p) return -1;
        p[0] = r->part;
        p[1] = k;
        p[2] = w->shared;
        p[3] = w->alone;
        p[4] = w->own;
    }
    return 0;
}

RING_CLOSE_BELOW(close_below, Run, close_window)

static void open_upto(Run *r, int64_t kmin, int64_t kmax) {
    RING_START(r, kmin);
    while (r->lo + r->count <= kmax) {
        int64_t k = r->lo + r->count;
        r->count++;
        Win *w = slot(r, k);
        memset(w->start, 0, (size_t)r->M * r->T * r->W * sizeof(u128));
        for (int x = 0; x < r->X; x++) w->ex[x].len = 0;
        w->nsnap = 0;
        for (int i = 0; i < r->S; i++) w->latest[i] = -1;
        w->shared = w->alone = w->own = 0;
        w->noted = 0;
        r->windows++;
    }
}

/* the time stamp rows lo..hi applied to window w */
static void time_stamp(Run *r, Win *w, const int32_t *rtype, const uint64_t *bits, Py_ssize_t lo, Py_ssize_t hi) {
    const int W = r->W, M = r->M;
    const size_t rec = (size_t)M * W;
    static const u128 ONE[MAXW] = {1};
    r->ninc = 0;
    /* 1. the increments, from the state before the time stamp */
    for (int t = 0; t < r->T; t++) {
        if (!r->tseen[t]) continue;
        const int64_t *kt = r->kq + (size_t)t * M;
        for (int a = 0; a < r->ninto[t]; a++) {
            int x = r->into[t][a];
            uint64_t qm = r->xq[x];
            if (!qm) continue;
            int any = 0;
            for (int j = 0; j < M; j++)
                if ((qm >> j & 1) && kt[j]) any = 1;
            if (!any) continue;
            /* the non-empty sources */
            int sp = r->xspace[x], nsrc = 0;
            for (int b = 0; b < r->nsrc[x]; b++) {
                int s = r->src[x][b];
                if (s < 0 ? w->latest[sp] >= 0 : w->ex[s].len > 0) nsrc++;
            }
            if (!nsrc) continue;
            int same = 1;
            for (Py_ssize_t row = lo; row < hi && same; row++) {
                if (rtype[row] != t) continue;
                uint64_t b = bits[row] & qm;
                if (b && b != qm) same = 0;
            }
            Expr *inc = &r->inc[r->ninc];
            inc->len = 0;
            if (same) {
                int nq = __builtin_popcountll(qm);
                int64_t k = 0;
                for (int j = 0; j < M; j++)
                    if (qm >> j & 1) k = kt[j];
                if (nq > 1)
                    note(r, w, t, nsrc, (int64_t)nsrc * nq, 0);
                else
                    note(r, w, t, 0, 0, nsrc);
                for (int b = 0; b < r->nsrc[x]; b++) {
                    int s = r->src[x][b];
                    if (s < 0) {
                        if (w->latest[sp] >= 0) expr_merge(r, inc, w->latest[sp], ONE);
                    } else {
                        const Expr *e = &w->ex[s];
                        for (int c = 0; c < e->len; c++) expr_merge(r, inc, e->sid[c], e->coef + (size_t)c * W);
                    }
                }
                for (int c = 0; c < inc->len; c++) extend(r, inc->coef + (size_t)c * W, t, k);
            } else {
                r->split++;
                u128 *vals = r->acc;
                memset(vals, 0, rec * sizeof(u128));
                int some = 0;
                for (int j = 0; j < M; j++) {
                    if (!(qm >> j & 1) || !kt[j]) continue;
                    note(r, w, t, 0, 0, nsrc);
                    u128 *v = vals + (size_t)j * W;
                    for (int b = 0; b < r->nsrc[x]; b++) {
                        int s = r->src[x][b];
                        if (s < 0) {
                            if (w->latest[sp] < 0) continue;
                            Expr one = {&w->latest[sp], (u128 *)ONE, 1, 1};
                            evaluate(r, w, &one, j, v);
                        } else if (w->ex[s].len) {
                            evaluate(r, w, &w->ex[s], j, v);
                        }
                    }
                    if (v[0]) {
                        extend(r, v, t, kt[j]);
                        some = 1;
                    }
                }
                if (some) {
                    int64_t sid = take(r, w, vals);
                    expr_merge(r, inc, sid, ONE);
                }
            }
            if (inc->len) r->incx[r->ninc++] = x;
        }
    }
    /* 2. applied: the start pieces, then the increments */
    for (int t = 0; t < r->T; t++) {
        if (!r->tseen[t]) continue;
        for (int j = 0; j < M; j++) {
            int64_t k = r->kq[(size_t)t * M + j];
            if (!k || !(r->startmask[j] >> t & 1)) continue;
            u128 *st = w->start + ((size_t)j * r->T + t) * W;
            st[0] = add_exact(st[0], (u128)k);
            if (r->cidx[t] >= 0) st[1 + r->cidx[t]] = add_exact(st[1 + r->cidx[t]], (u128)k);
        }
    }
    for (int a = 0; a < r->ninc; a++) {
        Expr *e = &w->ex[r->incx[a]], *inc = &r->inc[a];
        for (int c = 0; c < inc->len; c++) expr_merge(r, e, inc->sid[c], inc->coef + (size_t)c * W);
    }
    /* 3. the snapshots of the time stamp's types */
    for (int t = 0; t < r->T; t++) {
        if (!r->tseen[t]) continue;
        for (int a = 0; a < r->nsnapof[t]; a++) {
            int i = r->snapof[t][a];
            u128 *vals = r->acc;
            memset(vals, 0, rec * sizeof(u128));
            for (int j = 0; j < M; j++)
                if (r->sq[i] >> j & 1) value(r, w, j, t, vals + (size_t)j * W);
            r->snapshots++;
            w->latest[i] = take(r, w, vals);
        }
    }
    /* 4. long expressions rebased */
    for (int a = 0; a < r->ninc; a++) {
        int x = r->incx[a];
        Expr *e = &w->ex[x];
        if (e->len <= r->R) continue;
        u128 *vals = r->acc;
        memset(vals, 0, rec * sizeof(u128));
        int some = 0;
        for (int j = 0; j < M; j++) {
            if (!(r->xq[x] >> j & 1)) continue;
            evaluate(r, w, e, j, vals + (size_t)j * W);
            if (vals[(size_t)j * W]) some = 1;
        }
        r->rebases++;
        e->len = 0;
        if (some) {
            int64_t sid = take(r, w, vals);
            expr_merge(r, e, sid, ONE);
        }
    }
}

/* a cursor over prog */
typedef struct {
    const int64_t *p;
    Py_ssize_t n, at;
    int bad;
} Cur;

static int64_t next(Cur *c, int64_t lo, int64_t hi) {
    if (c->at >= c->n) {
        c->bad = 1;
        return lo;
    }
    int64_t v = c->p[c->at++];
    if (v < lo || v > hi) {
        c->bad = 1;
        return lo;
    }
    return v;
}

/* n ints of range [lo, hi] (after their count) into a new array */
static int *ints(Cur *c, int *n, int64_t lo, int64_t hi) {
    *n = (int)next(c, 0, 1 << 20);
    int *out = calloc((size_t)*n + 1, sizeof(int));
    if (!out) {
        c->bad = 2;
        return NULL;
    }
    for (int a = 0; a < *n; a++) out[a] = (int)next(c, lo, hi);
    return out;
}

static PyObject *run(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *ts_o, *idx_o, *masks_o, *ps_o, *prog_o;
    int per_window;
    long long within, slide;
    if (!PyArg_ParseTuple(args, "OOOOOLLp", &ts_o, &idx_o, &masks_o, &ps_o, &prog_o, &within, &slide, &per_window))
        return NULL;
    if (!PyTuple_Check(masks_o)) {
        PyErr_SetString(PyExc_TypeError, "masks: a tuple of bool buffers expected");
        return NULL;
    }
    if (within <= 0 || slide <= 0) {
        PyErr_SetString(PyExc_ValueError, "positive within and slide expected");
        return NULL;
    }
    Py_buffer tsv = {0}, idxv = {0}, psv = {0}, pv = {0};
    int got = 0, D = (int)PyTuple_GET_SIZE(masks_o), nmv = 0;
    Py_buffer *mv = calloc((size_t)D + 1, sizeof(Py_buffer));
    PyObject *result = NULL;
    int64_t *tsvis = NULL;
    int32_t *rtype = NULL;
    uint64_t *bits = NULL;
    Run r;
    memset(&r, 0, sizeof(r));
    if (!mv) return PyErr_NoMemory();
    if (PyObject_GetBuffer(ts_o, &tsv, PyBUF_C_CONTIGUOUS) < 0) goto done;
    got = 1;
    if (idx_o != Py_None) {
        if (PyObject_GetBuffer(idx_o, &idxv, PyBUF_C_CONTIGUOUS) < 0) goto done;
        got = 2;
    }
    if (PyObject_GetBuffer(ps_o, &psv, PyBUF_C_CONTIGUOUS) < 0) goto done;
    got = 3;
    if (PyObject_GetBuffer(prog_o, &pv, PyBUF_C_CONTIGUOUS) < 0) goto done;
    got = 4;
    Py_ssize_t rows = tsv.len / 8, n = idx_o != Py_None ? idxv.len / 8 : rows, np_ = psv.len / 8;
    if (tsv.len % 8 || idxv.len % 8 || psv.len % 8 || pv.len % 8 || (n && (!np_ || ((const int64_t *)psv.buf)[0] != 0))) {
        PyErr_SetString(PyExc_ValueError, "int64 ts, idx and pstarts (from 0) expected");
        goto done;
    }
    for (; nmv < D; nmv++) {
        if (PyObject_GetBuffer(PyTuple_GET_ITEM(masks_o, nmv), &mv[nmv], PyBUF_C_CONTIGUOUS) < 0) goto done;
        if (mv[nmv].len != rows) {
            PyBuffer_Release(&mv[nmv]);
            PyErr_SetString(PyExc_ValueError, "masks: one byte per row expected");
            goto done;
        }
    }
    const int64_t *ps = psv.buf, *vis = idx_o != Py_None ? idxv.buf : NULL;
    tsvis = malloc((size_t)n * sizeof(int64_t) + 8);
    rtype = malloc((size_t)n * sizeof(int32_t) + 4);
    bits = calloc((size_t)n + 1, sizeof(uint64_t));
    if (!tsvis || !rtype || !bits) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t row = vis ? vis[i] : i;
        if (row < 0 || row >= rows) {
            PyErr_SetString(PyExc_ValueError, "idx: a row out of range");
            goto done;
        }
        tsvis[i] = ((const int64_t *)tsv.buf)[row];
        rtype[i] = -1;
    }
    const int64_t *ts = tsvis;
    Cur c = {pv.buf, pv.len / 8, 0, 0};
    r.M = (int)next(&c, 1, 63);
    r.T = (int)next(&c, 1, 64);
    r.NC = (int)next(&c, 0, MAXW - 1);
    r.S = (int)next(&c, 0, 1 << 20);
    r.X = (int)next(&c, 0, 1 << 20);
    r.R = (int)next(&c, 0, 1 << 20);
    if (c.bad) goto badprog;
    r.W = 1 + r.NC;
    r.per_window = per_window;
    r.cidx = c.p + c.at;
    for (int t = 0; t < r.T; t++) next(&c, -1, r.NC - 1);
    int M = r.M, T = r.T, S = r.S, X = r.X;
    r.startmask = calloc(M, sizeof(uint64_t));
    r.nend = calloc(M, sizeof(int));
    r.ends = calloc(M, sizeof(int *));
    r.ncv = calloc(M, sizeof(int));
    r.cv = calloc(M, sizeof(int *));
    r.stype = calloc((size_t)S + 1, sizeof(int));
    r.sq = calloc((size_t)S + 1, sizeof(uint64_t));
    r.xspace = calloc((size_t)X + 1, sizeof(int));
    r.xtype = calloc((size_t)X + 1, sizeof(int));
    r.nsrc = calloc((size_t)X + 1, sizeof(int));
    r.src = calloc((size_t)X + 1, sizeof(int *));
    r.xq = calloc((size_t)X + 1, sizeof(uint64_t));
    r.nhold = calloc((size_t)M * T, sizeof(int));
    r.hold = calloc((size_t)M * T, sizeof(int *));
    r.ninto = calloc(T, sizeof(int));
    r.into = calloc(T, sizeof(int *));
    r.nsnapof = calloc(T, sizeof(int));
    r.snapof = calloc(T, sizeof(int *));
    r.bytype = calloc((size_t)T * 3, sizeof(int64_t));
    r.kq = calloc((size_t)T * M, sizeof(int64_t));
    r.tseen = calloc(T, 1);
    r.tmp = calloc(MAXW, sizeof(u128));
    r.acc = calloc((size_t)M * r.W, sizeof(u128));
    r.inc = calloc((size_t)X + 1, sizeof(Expr));
    r.incx = calloc((size_t)X + 1, sizeof(int));
    if (!r.startmask || !r.nend || !r.ends || !r.ncv || !r.cv || !r.stype || !r.sq || !r.xspace || !r.xtype || !r.nsrc ||
        !r.src || !r.xq || !r.nhold || !r.hold || !r.ninto || !r.into || !r.nsnapof || !r.snapof || !r.bytype ||
        !r.kq || !r.tseen || !r.tmp || !r.acc || !r.inc || !r.incx) {
        PyErr_NoMemory();
        goto done;
    }
    for (int j = 0; j < M; j++) {
        int ns;
        int *st = ints(&c, &ns, 0, T - 1);
        if (!st) goto badprog;
        for (int a = 0; a < ns; a++) r.startmask[j] |= (uint64_t)1 << st[a];
        free(st);
        r.ends[j] = ints(&c, &r.nend[j], 0, T - 1);
        r.cv[j] = ints(&c, &r.ncv[j], 0, r.NC - 1);
        if (!r.ends[j] || !r.cv[j]) goto badprog;
        if (1 + r.ncv[j] > r.width) r.width = 1 + r.ncv[j];
    }
    if (r.width < 1) r.width = 1;
    r.out.width = r.width;
    for (int i = 0; i < S; i++) {
        r.stype[i] = (int)next(&c, 0, T - 1);
        r.sq[i] = (uint64_t)next(&c, 0, INT64_MAX);
    }
    for (int x = 0; x < X; x++) {
        r.xspace[x] = (int)next(&c, 0, S - 1);
        r.xtype[x] = (int)next(&c, 0, T - 1);
        r.xq[x] = (uint64_t)next(&c, 0, INT64_MAX);
        r.src[x] = ints(&c, &r.nsrc[x], -1, X - 1);
        if (!r.src[x]) goto badprog;
    }
    for (int h = 0; h < M * T; h++) {
        r.hold[h] = ints(&c, &r.nhold[h], 0, X - 1);
        if (!r.hold[h]) goto badprog;
    }
    /* the masks: each visited row's type and the members matching it */
    for (int d = 0; d < D && !c.bad; d++) {
        int np2 = (int)next(&c, 1, M), t = -1;
        uint64_t b = 0;
        const char *m = mv[d].buf;
        for (int a = 0; a < np2; a++) {
            b |= (uint64_t)1 << next(&c, 0, M - 1);
            int t2 = (int)next(&c, 0, T - 1);
            if (t >= 0 && t2 != t) c.bad = 1; /* a mask is of one event type */
            t = t2;
        }
        if (c.bad) break;
        for (Py_ssize_t i = 0; i < n; i++) {
            if (!m[vis ? vis[i] : i]) continue;
            rtype[i] = t;
            bits[i] |= b;
        }
    }
    if (c.bad || c.at != c.n) goto badprog;
    {
        uint64_t all = M == 64 ? ~(uint64_t)0 : (((uint64_t)1 << M) - 1);
        for (int i = 0; i < S; i++)
            if (r.sq[i] & ~all) goto badprog;
        for (int x = 0; x < X; x++)
            if (r.xq[x] & ~all) goto badprog;
    }
    /* per type: the expressions into it and the spaces snapshotting it */
    for (int x = 0; x < X; x++) r.ninto[r.xtype[x]]++;
    for (int i = 0; i < S; i++) r.nsnapof[r.stype[i]]++;
    for (int t = 0; t < T; t++) {
        r.into[t] = calloc((size_t)r.ninto[t] + 1, sizeof(int));
        r.snapof[t] = calloc((size_t)r.nsnapof[t] + 1, sizeof(int));
        if (!r.into[t] || !r.snapof[t]) {
            PyErr_NoMemory();
            goto done;
        }
        r.ninto[t] = r.nsnapof[t] = 0;
    }
    for (int x = 0; x < X; x++) r.into[r.xtype[x]][r.ninto[r.xtype[x]]++] = x;
    for (int i = 0; i < S; i++) r.snapof[r.stype[i]][r.nsnapof[r.stype[i]]++] = i;
    /* windows */
    int64_t span = (within + slide - 1) / slide + 1;
    if (span > MAX_OPEN) {
        result = Py_None;
        Py_INCREF(result);
        goto done;
    }
    r.cap = span;
    r.win = calloc((size_t)r.cap, sizeof(Win));
    if (!r.win) {
        PyErr_NoMemory();
        goto done;
    }
    for (int64_t k = 0; k < r.cap; k++) {
        r.win[k].start = calloc((size_t)M * T * r.W, sizeof(u128));
        r.win[k].ex = calloc((size_t)X + 1, sizeof(Expr));
        r.win[k].latest = calloc((size_t)S + 1, sizeof(int64_t));
        if (!r.win[k].start || !r.win[k].ex || !r.win[k].latest) {
            PyErr_NoMemory();
            goto done;
        }
    }
    Py_ssize_t p = 0;
    for (Py_ssize_t lo = 0; lo < n;) {
        if (p < np_ && ps[p] <= lo) { /* a partition starts: every open window closes */
            if (close_below(&r, INT64_MAX) < 0) goto nomem;
            while (p < np_ && ps[p] <= lo) r.part = p++;
        }
        Py_ssize_t end = p < np_ ? ps[p] : n, hi = lo + 1;
        while (hi < end && ts[hi] == ts[lo]) hi++;
        int64_t kmin = floordiv(ts[lo] - within, slide) + 1, kmax = floordiv(ts[lo], slide);
        if (close_below(&r, kmin) < 0) goto nomem;
        memset(r.tseen, 0, T);
        memset(r.kq, 0, (size_t)T * M * sizeof(int64_t));
        int starts = 0;
        for (Py_ssize_t row = lo; row < hi; row++) {
            int t = rtype[row];
            if (t < 0) continue;
            r.tseen[t] = 1;
            for (uint64_t b = bits[row]; b; b &= b - 1) {
                int j = __builtin_ctzll(b);
                r.kq[(size_t)t * M + j]++;
                if (r.startmask[j] >> t & 1) starts = 1;
            }
        }
        /* a window opens where a trend starts in it (its state is zero before) */
        if (starts) open_upto(&r, kmin, kmax);
        for (int64_t k = r.lo; k < r.lo + r.count; k++) {
            time_stamp(&r, slot(&r, k), rtype, bits, lo, hi);
            if (r.failed) goto nomem;
        }
        lo = hi;
    }
    if (close_below(&r, INT64_MAX) < 0) goto nomem;
    {
        PyObject *pw = Py_None;
        if (per_window) {
            pw = PyBytes_FromStringAndSize((const char *)r.pw, r.npw * 5 * sizeof(int64_t));
            if (!pw) goto done;
        } else {
            Py_INCREF(pw);
        }
        result = Py_BuildValue("(y#y#y#y#(LLLLLLLL)y#N)", (const char *)r.out.mem, (Py_ssize_t)(r.out.n * sizeof(int64_t)),
                               (const char *)r.out.part, (Py_ssize_t)(r.out.n * sizeof(int64_t)), (const char *)r.out.k,
                               (Py_ssize_t)(r.out.n * sizeof(int64_t)), (const char *)r.out.val,
                               (Py_ssize_t)(r.out.n * 2 * r.width * sizeof(uint64_t)), (long long)r.windows,
                               (long long)r.shared, (long long)r.alone, (long long)r.own, (long long)r.split,
                               (long long)r.snapshots, (long long)r.evaluations, (long long)r.rebases,
                               (const char *)r.bytype, (Py_ssize_t)(T * 3 * sizeof(int64_t)), pw);
    }
    goto done;
nomem:
    PyErr_NoMemory();
    goto done;
badprog:
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "prog: a malformed group description");
done:
    if (got >= 1) PyBuffer_Release(&tsv);
    if (idx_o != Py_None && got >= 2) PyBuffer_Release(&idxv);
    if (got >= 3) PyBuffer_Release(&psv);
    if (got >= 4) PyBuffer_Release(&pv);
    for (int d = 0; d < nmv; d++) PyBuffer_Release(&mv[d]);
    if (r.win) {
        for (int64_t k = 0; k < r.cap; k++) {
            Win *w = &r.win[k];
            if (w->ex)
                for (int x = 0; x < r.X; x++) {
                    free(w->ex[x].sid);
                    free(w->ex[x].coef);
                }
            free(w->ex);
            free(w->start);
            free(w->snap);
            free(w->latest);
        }
        free(r.win);
    }
    if (r.inc)
        for (int x = 0; x < r.X; x++) {
            free(r.inc[x].sid);
            free(r.inc[x].coef);
        }
    for (int j = 0; j < r.M && r.ends; j++) {
        free(r.ends[j]);
        free(r.cv[j]);
    }
    for (int x = 0; x < r.X && r.src; x++) free(r.src[x]);
    for (int h = 0; h < r.M * r.T && r.hold; h++) free(r.hold[h]);
    for (int t = 0; t < r.T && r.into; t++) {
        free(r.into[t]);
        free(r.snapof[t]);
    }
    count_rows_free(&r.out);
    FREE_ALL(mv, tsvis, rtype, bits, r.startmask, r.nend, r.ends, r.ncv, r.cv, r.stype, r.sq, r.xspace,
             r.xtype, r.nsrc, r.src, r.xq, r.nhold, r.hold, r.ninto, r.into, r.nsnapof, r.snapof, r.bytype,
             r.kq, r.tseen, r.tmp, r.acc, r.inc, r.incx, r.pw);
    return result;
}

COMPILED_MODULE(_counts, "The compiled sequence (GLORIA) executor over count states.",
                "A sequence group's pass over count states (see the module source).")
