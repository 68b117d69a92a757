/* The type-grained shared Kleene executor for count states, compiled (docs/engine.md,
 * "Shared Kleene execution", "The compiled shared pass").
 *
 * One pass over the visited rows of a group's key set, time-stamp group by time-stamp
 * group, partition by partition. Each member query keeps COGRA's type-grained window
 * state of counts (count(V), then COUNT(E) per key, per variable V); the events of the
 * shared Kleene type K change no member state directly. Instead each *class* (the members
 * that match the same events of K) keeps, per open window, the shared coefficients of the
 * time stamps of K it matched since the window opened (or since its last rebase):
 *
 *     F' = F (1 + k),    G' = G (1 + k) + k F        (k: events of K the class matches)
 *
 * and each member keeps per window its snapshot (F0, G0) of its class's coefficients from
 * when its state was last brought up to date. A member is brought up to date (exactly:
 * F1 = F / F0, G1 = (G - G0 F1) / F0) before each of its own steps, when its window
 * closes, and when its class is rebased; u = count(K) + s becomes u F1, count(K) =
 * u F1 - s, and a COUNT(E) entry W of the Kleene variable (W0 = W + the predecessors')
 * W0 F1 - sw, plus u G1 when E is K.
 *
 * Classes come in chains of nested sets (thresholds `K.x < c`: a K event matching a class
 * matches every larger one): a K event's *level* in a chain is the first class of the
 * chain it matches, and the events a class matches at a time stamp are the prefix sum of
 * the levels' counts. Arbitrary predicates give chains of one class.
 *
 * Counts are exact 128-bit integers saturated past CAP (10**38 - 1) exactly as COGRA's
 * compiled kernel saturates them (`_steps.c`): all counts only grow, so the saturated
 * values do not depend on how the steps are grouped. F stays below 2**60 and G below
 * 2**90 (else the class is rebased first: every member brought up to date, F = 1, G = 0),
 * so the coefficients after one more time stamp fit.
 *
 * run(t, pstarts, klev, chain_of, level_of, nchains, ownpos, ownmem, ownvar, members,
 *     nclasses, within, slide, per_window)
 *   t: int64 time stamps of the visited rows (partition by partition, in time order);
 *   pstarts: int64 visited positions where each partition starts (the first 0);
 *   klev: int32, nchains per visited row: the row's level in each chain (the chain's
 *     length: it matches no class of the chain);
 *   chain_of, level_of: per class its chain and its position in it;
 *   ownpos, ownmem, ownvar: int64 / int32 / int32, the members' own (non-K) events: the
 *     visited position where the event's time-stamp group starts, member, variable; sorted
 *     by that position, then member, then the variable's rank;
 *   members: per member (nv, kv, class, selfloop, start, before, preds, owners, ends):
 *     its variables, its K variable, its class, 0/1 per variable (self-loop, START, ranked
 *     before K: applied before the time stamp's K events), per variable its predecessor
 *     indexes (itself included for a Kleene variable), per COUNT(E) key the index of E
 *     (-1 for a type of no positive variable), the END variables;
 * returns (mem, part, k, values, stats, windows) as bytes / a tuple: int64 member, partition
 *   index (into pstarts) and window index of each (member, window) with a trend; per such
 *   result 1 + max COUNT(E) keys counts (the trends, then COUNT(E) per key, summed over the
 *   END variables) as (low, high) uint64 pairs, all ones for a saturated count; stats
 *   (windows, graphlets, bursts, shared events, snapshots, rebases, coefficient updates);
 *   with per_window, int64 (partition, window, bursts, snapshots) per window where anything
 *   happened, else None. None where the coefficients of one time stamp would not fit (more
 *   than 2**30 events of K at one time stamp) or a window spans too many slides.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned __int128 u128;

#define NANV (~(u128)0)
#define MAXV 64
#define F_REBASE ((u128)1 << 60)
#define G_REBASE ((u128)1 << 90)
#define K_MAX ((int64_t)1 << 30)

static u128 CAP;

static inline int64_t floordiv(int64_t a, int64_t b) {
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q -= 1;
    return q;
}

static inline u128 add_sat(u128 a, u128 b) {
    u128 r = a + b;
    return (r < a || r > CAP) ? NANV : r;
}

static inline u128 mul_exact(u128 a, u128 b) {
    if (a == NANV) return NANV;
    if (!(a >> 64) && !(b >> 64)) return (u128)(uint64_t)a * (uint64_t)b;
    u128 r;
    if (__builtin_mul_overflow(a, b, &r)) return NANV;
    return r;
}

static inline u128 add_exact(u128 a, u128 b) {
    if (a == NANV || b == NANV) return NANV;
    u128 r;
    if (__builtin_add_overflow(a, b, &r)) return NANV;
    return r;
}

static inline u128 keep(u128 x) { return x > CAP ? NANV : x; }

typedef struct {
    int nv, kv, cls, stride, nc, off;
    int selfloop[MAXV], start[MAXV], before[MAXV];
    int npred[MAXV];
    int pred[MAXV][MAXV];
    int nother, other[MAXV]; /* K's predecessors other than itself */
    int owner[MAXV];
    int nends, ends[MAXV];
} Mem;

