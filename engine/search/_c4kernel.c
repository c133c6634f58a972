/* The optional compiled kernel of Tablas' exact Connect-4 solver.
 *
 * The same search as engine/search/connect4_solver.py (Pascal Pons' algorithm: null-window
 * negamax with alpha-beta, bitboards, only non-losing moves, moves ordered by the threats
 * they create, ties from the centre out, tables of upper and lower bounds), so the same
 * scores and the same node counts. engine/search/c4kernel.py compiles this file with the
 * machine's C compiler into the per-user cache and calls it through ctypes; without a
 * compiler the pure-Python search runs instead.
 *
 * Bitboards: column c takes bits 7c .. 7c+6, row r (0 = bottom) is bit 7c + r, the top bit
 * of each column is an always-empty sentinel. `current` holds the stones of the side to
 * move, `mask` every stone.
 *
 * The tables: one open-addressing hash table (linear probing) keyed by current + mask,
 * each entry holding both bounds. It grows (doubling) when half full, so nothing is ever
 * overwritten: the search visits the nodes the Python search visits. Clearing bumps a
 * generation number instead of writing the table. */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define C4K_VERSION 1
#define WIDTH 7
#define HEIGHT 6
#define H1 (HEIGHT + 1)
#define CELLS (WIDTH * HEIGHT)
#define NO_UPPER 127
#define NO_LOWER (-128)
#define TIMEOUT 1000
#define NO_MEMORY 1001

typedef uint64_t u64;
typedef double (*clock_fn)(void);

typedef struct {
    u64 key;
    uint32_t gen;
    int8_t upper;
    int8_t lower;
} entry;

typedef struct {
    entry *slots;
    u64 cap; /* a power of two */
    u64 used;
    uint32_t gen;
    u64 nodes;
    clock_fn clock;
    double deadline;
    int failed; /* TIMEOUT or NO_MEMORY once the search must unwind */
} solver;

static const u64 BOTTOM = 0x40810204081ULL; /* bit 7c of every column c */
static const u64 BOARD = 0x40810204081ULL * 63ULL;
static const int ORDER[WIDTH] = {3, 2, 4, 1, 5, 0, 6}; /* the centre out */

static int popcount(u64 x) {
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_popcountll(x);
#else
    int n = 0;
    for (; x; x &= x - 1) n++;
    return n;
#endif
}

/* The empty cells (playable now or not) that would give `position` four in a line. */
static u64 threats(u64 position, u64 mask) {
    u64 r = (position << 1) & (position << 2) & (position << 3); /* vertical */
    static const int shifts[3] = {H1, HEIGHT, HEIGHT + 2};       /* horizontal, diagonals */
    for (int d = 0; d < 3; d++) {
        int s = shifts[d];
        u64 p = (position << s) & (position << 2 * s);
        r |= p & (position << 3 * s);
        r |= p & (position >> s);
        p = (position >> s) & (position >> 2 * s);
        r |= p & (position << s);
        r |= p & (position >> 3 * s);
    }
    return r & (BOARD ^ mask);
}

static u64 slot_of(const solver *s, u64 key) {
    return (key * 0x9E3779B97F4A7C15ULL) >> 17 & (s->cap - 1);
}

static entry *find(solver *s, u64 key) {
    u64 i = slot_of(s, key);
    for (;;) {
        entry *e = &s->slots[i];
        if (e->gen != s->gen) return NULL;
        if (e->key == key) return e;
        i = (i + 1) & (s->cap - 1);
    }
}

static int grow(solver *s) {
    u64 old_cap = s->cap;
    entry *old = s->slots;
    entry *fresh = calloc(old_cap * 2, sizeof(entry));
    if (!fresh) return 0;
    s->slots = fresh;
    s->cap = old_cap * 2;
    for (u64 j = 0; j < old_cap; j++) {
        if (old[j].gen != s->gen) continue;
        u64 i = slot_of(s, old[j].key);
        while (fresh[i].gen == s->gen) i = (i + 1) & (s->cap - 1);
        fresh[i] = old[j];
    }
    free(old);
    return 1;
}

/* The entry of `key`, created (with no bounds) if missing; NULL if out of memory. */
static entry *slot(solver *s, u64 key) {
    if (2 * (s->used + 1) > s->cap && !grow(s)) return NULL;
    u64 i = slot_of(s, key);
    for (;;) {
        entry *e = &s->slots[i];
        if (e->gen != s->gen) {
            e->gen = s->gen;
            e->key = key;
            e->upper = NO_UPPER;
            e->lower = NO_LOWER;
            s->used++;
            return e;
        }
        if (e->key == key) return e;
        i = (i + 1) & (s->cap - 1);
    }
}

