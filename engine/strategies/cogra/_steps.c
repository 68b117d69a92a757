/* COGRA's type-grained kernel for count states, compiled (docs/engine.md, "COGRA").
 *
 * The same computation as kernel.py's Kernel.run followed by the generated Python step
 * code, for the queries whose window state holds only counts (COUNT(*) and COUNT(E), no
 * SUM / MIN / MAX, not exact mode) and whose events each match one variable: events are
 * grouped by time stamp, a time stamp's events are applied one variable at a time (a
 * variable before its predecessors), runs of one variable become burst steps (at most
 * LIMIT time stamps each), panes are cut at every window start and end, and each step is
 * applied to every open window of its pane. Counts are exact 128-bit integers; a count past
 * CAP (10**38 - 1) is saturated (NaN in Python), exactly as the Python kernel keeps it.
 *
 * run(ts, idx, masks, starts, nv, rank, selfloop, start, preds, owners, ends, within, slide)
 *   ts: int64 buffer of time stamps over the rows (time order within a partition);
 *   idx: int32 / int64 buffer of the increasing rows to visit, or None for every row;
 *   masks: per variable a bool buffer over the rows (does the row match it);
 *   starts: int32 / int64 buffer of the rows where each partition starts (the first 0),
 *   or None for one partition; a window closes where the next partition starts;
 *   rank: a tuple (a variable before its predecessors) or None; selfloop, start: tuples
 *   of 0/1 per variable; preds: per variable the tuple of its predecessor indexes
 *   (itself included for a Kleene variable); owners: per COUNT(E) the index of E;
 *   ends: the indexes of the END variables.
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

#include "../../count128.h"

#define LIMIT 120


typedef struct {
    int nv, nc, stride;          /* variables, COUNT(E) keys, counts per variable */
    const int *selfloop, *start; /* per variable */
    const int *owner;            /* per COUNT(E) key: index of E */
    /* per variable, the variables a step reads: [0] its other predecessors (a burst),
     * [1] all its predecessors, itself included (k simultaneous events) */
    int nsrc[2][64];
    int src[2][64][64];
} Tmpl;

/* apply a step of k events of variable i to one window state; simultaneous: k events of
 * one time stamp of a Kleene variable (each extends only the trends before it) */
