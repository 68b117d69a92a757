/* COGRA's type-grained steps over count states: the building block of the compiled passes
 * that apply a query's events to its states (engine/strategies/cogra/_steps.c, one query's
 * windows; engine/shared/panes/_panes.c, the panes of queries that differ only in their
 * windows). docs/engine.md, "COGRA".
 *
 * The rows to visit are read a time stamp at a time; a time stamp's events are applied one
 * variable at a time (a variable before its predecessors, `rank`), and runs of one variable
 * become burst steps (at most LIMIT time stamps each) within one pane (a stretch of time
 * with the same open windows: each pass says where its panes are cut). A state is, per
 * variable, its count then its COUNT(E) per key (`stride` counts); counts are exact 128-bit
 * integers saturated past CAP (count128.h).
 *
 * The arguments both passes take, in this order:
 *   ts: int64 buffer of time stamps over the rows (time order within a partition);
 *   idx: int32 / int64 buffer of the increasing rows to visit, or None for every row;
 *   masks: per variable a bool buffer over the rows (does the row match it);
 *   starts: int32 / int64 buffer of the rows where each partition starts (the first 0),
 *   or None for one partition;
 *   nv: the variables; rank: a tuple (a variable before its predecessors) or None;
 *   selfloop, start: tuples of 0/1 per variable; preds: per variable the tuple of its
 *   predecessor indexes (itself included for a Kleene variable); owners: per COUNT(E) the
 *   index of E; ends: the indexes of the END variables.
 */
#ifndef TRENDLAKE_STEPS_H
#define TRENDLAKE_STEPS_H

#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pymodule.h"

#define LIMIT 120

typedef struct {
    int nv, nc, stride;      /* variables, COUNT(E) keys, counts per variable */
    int selfloop[64], start[64];
    int owner[64];           /* per COUNT(E) key: index of E */
    /* per variable, the variables a step reads: [0] its other predecessors (a burst),
     * [1] all its predecessors, itself included (k simultaneous events) */
    int nsrc[2][64];
    int src[2][64][64];
    int nends, ends[64];
    int has_rank, by_rank[64];
    int multi;   /* a row may match several variables: each is one event of its time stamp */
    int per_end; /* a window's result: count(E) of each END variable, not their sum */
} Tmpl;

/* apply a step of k events of variable i to one state; simultaneous: k events of one time
 * stamp of a Kleene variable (each extends only the trends before it). image: the state is
 * any vector, not one the events reach, and the step its linear part (a START variable's
 * events start no trend; no shortcut that holds only for reachable states, where a count of
 * zero implies COUNT(E) entries of zero) */
static void apply(const Tmpl *t, u128 *st, int i, int simultaneous, int64_t k, int image) {
    const int stride = t->stride, nsrc = t->nsrc[simultaneous][i];
    const int *src = t->src[simultaneous][i];
    u128 s = (!image && t->start[i]) ? 1 : 0;
    for (int a = 0; a < nsrc; a++) s = add_sat(s, st[src[a] * stride]);
    u128 *mine = st + i * stride;
    if (t->selfloop[i] && !simultaneous) {
        u128 u = add_sat(mine[0], s);
        if (u == 0 && !image) return;
        u128 A = shl_exact(u, (int)k);
        /* u * 2**k - s, s <= u: NANV when u * 2**k passed 2**128 (the result is then at
         * least 2**127) or s was saturated */
        mine[0] = (A == NANV || s == NANV) ? NANV : keep(A - s);
        for (int j = 0; j < t->nc; j++) {
            u128 sw = 0;
            for (int a = 0; a < nsrc; a++) sw = add_sat(sw, st[src[a] * stride + 1 + j]);
            u128 r = shl_exact(add_sat(mine[1 + j], sw), (int)k);
            r = (r == NANV || sw == NANV) ? NANV : r - sw;
            if (t->owner[j] == i) r = add_exact(r, mul_exact(shl_exact(u, (int)k - 1), (u128)k));
            mine[1 + j] = keep(r);
        }
    } else {
        if (s == 0 && !image) return;
        u128 kk = (u128)k;
        mine[0] = keep(add_exact(mine[0], mul_exact(s, kk)));
        for (int j = 0; j < t->nc; j++) {
            u128 sw = 0;
            for (int a = 0; a < nsrc; a++) sw = add_sat(sw, st[src[a] * stride + 1 + j]);
            u128 r = add_exact(mine[1 + j], mul_exact(sw, kk));
            if (t->owner[j] == i) r = add_exact(r, mul_exact(s, kk));
            mine[1 + j] = keep(r);
        }
    }
}