static void store(solver *s, u64 key, int value, int is_lower) {
    entry *e = slot(s, key);
    if (!e) {
        s->failed = NO_MEMORY;
        return;
    }
    if (is_lower)
        e->lower = (int8_t)value;
    else
        e->upper = (int8_t)value;
}

/* Integer division rounding toward zero, as the Python side spells out. */
static int negamax(solver *s, u64 current, u64 mask, int moves, int alpha, int beta,
                   u64 opp_win) {
    s->nodes++;
    if (s->clock && !(s->nodes & 4095) && s->clock() > s->deadline) {
        s->failed = TIMEOUT;
        return 0;
    }
    u64 possible = (mask + BOTTOM) & BOARD;
    u64 forced = possible & opp_win;
    if (forced) {
        if (forced & (forced - 1)) return -((CELLS - moves) / 2);
        possible = forced;
    }
    u64 next = possible & ~(opp_win >> 1);
    if (!next) return -((CELLS - moves) / 2);
    if (moves >= CELLS - 2) return 0;
    int low = -((CELLS - 2 - moves) / 2);
    if (alpha < low) {
        alpha = low;
        if (alpha >= beta) return alpha;
    }
    u64 key = current + mask;
    entry *e = find(s, key);
    int high = (CELLS - 1 - moves) / 2;
    if (e && e->upper != NO_UPPER) high = e->upper;
    if (beta > high) {
        beta = high;
        if (alpha >= beta) return beta;
    }
    if (e && e->lower != NO_LOWER && alpha < e->lower) {
        alpha = e->lower;
        if (alpha >= beta) return alpha;
    }
    /* Candidates in the centre-out order, then a stable insertion sort by threats created
     * (most first): ties keep the centre-out order. */
    u64 cand[WIDTH], after[WIDTH];
    int score_of[WIDTH], n = 0;
    for (int i = 0; i < WIDTH; i++) {
        u64 move = next & ((u64)63 << (H1 * ORDER[i]));
        if (!move) continue;
        u64 w = threats(current | move, mask | move);
        int sc = popcount(w);
        int j = n++;
        for (; j > 0 && score_of[j - 1] < sc; j--) {
            cand[j] = cand[j - 1];
            after[j] = after[j - 1];
            score_of[j] = score_of[j - 1];
        }
        cand[j] = move;
        after[j] = w;
        score_of[j] = sc;
    }
    u64 opponent = current ^ mask;
    for (int j = 0; j < n; j++) {
        int score = -negamax(s, opponent, mask | cand[j], moves + 1, -beta, -alpha, after[j]);
        if (s->failed) return 0;
        if (score >= beta) {
            store(s, key, score, 1);
            return score;
        }
        if (score > alpha) alpha = score;
    }
    store(s, key, alpha, 0);
    return alpha;
}

int c4k_version(void) { return C4K_VERSION; }

void *c4k_new(void) {
    solver *s = calloc(1, sizeof(solver));
    if (!s) return NULL;
    s->cap = (u64)1 << 16;
    s->slots = calloc(s->cap, sizeof(entry));
    if (!s->slots) {
        free(s);
        return NULL;
    }
    s->gen = 1;
    return s;
}

void c4k_free(void *handle) {
    solver *s = handle;
    if (!s) return;
    free(s->slots);
    free(s);
}

void c4k_clear(void *handle) {
    solver *s = handle;
    s->used = 0;
    if (++s->gen == 0) { /* wrapped: every stale entry would look current again */
        memset(s->slots, 0, s->cap * sizeof(entry));
        s->gen = 1;
    }
}

u64 c4k_size(void *handle) { return ((solver *)handle)->used; }

/* The exact score of a position whose side to move cannot win at once; `opp_win`: the
 * threats of the other side. `clock` (may be NULL: no budget) is polled every 4096 nodes
 * against `deadline`. Returns TIMEOUT or NO_MEMORY instead of a score when the search had
 * to stop; `*nodes` gets the nodes visited either way. */
int c4k_solve(void *handle, u64 current, u64 mask, int moves, u64 opp_win, clock_fn clock,
              double deadline, u64 *nodes) {
    solver *s = handle;
    s->nodes = 0;
    s->clock = clock;
    s->deadline = deadline;
    s->failed = 0;
    int lo = -((CELLS - moves) / 2);
    int hi = (CELLS + 1 - moves) / 2;
    while (lo < hi) {
        int med = lo + (hi - lo) / 2;
        if (med <= 0 && lo / 2 < med)
            med = lo / 2;
        else if (med >= 0 && hi / 2 > med)
            med = hi / 2;
        int r = negamax(s, current, mask, moves, med, med + 1, opp_win);
        if (s->failed) break;
        if (r <= med)
            hi = r;
        else
            lo = r;
    }
    *nodes = s->nodes;
    return s->failed ? s->failed : lo;
}
