/* BM25's exhaustive sum over a query's posting lists, and its top k, in one call.
 *
 * The numbers are the numpy path's bit for bit: each contribution by the formula of formulas.saturation,
 * w·(k1+1)·c/(K(s)+c) evaluated as ((w·(k1+1))·c)/(K(s)+c) (w·[c>0] when k1 = 0); the contributions of one
 * sentence added in query-term order as numpy's add.reduceat adds them in vectors.union_sum (the first, plus
 * the pairwise sum of the others); the top k by score descending, ties by sentence id ascending
 * (api.best_of). Built with -ffp-contract=off (setup.py), so no multiply-add is fused. Plain C against the
 * buffer protocol: no numpy headers.
 *
 * saturated(indptr, indices, data, terms, qtf, idf, k3, codes, table, k_min, k1, k, longest)
 *     -> (ids, scores, any) | False | None
 *   the postings of term t are indices/data[indptr[t]:indptr[t+1]]; the query's distinct terms and c(t,q);
 *   w_t = idf[t]·(k3+1)·c(t,q)/(k3+c(t,q)) (scorer.term_weights, formulas.query_factor); K(s) =
 *   table[codes[s]] (codes: a small integer per sentence, its length), or table[s] when codes is None;
 *   k_min <= every K(s);
 *   k < 0: every candidate, ids ascending (int32); k >= 0: the k best, in rank order (int64).
 *   ids and scores are bytearrays; any says whether the query has a candidate at all.
 *   False: a term has more than `longest` postings (when longest >= 0), nothing computed.
 *   None: an input this kernel does not take (another dtype, an unsorted or out-of-range posting, a NaN
 *   score to rank); the caller then runs the numpy path.
 */
#include "_saturated.h"

/* ---- every candidate: the terms' contributions merged in sentence order ---- */

#define END INT64_MAX

/* Each term's contributions in posting order into rows/vals (term i from start[i], ended by END); 0: declined */
INLINE int contributions_of(const Inputs *in, int ik, int dk, int ck, Py_ssize_t m, const Py_ssize_t *start,
                            int64_t *rows, double *vals) {
    for (Py_ssize_t i = 0; i < m; i++) {
        Py_ssize_t from = (Py_ssize_t)int_at(&in->indptr, int_at(&in->terms, i)), out = start[i];
        Py_ssize_t to = from + (start[i + 1] - start[i] - 1);
        double w = in->w[i], scale = w * (in->k1 + 1.0);
        int64_t prev = -1;
        for (Py_ssize_t j = from; j < to; j++, out++) {
            int64_t r = int_of(ik, in->indices.view.buf, j);
            fetch_ahead(in, ik, ck, j, to);
            if (r <= prev || r >= in->n_sentences) return 0; /* not sorted and distinct, or not a sentence */
            rows[out] = prev = r;
            if (!contribution(in, ck, r, real_of(dk, in->data.view.buf, j), w, scale, &vals[out])) return 0;
        }
        rows[out] = END, vals[out] = 0.0;
    }
    return 1;
}

static int contributions(const Inputs *in, Py_ssize_t m, const Py_ssize_t *start, int64_t *rows, double *vals) {
    return BY_KINDS(contributions_of, in, m, start, rows, vals);
}

/* a heap of cursors keyed by (sentence, term), so that a sentence's values come in term order */
typedef struct {
    const int64_t *row;
    Py_ssize_t *at;
    int *heap;
    int size;
} Merge;

static inline int before(const Merge *g, int x, int y) {
    int64_t a = g->row[g->at[x]], b = g->row[g->at[y]];
    return a < b || (a == b && x < y);
}

static void merge_down(Merge *g, int at) {
    for (;;) {
        int l = 2 * at + 1, r = l + 1, m = at;
        if (l < g->size && before(g, g->heap[l], g->heap[m])) m = l;
        if (r < g->size && before(g, g->heap[r], g->heap[m])) m = r;
        if (m == at) return;
        int t = g->heap[at];
        g->heap[at] = g->heap[m], g->heap[m] = t;
        at = m;
    }
}