/* a state's result: its counts summed over the END variables (the trends, then COUNT(E)
 * per key) */
static inline void end_counts(const Tmpl *t, const u128 *st, u128 *res) {
    if (t->per_end) {
        for (int e = 0; e < t->nends; e++) res[e] = st[t->ends[e] * t->stride];
        return;
    }
    for (int a = 0; a <= t->nc; a++) {
        res[a] = 0;
        for (int e = 0; e < t->nends; e++) res[a] = add_sat(res[a], st[t->ends[e] * t->stride + a]);
    }
}

static int range_ok(const int *xs, int n, int lo, int hi, const char *what) {
    for (int i = 0; i < n; i++) {
        if (xs[i] < lo || xs[i] >= hi) {
            PyErr_Format(PyExc_ValueError, "%s: variable index out of range", what);
            return -1;
        }
    }
    return 0;
}

/* the template from the Python arguments (nv, rank, selfloop, start, preds, owners, ends) */
static int parse_template(Tmpl *t, int nv, PyObject *rank_o, PyObject *selfloop_o, PyObject *start_o,
                          PyObject *preds_o, PyObject *owners_o, PyObject *ends_o) {
    memset(t, 0, sizeof(*t));
    if (nv <= 0 || nv > 64) {
        PyErr_SetString(PyExc_ValueError, "1..64 variables expected");
        return -1;
    }
    if (!PyTuple_Check(owners_o) || !PyTuple_Check(preds_o) || PyTuple_GET_SIZE(preds_o) != nv ||
        !PyTuple_Check(ends_o) || PyTuple_GET_SIZE(ends_o) > nv) {
        PyErr_SetString(PyExc_TypeError, "preds, owners and ends: tuples expected");
        return -1;
    }
    t->nv = nv;
    t->nc = (int)PyTuple_GET_SIZE(owners_o);
    if (t->nc > 64) {
        PyErr_SetString(PyExc_ValueError, "at most 64 COUNT(E) keys expected");
        return -1;
    }
    t->stride = 1 + t->nc;
    t->nends = (int)PyTuple_GET_SIZE(ends_o);
    if (int_tuple(selfloop_o, nv, t->selfloop, "selfloop") < 0 || int_tuple(start_o, nv, t->start, "start") < 0 ||
        int_tuple(owners_o, t->nc, t->owner, "owners") < 0 || int_tuple(ends_o, t->nends, t->ends, "ends") < 0 ||
        range_ok(t->ends, t->nends, 0, nv, "ends") < 0 || range_ok(t->owner, t->nc, -1, nv, "owners") < 0)
        return -1;
    t->has_rank = rank_o != Py_None;
    if (t->has_rank) {
        int rank[64];
        if (int_tuple(rank_o, nv, rank, "rank") < 0) return -1;
        for (int v = 0; v < nv; v++) t->by_rank[v] = -1;
        for (int v = 0; v < nv; v++) {
            if (rank[v] < 0 || rank[v] >= nv || t->by_rank[rank[v]] >= 0) {
                PyErr_SetString(PyExc_ValueError, "rank: a permutation of the variables expected");
                return -1;
            }
            t->by_rank[rank[v]] = v;
        }
    }
    for (int i = 0; i < nv; i++) {
        PyObject *p = PyTuple_GET_ITEM(preds_o, i);
        int np = PyTuple_Check(p) ? (int)PyTuple_GET_SIZE(p) : -1, pred[64];
        if (np < 0 || np > nv) {
            PyErr_SetString(PyExc_TypeError, "preds: a tuple of variable indexes per variable expected");
            return -1;
        }
        if (int_tuple(p, np, pred, "preds") < 0 || range_ok(pred, np, 0, nv, "preds") < 0) return -1;
        for (int a = 0; a < np; a++) {
            if (pred[a] != i) t->src[0][i][t->nsrc[0][i]++] = pred[a];
            t->src[1][i][t->nsrc[1][i]++] = pred[a];
        }
    }
    return 0;
}

/* a contiguous buffer of one-byte items (bools), of 4- or 8-byte signed ints (indexes),
 * or of 8-byte signed ints only (time stamps) */