typedef struct {
    int M, C, size, width;
    Mem *m;
    int *cls_start, *cls_members; /* members of each class (CSR) */
    /* per window slot */
    int64_t cap, lo, count, head, part;
    u128 *st;     /* cap * size */
    u128 *snapF;  /* cap * M */
    u128 *snapG;
    u128 *F;      /* cap * C */
    u128 *G;
    int64_t *wbursts, *wsnaps; /* cap */
    /* output */
    int64_t *omem, *opart, *ok;
    uint64_t *oval;
    Py_ssize_t n, ocap;
    int64_t *pw;
    Py_ssize_t npw, pwcap;
    int per_window;
    /* stats */
    int64_t windows, graphlets, bursts, shared_events, snapshots, rebases, updates;
} State;

static inline Py_ssize_t slot(const State *s, int64_t k) {
    int64_t x = s->head + (k - s->lo);
    return (Py_ssize_t)(x >= s->cap ? x - s->cap : x);
}

/* member j's state in slot w brought up to date with its class's coefficients */
static void bring(State *s, int j, Py_ssize_t w) {
    Mem *m = &s->m[j];
    u128 F = s->F[w * s->C + m->cls], F0 = s->snapF[w * s->M + j];
    if (F == F0) return;
    u128 G = s->G[w * s->C + m->cls], G0 = s->snapG[w * s->M + j];
    s->snapF[w * s->M + j] = F;
    s->snapG[w * s->M + j] = G;
    u128 *st = s->st + w * s->size + m->off;
    const int stride = m->stride, kb = m->kv * stride;
    u128 sum = m->start[m->kv] ? 1 : 0;
    for (int a = 0; a < m->nother; a++) sum = add_sat(sum, st[m->other[a] * stride]);
    u128 u = add_sat(st[kb], sum);
    if (u == 0) return;
    s->snapshots++;
    s->wsnaps[w]++;
    u128 F1 = F / F0;
    u128 G1 = (G - G0 * F1) / F0;
    for (int c = 0; c < m->nc; c++) {
        u128 sw = 0;
        for (int a = 0; a < m->nother; a++) sw = add_sat(sw, st[m->other[a] * stride + 1 + c]);
        u128 r = mul_exact(add_sat(st[kb + 1 + c], sw), F1);
        if (m->owner[c] == m->kv) r = add_exact(r, mul_exact(u, G1));
        st[kb + 1 + c] = (r == NANV || sw == NANV) ? NANV : keep(r - sw);
    }
    u128 A = mul_exact(u, F1);
    st[kb] = (A == NANV || sum == NANV) ? NANV : keep(A - sum);
}

/* k simultaneous events of member j's variable v (not K) in slot w: every event extends the
 * trends before the time stamp (COGRA's simultaneous step) */
static void own_step(State *s, int j, Py_ssize_t w, int v, int64_t k) {
    Mem *m = &s->m[j];
    bring(s, j, w);
    u128 *st = s->st + w * s->size + m->off;
    const int stride = m->stride;
    u128 sum = m->start[v] ? 1 : 0;
    for (int a = 0; a < m->npred[v]; a++) sum = add_sat(sum, st[m->pred[v][a] * stride]);
    if (sum == 0) return;
    u128 *mine = st + v * stride;
    u128 kk = (u128)k;
    for (int c = 0; c < m->nc; c++) {
        u128 sw = 0;
        for (int a = 0; a < m->npred[v]; a++) sw = add_sat(sw, st[m->pred[v][a] * stride + 1 + c]);
        u128 r = add_exact(mine[1 + c], mul_exact(sw, kk));
        if (m->owner[c] == v) r = add_exact(r, mul_exact(sum, kk));
        mine[1 + c] = keep(r);
    }
    mine[0] = keep(add_exact(mine[0], mul_exact(sum, kk)));
}