static int merge(const int64_t *rows, const double *vals, const Py_ssize_t *start, int m, Py_ssize_t *at,
                 int *heap, double *run, Out *o) {
    Merge g = {rows, at, heap, 0};
    for (int i = 0; i < m; i++) {
        at[i] = start[i];
        if (rows[at[i]] != END) heap[g.size++] = i;
    }
    for (int i = g.size / 2 - 1; i >= 0; i--) merge_down(&g, i);
    while (g.size > 0) {
        int64_t id = rows[at[heap[0]]];
        Py_ssize_t n = 0;
        while (g.size > 0 && rows[at[heap[0]]] == id) {
            int t = heap[0];
            run[n++] = vals[at[t]++];
            if (rows[at[t]] == END) heap[0] = heap[--g.size];
            merge_down(&g, 0);
        }
        if (!emit(o, id, run_sum(run, n))) return 0;
    }
    return 1;
}

/* ---- the k best of a few terms, without merging ---- */

#define FEW 8 /* up to this many terms, no run of add.reduceat is long enough for its pairwise blocks */
#define HASHED_UP_TO (1 << 16) /* postings outside the longest list; past that the table outgrows the caches */
#define SEEN_BITS 16

/* The sentences of every term but the longest, in a hash table (linear probing, at most a quarter full), with
 * each one's contribution per term. `seen` has the bit of every such sentence id modulo 2^SEEN_BITS set: most
 * sentences of the longest list are in no other term, and their clear bit says so without a probe. */
typedef struct {
    uint64_t *seen;
    int64_t *keys;  /* the sentence in each slot, -1 where free */
    int32_t *cand;  /* its candidate */
    int bits;
    int64_t *ids;   /* per candidate: the sentence, the terms holding it, their contributions (m per candidate) */
    uint8_t *held;
    double *vals;
    Py_ssize_t n;
} Table;

static inline uint64_t slot_of(int64_t r, int bits) { return ((uint64_t)r * 0x9E3779B97F4A7C15u) >> (64 - bits); }

static inline int maybe_seen(const Table *t, int64_t r) {
    uint64_t bit = (uint64_t)r & ((1u << SEEN_BITS) - 1);
    return (t->seen[bit >> 6] >> (bit & 63)) & 1;
}

static inline Py_ssize_t find(const Table *t, int64_t r) {
    uint64_t mask = ((uint64_t)1 << t->bits) - 1;
    for (uint64_t h = slot_of(r, t->bits);; h = (h + 1) & mask) {
        if (t->keys[h] == r) return t->cand[h];
        if (t->keys[h] == -1) return -1;
    }
}

static inline Py_ssize_t find_or_add(Table *t, int64_t r) {
    uint64_t mask = ((uint64_t)1 << t->bits) - 1, h = slot_of(r, t->bits);
    for (; t->keys[h] != -1; h = (h + 1) & mask)
        if (t->keys[h] == r) return t->cand[h];
    Py_ssize_t c = t->n++;
    uint64_t bit = (uint64_t)r & ((1u << SEEN_BITS) - 1);
    t->seen[bit >> 6] |= (uint64_t)1 << (bit & 63);
    t->keys[h] = r, t->cand[h] = (int32_t)c, t->ids[c] = r, t->held[c] = 0; /* vals: read only where held */
    return c;
}

/* Every term of best_of_few but the longest, into the table */
INLINE int others_of(const Inputs *in, int ik, int dk, int ck, Py_ssize_t m, const Py_ssize_t *lo, const Py_ssize_t *len,
                     Py_ssize_t longest, Table *t) {
    for (Py_ssize_t i = 0; i < m; i++) {
        if (i == longest) continue;
        double w = in->w[i], scale = w * (in->k1 + 1.0);
        int64_t prev = -1;
        for (Py_ssize_t j = lo[i]; j < lo[i] + len[i]; j++) {
            int64_t r = int_of(ik, in->indices.view.buf, j);
            fetch_ahead(in, ik, ck, j, lo[i] + len[i]);
            if (r <= prev || r >= in->n_sentences) return 0;
            prev = r;
            Py_ssize_t c = find_or_add(t, r);
            if (!contribution(in, ck, r, real_of(dk, in->data.view.buf, j), w, scale, &t->vals[c * m + i])) return 0;
            t->held[c] |= (uint8_t)(1u << i);
        }
    }
    return 1;
}

