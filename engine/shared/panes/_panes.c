/* The panes pass: queries that differ only in their windows, evaluated over shared panes
 * (docs/engine.md, "Shared panes"; Weave Share's partial aggregation in trendlake's batch
 * setting).
 *
 * The queries have one template over count states (engine/steps.h): the same variables,
 * predicates and COUNT(E) keys; only their windows (within, slide) differ. The time line is
 * cut at every start and end of any query's window (the *edges*; within one composite slide
 * they repeat). Between two edges (a *pane*) every query has the same open windows, so a
 * pane's effect on any window's state is one affine map of the state,
 *
 *     state after the pane = M state before + c,
 *
 * computed once from the pane's steps: M's columns are the steps' linear part applied to the
 * unit states (no new trends), c the steps applied to the empty state (new trends start). Every step of COGRA's kernel is linear in the state, so applying the pane's steps to
 * any state gives M state + c. A window is the panes between its two edges: its state is the
 * empty state carried through the maps of its panes in order (a pane with no event is the
 * identity and is not kept). Counts stay exact 128-bit integers saturated past CAP: every
 * map entry and state count only grows with the true value, so a saturated entry meets a
 * nonzero count only where the true result is past CAP too, and the results are exactly
 * those of the kernel run for each query alone (engine/strategies/cogra/_steps.c).
 *
 * run(ts, idx, masks, starts, nv, rank, selfloop, start, preds, owners, ends, windows)
 *   the arguments of engine/steps.h, then per query its (within, slide);
 * returns (results, counters): per query (kids, ks, values) as the kernel returns them
 *   (int64 partition indexes and window indexes of the windows with a trend, per window
 *   1 + len(owners) counts as (low, high) uint64 pairs, all ones for a saturated count);
 *   counters (panes, steps, pane products); or None where the Python kernel would be needed
 *   (a visited row matching several variables, several events at one time stamp and rank
 *   None) or the state is too large (more than MAXD counts).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../steps.h"

#define MAXD 64

typedef struct {
    int64_t within, slide;
    CountRows out;
} Win;

typedef struct {
    const Tmpl *t;
    int Q, D;
    Win *q;
    /* the current partition's panes, in time order: [lo, hi) and the map ((D + 1) columns
     * of D counts: M's columns, then c) */
    int64_t *lo, *hi;
    u128 *map;
    Py_ssize_t n, cap;
    int64_t part, cur;
    int started;
    int64_t plo, phi; /* the pane looked up last */
    int64_t steps, panes, products;
} Pass;

/* the pane of time stamp ts: [last edge <= ts, next edge > ts) */
static int64_t pane_of(void *pass, int64_t ts) {
    Pass *p = pass;
    if (ts >= p->plo && ts < p->phi) return p->plo;
    int64_t lo = INT64_MIN, hi = INT64_MAX;
    for (int j = 0; j < p->Q; j++) {
        int64_t w = p->q[j].within, s = p->q[j].slide;
        int64_t a = floordiv(ts, s) * s, b = floordiv(ts - w, s) * s + w; /* a window's start, end */
        if (a > lo) lo = a;
        if (b > lo) lo = b;
        if (a + s < hi) hi = a + s;
        if (b + s < hi) hi = b + s;
    }
    p->plo = lo;
    p->phi = hi;
    return lo;
}

static int new_pane(Pass *p, int64_t lo) {
    const int D = p->D, size = (D + 1) * D;
    if (p->n == p->cap) {
        Py_ssize_t cap = p->cap ? 2 * p->cap : 256;
        int64_t *a = realloc(p->lo, cap * sizeof(int64_t));
        if (!a) return -1;
        p->lo = a;
        a = realloc(p->hi, cap * sizeof(int64_t));
        if (!a) return -1;
        p->hi = a;
        u128 *m = realloc(p->map, (size_t)cap * size * sizeof(u128));
        if (!m) return -1;
        p->map = m;
        p->cap = cap;
    }
    pane_of(p, lo);
    p->lo[p->n] = lo;
    p->hi[p->n] = p->phi;
    u128 *m = p->map + p->n * size;
    memset(m, 0, size * sizeof(u128));
    for (int j = 0; j < D; j++) m[j * D + j] = 1; /* M = identity, c = 0 */
    p->n++;
    p->panes++;
    p->cur = lo;
    return 0;
}

/* v = M v + c for pane f */
static void carry(const Pass *p, Py_ssize_t f, u128 *v) {
    const int D = p->D;
    const u128 *m = p->map + f * (D + 1) * D;
    u128 out[MAXD];
    memcpy(out, m + D * D, D * sizeof(u128));
    for (int j = 0; j < D; j++) {
        if (!v[j]) continue;
        const u128 *col = m + j * D;
        for (int i = 0; i < D; i++)
            if (col[i]) out[i] = add_exact(out[i], mul_exact(col[i], v[j]));
    }
    for (int i = 0; i < D; i++) v[i] = keep(out[i]);
}

