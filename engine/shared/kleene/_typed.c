/* The type-grained shared Kleene executor for count states, compiled (docs/engine.md,
 * "Shared Kleene execution", "The compiled shared pass").
 *
 * One pass over the visited rows of a group's key set, time-stamp group by time-stamp
 * group, partition by partition. Each member query keeps COGRA's type-grained window
 * state of counts (count(V), then COUNT(E) per key, per variable V); the events of the
 * shared Kleene type K change no member state directly. Instead each *class* (the members
 * that match the same events of K) keeps, per partition, the shared coefficients of the
 * time stamps of K it matched:
 *
 *     F' = F (1 + k),    G' = G (1 + k) + k F        (k: events of K the class matches)
 *
 * These factors commute, and a time stamp of one event (the usual case) is the factor (2, 1):
 * n of them together are (2**n, n 2**(n - 1)). So a class counts its time stamps of one event
 * (E, a plain integer, never rebased) and keeps (F, G) only for its other time stamps. Each
 * member keeps per open window its snapshot (E0, F0, G0) of its class's from when its state
 * in that window was last brought up to date (a window opens with the values of the moment:
 * every K event after a snapshot and before now is in every window open at both times). A
 * member is brought up to date (n = E - E0, F1 = 2**n F / F0, G1 from G - G0 F / F0, exact;
 * for a member without other time stamps since its snapshot a shift) before each of its own
 * steps, when its window closes, and when its class is rebased: u = count(K) + s becomes
 * u F1, count(K) = u F1 - s, and a COUNT(E) entry W of the Kleene variable (W0 = W + the
 * predecessors') becomes W0 F1 - sw, plus u G1 when E is K.
 *
 * Classes come in chains of nested sets (thresholds `K.x < c`: an event a class matches is
 * matched by every larger class of its chain); classes are numbered in chain order, so a K
 * event's classes are a range. Its *level* in a chain, the first class of the chain that
 * matches it, is found by binary search over the chain's masks, and the events a class
 * matches at a time stamp are the prefix sums of the levels' counts; a time stamp with one
 * event in a chain adds 1 to E over a range of classes. Arbitrary predicates give chains of
 * one class. The members' own events are read from the distinct masks of their other
 * variables, each with the (member, variable) pairs it feeds.
 *
 * Counts are exact 128-bit integers saturated past CAP (10**38 - 1) exactly as COGRA's
 * compiled kernel saturates them (`_steps.c`): all counts only grow, so the saturated
 * values do not depend on how the steps are grouped. A factor past 2**128 (2**n, n >= 128)
 * is kept as NANV: times a count of at least 1 it saturates the count, as the count is past
 * CAP. A class is rebased (every member brought up to date in every open window, F = 1,
 * G = 0) before a time stamp of several events finds F past 2**40 or G past 2**52, so those
 * coefficients stay far from 2**128 and mostly within 64 bits. Once every result column
 * of a member's window has an END count past CAP, its results there cannot change: the
 * window is *done* for that member, which takes no more steps in it (nor is it brought up
 * to date), and a member done in every open window ignores its own events.
 *
 * run(ts, idx, pstarts, kmasks, chains, omasks, subs, members, within, slide, per_window)
 *   ts: int64 time stamps of the key set's rows; idx: int64 rows to visit (partition by
 *   partition, in time order; None: every row); pstarts: int64 visited positions where each
 *   partition starts (the first 0); kmasks: per class a bool buffer over the rows (does the
 *   row match the class's Kleene variable); chains: tuples of classes, each chain from its
 *   smallest class to its largest; omasks: bool buffers over the rows, the distinct masks of
 *   the members' other variables; subs: per omask the flat tuple (member, variable, ...) it
 *   feeds; members: per member (nv, kv, class, order, selfloop, start, before, preds, owners,
 *   ends): its variables, its K variable, its class, its variables in the order a time
 *   stamp applies them (Layout.rank), 0/1 per variable (self-loop, START, ranked before K:
 *   applied before the time stamp's K events), per variable its predecessor indexes (itself
 *   included for a Kleene variable), per COUNT(E) key the index of E (-1: none), the END
 *   variables;
 * returns (mem, part, k, values, stats, windows): int64 member, partition index (into
 *   pstarts) and window index of each (member, window) with a trend, as bytes; per such
 *   result 1 + max COUNT(E) keys counts (the trends, then COUNT(E) per key, summed over the
 *   END variables) as (low, high) uint64 pairs, all ones for a saturated count; stats
 *   (windows, graphlets, bursts, shared events, snapshots, rebases, coefficient updates, own
 *   steps: a member's events of one variable applied to one window);
 *   with per_window, int64 (partition, window, bursts, snapshots) per window where anything
 *   happened, else None. None where more than 2**30 events of K share a time stamp or a
 *   window spans too many slides.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../pymodule.h"

#define MAXV 64
#define F_REBASE ((u128)1 << 40)
#define G_REBASE ((u128)1 << 52)
#define K_MAX ((int64_t)1 << 30)


typedef struct {
    int nv, kv, cls, stride, nc, off;
    int nother, nends, needG; /* needG: a COUNT(K) key, so bringing up to date needs G */
    int n1, n0;               /* own variables applied before / after K's events of a time stamp */
    int startK, kother1;      /* K is START (0/1); its one other predecessor (-1: none, -2: several) */
    uint64_t endmask;         /* the END variables, as bits */
    /* arrays in `block`: per variable its order, self-loop, START, ranked before K, number of
     * predecessors and where they start in `pred`; K's predecessors other than itself; per
     * COUNT(E) key the owner; the END variables; the own variables before / after K in order */
    int *order, *selfloop, *start, *before, *npred, *pstart, *pred, *other, *owner, *ends, *ord1, *ord0;
    int *pred1; /* per variable its one predecessor (-1: none, -2: several) */
    int *block;
} Mem;