/* The longest list of best_of_few, in order */
INLINE int longest_of(const Inputs *in, int ik, int dk, int ck, Py_ssize_t m, Py_ssize_t from, Py_ssize_t to,
                      Py_ssize_t L, Table *t, Out *o) {
    const double w = in->w[L], scale = w * (in->k1 + 1.0);
    const double bound_of_1 = scale > 0 ? (scale * 1.0) / (in->k_min + 1.0) : 0.0; /* the commonest count */
    Best *b = &o->best;
    int64_t prev = -1;
    for (Py_ssize_t j = from; j < to; j++) {
        int64_t r = int_of(ik, in->indices.view.buf, j);
        fetch_ahead(in, ik, ck, j, to);
        if (r <= prev || r >= in->n_sentences) return 0;
        prev = r;
        double x = real_of(dk, in->data.view.buf, j), v;
        Py_ssize_t c = maybe_seen(t, r) ? find(t, r) : -1;
        if (c < 0 && b->size == b->cap && in->k1 != 0.0 && x > 0) { /* this term alone: can it reach the k best? */
            double bound = x == 1.0 ? bound_of_1 : scale > 0 ? (scale * x) / (in->k_min + x) : 0.0;
            if (bound < b->score[0]) continue;
        }
        if (!contribution(in, ck, r, x, w, scale, &v)) return 0;
        if (c >= 0) {
            t->vals[c * m + L] = v;
            t->held[c] |= (uint8_t)(1u << L);
        } else if (!emit(o, r, v)) {
            return 0;
        }
    }
    return 1;
}

/* The k best when the query has at most FEW terms. A merge costs a mispredicted branch or two per posting
 * (which list holds the next sentence is as good as random), so instead: every term but the longest goes
 * into the table; the longest list is then read in order, and a sentence of it not in the table has this
 * term alone, so its score is this one contribution: offered at once, and not even computed when it cannot
 * reach the k-th best score so far (at most w·(k1+1)·c/(k_min+c), rounding being monotonic). Last, every
 * sentence of the table is offered, its values added in term order: a run of n <= FEW values is
 * v0 + ((-0.0 + v1) + v2 ...), add.reduceat's first value plus its pairwise sum, which adds fewer than 8
 * values one by one from -0.0. 0: declined. */
static int best_of_few(const Inputs *in, Py_ssize_t m, const Py_ssize_t *lo, const Py_ssize_t *len, Py_ssize_t longest,
                       Table *t, Out *o) {
    if (!BY_KINDS(others_of, in, m, lo, len, longest, t)) return 0;
    if (!BY_KINDS(longest_of, in, m, lo[longest], lo[longest] + len[longest], longest, t, o)) return 0;
    double run[FEW];
    for (Py_ssize_t c = 0; c < t->n; c++) {
        int n = 0;
        for (Py_ssize_t i = 0; i < m; i++)
            if (t->held[c] & (1u << i)) run[n++] = t->vals[c * m + i];
        double rest = -0.0;
        for (int i = 1; i < n; i++) rest += run[i];
        if (!emit(o, t->ids[c], run[0] + rest)) return 0;
    }
    return 1;
}

/* ---- the call ---- */

typedef struct {
    int64_t *rows;
    double *vals, *run;
    Py_ssize_t *at;
    int *heap;
    Table table;
} Scratch;

static void release(Scratch *s) {
    PyMem_RawFree(s->rows), PyMem_RawFree(s->vals), PyMem_RawFree(s->run), PyMem_RawFree(s->at);
    PyMem_RawFree(s->heap), PyMem_RawFree(s->table.seen), PyMem_RawFree(s->table.keys), PyMem_RawFree(s->table.cand);
    PyMem_RawFree(s->table.ids), PyMem_RawFree(s->table.held), PyMem_RawFree(s->table.vals);
}