enum { BYTES = 1, INDEXES = 2, INT64 = 3 };

static int get_buffer(PyObject *obj, Py_buffer *view, int kind, const char *what) {
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return -1;
    const char *f = view->format ? view->format : "B";
    if (*f == '=' || *f == '<' || *f == '@') f++;
    int ok;
    if (kind == BYTES) {
        ok = view->itemsize == 1 && (!strcmp(f, "?") || !strcmp(f, "b") || !strcmp(f, "B"));
    } else {
        int is64 = view->itemsize == 8 && (!strcmp(f, "l") || !strcmp(f, "q"));
        int is32 = view->itemsize == 4 && (!strcmp(f, "i") || !strcmp(f, "l"));
        ok = kind == INT64 ? is64 : (is64 || is32);
    }
    if (!ok) {
        PyBuffer_Release(view);
        PyErr_Format(PyExc_TypeError, "%s: a contiguous %s buffer expected", what,
                     kind == BYTES ? "bool" : kind == INT64 ? "int64" : "int32 or int64");
        return -1;
    }
    return 0;
}

static inline int64_t index_at(const Py_buffer *b, Py_ssize_t i) {
    return b->itemsize == 4 ? (int64_t)((const int32_t *)b->buf)[i] : ((const int64_t *)b->buf)[i];
}

/* the rows: time stamps, the rows to visit, the variables' masks, the partitions */
typedef struct {
    Py_buffer ts_v, idx_v, starts_v, mask_v[64];
    int have_ts, have_idx, have_starts, have_masks;
    Py_ssize_t rows, n, nparts;
} Rows;

static int parse_rows(Rows *r, int nv, PyObject *ts_o, PyObject *idx_o, PyObject *masks_o, PyObject *starts_o) {
    if (!PyTuple_Check(masks_o) || PyTuple_GET_SIZE(masks_o) != nv) {
        PyErr_SetString(PyExc_TypeError, "masks: a tuple of one bool buffer per variable expected");
        return -1;
    }
    if (get_buffer(ts_o, &r->ts_v, INT64, "ts") < 0) return -1;
    r->have_ts = 1;
    r->rows = r->ts_v.len / 8;
    for (; r->have_masks < nv; r->have_masks++) {
        if (get_buffer(PyTuple_GET_ITEM(masks_o, r->have_masks), &r->mask_v[r->have_masks], BYTES, "masks") < 0) return -1;
        if (r->mask_v[r->have_masks].len != r->rows) {
            r->have_masks++;
            PyErr_SetString(PyExc_ValueError, "masks: one item per row of ts expected");
            return -1;
        }
    }
    if (idx_o != Py_None) {
        if (get_buffer(idx_o, &r->idx_v, INDEXES, "idx") < 0) return -1;
        r->have_idx = 1;
    }
    if (starts_o != Py_None) {
        if (get_buffer(starts_o, &r->starts_v, INDEXES, "starts") < 0) return -1;
        r->have_starts = 1;
    }
    r->n = r->have_idx ? r->idx_v.len / r->idx_v.itemsize : r->rows;
    r->nparts = r->have_starts ? r->starts_v.len / r->starts_v.itemsize : 0;
    for (Py_ssize_t p = 0; p < r->nparts; p++) {
        int64_t x = index_at(&r->starts_v, p);
        if ((p == 0 && x != 0) || (p && x <= index_at(&r->starts_v, p - 1))) {
            PyErr_SetString(PyExc_ValueError, "starts: increasing rows from 0 expected");
            return -1;
        }
    }
    return 0;
}

static void release_rows(Rows *r) {
    if (r->have_ts) PyBuffer_Release(&r->ts_v);
    if (r->have_idx) PyBuffer_Release(&r->idx_v);
    if (r->have_starts) PyBuffer_Release(&r->starts_v);
    for (int v = 0; v < r->have_masks; v++) PyBuffer_Release(&r->mask_v[v]);
}

/* A step being gathered: a run of one variable's events within one pane and partition. */
typedef struct {
    int code;        /* variable */
    int simultaneous;
    int64_t k;       /* events */
    int runs;        /* time stamps merged (bursts of a Kleene variable: at most LIMIT) */
    int64_t ts, pane, part;
    int pending;
} Step;

/* what a pass does with a complete step (0, or -1 on failure) */
typedef int (*FlushFn)(void *pass, Step *st);