/* every window of query j over the partition's panes */
static int windows_of(Pass *p, int j) {
    const int64_t w = p->q[j].within, s = p->q[j].slide;
    int64_t k = floordiv(p->lo[0] - w, s) + 1, kend = floordiv(p->lo[p->n - 1], s);
    Py_ssize_t a = 0;
    u128 v[MAXD], res[65];
    while (k <= kend) {
        int64_t lo = k * s, hi = lo + w;
        while (a < p->n && p->lo[a] < lo) a++;
        if (a == p->n) break;
        if (p->lo[a] >= hi) { /* no pane in this window: on to the first window of pane a */
            int64_t next = floordiv(p->lo[a] - w, s) + 1;
            k = next > k ? next : k + 1;
            continue;
        }
        memset(v, 0, p->D * sizeof(u128));
        for (Py_ssize_t f = a; f < p->n && p->lo[f] < hi; f++) {
            carry(p, f, v);
            p->products++;
        }
        end_counts(p->t, v, res);
        if (res[0] && count_rows_push(&p->q[j].out, 0, p->part, k, res, 1 + p->t->nc) < 0) return -1;
        k++;
    }
    return 0;
}

static int close_partition(Pass *p) {
    if (p->started && p->n)
        for (int j = 0; j < p->Q; j++)
            if (windows_of(p, j) < 0) return -1;
    p->n = 0;
    return 0;
}

static int flush(void *pass, Step *st) {
    Pass *p = pass;
    if (!p->started || st->part != p->part) {
        if (close_partition(p) < 0) return -1;
        p->part = st->part;
        p->started = 1;
    }
    if (!p->n || st->pane != p->cur) {
        if (new_pane(p, st->pane) < 0) return -1;
    }
    u128 *m = p->map + (p->n - 1) * (p->D + 1) * p->D;
    for (int c = 0; c <= p->D; c++) apply(p->t, m + c * p->D, st->code, st->simultaneous, st->k, c < p->D);
    p->steps++;
    return 0;
}

static int parse_windows(Pass *p, PyObject *win_o) {
    if (!PyTuple_Check(win_o) || PyTuple_GET_SIZE(win_o) < 1) {
        PyErr_SetString(PyExc_TypeError, "windows: a non-empty tuple of (within, slide) expected");
        return -1;
    }
    p->Q = (int)PyTuple_GET_SIZE(win_o);
    p->q = calloc((size_t)p->Q, sizeof(Win));
    if (!p->q) {
        PyErr_NoMemory();
        return -1;
    }
    for (int j = 0; j < p->Q; j++) {
        long long w, s;
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(win_o, j), "LL", &w, &s)) return -1;
        if (w <= 0 || s <= 0) {
            PyErr_SetString(PyExc_ValueError, "windows: positive within / slide expected");
            return -1;
        }
        p->q[j].within = w;
        p->q[j].slide = s;
        p->q[j].out.width = 1 + p->t->nc;
    }
    return 0;
}

static PyObject *results(Pass *p) {
    PyObject *per = PyTuple_New(p->Q);
    if (!per) return NULL;
    for (int j = 0; j < p->Q; j++) {
        CountRows *o = &p->q[j].out;
        PyObject *r = Py_BuildValue("(y#y#y#)", o->n ? (const char *)o->part : "", (Py_ssize_t)(o->n * 8),
                                    o->n ? (const char *)o->k : "", (Py_ssize_t)(o->n * 8),
                                    o->n ? (const char *)o->val : "", (Py_ssize_t)(o->n * 16 * o->width));
        if (!r) {
            Py_DECREF(per);
            return NULL;
        }
        PyTuple_SET_ITEM(per, j, r);
    }
    return Py_BuildValue("(N(LLL))", per, (long long)p->panes, (long long)p->steps, (long long)p->products);
}

static PyObject *run(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *ts_o, *idx_o, *masks_o, *starts_o, *rank_o, *selfloop_o, *start_o, *preds_o, *owners_o, *ends_o, *win_o;
    int nv;
    if (!PyArg_ParseTuple(args, "OOOOiOOOOOOO", &ts_o, &idx_o, &masks_o, &starts_o, &nv, &rank_o, &selfloop_o,
                          &start_o, &preds_o, &owners_o, &ends_o, &win_o))
        return NULL;
    Tmpl t;
    Rows rw = {0};
    Pass p = {.t = &t, .plo = 1, .phi = 0};
    PyObject *result = NULL;
    if (parse_template(&t, nv, rank_o, selfloop_o, start_o, preds_o, owners_o, ends_o) < 0 ||
        parse_windows(&p, win_o) < 0 || parse_rows(&rw, nv, ts_o, idx_o, masks_o, starts_o) < 0)
        goto done;
    p.D = nv * t.stride;
    if (p.D > MAXD) {
        result = Py_None;
        Py_INCREF(result);
        goto done;
    }
    int got;
    Py_BEGIN_ALLOW_THREADS
    got = read_steps(&t, &rw, pane_of, flush, &p);
    if (got == READ_OK && close_partition(&p) < 0) got = READ_FAILED;
    Py_END_ALLOW_THREADS
    if (read_status(got, &result) == 0) {
        result = results(&p);
    }
done:
    release_rows(&rw);
    for (int j = 0; p.q && j < p.Q; j++) count_rows_free(&p.q[j].out);
    free(p.q);
    free(p.lo);
    free(p.hi);
    free(p.map);
    return result;
}

COMPILED_MODULE(_panes, "The compiled panes pass.",
                "Queries that differ only in their windows, over shared panes (see the module source).")
