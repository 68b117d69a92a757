/* COGRA's type-grained kernel for count states, compiled (docs/engine.md, "COGRA").
 *
 * The same computation as kernel.py's run_kernel followed by the generated Python step
 * code, for the queries whose window state holds only counts (COUNT(*) and COUNT(E), no
 * SUM / MIN / MAX, not exact mode) and whose events each match one variable: events are
 * grouped by time stamp, a time stamp's events are applied one variable at a time (a
 * variable before its predecessors), runs of one variable become burst steps (at most
 * LIMIT time stamps each), panes are cut at every window start and end, and each step is
 * applied to every open window of its pane. Counts are exact 128-bit integers; a count past
 * CAP (10**38 - 1) is saturated (NaN in Python), exactly as the Python kernel keeps it.
 *
 * run(ts, code, kid, nv, rank, selfloop, start, preds, owners, within, slide)
 *   ts, code: int64 buffers (time order within a partition, code = variable index);
 *   kid: int64 buffer of non-decreasing partition ids, or None for one partition;
 *   rank: a tuple (a variable before its predecessors) or None; selfloop, start: tuples
 *   of 0/1 per variable; preds: per variable the tuple of its predecessor indexes
 *   (itself included for a Kleene variable); owners: per COUNT(E) the index of E.
 * returns (kids, ks, values) as bytes: int64 partition ids and window indexes of the
 *   closed windows whose state is not all zero, and per window nv * (1 + len(owners))
 *   counts as (low, high) uint64 pairs, all ones for a saturated count; or None when a
 *   time stamp holds several events and rank is None (the caller uses the Python kernel).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned __int128 u128;

#define LIMIT 120
#define NANV (~(u128)0)

static u128 CAP; /* 10**38 - 1, set at import */

static inline int64_t floordiv(int64_t a, int64_t b) {
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q -= 1;
    return q;
}

static inline int64_t floormod(int64_t a, int64_t b) { return a - floordiv(a, b) * b; }

/* a + b, saturated past CAP (a, b <= CAP or NANV, so a + b cannot wrap) */
static inline u128 add_sat(u128 a, u128 b) {
    if (a == NANV || b == NANV) return NANV;
    u128 r = a + b;
    return r > CAP ? NANV : r;
}

/* a * b exactly, NANV when a is NANV or the product passes 2**128 */
static inline u128 mul_exact(u128 a, u128 b) {
    if (a == NANV) return NANV;
    u128 r;
    if (__builtin_mul_overflow(a, b, &r)) return NANV;
    return r;
}

/* a + b exactly, NANV when either is NANV or the sum passes 2**128 */
static inline u128 add_exact(u128 a, u128 b) {
    if (a == NANV || b == NANV) return NANV;
    u128 r;
    if (__builtin_add_overflow(a, b, &r)) return NANV;
    return r;
}

static inline u128 keep(u128 x) { return x > CAP ? NANV : x; }

typedef struct {
    int nv, nc, stride;          /* variables, COUNT(E) keys, counts per variable */
    const int *selfloop, *start; /* per variable */
    const int *npred;            /* per variable: number of predecessors (itself included) */
    const int *pred;             /* per variable: up to nv predecessor indexes, row-major */
    const int *owner;            /* per COUNT(E) key: index of E */
} Tmpl;

/* apply a step of k events of variable i to one window state; simultaneous: k events of
 * one time stamp of a Kleene variable (each extends only the trends before it) */