static void apply(const Tmpl *t, u128 *st, int i, int simultaneous, int64_t k) {
    const int stride = t->stride, nsrc = t->nsrc[simultaneous][i];
    const int *src = t->src[simultaneous][i];
    u128 s = t->start[i] ? 1 : 0;
    for (int a = 0; a < nsrc; a++) s = add_sat(s, st[src[a] * stride]);
    u128 *mine = st + i * stride;
    if (t->selfloop[i] && !simultaneous) {
        u128 u = add_sat(mine[0], s);
        if (u == 0) return;
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
        if (s == 0) return;
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

typedef struct {
    int64_t *kid, *k;
    uint64_t *val;
    Py_ssize_t n, cap;
    int size;          /* counts per result: 1 + COUNT(E) keys */
    const Tmpl *t;
    const int *ends;
    int nends;
} Out;

/* a closed window's result: its counts summed over the END variables; none without a trend */
static int out_push(Out *o, int64_t kid, int64_t k, const u128 *st) {
    u128 res[65];
    for (int a = 0; a < o->size; a++) {
        res[a] = 0;
        for (int e = 0; e < o->nends; e++) res[a] = add_sat(res[a], st[o->ends[e] * o->t->stride + a]);
    }
    if (res[0] == 0) return 0;
    if (o->n == o->cap) {
        Py_ssize_t cap = o->cap ? 2 * o->cap : 1024;
        int64_t *nk = realloc(o->kid, cap * sizeof(int64_t));
        if (!nk) return -1;
        o->kid = nk;
        int64_t *nw = realloc(o->k, cap * sizeof(int64_t));
        if (!nw) return -1;
        o->k = nw;
        uint64_t *nvv = realloc(o->val, cap * 2 * o->size * sizeof(uint64_t));
        if (!nvv) return -1;
        o->val = nvv;
        o->cap = cap;
    }
    o->kid[o->n] = kid;
    o->k[o->n] = k;
    uint64_t *v = o->val + o->n * 2 * o->size;
    for (int a = 0; a < o->size; a++) {
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

static inline Py_ssize_t slot(const Windows *w, int64_t k) {
    int64_t s = w->head + (k - w->lo); /* 0 <= k - lo < cap */
    return (Py_ssize_t)(s >= w->cap ? s - w->cap : s);
}

static int close_below(Windows *w, int64_t kmin, Out *o) {
    while (w->count && w->lo < kmin) {
        Py_ssize_t s = slot(w, w->lo);
        if (w->nonzero[s] && out_push(o, w->part, w->lo, w->vals + s * w->size) < 0) return -1;
        w->lo++;
        w->count--;
        w->head = w->head + 1 == w->cap ? 0 : w->head + 1;
    }
    return 0;
}

static void open_range(Windows *w, int64_t kmin, int64_t kmax) {
    if (!w->count) {
        w->lo = kmin;
        w->head = 0;
    }
    for (int64_t k = w->lo + w->count; k <= kmax; k++) {
        Py_ssize_t s = slot(w, k);
        memset(w->vals + s * w->size, 0, w->size * sizeof(u128));
        w->nonzero[s] = 0;
        w->count++;
    }
}

typedef struct {
    int code;        /* variable */
    int simultaneous;
    int64_t k;       /* events */
    int runs;        /* time stamps merged (bursts of a Kleene variable: at most LIMIT) */
    int64_t ts, pane, part;
    int pending;
} Step;

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

static inline int64_t pane_of(Runner *r, int64_t ts) {
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

static int flush(Runner *r, Step *st) {
    if (!st->pending) return 0;
    st->pending = 0;
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
        apply(r->t, w->vals + s * w->size, st->code, st->simultaneous, st->k);
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

/* one run of `cnt` events of variable v at one time stamp */
static int add_run(Runner *r, Step *st, int v, int64_t cnt, int64_t ts, int64_t part) {
    int64_t pane = pane_of(r, ts);
    int simultaneous = cnt > 1 && r->t->selfloop[v];
    if (st->pending && !simultaneous && !st->simultaneous && st->code == v && st->pane == pane &&
        st->part == part && st->runs < LIMIT) {
        st->k += cnt;
        st->runs++;
        return 0;
    }
    if (flush(r, st) < 0) return -1;
    st->code = v;
    st->simultaneous = simultaneous;
    st->k = cnt;
    st->runs = 1;
    st->ts = ts;
    st->pane = pane;
    st->part = part;
    st->pending = 1;
    return 0;
}

static int int_tuple(PyObject *obj, int n, int *out, const char *what) {
    if (!PyTuple_Check(obj) || PyTuple_GET_SIZE(obj) != n) {
        PyErr_Format(PyExc_TypeError, "%s: a tuple of %d ints expected", what, n);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        long x = PyLong_AsLong(PyTuple_GET_ITEM(obj, i));
        if (x == -1 && PyErr_Occurred()) return -1;
        out[i] = (int)x;
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

static PyObject *run(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *ts_o, *idx_o, *masks_o, *starts_o, *rank_o, *selfloop_o, *start_o, *preds_o, *owners_o, *ends_o;
    int nv;
    long long within, slide;
    if (!PyArg_ParseTuple(args, "OOOOiOOOOOOLL", &ts_o, &idx_o, &masks_o, &starts_o, &nv, &rank_o,
                          &selfloop_o, &start_o, &preds_o, &owners_o, &ends_o, &within, &slide))
        return NULL;
    if (nv <= 0 || nv > 64 || slide <= 0 || within <= 0) {
        PyErr_SetString(PyExc_ValueError, "1..64 variables and positive within / slide expected");
        return NULL;
    }
    if (!PyTuple_Check(masks_o) || PyTuple_GET_SIZE(masks_o) != nv) {
        PyErr_SetString(PyExc_TypeError, "masks: a tuple of one bool buffer per variable expected");
        return NULL;
    }
    if (!PyTuple_Check(owners_o) || !PyTuple_Check(preds_o) || PyTuple_GET_SIZE(preds_o) != nv ||
        !PyTuple_Check(ends_o) || PyTuple_GET_SIZE(ends_o) > nv) {
        PyErr_SetString(PyExc_TypeError, "preds, owners and ends: tuples expected");
        return NULL;
    }
    int nc = (int)PyTuple_GET_SIZE(owners_o);
    if (nc > 64) {
        PyErr_SetString(PyExc_ValueError, "at most 64 COUNT(E) keys expected");
        return NULL;
    }
    int nends = (int)PyTuple_GET_SIZE(ends_o);
    int selfloop[64], start[64], rank[64], npred[64], ends[64];
    int *pred = calloc((size_t)nv * nv, sizeof(int));
    int *owners = calloc((size_t)nc + 1, sizeof(int));
    int has_rank = rank_o != Py_None;
    Py_buffer ts_v = {0}, idx_v = {0}, starts_v = {0}, mask_v[64];
    int have_ts = 0, have_idx = 0, have_starts = 0, have_masks = 0;
    PyObject *result = NULL;
    Windows w = {0};
    Out o = {0};
    if (!pred || !owners) {
        PyErr_NoMemory();
        goto done;
    }
    if (int_tuple(selfloop_o, nv, selfloop, "selfloop") < 0 || int_tuple(start_o, nv, start, "start") < 0 ||
        int_tuple(owners_o, nc, owners, "owners") < 0 || int_tuple(ends_o, nends, ends, "ends") < 0)
        goto done;
    for (int e = 0; e < nends; e++) {
        if (ends[e] < 0 || ends[e] >= nv) {
            PyErr_SetString(PyExc_ValueError, "ends: variable index out of range");
            goto done;
        }
    }
    if (has_rank && int_tuple(rank_o, nv, rank, "rank") < 0) goto done;
    for (int i = 0; i < nv; i++) {
        PyObject *p = PyTuple_GET_ITEM(preds_o, i);
        if (!PyTuple_Check(p) || PyTuple_GET_SIZE(p) > nv) {
            PyErr_SetString(PyExc_TypeError, "preds: a tuple of variable indexes per variable expected");
            goto done;
        }
        npred[i] = (int)PyTuple_GET_SIZE(p);
        if (int_tuple(p, npred[i], pred + i * nv, "preds") < 0) goto done;
        for (int a = 0; a < npred[i]; a++) {
            if (pred[i * nv + a] < 0 || pred[i * nv + a] >= nv) {
                PyErr_SetString(PyExc_ValueError, "preds: variable index out of range");
                goto done;
            }
        }
    }
    for (int j = 0; j < nc; j++) {
        if (owners[j] < -1 || owners[j] >= nv) {
            PyErr_SetString(PyExc_ValueError, "owners: variable index out of range");
            goto done;
        }
    }
    if (get_buffer(ts_o, &ts_v, INT64, "ts") < 0) goto done;
    have_ts = 1;
    Py_ssize_t rows = ts_v.len / 8;
    for (; have_masks < nv; have_masks++) {
        if (get_buffer(PyTuple_GET_ITEM(masks_o, have_masks), &mask_v[have_masks], BYTES, "masks") < 0) goto done;
        if (mask_v[have_masks].len != rows) {
            have_masks++;
            PyErr_SetString(PyExc_ValueError, "masks: one item per row of ts expected");
            goto done;
        }
    }
    if (idx_o != Py_None) {
        if (get_buffer(idx_o, &idx_v, INDEXES, "idx") < 0) goto done;
        have_idx = 1;
    }
    if (starts_o != Py_None) {
        if (get_buffer(starts_o, &starts_v, INDEXES, "starts") < 0) goto done;
        have_starts = 1;
    }
    Py_ssize_t n = have_idx ? idx_v.len / idx_v.itemsize : rows;
    Py_ssize_t nparts = have_starts ? starts_v.len / starts_v.itemsize : 0;
    int bad_idx = 0; /* visited rows must increase inside ts: checked as they are read */
    for (Py_ssize_t p = 0; p < nparts; p++) {
        int64_t r = index_at(&starts_v, p);
        if ((p == 0 && r != 0) || (p && r <= index_at(&starts_v, p - 1))) {
            PyErr_SetString(PyExc_ValueError, "starts: increasing rows from 0 expected");
            goto done;
        }
    }
    const int64_t *ts = ts_v.buf;
    const char *mask[64];
    for (int v = 0; v < nv; v++) mask[v] = mask_v[v].buf;
    int by_rank[64];
    if (has_rank) {
        for (int v = 0; v < nv; v++) by_rank[v] = -1;
        for (int v = 0; v < nv; v++) {
            if (rank[v] < 0 || rank[v] >= nv || by_rank[rank[v]] >= 0) {
                PyErr_SetString(PyExc_ValueError, "rank: a permutation of the variables expected");
                goto done;
            }
            by_rank[rank[v]] = v;
        }
    }
    /* windows open at once: at most ceil(within / slide) */
    int64_t wcap = within / slide + 2;
    int size = nv * (1 + nc);
    if (wcap > (1 << 22) / size) {
        result = Py_None; /* the Python kernel keeps them in a dict */
        Py_INCREF(result);
        goto done;
    }
    Tmpl t = {nv, nc, 1 + nc, selfloop, start, owners, {{0}}, {{{0}}}};
    for (int i = 0; i < nv; i++) {
        for (int a = 0; a < npred[i]; a++) {
            int p = pred[i * nv + a];
            if (p != i) t.src[0][i][t.nsrc[0][i]++] = p;
            t.src[1][i][t.nsrc[1][i]++] = p;
        }
    }
    w.cap = wcap;
    w.size = size;
    w.vals = calloc((size_t)wcap * size, sizeof(u128));
    w.nonzero = calloc((size_t)wcap, 1);
    o.size = 1 + nc;
    o.t = &t;
    o.ends = ends;
    o.nends = nends;
    if (!w.vals || !w.nonzero) {
        PyErr_NoMemory();
        goto done;
    }
    Runner r_ = {.t = &t, .w = &w, .o = &o, .within = within, .slide = slide, .off = within % slide,
                 .plo = 1, .phi = 0,       /* no pane looked up yet: an empty range */
                 .wpane = INT64_MIN};      /* no pane's windows computed yet */
    Step st = {0};
    int64_t cnt[64] = {0};
    int failed = 0, declined = 0;
    Py_BEGIN_ALLOW_THREADS
    Py_ssize_t part = 0, gsize = 0; /* the time stamp group being read: its events */
    int64_t gts = 0, gpart = 0, last_row = -1;
    int glast = 0;
    for (Py_ssize_t e = 0; e <= n && !failed && !declined; e++) {
        int64_t r = 0, when = 0;
        int c = -1;
        if (e < n) {
            r = have_idx ? index_at(&idx_v, e) : e;
            if (r < 0 || r >= rows || r <= last_row) {
                bad_idx = 1;
                break;
            }
            last_row = r;
            while (part + 1 < nparts && index_at(&starts_v, part + 1) <= r) part++;
            when = ts[r];
            for (int v = 0; v < nv; v++) {
                if (mask[v][r]) {
                    if (c >= 0) { declined = 1; break; } /* matches several variables */
                    c = v;
                }
            }
            if (declined) break;
            if (c < 0) continue; /* matches no variable: changes nothing */
        }
        if (gsize && (e == n || part != gpart || when != gts)) {
            /* the group is complete: its runs, one variable at a time */
            if (gsize == 1) {
                if (add_run(&r_, &st, glast, 1, gts, gpart) < 0) failed = 1;
                cnt[glast] = 0;
            } else if (!has_rank) {
                declined = 1;
            } else {
                for (int rk = 0; rk < nv && !failed; rk++) {
                    int v = by_rank[rk];
                    if (cnt[v] && add_run(&r_, &st, v, cnt[v], gts, gpart) < 0) failed = 1;
                    cnt[v] = 0;
                }
            }
            gsize = 0;
        }
        if (e == n) break;
        if (!gsize) {
            gpart = part;
            gts = when;
        }
        cnt[c]++;
        gsize++;
        glast = c;
    }
    if (!failed && !declined && !bad_idx) {
        if (flush(&r_, &st) < 0 || close_below(&w, INT64_MAX, &o) < 0) failed = 1;
    }
    Py_END_ALLOW_THREADS
    if (bad_idx) {
        PyErr_SetString(PyExc_ValueError, "idx: increasing rows of ts expected");
        goto done;
    }
    if (failed) {
        PyErr_NoMemory();
        goto done;
    }
    if (declined) {
        result = Py_None;
        Py_INCREF(result);
        goto done;
    }
    /* "y#" of a NULL buffer would be None: no closed window gives empty bytes */
    result = Py_BuildValue("(y#y#y#)", o.n ? (const char *)o.kid : "", (Py_ssize_t)(o.n * 8),
                           o.n ? (const char *)o.k : "", (Py_ssize_t)(o.n * 8), o.n ? (const char *)o.val : "",
                           (Py_ssize_t)(o.n * 16 * o.size));
done:
    if (have_ts) PyBuffer_Release(&ts_v);
    if (have_idx) PyBuffer_Release(&idx_v);
    if (have_starts) PyBuffer_Release(&starts_v);
    for (int v = 0; v < have_masks; v++) PyBuffer_Release(&mask_v[v]);
    free(pred);
    free(owners);
    free(w.vals);
    free(w.nonzero);
    free(o.kid);
    free(o.k);
    free(o.val);
    return result;
}

static PyMethodDef methods[] = {
    {"run", run, METH_VARARGS, "COGRA's count kernel over many partitions (see the module source)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_steps", "COGRA's compiled count kernel.", -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__steps(void) {
    count128_init();
    return PyModule_Create(&module);
}