#define PRED(m, v, a) ((m)->pred[(m)->pstart[v] + (a)])

typedef struct {
    int M, C, size, width;
    Mem *m;
    /* classes are numbered by their place in the chains (each chain's classes consecutive) */
    int *cls_start, *cls_members; /* members of each class (CSR) */
    int64_t *E;                   /* per class, its time stamps of one event (factor 2) this partition */
    u128 *F, *G;                  /* per class, the coefficients of its other time stamps (since a rebase) */
    int64_t *irr;                 /* per class, how many such time stamps */
    /* per member, its events not applied yet: variable (-1: none) and count; members with some */
    int *pend_v;
    int64_t *pend_k;
    int *pend_head, *pend_next, npending; /* per class a list of its members with some */
    uint64_t *pbits;                      /* per class a bit: its list is not empty */
    char *listed; /* per member: in its class's list */
    /* the open windows [lo, lo + count), window lo in slot head */
    int64_t cap, lo, count, head, part;
    u128 *st;     /* cap * size */
    int64_t *snapE; /* cap * M: per window and member, its class's E, F, G and irr when last up to date */
    u128 *snapF;
    u128 *snapG;
    int64_t *snapI;
    int64_t *wbursts, *wsnaps; /* cap */
    /* cap * M: the member's results in that window are past CAP (every result column has an
     * END count past CAP): counts only grow, so they stay there and its state is left alone */
    char *done;
    int *alive; /* per member: its open windows not done (none: its events change nothing) */
    /* output */
    CountRows out; /* the window results */
    int64_t *pw;
    Py_ssize_t npw, pwcap;
    int per_window;
    /* stats */
    int64_t windows, graphlets, bursts, shared_events, snapshots, rebases, updates, steps;
} State;

static inline int bitlen(u128 x) {
    uint64_t hi = (uint64_t)(x >> 64);
    return hi ? 128 - __builtin_clzll(hi) : (uint64_t)x ? 64 - __builtin_clzll((uint64_t)x) : 0;
}

static inline Py_ssize_t slot(const State *s, int64_t k) { return (Py_ssize_t)RING_SLOT(s, k); }

/* 2**n, or NANV (standing for a number past 2**128) when n >= 128 */
static inline u128 pow2(int64_t n) { return n >= 128 ? NANV : (u128)1 << n; }

/* n 2**(n - 1) (n >= 1), the G of n time stamps of one event each; NANV past 2**128 */
static inline u128 npow2(int64_t n) { return n - 1 + bitlen((u128)n) >= 128 ? NANV : (u128)n << (n - 1); }

/* START (1 when K is START) plus the counts of K's predecessors other than itself, in the
 * member's state st: what a trend of K extends from */
static inline u128 k_base(const Mem *m, const u128 *st) {
    u128 sum = (u128)m->startK;
    if (m->kother1 >= 0) return add_sat(sum, st[m->kother1 * m->stride]);
    if (m->kother1 == -2)
        for (int a = 0; a < m->nother; a++) sum = add_sat(sum, st[m->other[a] * m->stride]);
    return sum;
}

/* count(K) of a member without COUNT(E) keys, in slot w, brought over n time stamps of one
 * event each: u = count(K) + sum becomes u 2**n, a shift */
static inline void shift_k(State *s, const Mem *m, u128 *st, Py_ssize_t w, int64_t n) {
    const u128 sum = k_base(m, st), u = add_sat(st[m->kv], sum);
    if (!u) return;
    s->snapshots++;
    s->wsnaps[w]++;
    const u128 A = n >= 128 ? NANV : shl_exact(u, (int)n);
    st[m->kv] = (A == NANV || sum == NANV) ? NANV : keep(A - sum);
}

/* member j's state in slot w brought up to date with its class's coefficients. Since the
 * snapshot, the class saw n time stamps of one event (factor (2, 1) each: together (2**n,
 * n 2**(n - 1))) and others (F / F0, (G - G0 F1) / F0); the factors commute. A factor past
 * 2**128 is NANV: multiplied by a count of at least 1 it saturates it, as the count would be
 * past CAP. */
