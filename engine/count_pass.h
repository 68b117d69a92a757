/* COGRA's type-grained count pass over many partitions: the windows of one template and its
 * steps (engine/steps.h), each step applied to every open window of its pane. The body of
 * COGRA's compiled kernel (engine/strategies/cogra/_steps.c, whose comment gives the
 * arguments) and of the subsequence kind's prefix pass (engine/shared/subsequence/_prefix.c),
 * each a module of its own so that a shared executor imports no strategy.
 */
#ifndef TRENDLAKE_COUNT_PASS_H
#define TRENDLAKE_COUNT_PASS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "steps.h"

typedef struct {
    int64_t *kid, *k;
    uint64_t *val;
    Py_ssize_t n, cap;
    const Tmpl *t;
} Out;

/* values per closed window: the trends and COUNT(E) per owner, or per_end each END's count */
static inline int out_size(const Tmpl *t) { return t->per_end ? t->nends : 1 + t->nc; }

/* a closed window's result: its counts summed over the END variables (or per END); none
 * without a trend */
static int out_push(Out *o, int64_t kid, int64_t k, const u128 *st) {
    u128 res[65];
    const int size = out_size(o->t);
    end_counts(o->t, st, res);
    int any = 0;
    for (int a = 0; a < (o->t->per_end ? size : 1); a++) any |= res[a] != 0;
    if (!any) return 0;
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

static PyObject *count_pass(PyObject *args) {
    PyObject *ts_o, *idx_o, *masks_o, *starts_o, *rank_o, *selfloop_o, *start_o, *preds_o, *owners_o, *ends_o;
    int nv, multi = 0, per_end = 0;
    long long within, slide;
    if (!PyArg_ParseTuple(args, "OOOOiOOOOOOLL|pp", &ts_o, &idx_o, &masks_o, &starts_o, &nv, &rank_o,
                          &selfloop_o, &start_o, &preds_o, &owners_o, &ends_o, &within, &slide, &multi, &per_end))
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
    t.multi = multi;
    t.per_end = per_end;
    if (per_end && (t.nc || !t.nends)) {
        PyErr_SetString(PyExc_ValueError, "per_end: END variables and no COUNT(E) keys expected");
        goto done;
    }
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
                               (Py_ssize_t)(o.n * 16 * out_size(&t)));
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

#endif
