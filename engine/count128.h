/* Exact 128-bit counts with saturation: the arithmetic of the compiled kernels
 * (engine/strategies/cogra/_steps.c, COGRA; engine/shared/kleene/_typed.c and
 * engine/shared/sequence/_counts.c, the shared passes), and their window results (CountRows).
 *
 * A count is exact up to CAP (10**38 - 1, the result schema's decimal(38,0)); past it, it is
 * NANV (all ones: NaN, OVERFLOW in Python), exactly as the Python kernels keep it. Each
 * extension module includes this once and calls count128_init() when it is imported.
 */
#ifndef TRENDLAKE_COUNT128_H
#define TRENDLAKE_COUNT128_H

#include <stdint.h>
#include <stdlib.h>

typedef unsigned __int128 u128;

#define NANV (~(u128)0)

static u128 CAP; /* 10**38 - 1, set by count128_init */

static inline void count128_init(void) {
    CAP = (u128)10000000000000000000ULL * (u128)10000000000000000000ULL - 1;
}

static inline int64_t floordiv(int64_t a, int64_t b) {
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q -= 1;
    return q;
}

/* a + b, saturated past CAP, for a and b each at most CAP or NANV: two counts at most CAP
 * cannot wrap, and NANV plus anything either wraps (to below NANV) or stays NANV */
static inline u128 add_sat(u128 a, u128 b) {
    u128 r = a + b;
    return (r < a || r > CAP) ? NANV : r;
}

/* a * b exactly, NANV when a is NANV or the product passes 2**128 */
static inline u128 mul_exact(u128 a, u128 b) {
    if (a == NANV) return NANV;
    if (!(a >> 64) && !(b >> 64)) return (u128)(uint64_t)a * (uint64_t)b; /* fits: no check */
    u128 r;
    if (__builtin_mul_overflow(a, b, &r)) return NANV;
    return r;
}

/* a * 2**k exactly (0 <= k < 128), NANV when a is NANV or the product passes 2**128 */
static inline u128 shl_exact(u128 a, int k) {
    if (a == NANV || (k && (a >> (128 - k)))) return NANV;
    return a << k;
}

/* a + b exactly, NANV when either is NANV or the sum passes 2**128 */
static inline u128 add_exact(u128 a, u128 b) {
    if (a == NANV || b == NANV) return NANV;
    u128 r;
    if (__builtin_add_overflow(a, b, &r)) return NANV;
    return r;
}

/* The open windows of a pass: window indexes [lo, lo + count) in a ring of cap slots, window
 * lo in slot head. These work on any struct with the fields lo, count, cap and head. */
#define RING_SLOT(r, k) ((r)->head + ((k) - (r)->lo) >= (r)->cap ? (r)->head + ((k) - (r)->lo) - (r)->cap \
                                                                : (r)->head + ((k) - (r)->lo))
/* window lo closed: on to the next */
#define RING_DROP(r) ((r)->lo++, (r)->count--, (r)->head = (r)->head + 1 == (r)->cap ? 0 : (r)->head + 1)
/* NAME(TYPE *r, kmin): close (CLOSE(r, k) < 0 fails) every open window below kmin */
#define RING_CLOSE_BELOW(NAME, TYPE, CLOSE)             \
    static int NAME(TYPE *r, int64_t kmin) {            \
        while (r->count && r->lo < kmin) {              \
            if (CLOSE(r, r->lo) < 0) return -1;         \
            RING_DROP(r);                               \
        }                                               \
        return 0;                                       \
    }
/* before opening windows from kmin: an empty ring starts there */
#define RING_START(r, kmin) ((r)->count ? (void)0 : (void)((r)->lo = (kmin), (r)->head = 0))

/* a count kept: NANV past CAP */
static inline u128 keep(u128 x) { return x > CAP ? NANV : x; }

/* Window results, written out for Python: per row a member, a partition, a window index and
 * `width` 128-bit values (two uint64 each, low word first; values past `nres` are 0), in
 * arrays grown by doubling. */
typedef struct {
    int64_t *mem, *part, *k;
    uint64_t *val;
    int64_t n, cap;
    int width;
} CountRows;

static inline int count_rows_push(CountRows *o, int64_t j, int64_t part, int64_t k, const u128 *res, int nres) {
    if (o->n == o->cap) {
        int64_t cap = o->cap ? 2 * o->cap : 4096;
        int64_t *a = realloc(o->mem, cap * sizeof(int64_t));
        if (!a) return -1;
        o->mem = a;
        a = realloc(o->part, cap * sizeof(int64_t));
        if (!a) return -1;
        o->part = a;
        a = realloc(o->k, cap * sizeof(int64_t));
        if (!a) return -1;
        o->k = a;
        uint64_t *v = realloc(o->val, cap * 2 * o->width * sizeof(uint64_t));
        if (!v) return -1;
        o->val = v;
        o->cap = cap;
    }
    o->mem[o->n] = j;
    o->part[o->n] = part;
    o->k[o->n] = k;
    uint64_t *v = o->val + o->n * 2 * o->width;
    for (int a = 0; a < o->width; a++) {
        u128 x = a < nres ? res[a] : 0;
        v[2 * a] = (uint64_t)x;
        v[2 * a + 1] = (uint64_t)(x >> 64);
    }
    o->n++;
    return 0;
}

static inline void count_rows_free(CountRows *o) {
    free(o->mem);
    free(o->part);
    free(o->k);
    free(o->val);
}

#endif