/* room for a merge of m terms and `total` postings; 0: out of memory */
static int reserve_merge(Scratch *s, Py_ssize_t m, Py_ssize_t total) {
    size_t slots = (size_t)(total + m), terms = (size_t)m;
    s->rows = PyMem_RawMalloc(slots * sizeof *s->rows), s->vals = PyMem_RawMalloc(slots * sizeof *s->vals);
    s->at = PyMem_RawMalloc(terms * sizeof *s->at), s->heap = PyMem_RawMalloc(terms * sizeof *s->heap);
    s->run = PyMem_RawMalloc(terms * sizeof *s->run);
    return s->rows && s->vals && s->at && s->heap && s->run;
}

/* room for a table of up to n sentences of m terms (a quarter full at most: few collisions); 0: out of memory */
static int reserve_table(Table *t, Py_ssize_t m, Py_ssize_t n) {
    for (t->bits = 4; ((Py_ssize_t)1 << t->bits) < 4 * n; t->bits++) {
    }
    size_t size = (size_t)1 << t->bits, cands = (size_t)(n + 1);
    t->keys = PyMem_RawMalloc(size * sizeof *t->keys), t->cand = PyMem_RawMalloc(size * sizeof *t->cand);
    t->ids = PyMem_RawMalloc(cands * sizeof *t->ids), t->held = PyMem_RawMalloc(cands);
    t->vals = PyMem_RawMalloc(cands * (size_t)m * sizeof *t->vals);
    t->seen = PyMem_RawCalloc((1u << SEEN_BITS) / 64, sizeof *t->seen);
    if (!t->keys || !t->cand || !t->ids || !t->held || !t->vals || !t->seen) return 0;
    memset(t->keys, 0xff, size * sizeof *t->keys); /* -1: free */
    t->n = 0;
    return 1;
}