static void bring(State *s, int j, Py_ssize_t w) {
    const Py_ssize_t at = w * s->M + j;
    if (s->done[at]) return;
    const Mem *m = &s->m[j];
    const int c = m->cls;
    const int64_t n = s->E[c] - s->snapE[at];
    /* regular: no other time stamp since the snapshot, so F, G are the snapshot's */
    const int regular = s->snapI[at] == s->irr[c];
    if (!n && regular) return;
    s->snapE[at] = s->E[c];
    u128 F = 1, G = 0, F0 = 1, G0 = 0;
    if (!regular) {
        F = s->F[c], G = s->G[c], F0 = s->snapF[at], G0 = s->snapG[at];
        s->snapF[at] = F;
        s->snapG[at] = G;
        s->snapI[at] = s->irr[c];
    }
    u128 *st = s->st + w * s->size + m->off;
    if (regular && !m->nc) {
        shift_k(s, m, st, w, n);
        return;
    }
    const int stride = m->stride, kb = m->kv * stride;
    const u128 sum = k_base(m, st), u = add_sat(st[kb], sum);
    if (u == 0) return;
    s->snapshots++;
    s->wsnaps[w]++;
    u128 F1, G1 = 0;
    if (regular) {
        F1 = pow2(n);
        if (m->needG) G1 = npow2(n);
    } else {
        u128 Fi, Gi = 0;
        if (!(F >> 64) && !(G >> 64)) { /* 64-bit division: F0 <= F, G0 Fi <= G */
            uint64_t f1 = (uint64_t)F / (uint64_t)F0;
            Fi = f1;
            if (m->needG) Gi = ((uint64_t)G - (uint64_t)G0 * f1) / (uint64_t)F0;
        } else {
            Fi = F / F0;
            if (m->needG) Gi = (G - G0 * Fi) / F0;
        }
        if (n) {
            u128 p = pow2(n);
            if (m->needG) G1 = add_exact(mul_exact(npow2(n), Fi), mul_exact(p, Gi));
            F1 = mul_exact(p, Fi);
        } else {
            F1 = Fi;
            G1 = Gi;
        }
    }
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

/* after a step of member j's variable v in its state st (slot at = w * M + j): the window is
 * done for it once every result column has an END count past CAP (NANV), its results there
 * past CAP for good; only a step of an END variable, or bringing K up to date when K is one,
 * can get it there */
static void check_done(State *s, int j, Py_ssize_t at, int v, const u128 *st) {
    const Mem *m = &s->m[j];
    if (!((m->endmask >> v | m->endmask >> m->kv) & 1)) return;
    for (int a = 0; a <= m->nc; a++) {
        int e = 0;
        while (e < m->nends && st[m->ends[e] * m->stride + a] != NANV) e++;
        if (e == m->nends) return;
    }
    s->done[at] = 1;
    s->alive[j]--;
}

/* k simultaneous events of member j's variable v (not K) in slot w: every event extends the
 * trends before the time stamp (COGRA's simultaneous step) */
static void own_step(State *s, int j, Py_ssize_t w, int v, int64_t k) {
    const Mem *m = &s->m[j];
    if (s->done[w * s->M + j]) return;
    bring(s, j, w);
    s->steps++;
    u128 *st = s->st + w * s->size + m->off;
    const int stride = m->stride;
    u128 sum = m->start[v] ? 1 : 0;
    for (int a = 0; a < m->npred[v]; a++) sum = add_sat(sum, st[PRED(m, v, a) * stride]);
    if (sum == 0) return;
    u128 *mine = st + v * stride;
    u128 kk = (u128)k;
    for (int c = 0; c < m->nc; c++) {
        u128 sw = 0;
        for (int a = 0; a < m->npred[v]; a++) sw = add_sat(sw, st[PRED(m, v, a) * stride + 1 + c]);
        u128 r = add_exact(mine[1 + c], mul_exact(sw, kk));
        if (m->owner[c] == v) r = add_exact(r, mul_exact(sum, kk));
        mine[1 + c] = keep(r);
    }
    mine[0] = keep(add_exact(mine[0], mul_exact(sum, kk)));
    check_done(s, j, w * s->M + j, v, st);
}

/* own_step for every open window, for a member without COUNT(E) keys (a stride of 1): the
 * usual case, with bringing up to date inlined where its class saw only time stamps of one
 * event (count(K) = u 2**n - sum, a shift) */
static void own_steps_counts(State *s, int j, int v, int64_t k) {
    const Mem *m = &s->m[j];
    const int c = m->cls;
    const int64_t E = s->E[c], irr = s->irr[c];
    for (int64_t x = s->lo; x < s->lo + s->count; x++) {
        const Py_ssize_t w = slot(s, x), at = w * s->M + j;
        if (s->done[at]) continue;
        u128 *st = s->st + w * s->size + m->off;
        const int64_t n = E - s->snapE[at];
        if (s->snapI[at] != irr) {
            bring(s, j, w);
        } else if (n) {
            s->snapE[at] = E;
            shift_k(s, m, st, w, n);
        }
        s->steps++;
        u128 sum = m->start[v] ? 1 : 0;
        const int p1 = m->pred1[v];
        if (p1 >= 0) sum = add_sat(sum, st[p1]);
        else if (p1 == -2)
            for (int a = 0; a < m->npred[v]; a++) sum = add_sat(sum, st[PRED(m, v, a)]);
        if (sum) st[v] = keep(add_exact(st[v], mul_exact(sum, (u128)k)));
        check_done(s, j, at, v, st);
    }
}

/* member j's pending events applied to every open window */
static void flush(State *s, int j) {
    int v = s->pend_v[j];
    if (v < 0) return;
    s->pend_v[j] = -1;
    if (!s->m[j].nc) {
        own_steps_counts(s, j, v, s->pend_k[j]);
        return;
    }
    for (int64_t k = s->lo; k < s->lo + s->count; k++) own_step(s, j, slot(s, k), v, s->pend_k[j]);
}

/* the pending events of class c's members applied */
static void flush_class(State *s, int c) {
    int j;
    s->pbits[c >> 6] &= ~((uint64_t)1 << (c & 63));
    while ((j = s->pend_head[c]) >= 0) {
        s->pend_head[c] = s->pend_next[j];
        s->listed[j] = 0;
        s->npending--;
        flush(s, j);
    }
}

/* the pending events of the members of classes lo .. hi - 1 applied */
static void flush_classes(State *s, int lo, int hi) {
    for (int wd = lo >> 6; wd <= (hi - 1) >> 6; wd++) {
        uint64_t bits = s->pbits[wd];
        if (wd == lo >> 6) bits &= ~(uint64_t)0 << (lo & 63);
        if (wd == (hi - 1) >> 6) bits &= ~(uint64_t)0 >> (63 - ((hi - 1) & 63));
        while (bits) {
            flush_class(s, wd * 64 + __builtin_ctzll(bits));
            bits &= bits - 1;
        }
    }
}

static void flush_all(State *s) {
    if (s->npending) flush_classes(s, 0, s->C);
}

/* c events of member j's variable v at this time stamp: a variable without a self-loop adds
 * k s to its count with s unchanged until the member's next other step or its class's next
 * K update, so consecutive ones wait and are applied as one step */
static void own_events(State *s, int j, int v, int64_t c) {
    if (!s->alive[j]) return; /* its results in every open window are past CAP */
    Mem *m = &s->m[j];
    if (s->pend_v[j] == v) {
        s->pend_k[j] += c;
        return;
    }
    if (s->pend_v[j] >= 0) flush(s, j);
    if (m->selfloop[v]) {
        if (!m->nc) own_steps_counts(s, j, v, c);
        else for (int64_t k = s->lo; k < s->lo + s->count; k++) own_step(s, j, slot(s, k), v, c);
        return;
    }
    s->pend_v[j] = v;
    s->pend_k[j] = c;
    if (!s->listed[j]) {
        s->listed[j] = 1;
        s->pend_next[j] = s->pend_head[m->cls];
        s->pend_head[m->cls] = j;
        s->pbits[m->cls >> 6] |= (uint64_t)1 << (m->cls & 63);
        s->npending++;
    }
}

static void rebase(State *s, int c) {
    for (int x = s->cls_start[c]; x < s->cls_start[c + 1]; x++) {
        int j = s->cls_members[x];
        for (int64_t k = s->lo; k < s->lo + s->count; k++) {
            Py_ssize_t w = slot(s, k);
            bring(s, j, w);
            s->snapE[w * s->M + j] = s->E[c];
            s->snapF[w * s->M + j] = 1;
            s->snapG[w * s->M + j] = 0;
            s->snapI[w * s->M + j] = s->irr[c];
        }
    }
    s->F[c] = 1;
    s->G[c] = 0;
    s->rebases++;
}

static int push(State *s, int j, int64_t k, const u128 *res, int nres) {
    return count_rows_push(&s->out, j, s->part, k, res, nres);
}

static int close_window(State *s, int64_t k) {
    Py_ssize_t w = slot(s, k);
    for (int j = 0; j < s->M; j++) {
        Mem *m = &s->m[j];
        if (!s->done[w * s->M + j]) s->alive[j]--;
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
        int64_t *p = grow_rows(&s->pw, &s->npw, &s->pwcap, 4);
        if (!p) return -1;
        p[0] = s->part;
        p[1] = k;
        p[2] = s->wbursts[w];
        p[3] = s->wsnaps[w];
    }
    return 0;
}

RING_CLOSE_BELOW(close_below, State, close_window)

static void open_upto(State *s, int64_t kmin, int64_t kmax) {
    RING_START(s, kmin);
    while (s->lo + s->count <= kmax) {
        int64_t k = s->lo + s->count;
        s->count++;
        Py_ssize_t w = slot(s, k);
        memset(s->st + w * s->size, 0, s->size * sizeof(u128));
        memset(s->done + w * s->M, 0, s->M);
        for (int j = 0; j < s->M; j++) s->alive[j]++;
        for (int j = 0; j < s->M; j++) {
            s->snapE[w * s->M + j] = s->E[s->m[j].cls];
            s->snapF[w * s->M + j] = s->F[s->m[j].cls];
            s->snapG[w * s->M + j] = s->G[s->m[j].cls];
            s->snapI[w * s->M + j] = s->irr[s->m[j].cls];
        }
        s->wbursts[w] = 0;
        s->wsnaps[w] = 0;
        s->windows++;
    }
}

static int parse_member(PyObject *o, Mem *m) {
    PyObject *order_o, *selfloop_o, *start_o, *before_o, *preds_o, *owners_o, *ends_o;
    if (!PyArg_ParseTuple(o, "iiiOOOOOOO", &m->nv, &m->kv, &m->cls, &order_o, &selfloop_o, &start_o, &before_o,
                          &preds_o, &owners_o, &ends_o))
        return -1;
    if (m->nv <= 0 || m->nv > MAXV || m->kv < 0 || m->kv >= m->nv || !PyTuple_Check(owners_o) ||
        PyTuple_GET_SIZE(owners_o) >= MAXV || !PyTuple_Check(ends_o) || PyTuple_GET_SIZE(ends_o) > m->nv ||
        !PyTuple_Check(preds_o) || PyTuple_GET_SIZE(preds_o) != m->nv) {
        PyErr_SetString(PyExc_ValueError, "members: malformed member");
        return -1;
    }
    const int nv = m->nv;
    m->nc = (int)PyTuple_GET_SIZE(owners_o);
    m->stride = 1 + m->nc;
    m->nends = (int)PyTuple_GET_SIZE(ends_o);
    int npreds = 0;
    for (int i = 0; i < nv; i++) {
        PyObject *p = PyTuple_GET_ITEM(preds_o, i);
        if (!PyTuple_Check(p) || PyTuple_GET_SIZE(p) > nv) {
            PyErr_SetString(PyExc_TypeError, "preds: a tuple per variable expected");
            return -1;
        }
        npreds += (int)PyTuple_GET_SIZE(p);
    }
    /* order, selfloop, start, before, npred, ord1, ord0: nv each; pstart nv + 1; pred; other
     * (at most nv); owner; ends */
    m->block = calloc((size_t)(10 * nv + 1 + npreds + m->nc + m->nends), sizeof(int));
    if (!m->block) {
        PyErr_NoMemory();
        return -1;
    }
    int *at = m->block;
    m->order = at, at += nv;
    m->selfloop = at, at += nv;
    m->start = at, at += nv;
    m->before = at, at += nv;
    m->npred = at, at += nv;
    m->ord1 = at, at += nv;
    m->ord0 = at, at += nv;
    m->pred1 = at, at += nv;
    m->pstart = at, at += nv + 1;
    m->pred = at, at += npreds;
    m->other = at, at += nv;
    m->owner = at, at += m->nc;
    m->ends = at;
    if (int_tuple(order_o, nv, m->order, "order") < 0 || int_tuple(selfloop_o, nv, m->selfloop, "selfloop") < 0 ||
        int_tuple(start_o, nv, m->start, "start") < 0 || int_tuple(before_o, nv, m->before, "before") < 0 ||
        int_tuple(owners_o, m->nc, m->owner, "owners") < 0 || int_tuple(ends_o, m->nends, m->ends, "ends") < 0)
        return -1;
    int seen[MAXV] = {0};
    for (int i = 0; i < nv; i++) {
        if (m->order[i] < 0 || m->order[i] >= nv || seen[m->order[i]]++) {
            PyErr_SetString(PyExc_ValueError, "order: a permutation of the variables expected");
            return -1;
        }
        PyObject *p = PyTuple_GET_ITEM(preds_o, i);
        m->npred[i] = (int)PyTuple_GET_SIZE(p);
        m->pstart[i + 1] = m->pstart[i] + m->npred[i];
        if (int_tuple(p, m->npred[i], m->pred + m->pstart[i], "preds") < 0) return -1;
        for (int a = 0; a < m->npred[i]; a++)
            if (PRED(m, i, a) < 0 || PRED(m, i, a) >= nv) {
                PyErr_SetString(PyExc_ValueError, "preds: index out of range");
                return -1;
            }
    }
    for (int e = 0; e < m->nends; e++)
        if (m->ends[e] < 0 || m->ends[e] >= nv) {
            PyErr_SetString(PyExc_ValueError, "ends: index out of range");
            return -1;
        }
    for (int c = 0; c < m->nc; c++)
        if (m->owner[c] < -1 || m->owner[c] >= nv) {
            PyErr_SetString(PyExc_ValueError, "owners: index out of range");
            return -1;
        }
    m->needG = 0;
    for (int c = 0; c < m->nc; c++)
        if (m->owner[c] == m->kv) m->needG = 1;
    m->nother = 0;
    for (int a = 0; a < m->npred[m->kv]; a++)
        if (PRED(m, m->kv, a) != m->kv) m->other[m->nother++] = PRED(m, m->kv, a);
    m->startK = m->start[m->kv] ? 1 : 0;
    m->endmask = 0;
    for (int e = 0; e < m->nends; e++) m->endmask |= (uint64_t)1 << m->ends[e];
    m->kother1 = m->nother == 0 ? -1 : m->nother == 1 ? m->other[0] : -2;
    for (int v = 0; v < nv; v++) m->pred1[v] = m->npred[v] == 0 ? -1 : m->npred[v] == 1 ? PRED(m, v, 0) : -2;
    m->n1 = m->n0 = 0;
    for (int o = 0; o < nv; o++) {
        int v = m->order[o];
        if (v == m->kv) continue;
        if (m->before[v]) m->ord1[m->n1++] = v;
        else m->ord0[m->n0++] = v;
    }
    return 0;
}

/* bool buffers of one length each, kept in views[]; returns how many were taken (on error -1
 * after releasing them) */
static int get_masks(PyObject *tuple, Py_buffer *views, Py_ssize_t rows, const char *what) {
    if (!PyTuple_Check(tuple)) {
        PyErr_Format(PyExc_TypeError, "%s: a tuple of bool buffers expected", what);
        return -1;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(tuple);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (PyObject_GetBuffer(PyTuple_GET_ITEM(tuple, i), &views[i], PyBUF_C_CONTIGUOUS) < 0 ||
            (views[i].len != rows && (PyBuffer_Release(&views[i]), 1))) {
            if (!PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "%s: one byte per row expected", what);
            for (Py_ssize_t x = 0; x < i; x++) PyBuffer_Release(&views[x]);
            return -1;
        }
    }
    return (int)n;
}

static PyObject *run(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *ts_o, *idx_o, *ps_o, *km_o, *chains_o, *om_o, *subs_o, *mem_o;
    int per_window;
    long long within, slide;
    if (!PyArg_ParseTuple(args, "OOOOOOOOLLp", &ts_o, &idx_o, &ps_o, &km_o, &chains_o, &om_o, &subs_o, &mem_o, &within,
                          &slide, &per_window))
        return NULL;
    if (within <= 0 || slide <= 0 || !PyTuple_Check(mem_o) || PyTuple_GET_SIZE(mem_o) == 0 || !PyTuple_Check(km_o) ||
        !PyTuple_Check(chains_o) || !PyTuple_Check(om_o) || !PyTuple_Check(subs_o) ||
        PyTuple_GET_SIZE(subs_o) != PyTuple_GET_SIZE(om_o)) {
        PyErr_SetString(PyExc_ValueError, "positive within / slide, members, and tuples of masks expected");
        return NULL;
    }
    State s;
    memset(&s, 0, sizeof(s));
    Py_buffer tsv = {0}, idxv = {0}, psv = {0};
    Py_buffer *kmv = NULL, *omv = NULL;
    int got_ts = 0, got_idx = 0, got_ps = 0, nkm = 0, nom = 0;
    PyObject *result = NULL;
    int C = (int)PyTuple_GET_SIZE(km_o), H = (int)PyTuple_GET_SIZE(chains_o), D = (int)PyTuple_GET_SIZE(om_o);
    int *chain_start = calloc((size_t)H + 1, sizeof(int)), *chain_cls = calloc((size_t)C + 1, sizeof(int));
    int *sub_start = calloc((size_t)D + 1, sizeof(int)), *sub_pairs = NULL;
    int64_t *kcount = calloc((size_t)C + 1, sizeof(int64_t));
    int *kfirst = calloc((size_t)H + 1, sizeof(int)); /* per chain: its lowest level hit at this time stamp */
    int64_t *kchain = calloc((size_t)H + 1, sizeof(int64_t)); /* per chain: its events at this time stamp */
    int *place = calloc((size_t)C + 1, sizeof(int)); /* per class given: its number here (in chain order) */
    int64_t *cnt = NULL;
    int *touched = NULL, *is_touched = NULL;
    const char **kmask = calloc((size_t)C + 1, sizeof(char *)), **omask = calloc((size_t)D + 1, sizeof(char *));
    kmv = calloc((size_t)C + 1, sizeof(Py_buffer));
    omv = calloc((size_t)D + 1, sizeof(Py_buffer));
    s.M = (int)PyTuple_GET_SIZE(mem_o);
    s.C = C;
    s.m = calloc(s.M, sizeof(Mem));
    s.cls_start = calloc((size_t)C + 1, sizeof(int));
    s.cls_members = calloc(s.M, sizeof(int));
    s.E = calloc((size_t)C + 1, sizeof(int64_t));
    s.pbits = calloc((size_t)C / 64 + 1, sizeof(uint64_t));
    s.F = calloc((size_t)C + 1, sizeof(u128));
    s.G = calloc((size_t)C + 1, sizeof(u128));
    s.irr = calloc((size_t)C + 1, sizeof(int64_t));
    s.pend_v = calloc((size_t)s.M + 1, sizeof(int));
    s.pend_k = calloc((size_t)s.M + 1, sizeof(int64_t));
    s.pend_head = malloc(((size_t)C + 1) * sizeof(int));
    s.pend_next = calloc((size_t)s.M + 1, sizeof(int));
    s.listed = calloc((size_t)s.M + 1, 1);
    if (!kchain || !place || !s.E || !s.pbits || !s.listed || !s.irr || !s.pend_v || !s.pend_k || !s.pend_head || !s.pend_next || !chain_start || !chain_cls || !sub_start || !kcount || !kfirst || !kmask || !omask || !kmv || !omv || !s.m ||
        !s.cls_start || !s.cls_members || !s.F || !s.G) {
        PyErr_NoMemory();
        goto done;
    }
    if (C <= 0) {
        PyErr_SetString(PyExc_ValueError, "at least one class expected");
        goto done;
    }
    for (int c = 0; c < C; c++) s.pend_head[c] = -1;
    /* chains: a partition of the classes */
    {
        int x = 0;
        char *used = calloc((size_t)C, 1);
        if (!used) {
            PyErr_NoMemory();
            goto done;
        }
        for (int h = 0; h < H; h++) {
            PyObject *ch = PyTuple_GET_ITEM(chains_o, h);
            int len = PyTuple_Check(ch) ? (int)PyTuple_GET_SIZE(ch) : -1;
            if (len <= 0 || x + len > C || int_tuple(ch, len, chain_cls + x, "chains") < 0) {
                if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "chains: non-empty tuples of classes expected");
                free(used);
                goto done;
            }
            for (int l = 0; l < len; l++) {
                int c = chain_cls[x + l];
                if (c < 0 || c >= C || used[c]++) {
                    PyErr_SetString(PyExc_ValueError, "chains: each class in exactly one chain expected");
                    free(used);
                    goto done;
                }
                place[c] = x + l;
            }
            chain_start[h] = x;
            x += len;
        }
        chain_start[H] = x;
        for (int h = 0; h < H; h++) kfirst[h] = INT32_MAX;
        free(used);
        if (x != C) {
            PyErr_SetString(PyExc_ValueError, "chains: each class in exactly one chain expected");
            goto done;
        }
    }
    int off = 0, maxnc = 0, maxnv = 0;
    for (int j = 0; j < s.M; j++) {
        if (parse_member(PyTuple_GET_ITEM(mem_o, j), &s.m[j]) < 0) goto done;
        if (s.m[j].cls < 0 || s.m[j].cls >= C) {
            PyErr_SetString(PyExc_ValueError, "member class out of range");
            goto done;
        }
        s.m[j].cls = place[s.m[j].cls];
        s.m[j].off = off;
        off += s.m[j].nv * s.m[j].stride;
        if (s.m[j].nc > maxnc) maxnc = s.m[j].nc;
        if (s.m[j].nv > maxnv) maxnv = s.m[j].nv;
        s.cls_start[s.m[j].cls + 1]++;
    }
    s.size = off;
    s.width = 1 + maxnc;
    s.out.width = s.width;
    for (int c = 0; c < C; c++) s.cls_start[c + 1] += s.cls_start[c];
    {
        int *fill = calloc((size_t)C, sizeof(int));
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
    /* subscribers of the own masks */
    for (int d = 0; d < D; d++) {
        PyObject *sb = PyTuple_GET_ITEM(subs_o, d);
        if (!PyTuple_Check(sb) || PyTuple_GET_SIZE(sb) % 2) {
            PyErr_SetString(PyExc_TypeError, "subs: flat tuples of (member, variable) expected");
            goto done;
        }
        sub_start[d + 1] = sub_start[d] + (int)PyTuple_GET_SIZE(sb) / 2;
    }
    sub_pairs = calloc((size_t)sub_start[D] * 2 + 1, sizeof(int));
    cnt = calloc((size_t)s.M * maxnv + 1, sizeof(int64_t));
    touched = calloc((size_t)s.M + 1, sizeof(int));
    is_touched = calloc((size_t)s.M + 1, sizeof(int));
    if (!sub_pairs || !cnt || !touched || !is_touched) {
        PyErr_NoMemory();
        goto done;
    }
    for (int d = 0; d < D; d++) {
        PyObject *sb = PyTuple_GET_ITEM(subs_o, d);
        int len = (int)PyTuple_GET_SIZE(sb);
        if (int_tuple(sb, len, sub_pairs + 2 * sub_start[d], "subs") < 0) goto done;
        for (int a = 0; a < len; a += 2) {
            int j = sub_pairs[2 * sub_start[d] + a], v = sub_pairs[2 * sub_start[d] + a + 1];
            if (j < 0 || j >= s.M || v < 0 || v >= s.m[j].nv || v == s.m[j].kv) {
                PyErr_SetString(PyExc_ValueError, "subs: a member and one of its variables other than K expected");
                goto done;
            }
        }
    }
    if (PyObject_GetBuffer(ts_o, &tsv, PyBUF_C_CONTIGUOUS) < 0) goto done;
    got_ts = 1;
    if (tsv.len % 8) {
        PyErr_SetString(PyExc_TypeError, "ts: an int64 buffer expected");
        goto done;
    }
    Py_ssize_t rows = tsv.len / 8;
    if (idx_o != Py_None) {
        if (PyObject_GetBuffer(idx_o, &idxv, PyBUF_C_CONTIGUOUS) < 0) goto done;
        got_idx = 1;
        if (idxv.len % 8) {
            PyErr_SetString(PyExc_TypeError, "idx: an int64 buffer expected");
            goto done;
        }
    }
    if (PyObject_GetBuffer(ps_o, &psv, PyBUF_C_CONTIGUOUS) < 0) goto done;
    got_ps = 1;
    if ((nkm = get_masks(km_o, kmv, rows, "kmasks")) < 0) {
        nkm = 0;
        goto done;
    }
    if ((nom = get_masks(om_o, omv, rows, "omasks")) < 0) {
        nom = 0;
        goto done;
    }
    for (int c = 0; c < C; c++) kmask[c] = kmv[c].buf;
    for (int d = 0; d < D; d++) omask[d] = omv[d].buf;
    const int64_t *ts = tsv.buf, *idx = got_idx ? idxv.buf : NULL, *ps = psv.buf;
    Py_ssize_t n = got_idx ? idxv.len / 8 : rows, nparts = psv.len / 8;
    if (n && (nparts == 0 || ps[0] != 0)) {
        PyErr_SetString(PyExc_ValueError, "pstarts: increasing positions from 0 expected");
        goto done;
    }
    for (Py_ssize_t p = 1; p < nparts; p++)
        if (ps[p] <= ps[p - 1] || ps[p] >= n) {
            PyErr_SetString(PyExc_ValueError, "pstarts: increasing positions from 0 expected");
            goto done;
        }
    for (Py_ssize_t i = 0; idx && i < n; i++)
        if (idx[i] < 0 || idx[i] >= rows) {
            PyErr_SetString(PyExc_ValueError, "idx: a row out of range");
            goto done;
        }
    s.cap = within / slide + 2;
    if (s.cap > (1 << 20) || s.cap * (int64_t)(s.size + 2 * s.M) > ((int64_t)1 << 27)) {
        result = Py_None;
        Py_INCREF(result);
        goto done;
    }
    s.per_window = per_window;
    s.st = calloc(s.cap * s.size, sizeof(u128));
    s.snapE = calloc(s.cap * s.M, sizeof(int64_t));
    s.snapF = calloc(s.cap * s.M, sizeof(u128));
    s.snapG = calloc(s.cap * s.M, sizeof(u128));
    s.snapI = calloc(s.cap * s.M, sizeof(int64_t));
    s.wbursts = calloc(s.cap, sizeof(int64_t));
    s.wsnaps = calloc(s.cap, sizeof(int64_t));
    s.done = calloc(s.cap * s.M, 1);
    s.alive = calloc(s.M, sizeof(int));
    for (int j = 0; j < s.M; j++) s.pend_v[j] = -1;
    if (!s.st || !s.snapE || !s.snapF || !s.snapG || !s.snapI || !s.wbursts || !s.wsnaps || !s.done || !s.alive) {
        PyErr_NoMemory();
        goto done;
    }
    int failed = 0, too_big = 0;
    Py_BEGIN_ALLOW_THREADS
    Py_ssize_t p = 0;
    int in_graphlet = 0;
    s.part = -1;
    for (Py_ssize_t lo = 0; lo < n && !failed;) {
        while (p + 1 < nparts && ps[p + 1] <= lo) p++;
        Py_ssize_t pend = p + 1 < nparts ? ps[p + 1] : n;
        int64_t t = ts[idx ? idx[lo] : lo];
        Py_ssize_t hi = lo + 1;
        while (hi < pend && ts[idx ? idx[hi] : hi] == t) hi++;
        int64_t kmin = floordiv(t - within, slide) + 1, kmax = floordiv(t, slide);
        if (p != s.part || kmin != s.lo || kmax != s.lo + s.count - 1) flush_all(&s); /* the open windows change */
        if (p != s.part) {
            if (close_below(&s, INT64_MAX) < 0) {
                failed = 1;
                break;
            }
            s.part = p;
            for (int c = 0; c < C; c++) {
                s.E[c] = 0;
                s.F[c] = 1;
                s.G[c] = 0;
            }
            in_graphlet = 0;
        }
        if (close_below(&s, kmin) < 0) {
            failed = 1;
            break;
        }
        open_upto(&s, kmin, kmax);
        /* this time stamp's events: K per chain level, the members' own per variable */
        int ntouched = 0;
        int64_t kk = 0;
        for (Py_ssize_t i = lo; i < hi; i++) {
            Py_ssize_t r = idx ? idx[i] : i;
            int matched = 0;
            for (int h = 0; h < H; h++) {
                int a = chain_start[h], b = chain_start[h + 1] - 1; /* b: the chain's largest class */
                if (!kmask[chain_cls[b]][r]) continue;
                while (a < b) { /* the first class of the chain matching r */
                    int mid = (a + b) / 2;
                    if (kmask[chain_cls[mid]][r]) b = mid;
                    else a = mid + 1;
                }
                kcount[a]++;
                kchain[h]++;
                if (a < kfirst[h]) kfirst[h] = a;
                matched = 1;
            }
            kk += matched;
            if (hi == lo + 1 && !matched) { /* the time stamp's one row, not of K: its own events now */
                for (int d = 0; d < D; d++) {
                    if (!omask[d][r]) continue;
                    for (int x = sub_start[d]; x < sub_start[d + 1]; x++)
                        own_events(&s, sub_pairs[2 * x], sub_pairs[2 * x + 1], 1);
                }
                break;
            }
            for (int d = 0; d < D; d++) {
                if (!omask[d][r]) continue;
                for (int x = sub_start[d]; x < sub_start[d + 1]; x++) {
                    int j = sub_pairs[2 * x], v = sub_pairs[2 * x + 1];
                    cnt[j * maxnv + v]++;
                    if (!is_touched[j]) {
                        is_touched[j] = 1;
                        touched[ntouched++] = j;
                    }
                }
            }
        }
        if (kk > K_MAX) {
            too_big = failed = 1;
            break;
        }
        for (int phase = 1; phase >= 0; phase--) {
            /* the members' own steps: variables ranked before K (its successors) see the
             * state before K's events of this time stamp, the others the state after */
            for (int x = 0; x < ntouched; x++) {
                int j = touched[x];
                const Mem *m = &s.m[j];
                const int *ord = phase ? m->ord1 : m->ord0, nord = phase ? m->n1 : m->n0;
                int64_t *cj = cnt + j * maxnv;
                for (int o = 0; o < nord; o++) {
                    int v = ord[o];
                    if (cj[v]) own_events(&s, j, v, cj[v]);
                }
            }
            if (phase == 0 || !kk) continue;
            if (!in_graphlet) s.graphlets++;
            int64_t live = kmax - kmin + 1;
            s.bursts += live;
            s.shared_events += kk * live;
            for (int64_t k = kmin; k <= kmax; k++) s.wbursts[slot(&s, k)]++;
            for (int h = 0; h < H; h++) {
                const int from = kfirst[h], end = chain_start[h + 1]; /* from: the first class with events */
                if (from == INT32_MAX) continue;
                kfirst[h] = INT32_MAX;
                /* the waiting events of these classes' members first, with the coefficients
                 * from before K's events */
                if (s.npending) flush_classes(&s, from, end);
                s.updates += end - from;
                if (kchain[h] == 1) { /* one event (the usual case): a factor 2 for each class */
                    kchain[h] = 0;
                    kcount[from] = 0;
                    for (int c = from; c < end; c++) s.E[c]++;
                    continue;
                }
                kchain[h] = 0;
                int64_t run = 0;
                for (int c = from; c < end; c++) {
                    run += kcount[c];
                    kcount[c] = 0;
                    if (run == 1) {
                        s.E[c]++;
                        continue;
                    }
                    if (s.F[c] > F_REBASE || s.G[c] > G_REBASE) rebase(&s, c);
                    u128 f = (u128)(1 + run);
                    s.G[c] = s.G[c] * f + (u128)run * s.F[c];
                    s.F[c] = s.F[c] * f;
                    s.irr[c]++;
                }
            }
        }
        for (int x = 0; x < ntouched; x++) {
            int j = touched[x];
            is_touched[j] = 0;
            memset(cnt + j * maxnv, 0, s.m[j].nv * sizeof(int64_t));
        }
        in_graphlet = kk && !ntouched;
        lo = hi;
    }
    if (!failed) flush_all(&s);
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
        "(y#y#y#y#(LLLLLLLL)N)", (const char *)s.out.mem, (Py_ssize_t)(s.out.n * sizeof(int64_t)), (const char *)s.out.part,
        (Py_ssize_t)(s.out.n * sizeof(int64_t)), (const char *)s.out.k, (Py_ssize_t)(s.out.n * sizeof(int64_t)),
        (const char *)s.out.val, (Py_ssize_t)(s.out.n * 2 * s.width * sizeof(uint64_t)), (long long)s.windows,
        (long long)s.graphlets, (long long)s.bursts, (long long)s.shared_events, (long long)s.snapshots,
        (long long)s.rebases, (long long)s.updates, (long long)s.steps, pw);
done:
    if (got_ts) PyBuffer_Release(&tsv);
    if (got_idx) PyBuffer_Release(&idxv);
    if (got_ps) PyBuffer_Release(&psv);
    for (int c = 0; c < nkm; c++) PyBuffer_Release(&kmv[c]);
    for (int d = 0; d < nom; d++) PyBuffer_Release(&omv[d]);
    count_rows_free(&s.out);
    for (int j = 0; s.m && j < s.M; j++) free(s.m[j].block);
    FREE_ALL(kchain, place, s.E, s.pbits, s.snapE, kmv, omv, kmask, omask, chain_start, chain_cls, sub_start, sub_pairs, kcount, kfirst, cnt,
             touched, is_touched, s.m, s.cls_start, s.cls_members, s.F, s.G, s.st, s.snapF, s.snapG, s.snapI,
             s.irr, s.pend_v, s.pend_k, s.pend_head, s.pend_next, s.listed, s.wbursts, s.wsnaps, s.done, s.alive, s.pw);
    return result;
}

COMPILED_MODULE(_typed, "The compiled type-grained shared Kleene executor.",
                "The type-grained shared Kleene pass over count states (see the module source).")