/* one run of `cnt` events of variable v at one time stamp, in pane `pane` */
static int add_run(const Tmpl *t, Step *st, FlushFn flush, void *pass, int v, int64_t cnt, int64_t ts, int64_t pane,
                   int64_t part) {
    int simultaneous = cnt > 1 && t->selfloop[v];
    if (st->pending && !simultaneous && !st->simultaneous && st->code == v && st->pane == pane &&
        st->part == part && st->runs < LIMIT) {
        st->k += cnt;
        st->runs++;
        return 0;
    }
    if (st->pending) {
        st->pending = 0;
        if (flush(pass, st) < 0) return -1;
    }
    *st = (Step){.code = v, .simultaneous = simultaneous, .k = cnt, .runs = 1, .ts = ts, .pane = pane, .part = part,
                 .pending = 1};
    return 0;
}

/* the pane of a time stamp (each pass cuts its own) */
typedef int64_t (*PaneFn)(void *pass, int64_t ts);

enum { READ_OK = 0, READ_FAILED = -1, READ_DECLINED = 1, READ_BAD_IDX = 2 };

/* Every visited row, a time stamp at a time, as steps handed to `flush` (the last one too).
 * READ_DECLINED where the Python kernel must run: a visited row matching several variables
 * (unless t->multi: then each is one event of the row's time stamp), or several events at
 * one time stamp and no rank. Runs without the GIL. */
static int read_steps(const Tmpl *t, const Rows *rw, PaneFn pane_of, FlushFn flush, void *pass) {
    const int64_t *ts = rw->ts_v.buf;
    const char *mask[64];
    for (int v = 0; v < t->nv; v++) mask[v] = rw->mask_v[v].buf;
    Step st = {0};
    int64_t cnt[64] = {0};
    int hit[64], nhit = 0; /* the variables a row matches */
    Py_ssize_t part = 0, gsize = 0; /* the time stamp group being read: its events */
    int64_t gts = 0, gpart = 0, last_row = -1;
    int glast = 0;
    for (Py_ssize_t e = 0; e <= rw->n; e++) {
        int64_t r = 0, when = 0;
        if (e < rw->n) {
            r = rw->have_idx ? index_at(&rw->idx_v, e) : e;
            if (r < 0 || r >= rw->rows || r <= last_row) return READ_BAD_IDX;
            last_row = r;
            while (part + 1 < rw->nparts && index_at(&rw->starts_v, part + 1) <= r) part++;
            when = ts[r];
            nhit = 0;
            for (int v = 0; v < t->nv; v++) {
                if (mask[v][r]) {
                    if (nhit && !t->multi) return READ_DECLINED; /* matches several variables */
                    hit[nhit++] = v;
                }
            }
            if (!nhit) continue; /* matches no variable: changes nothing */
        }
        if (gsize && (e == rw->n || part != gpart || when != gts)) {
            /* the group is complete: its runs, one variable at a time */
            int64_t pane = pane_of(pass, gts);
            if (gsize > 1 && !t->has_rank) return READ_DECLINED;
            for (int rk = 0; rk < t->nv; rk++) {
                int v = gsize == 1 ? glast : t->by_rank[rk];
                if (cnt[v] && add_run(t, &st, flush, pass, v, cnt[v], gts, pane, gpart) < 0) return READ_FAILED;
                cnt[v] = 0;
                if (gsize == 1) break;
            }
            gsize = 0;
        }
        if (e == rw->n) break;
        if (!gsize) {
            gpart = part;
            gts = when;
        }
        for (int h = 0; h < nhit; h++) {
            cnt[hit[h]]++;
            gsize++;
            glast = hit[h];
        }
    }
    if (st.pending) {
        st.pending = 0;
        if (flush(pass, &st) < 0) return READ_FAILED;
    }
    return READ_OK;
}

/* read_steps' status as Python sees it: 0 to go on (READ_OK), else -1 with an error set, or
 * with *result None where the Python kernel must run (READ_DECLINED) */
static int read_status(int got, PyObject **result) {
    if (got == READ_BAD_IDX) {
        PyErr_SetString(PyExc_ValueError, "idx: increasing rows of ts expected");
        return -1;
    }
    if (got == READ_FAILED) {
        PyErr_NoMemory();
        return -1;
    }
    if (got == READ_DECLINED) {
        Py_INCREF(Py_None);
        *result = Py_None;
        return -1;
    }
    return 0;
}

#endif
