/* COGRA's type-grained kernel for count states, compiled (docs/engine.md, "COGRA").
 *
 * The same computation as kernel.py's Kernel.run followed by the generated Python step
 * code, for the queries whose window state holds only counts (COUNT(*) and COUNT(E), no
 * SUM / MIN / MAX, not exact mode) and whose events each match one variable: the steps of
 * engine/steps.h, with panes cut at every window start and end, each step applied to every
 * open window of its pane. Counts are exact 128-bit integers; a count past CAP (10**38 - 1)
 * is saturated (NaN in Python), exactly as the Python kernel keeps it.
 *
 * run(ts, idx, masks, starts, nv, rank, selfloop, start, preds, owners, ends, within, slide)
 *   the arguments of engine/steps.h, then the query's window; a window closes where the
 *   next partition starts.
 * returns (kids, ks, values) as bytes: int64 partition indexes (into starts) and window
 *   indexes of the closed windows with a trend, and per window its result, 1 + len(owners)
 *   counts summed over the END variables (the trends, then COUNT(E) per owner), as (low,
 *   high) uint64 pairs, all ones for a saturated count; or None where the Python kernel
 *   must run: a visited row matching several variables, several events at one time stamp
 *   and rank None, or a window spanning too many slides.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../steps.h"

typedef struct {
    int64_t *kid, *k;
    uint64_t *val;
    Py_ssize_t n, cap;
    const Tmpl *t;
} Out;

/* a closed window's result: its counts summed over the END variables; none without a trend */
static int out_push(Out *o, int64_t kid, int64_t k, const u128 *st) {
    u128 res[65];
    const int size = 1 + o->t->nc;
    end_counts(o->t, st, res);
    if (res[0] == 0) return 0;
    if (o->n == o->cap) {
        Py_ssize_t cap = o->cap ? 2 * o->cap : 1024;
        int64_t *nk = realloc(o->kid, cap * sizeof(int64_t));
        if (!nk) return -1;
        o->kid = nk;
        int64_t *nw = realloc(o->k, cap * sizeof(int64_t));
        if (!nw) return -1;
        o->k = nw;
        uint64_t *nvv = realloc(o->val, cap * 2 * size * sizeof(uint64_t));
        if (!nvv) return -1;
        o->val = nvv;
        o->cap = cap;
    }
    o->kid[o->n] = kid;
    o->k[o->n] = k;
    uint64_t *v = o->val + o->n * 2 * size;
    for (int a = 0; a < size; a++) {
        v[2 * a] = (uint64_t)res[a];
        v[2 * a + 1] = (uint64_t)(res[a] >> 64);
    }
    o->n++;
    return 0;
}

/* the open windows: a contiguous range of window indexes [lo, lo + count) in a ring,
 * window lo in slot head */
typedef struct {
    int64_t lo, count, cap, head;
    u128 *vals;      /* cap * size */
    char *nonzero;   /* cap */
    int size;
    int64_t part;
} Windows;

static inline Py_ssize_t slot(const Windows *w, int64_t k) { return (Py_ssize_t)RING_SLOT(w, k); }

static int close_below(Windows *w, int64_t kmin, Out *o) {
    while (w->count && w->lo < kmin) {
        Py_ssize_t s = slot(w, w->lo);
        if (w->nonzero[s] && out_push(o, w->part, w->lo, w->vals + s * w->size) < 0) return -1;
        RING_DROP(w);
    }
    return 0;
}

static void open_range(Windows *w, int64_t kmin, int64_t kmax) {
    RING_START(w, kmin);
    for (int64_t k = w->lo + w->count; k <= kmax; k++) {
        Py_ssize_t s = slot(w, k);
        memset(w->vals + s * w->size, 0, w->size * sizeof(u128));
        w->nonzero[s] = 0;
        w->count++;
    }
}

typedef struct {
    const Tmpl *t;
    Windows *w;
    Out *o;
    int64_t within, slide, off;
    int64_t pane; /* of the last applied step (its partition: w->part) */
    int started;
    int64_t plo, phi, pid; /* the last pane looked up: time stamps [plo, phi) */
    int64_t wpane, kmin, kmax; /* the windows of pane wpane */
} Runner;

static int64_t pane_of(void *pass, int64_t ts) {
    Runner *r = pass;
    if (ts >= r->plo && ts < r->phi) return r->pid;
    int64_t q = floordiv(ts, r->slide), lo = q * r->slide;
    if (r->off == 0) {
        r->pid = q;
        r->plo = lo;
        r->phi = lo + r->slide;
    } else if (ts - lo >= r->off) {
        r->pid = 2 * q + 1;
        r->plo = lo + r->off;
        r->phi = lo + r->slide;
    } else {
        r->pid = 2 * q;
        r->plo = lo;
        r->phi = lo + r->off;
    }
    return r->pid;
}