static PyObject *saturated(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *objs[8], *result = NULL, *ids = NULL, *scores = NULL;
    Py_ssize_t k, longest_allowed, m = 0, *start = NULL, *lo = NULL, *len = NULL;
    Scratch scratch = {0};
    Inputs in;
    memset(&in, 0, sizeof in);
    if (!PyArg_ParseTuple(args, "OOOOOOdOOddnn", &objs[0], &objs[1], &objs[2], &objs[3], &objs[4], &objs[5], &in.k3,
                          &objs[6], &objs[7], &in.k_min, &in.k1, &k, &longest_allowed))
        return NULL;
    const int ints = (1 << I32) | (1 << I64), reals = ints | (1 << F32) | (1 << F64), f64 = 1 << F64;
    const int small = ints | (1 << U8) | (1 << U16);
    Array *a[8] = {&in.indptr, &in.indices, &in.data, &in.terms, &in.qtf, &in.idf, &in.codes, &in.table};
    const int allowed[8] = {ints, ints, reals, ints, f64, f64, small, f64};
    Array *held[8];
    int n_held = 0;
    in.has_codes = objs[6] != Py_None;
    for (int i = 0; i < 8; i++) {
        if (i == 6 && !in.has_codes) continue;
        if (!take(objs[i], a[i], allowed[i])) goto declined;
        held[n_held++] = a[i];
    }
    in.n_sentences = in.has_codes ? in.codes.n : in.table.n;
    m = in.terms.n;
    if (in.qtf.n != m || m > INT_MAX || m == 0) goto declined;
    in.w = PyMem_Malloc((size_t)m * sizeof *in.w);
    if (!in.w) goto nomem;
    for (Py_ssize_t i = 0; i < m; i++) {
        int64_t t = int_at(&in.terms, i);
        if (t < 0 || t >= in.idf.n) goto declined;
        double qf = ((const double *)in.qtf.view.buf)[i];
        in.w[i] = ((const double *)in.idf.view.buf)[t] * (((in.k3 + 1.0) * qf) / (in.k3 + qf));
    }

    /* every term's slice of the postings, checked before anything reads it (start: one more slot each, for END) */
    start = PyMem_Malloc((size_t)(m + 1) * sizeof *start);
    lo = PyMem_Malloc((size_t)m * sizeof *lo), len = PyMem_Malloc((size_t)m * sizeof *len);
    if (!start || !lo || !len) goto nomem;
    start[0] = 0;
    Py_ssize_t longest = 0;
    for (Py_ssize_t i = 0; i < m; i++) {
        int64_t t = int_at(&in.terms, i);
        if (t < 0 || t + 1 >= in.indptr.n) goto declined;
        int64_t from = int_at(&in.indptr, t), to = int_at(&in.indptr, t + 1);
        if (from < 0 || to < from || to > in.indices.n || to > in.data.n) goto declined;
        lo[i] = (Py_ssize_t)from, len[i] = (Py_ssize_t)(to - from);
        start[i + 1] = start[i] + len[i] + 1;
        if (len[i] > len[longest]) longest = i;
    }
    if (longest_allowed >= 0 && len[longest] > longest_allowed) {
        result = Py_NewRef(Py_False);
        goto done;
    }
    Py_ssize_t total = start[m] - m;
    Out o = {0};
    o.all = k < 0;
    Py_ssize_t cap = o.all ? total : (k < total ? k : total);
    ids = PyByteArray_FromStringAndSize(NULL, cap * (o.all ? 4 : 8));
    scores = PyByteArray_FromStringAndSize(NULL, cap * 8);
    if (!ids || !scores) goto fail;
    if (cap > 0) {
        if (o.all) {
            o.ids = (int32_t *)PyByteArray_AS_STRING(ids), o.scores = (double *)PyByteArray_AS_STRING(scores);
        } else {
            o.best.id = (int64_t *)PyByteArray_AS_STRING(ids), o.best.score = (double *)PyByteArray_AS_STRING(scores);
            o.best.cap = cap;
        }
        int few = !o.all && m <= FEW && total - len[longest] <= HASHED_UP_TO;
        if (few ? !reserve_table(&scratch.table, m, total - len[longest]) : !reserve_merge(&scratch, m, total))
            goto nomem;
        int ok;
        Py_ssize_t n;
        Py_BEGIN_ALLOW_THREADS
        if (few) {
            ok = best_of_few(&in, m, lo, len, longest, &scratch.table, &o);
        } else {
            ok = contributions(&in, m, start, scratch.rows, scratch.vals)
                 && merge(scratch.rows, scratch.vals, start, (int)m, scratch.at, scratch.heap, scratch.run, &o);
        }
        n = o.all ? o.n : o.best.size;
        if (ok && !o.all) rank(&o.best);
        Py_END_ALLOW_THREADS
        if (!ok) goto declined;
        if (PyByteArray_Resize(ids, n * (o.all ? 4 : 8)) < 0 || PyByteArray_Resize(scores, n * 8) < 0) goto fail;
    }
    result = Py_BuildValue("(OON)", ids, scores, PyBool_FromLong(total > 0));
    goto done;
nomem:
    PyErr_NoMemory();
    goto fail;
declined:
    result = Py_NewRef(Py_None);
    goto done;
fail:
    result = NULL;
done:
    Py_XDECREF(ids);
    Py_XDECREF(scores);
    PyMem_Free(in.w);
    PyMem_Free(start);
    PyMem_Free(lo);
    PyMem_Free(len);
    release(&scratch);
    for (int i = 0; i < n_held; i++) PyBuffer_Release(&held[i]->view);
    return result;
}

static PyMethodDef methods[] = {
    {"saturated", saturated, METH_VARARGS,
     "saturated(indptr, indices, data, terms, qtf, idf, k3, codes, table, k_min, k1, k, longest) -> "
     "(ids, scores, any) | False | None"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_saturated", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__saturated(void) { return PyModule_Create(&module); }