static void rebase(State *s, int c, Py_ssize_t w) {
    for (int x = s->cls_start[c]; x < s->cls_start[c + 1]; x++) {
        int j = s->cls_members[x];
        bring(s, j, w);
        s->snapF[w * s->M + j] = 1;
        s->snapG[w * s->M + j] = 0;
    }
    s->F[w * s->C + c] = 1;
    s->G[w * s->C + c] = 0;
    s->rebases++;
}

static int push(State *s, int j, int64_t k, const u128 *res, int nres) {
    if (s->n == s->ocap) {
        Py_ssize_t cap = s->ocap ? 2 * s->ocap : 4096;
        int64_t *a = realloc(s->omem, cap * sizeof(int64_t));
        if (!a) return -1;
        s->omem = a;
        a = realloc(s->opart, cap * sizeof(int64_t));
        if (!a) return -1;
        s->opart = a;
        a = realloc(s->ok, cap * sizeof(int64_t));
        if (!a) return -1;
        s->ok = a;
        uint64_t *v = realloc(s->oval, cap * 2 * s->width * sizeof(uint64_t));
        if (!v) return -1;
        s->oval = v;
        s->ocap = cap;
    }
    s->omem[s->n] = j;
    s->opart[s->n] = s->part;
    s->ok[s->n] = k;
    uint64_t *v = s->oval + s->n * 2 * s->width;
    for (int a = 0; a < s->width; a++) {
        u128 x = a < nres ? res[a] : 0;
        v[2 * a] = (uint64_t)x;
        v[2 * a + 1] = (uint64_t)(x >> 64);
    }
    s->n++;
    return 0;
}

static int close_window(State *s, int64_t k) {
    Py_ssize_t w = slot(s, k);
    for (int j = 0; j < s->M; j++) {
        Mem *m = &s->m[j];
        bring(s, j, w);
        const u128 *st = s->st + w * s->size + m->off;
        u128 res[MAXV + 1];
        for (int a = 0; a <= m->nc; a++) {
            res[a] = 0;
            for (int e = 0; e < m->nends; e++) res[a] = add_sat(res[a], st[m->ends[e] * m->stride + a]);
        }
        if (res[0] != 0 && push(s, j, k, res, m->nc + 1) < 0) return -1;
    }
    if (s->per_window && (s->wbursts[w] || s->wsnaps[w])) {
        if (s->npw == s->pwcap) {
            Py_ssize_t cap = s->pwcap ? 2 * s->pwcap : 1024;
            int64_t *a = realloc(s->pw, cap * 4 * sizeof(int64_t));
            if (!a) return -1;
            s->pw = a;
            s->pwcap = cap;
        }
        int64_t *p = s->pw + 4 * s->npw++;
        p[0] = s->part;
        p[1] = k;
        p[2] = s->wbursts[w];
        p[3] = s->wsnaps[w];
    }
    return 0;
}

static int close_below(State *s, int64_t kmin) {
    while (s->count && s->lo < kmin) {
        if (close_window(s, s->lo) < 0) return -1;
        s->lo++;
        s->count--;
        s->head = s->head + 1 == s->cap ? 0 : s->head + 1;
    }
    return 0;
}

static void open_upto(State *s, int64_t kmin, int64_t kmax) {
    if (!s->count) {
        s->lo = kmin;
        s->head = 0;
    }
    while (s->lo + s->count <= kmax) {
        int64_t k = s->lo + s->count;
        s->count++;
        Py_ssize_t w = slot(s, k);
        memset(s->st + w * s->size, 0, s->size * sizeof(u128));
        for (int j = 0; j < s->M; j++) {
            s->snapF[w * s->M + j] = 1;
            s->snapG[w * s->M + j] = 0;
        }
        for (int c = 0; c < s->C; c++) {
            s->F[w * s->C + c] = 1;
            s->G[w * s->C + c] = 0;
        }
        s->wbursts[w] = 0;
        s->wsnaps[w] = 0;
        s->windows++;
    }
}