static int flush(void *pass, Step *st) {
    Runner *r = pass;
    Windows *w = r->w;
    if (!r->started || st->part != w->part) {
        if (close_below(w, INT64_MAX, r->o) < 0) return -1;
        w->part = st->part;
        r->started = 1;
        r->pane = st->pane - 1;
    }
    if (st->pane != r->wpane) { /* every time stamp of a pane has the same windows */
        r->kmin = floordiv(st->ts - r->within, r->slide) + 1;
        r->kmax = floordiv(st->ts, r->slide);
        r->wpane = st->pane;
    }
    int64_t kmin = r->kmin, kmax = r->kmax;
    if (st->pane != r->pane) {
        if (close_below(w, kmin, r->o) < 0) return -1;
        r->pane = st->pane;
    }
    int starts = r->t->start[st->code];
    if (starts) open_range(w, kmin, kmax);
    for (int64_t k = w->lo; k < w->lo + w->count; k++) {
        Py_ssize_t s = slot(w, k);
        if (!starts && !w->nonzero[s]) continue;
        apply(r->t, w->vals + s * w->size, st->code, st->simultaneous, st->k, 0);
        if (!w->nonzero[s]) {
            for (int a = 0; a < w->size; a++) {
                if (w->vals[s * w->size + a]) {
                    w->nonzero[s] = 1;
                    break;
                }
            }
        }
    }
    return 0;
}

static PyObject *run(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *ts_o, *idx_o, *masks_o, *starts_o, *rank_o, *selfloop_o, *start_o, *preds_o, *owners_o, *ends_o;
    int nv;
    long long within, slide;
    if (!PyArg_ParseTuple(args, "OOOOiOOOOOOLL", &ts_o, &idx_o, &masks_o, &starts_o, &nv, &rank_o,
                          &selfloop_o, &start_o, &preds_o, &owners_o, &ends_o, &within, &slide))
        return NULL;
    if (slide <= 0 || within <= 0) {
        PyErr_SetString(PyExc_ValueError, "positive within / slide expected");
        return NULL;
    }
    Tmpl t;
    Rows rw = {0};
    PyObject *result = NULL;
    Windows w = {0};
    Out o = {.t = &t};
    if (parse_template(&t, nv, rank_o, selfloop_o, start_o, preds_o, owners_o, ends_o) < 0 ||
        parse_rows(&rw, nv, ts_o, idx_o, masks_o, starts_o) < 0)
        goto done;
    /* windows open at once: at most ceil(within / slide) */
    int64_t wcap = within / slide + 2;
    int size = nv * t.stride;
    if (wcap > (1 << 22) / size) {
        result = Py_None; /* the Python kernel keeps them in a dict */
        Py_INCREF(result);
        goto done;
    }
    w.cap = wcap;
    w.size = size;
    w.vals = calloc((size_t)wcap * size, sizeof(u128));
    w.nonzero = calloc((size_t)wcap, 1);
    if (!w.vals || !w.nonzero) {
        PyErr_NoMemory();
        goto done;
    }
    Runner r_ = {.t = &t, .w = &w, .o = &o, .within = within, .slide = slide, .off = within % slide,
                 .plo = 1, .phi = 0,       /* no pane looked up yet: an empty range */
                 .wpane = INT64_MIN};      /* no pane's windows computed yet */
    int got;
    Py_BEGIN_ALLOW_THREADS
    got = read_steps(&t, &rw, pane_of, flush, &r_);
    if (got == READ_OK && close_below(&w, INT64_MAX, &o) < 0) got = READ_FAILED;
    Py_END_ALLOW_THREADS
    if (read_status(got, &result) == 0) {
        /* "y#" of a NULL buffer would be None: no closed window gives empty bytes */
        result = Py_BuildValue("(y#y#y#)", o.n ? (const char *)o.kid : "", (Py_ssize_t)(o.n * 8),
                               o.n ? (const char *)o.k : "", (Py_ssize_t)(o.n * 8), o.n ? (const char *)o.val : "",
                               (Py_ssize_t)(o.n * 16 * t.stride));
    }
done:
    release_rows(&rw);
    free(w.vals);
    free(w.nonzero);
    free(o.kid);
    free(o.k);
    free(o.val);
    return result;
}

COMPILED_MODULE(_steps, "COGRA's compiled count kernel.",
                "COGRA's count kernel over many partitions (see the module source).")