static void apply(const Tmpl *t, u128 *st, int i, int simultaneous, int64_t k) {
    const int stride = t->stride;
    const int loop = t->selfloop[i] && !simultaneous;
    const int *preds = t->pred + i * t->nv;
    u128 s = t->start[i] ? 1 : 0;
    for (int a = 0; a < t->npred[i]; a++) {
        int p = preds[a];
        if (p == i && !simultaneous) continue;
        s = add_sat(s, st[p * stride]);
    }
    u128 *mine = st + i * stride;
    u128 kk = (u128)k;
    if (loop) {
        u128 u = add_sat(mine[0], s);
        if (u == 0) return;
        u128 P = (u128)1 << k;
        u128 A = mul_exact(u, P);
        mine[0] = (A == NANV || s == NANV) ? NANV : keep(A - s);
        for (int j = 0; j < t->nc; j++) {
            u128 sw = 0;
            for (int a = 0; a < t->npred[i]; a++) {
                int p = preds[a];
                if (p == i) continue;
                sw = add_sat(sw, st[p * stride + 1 + j]);
            }
            u128 x = add_sat(mine[1 + j], sw);
            u128 r = mul_exact(x, P);
            if (r != NANV && sw != NANV) r = r - sw;
            else r = NANV;
            if (t->owner[j] == i) {
                u128 half = (u128)1 << (k - 1);
                r = add_exact(r, mul_exact(mul_exact(u, half), kk));
            }
            mine[1 + j] = keep(r);
        }
    } else {
        if (s == 0) return;
        mine[0] = keep(add_exact(mine[0], mul_exact(s, kk)));
        for (int j = 0; j < t->nc; j++) {
            u128 sw = 0;
            for (int a = 0; a < t->npred[i]; a++) {
                int p = preds[a];
                if (p == i && !simultaneous) continue;
                sw = add_sat(sw, st[p * stride + 1 + j]);
            }
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
    int size; /* counts per window */
} Out;

static int out_push(Out *o, int64_t kid, int64_t k, const u128 *st) {
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
        v[2 * a] = (uint64_t)st[a];
        v[2 * a + 1] = (uint64_t)(st[a] >> 64);
    }
    o->n++;
    return 0;
}

/* the open windows: a contiguous range of window indexes [lo, lo + count) in a ring */
typedef struct {
    int64_t lo, count, cap;
    u128 *vals;      /* cap * size */
    char *nonzero;   /* cap */
    int size;
    int64_t part;
} Windows;

static inline Py_ssize_t slot(const Windows *w, int64_t k) { return (Py_ssize_t)floormod(k, w->cap); }

static int close_below(Windows *w, int64_t kmin, Out *o) {
    while (w->count && w->lo < kmin) {
        Py_ssize_t s = slot(w, w->lo);
        if (w->nonzero[s] && out_push(o, w->part, w->lo, w->vals + s * w->size) < 0) return -1;
        w->lo++;
        w->count--;
    }
    return 0;
}

static void open_range(Windows *w, int64_t kmin, int64_t kmax) {
    if (!w->count) {
        w->lo = kmin;
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
    int64_t pane, part; /* of the last applied step */
    int started;
} Runner;

static inline int64_t pane_of(const Runner *r, int64_t ts) {
    int64_t q = floordiv(ts, r->slide);
    if (r->off == 0) return q;
    return 2 * q + (ts - q * r->slide >= r->off);
}

static int flush(Runner *r, Step *st) {
    if (!st->pending) return 0;
    st->pending = 0;
    Windows *w = r->w;
    if (!r->started || st->part != r->part) {
        if (close_below(w, INT64_MAX, r->o) < 0) return -1;
        w->part = st->part;
        r->part = st->part;
        r->started = 1;
        r->pane = st->pane - 1;
    }
    int64_t kmin = floordiv(st->ts - r->within, r->slide) + 1;
    int64_t kmax = floordiv(st->ts, r->slide);
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

static int int64_buffer(PyObject *obj, Py_buffer *view, const char *what) {
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return -1;
    if (view->itemsize != 8 || !view->format || (strcmp(view->format, "l") && strcmp(view->format, "q"))) {
        PyBuffer_Release(view);
        PyErr_Format(PyExc_TypeError, "%s: a contiguous int64 buffer expected", what);
        return -1;
    }
    return 0;
}

static PyObject *run(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *ts_o, *code_o, *kid_o, *rank_o, *selfloop_o, *start_o, *preds_o, *owners_o;
    int nv;
    long long within, slide;
    if (!PyArg_ParseTuple(args, "OOOiOOOOOLL", &ts_o, &code_o, &kid_o, &nv, &rank_o, &selfloop_o,
                          &start_o, &preds_o, &owners_o, &within, &slide))
        return NULL;
    if (nv <= 0 || nv > 64 || slide <= 0 || within <= 0) {
        PyErr_SetString(PyExc_ValueError, "1..64 variables and positive within / slide expected");
        return NULL;
    }
    if (!PyTuple_Check(owners_o) || !PyTuple_Check(preds_o) || PyTuple_GET_SIZE(preds_o) != nv) {
        PyErr_SetString(PyExc_TypeError, "preds and owners: tuples expected");
        return NULL;
    }
    int nc = (int)PyTuple_GET_SIZE(owners_o);
    int selfloop[64], start[64], rank[64], npred[64];
    int *pred = calloc((size_t)nv * nv, sizeof(int));
    int *owners = calloc((size_t)nc + 1, sizeof(int));
    int has_rank = rank_o != Py_None;
    Py_buffer ts_v = {0}, code_v = {0}, kid_v = {0};
    int have_ts = 0, have_code = 0, have_kid = 0;
    PyObject *result = NULL;
    Windows w = {0};
    Out o = {0};
    if (!pred || !owners) {
        PyErr_NoMemory();
        goto done;
    }
    if (int_tuple(selfloop_o, nv, selfloop, "selfloop") < 0 || int_tuple(start_o, nv, start, "start") < 0 ||
        int_tuple(owners_o, nc, owners, "owners") < 0)
        goto done;
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
    if (int64_buffer(ts_o, &ts_v, "ts") < 0) goto done;
    have_ts = 1;
    if (int64_buffer(code_o, &code_v, "code") < 0) goto done;
    have_code = 1;
    if (kid_o != Py_None) {
        if (int64_buffer(kid_o, &kid_v, "kid") < 0) goto done;
        have_kid = 1;
    }
    Py_ssize_t n = ts_v.len / 8;
    if (code_v.len / 8 != n || (have_kid && kid_v.len / 8 != n)) {
        PyErr_SetString(PyExc_ValueError, "ts, code and kid differ in length");
        goto done;
    }
    const int64_t *ts = ts_v.buf, *code = code_v.buf, *kid = have_kid ? kid_v.buf : NULL;
    for (Py_ssize_t e = 0; e < n; e++) {
        if (code[e] < 0 || code[e] >= nv) {
            PyErr_SetString(PyExc_ValueError, "code: variable index out of range");
            goto done;
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
    Tmpl t = {nv, nc, 1 + nc, selfloop, start, npred, pred, owners};
    w.cap = wcap;
    w.size = size;
    w.vals = calloc((size_t)wcap * size, sizeof(u128));
    w.nonzero = calloc((size_t)wcap, 1);
    o.size = size;
    if (!w.vals || !w.nonzero) {
        PyErr_NoMemory();
        goto done;
    }
    Runner r = {&t, &w, &o, within, slide, within % slide, 0, 0, 0};
    Step st = {0};
    int64_t cnt[64];
    int failed = 0, unranked = 0;
    Py_BEGIN_ALLOW_THREADS
    Py_ssize_t e = 0;
    while (e < n) {
        Py_ssize_t g = e + 1;
        int64_t part = kid ? kid[e] : 0;
        while (g < n && ts[g] == ts[e] && (!kid || kid[g] == part)) g++;
        if (g - e == 1) {
            if (add_run(&r, &st, (int)code[e], 1, ts[e], part) < 0) { failed = 1; break; }
        } else {
            if (!has_rank) { unranked = 1; break; }
            memset(cnt, 0, sizeof(int64_t) * nv);
            for (Py_ssize_t x = e; x < g; x++) cnt[code[x]]++;
            /* runs in rank order: a variable before its predecessors */
            for (int rk = 0; rk < nv && !failed; rk++) {
                for (int v = 0; v < nv; v++) {
                    if (rank[v] == rk && cnt[v]) {
                        if (add_run(&r, &st, v, cnt[v], ts[e], part) < 0) failed = 1;
                    }
                }
            }
            if (failed) break;
        }
        e = g;
    }
    if (!failed && !unranked) {
        if (flush(&r, &st) < 0 || close_below(&w, INT64_MAX, &o) < 0) failed = 1;
    }
    Py_END_ALLOW_THREADS
    if (failed) {
        PyErr_NoMemory();
        goto done;
    }
    if (unranked) {
        result = Py_None;
        Py_INCREF(result);
        goto done;
    }
    /* "y#" of a NULL buffer would be None: no closed window gives empty bytes */
    result = Py_BuildValue("(y#y#y#)", o.n ? (const char *)o.kid : "", (Py_ssize_t)(o.n * 8),
                           o.n ? (const char *)o.k : "", (Py_ssize_t)(o.n * 8), o.n ? (const char *)o.val : "",
                           (Py_ssize_t)(o.n * 16 * size));
done:
    if (have_ts) PyBuffer_Release(&ts_v);
    if (have_code) PyBuffer_Release(&code_v);
    if (have_kid) PyBuffer_Release(&kid_v);
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
    CAP = (u128)10000000000000000000ULL * (u128)10000000000000000000ULL - 1; /* 10**38 - 1 */
    return PyModule_Create(&module);
}