static int int_tuple(PyObject *o, int n, int *out, const char *what) {
    if (!PyTuple_Check(o) || PyTuple_GET_SIZE(o) != n) {
        PyErr_Format(PyExc_TypeError, "%s: a tuple of %d ints expected", what, n);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        long v = PyLong_AsLong(PyTuple_GET_ITEM(o, i));
        if (v == -1 && PyErr_Occurred()) return -1;
        out[i] = (int)v;
    }
    return 0;
}

static int get_buf(PyObject *o, Py_buffer *v, Py_ssize_t itemsize, const char *what) {
    if (PyObject_GetBuffer(o, v, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return -1;
    if (v->itemsize != itemsize) {
        PyBuffer_Release(v);
        PyErr_Format(PyExc_TypeError, "%s: a contiguous buffer of %zd-byte items expected", what, itemsize);
        return -1;
    }
    return 0;
}

static int parse_member(PyObject *o, Mem *m) {
    PyObject *selfloop_o, *start_o, *before_o, *preds_o, *owners_o, *ends_o;
    if (!PyArg_ParseTuple(o, "iiiOOOOOO", &m->nv, &m->kv, &m->cls, &selfloop_o, &start_o, &before_o, &preds_o,
                          &owners_o, &ends_o))
        return -1;
    if (m->nv <= 0 || m->nv > MAXV || m->kv < 0 || m->kv >= m->nv || !PyTuple_Check(owners_o) ||
        PyTuple_GET_SIZE(owners_o) >= MAXV || !PyTuple_Check(ends_o) || PyTuple_GET_SIZE(ends_o) > m->nv ||
        !PyTuple_Check(preds_o) || PyTuple_GET_SIZE(preds_o) != m->nv) {
        PyErr_SetString(PyExc_ValueError, "members: malformed member");
        return -1;
    }
    m->nc = (int)PyTuple_GET_SIZE(owners_o);
    m->stride = 1 + m->nc;
    m->nends = (int)PyTuple_GET_SIZE(ends_o);
    if (int_tuple(selfloop_o, m->nv, m->selfloop, "selfloop") < 0 || int_tuple(start_o, m->nv, m->start, "start") < 0 ||
        int_tuple(before_o, m->nv, m->before, "before") < 0 || int_tuple(owners_o, m->nc, m->owner, "owners") < 0 ||
        int_tuple(ends_o, m->nends, m->ends, "ends") < 0)
        return -1;
    for (int i = 0; i < m->nv; i++) {
        PyObject *p = PyTuple_GET_ITEM(preds_o, i);
        if (!PyTuple_Check(p) || PyTuple_GET_SIZE(p) > m->nv) {
            PyErr_SetString(PyExc_TypeError, "preds: a tuple per variable expected");
            return -1;
        }
        m->npred[i] = (int)PyTuple_GET_SIZE(p);
        if (int_tuple(p, m->npred[i], m->pred[i], "preds") < 0) return -1;
        for (int a = 0; a < m->npred[i]; a++)
            if (m->pred[i][a] < 0 || m->pred[i][a] >= m->nv) {
                PyErr_SetString(PyExc_ValueError, "preds: index out of range");
                return -1;
            }
    }
    for (int e = 0; e < m->nends; e++)
        if (m->ends[e] < 0 || m->ends[e] >= m->nv) {
            PyErr_SetString(PyExc_ValueError, "ends: index out of range");
            return -1;
        }
    for (int c = 0; c < m->nc; c++)
        if (m->owner[c] < -1 || m->owner[c] >= m->nv) {
            PyErr_SetString(PyExc_ValueError, "owners: index out of range");
            return -1;
        }
    m->nother = 0;
    for (int a = 0; a < m->npred[m->kv]; a++)
        if (m->pred[m->kv][a] != m->kv) m->other[m->nother++] = m->pred[m->kv][a];
    return 0;
}

static PyObject *run(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *t_o, *ps_o, *klev_o, *chain_o, *level_o, *op_o, *om_o, *ov_o, *mem_o;
    int nchains, nclasses, per_window;
    long long within, slide;
    if (!PyArg_ParseTuple(args, "OOOOOiOOOOiLLp", &t_o, &ps_o, &klev_o, &chain_o, &level_o, &nchains, &op_o, &om_o,
                          &ov_o, &mem_o, &nclasses, &within, &slide, &per_window))
        return NULL;
    if (within <= 0 || slide <= 0 || nchains < 0 || nclasses <= 0 || !PyTuple_Check(mem_o) ||
        PyTuple_GET_SIZE(mem_o) == 0) {
        PyErr_SetString(PyExc_ValueError, "positive within / slide, classes and members expected");
        return NULL;
    }
    State s;
    memset(&s, 0, sizeof(s));
    Py_buffer tv = {0}, psv = {0}, klv = {0}, opv = {0}, omv = {0}, ovv = {0};
    int got = 0;
    PyObject *result = NULL;
    int *chain_of = calloc(nclasses, sizeof(int)), *level_of = calloc(nclasses, sizeof(int));
    int *chain_len = calloc(nchains + 1, sizeof(int)), *chain_base = calloc(nchains + 1, sizeof(int));
    int64_t *kcount = NULL;
    int *chain_cls = NULL;
    s.M = (int)PyTuple_GET_SIZE(mem_o);
    s.C = nclasses;
    s.m = calloc(s.M, sizeof(Mem));
    s.cls_start = calloc(nclasses + 1, sizeof(int));
    s.cls_members = calloc(s.M, sizeof(int));
    if (!chain_of || !level_of || !chain_len || !chain_base || !s.m || !s.cls_start || !s.cls_members) {
        PyErr_NoMemory();
        goto done;
    }
    if (int_tuple(chain_o, nclasses, chain_of, "chain_of") < 0 || int_tuple(level_o, nclasses, level_of, "level_of") < 0)
        goto done;
    for (int c = 0; c < nclasses; c++) {
        if (chain_of[c] < 0 || chain_of[c] >= nchains || level_of[c] < 0) {
            PyErr_SetString(PyExc_ValueError, "chain_of / level_of out of range");
            goto done;
        }
        if (level_of[c] + 1 > chain_len[chain_of[c]]) chain_len[chain_of[c]] = level_of[c] + 1;
    }
    for (int h = 0; h < nchains; h++) chain_base[h + 1] = chain_base[h] + chain_len[h];
    kcount = calloc(chain_base[nchains] + 1, sizeof(int64_t));
    chain_cls = calloc(chain_base[nchains] + 1, sizeof(int));
    if (!kcount || !chain_cls) {
        PyErr_NoMemory();
        goto done;
    }
    for (int x = 0; x < chain_base[nchains]; x++) chain_cls[x] = -1;
    for (int c = 0; c < nclasses; c++) {
        int x = chain_base[chain_of[c]] + level_of[c];
        if (chain_cls[x] >= 0) {
            PyErr_SetString(PyExc_ValueError, "two classes at one level of a chain");
            goto done;
        }
        chain_cls[x] = c;
    }
    for (int x = 0; x < chain_base[nchains]; x++)
        if (chain_cls[x] < 0) {
            PyErr_SetString(PyExc_ValueError, "a chain level without a class");
            goto done;
        }
    int off = 0, maxnc = 0;
    for (int j = 0; j < s.M; j++) {
        if (parse_member(PyTuple_GET_ITEM(mem_o, j), &s.m[j]) < 0) goto done;
        if (s.m[j].cls < 0 || s.m[j].cls >= nclasses) {
            PyErr_SetString(PyExc_ValueError, "member class out of range");
            goto done;
        }
        s.m[j].off = off;
        off += s.m[j].nv * s.m[j].stride;
        if (s.m[j].nc > maxnc) maxnc = s.m[j].nc;
        s.cls_start[s.m[j].cls + 1]++;
    }
    s.size = off;
    s.width = 1 + maxnc;
    for (int c = 0; c < nclasses; c++) s.cls_start[c + 1] += s.cls_start[c];
    {
        int *fill = calloc((size_t)s.C, sizeof(int));
        if (!fill) {
            PyErr_NoMemory();
            goto done;
        }
        for (int j = 0; j < s.M; j++) {
            int c = s.m[j].cls;
            s.cls_members[s.cls_start[c] + fill[c]++] = j;
        }
        free(fill);
    }
    if (get_buf(t_o, &tv, 8, "t") < 0) goto done;
    got = 1;
    if (get_buf(ps_o, &psv, 8, "pstarts") < 0) goto done;
    got = 2;
    if (get_buf(klev_o, &klv, 4, "klev") < 0) goto done;
    got = 3;
    if (get_buf(op_o, &opv, 8, "ownpos") < 0) goto done;
    got = 4;
    if (get_buf(om_o, &omv, 4, "ownmem") < 0) goto done;
    got = 5;
    if (get_buf(ov_o, &ovv, 4, "ownvar") < 0) goto done;
    got = 6;
    Py_ssize_t n = tv.len / 8, nparts = psv.len / 8, nown = opv.len / 8;
    if (klv.len / 4 != n * nchains || omv.len / 4 != nown || ovv.len / 4 != nown) {
        PyErr_SetString(PyExc_ValueError, "klev / own arrays: sizes do not match");
        goto done;
    }
    const int64_t *t = tv.buf, *ps = psv.buf, *opos = opv.buf;
    const int32_t *klev = klv.buf, *omem = omv.buf, *ovar = ovv.buf;
    if (n && (nparts == 0 || ps[0] != 0)) {
        PyErr_SetString(PyExc_ValueError, "pstarts: increasing positions from 0 expected");
        goto done;
    }
    for (Py_ssize_t p = 1; p < nparts; p++)
        if (ps[p] <= ps[p - 1] || ps[p] > n) {
            PyErr_SetString(PyExc_ValueError, "pstarts: increasing positions from 0 expected");
            goto done;
        }
    for (Py_ssize_t x = 0; x < nown; x++) {
        if (opos[x] < 0 || opos[x] >= n || (x && opos[x] < opos[x - 1]) || omem[x] < 0 || omem[x] >= s.M ||
            ovar[x] < 0 || ovar[x] >= s.m[omem[x]].nv || ovar[x] == s.m[omem[x]].kv) {
            PyErr_SetString(PyExc_ValueError, "own events: sorted positions and valid members / variables expected");
            goto done;
        }
    }
    for (Py_ssize_t x = 0; x < n * nchains; x++) {
        int h = (int)(x % (nchains ? nchains : 1));
        if (klev[x] < 0 || klev[x] > chain_len[h]) {
            PyErr_SetString(PyExc_ValueError, "klev: level out of range");
            goto done;
        }
    }
    s.cap = within / slide + 2;
    if (s.cap > (1 << 20) || s.cap * (int64_t)(s.size + 2 * s.M + 2 * s.C) > ((int64_t)1 << 27)) {
        result = Py_None;
        Py_INCREF(result);
        goto done;
    }
    s.per_window = per_window;
    s.st = calloc(s.cap * s.size, sizeof(u128));
    s.snapF = calloc(s.cap * s.M, sizeof(u128));
    s.snapG = calloc(s.cap * s.M, sizeof(u128));
    s.F = calloc(s.cap * s.C, sizeof(u128));
    s.G = calloc(s.cap * s.C, sizeof(u128));
    s.wbursts = calloc(s.cap, sizeof(int64_t));
    s.wsnaps = calloc(s.cap, sizeof(int64_t));
    if (!s.st || !s.snapF || !s.snapG || !s.F || !s.G || !s.wbursts || !s.wsnaps) {
        PyErr_NoMemory();
        goto done;
    }
    int failed = 0, too_big = 0;
    Py_BEGIN_ALLOW_THREADS
    Py_ssize_t x = 0; /* next own event */
    Py_ssize_t p = 0; /* partition of row i: ps[p] <= i < ps[p + 1] */
    int in_graphlet = 0;
    s.part = -1;
    for (Py_ssize_t lo = 0; lo < n && !failed;) {
        while (p + 1 < nparts && ps[p + 1] <= lo) p++;
        Py_ssize_t pend = p + 1 < nparts ? ps[p + 1] : n;
        int64_t ts = t[lo];
        Py_ssize_t hi = lo + 1;
        while (hi < pend && t[hi] == ts) hi++;
        if (p != s.part) {
            if (close_below(&s, INT64_MAX) < 0) {
                failed = 1;
                break;
            }
            s.part = p;
            in_graphlet = 0;
        }
        int64_t kmin = floordiv(ts - within, slide) + 1, kmax = floordiv(ts, slide);
        if (close_below(&s, kmin) < 0) {
            failed = 1;
            break;
        }
        open_upto(&s, kmin, kmax);
        /* this time stamp's own events: [x, xe) */
        Py_ssize_t xe = x;
        while (xe < nown && opos[xe] < hi) xe++;
        int touched = xe > x, any = 0;
        /* steps of variables ranked before K (its successors): the state before K's events */
        for (int phase = 1; phase >= 0; phase--) {
            Py_ssize_t y = x;
            while (y < xe) {
                int j = omem[y], v = ovar[y];
                Py_ssize_t z = y + 1;
                while (z < xe && omem[z] == j && ovar[z] == v) z++;
                if (s.m[j].before[v] == phase) {
                    for (int64_t k = kmin; k <= kmax; k++) own_step(&s, j, slot(&s, k), v, (int64_t)(z - y));
                }
                y = z;
            }
            if (phase == 0) break;
            /* the events of K at this time stamp: per class, the prefix sums of the levels */
            int64_t kk = 0;
            if (nchains) {
                memset(kcount, 0, chain_base[nchains] * sizeof(int64_t));
                for (Py_ssize_t i = lo; i < hi; i++) {
                    int matched = 0;
                    for (int h = 0; h < nchains; h++) {
                        int l = klev[i * nchains + h];
                        if (l < chain_len[h]) {
                            kcount[chain_base[h] + l]++;
                            matched = 1;
                        }
                    }
                    kk += matched;
                }
                any = kk > 0;
            }
            if (!any) continue;
            if (kk > K_MAX) {
                too_big = 1;
                failed = 1;
                break;
            }
            if (!in_graphlet) s.graphlets++;
            for (int64_t k = kmin; k <= kmax; k++) {
                Py_ssize_t w = slot(&s, k);
                s.bursts++;
                s.shared_events += kk;
                s.wbursts[w]++;
                for (int h = 0; h < nchains; h++) {
                    int64_t run = 0;
                    for (int l = 0; l < chain_len[h]; l++) {
                        run += kcount[chain_base[h] + l];
                        if (!run) continue;
                        int c = chain_cls[chain_base[h] + l];
                        u128 *F = &s.F[w * s.C + c], *G = &s.G[w * s.C + c];
                        if (*F > F_REBASE || *G > G_REBASE) rebase(&s, c, w);
                        u128 f = (u128)(1 + run);
                        *G = *G * f + (u128)run * *F;
                        *F = *F * f;
                        s.updates++;
                    }
                }
            }
        }
        in_graphlet = any && !touched;
        x = xe;
        lo = hi;
    }
    if (!failed && close_below(&s, INT64_MAX) < 0) failed = 1;
    Py_END_ALLOW_THREADS
    if (too_big) {
        result = Py_None;
        Py_INCREF(result);
        goto done;
    }
    if (failed) {
        PyErr_NoMemory();
        goto done;
    }
    PyObject *pw = Py_None;
    if (per_window) {
        pw = PyBytes_FromStringAndSize((const char *)s.pw, s.npw * 4 * sizeof(int64_t));
        if (!pw) goto done;
    } else {
        Py_INCREF(pw);
    }
    result = Py_BuildValue(
        "(y#y#y#y#(LLLLLLL)N)", (const char *)s.omem, (Py_ssize_t)(s.n * sizeof(int64_t)), (const char *)s.opart,
        (Py_ssize_t)(s.n * sizeof(int64_t)), (const char *)s.ok, (Py_ssize_t)(s.n * sizeof(int64_t)),
        (const char *)s.oval, (Py_ssize_t)(s.n * 2 * s.width * sizeof(uint64_t)), (long long)s.windows,
        (long long)s.graphlets, (long long)s.bursts, (long long)s.shared_events, (long long)s.snapshots,
        (long long)s.rebases, (long long)s.updates, pw);
done:
    if (got >= 1) PyBuffer_Release(&tv);
    if (got >= 2) PyBuffer_Release(&psv);
    if (got >= 3) PyBuffer_Release(&klv);
    if (got >= 4) PyBuffer_Release(&opv);
    if (got >= 5) PyBuffer_Release(&omv);
    if (got >= 6) PyBuffer_Release(&ovv);
    free(chain_of);
    free(level_of);
    free(chain_len);
    free(chain_base);
    free(kcount);
    free(chain_cls);
    free(s.m);
    free(s.cls_start);
    free(s.cls_members);
    free(s.st);
    free(s.snapF);
    free(s.snapG);
    free(s.F);
    free(s.G);
    free(s.wbursts);
    free(s.wsnaps);
    free(s.omem);
    free(s.opart);
    free(s.ok);
    free(s.oval);
    free(s.pw);
    return result;
}

static PyMethodDef methods[] = {
    {"run", run, METH_VARARGS, "The type-grained shared Kleene pass over count states (see the module source)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_typed", "The compiled type-grained shared Kleene executor.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__typed(void) {
    CAP = (u128)10000000000000000000ULL * (u128)10000000000000000000ULL - 1; /* 10**38 - 1 */
    return PyModule_Create(&module);
}
