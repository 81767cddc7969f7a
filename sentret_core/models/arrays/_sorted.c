/* Passes over sorted arrays: numpy's searchsorted (side "left") for targets that are themselves sorted, by one
 * galloping pass over both; a BM25F term's fields from its sorted postings, whole or at given sentences.
 *
 * np.searchsorted(rows, targets) binary-searches each target in the whole of rows: O(T·log P), and at millions
 * of targets a cache miss per step. When the targets ascend (a model's candidates, a posting list's rows), each
 * search can start where the previous one ended and gallop: O(T·log(P/T + 1)), memory read in order.
 *
 * insertion(rows, targets, out) -> bool
 *   rows: sorted (non-decreasing), int32 or int64; targets: int32 or int64, of any length; out: a writable int64
 *   array of len(targets). Writes out[i] = the first j with rows[j] >= targets[i] (np.searchsorted's "left")
 *   and returns True; returns False, out unspecified, when the targets do not ascend (a later one smaller) or an
 *   argument is not such an array (then the caller runs np.searchsorted). Plain C against the buffer protocol.
 *
 * fields(r, c, first, end, window, tlo, tn, tc, rows, counts) -> int
 *   One term's BM25F fields (postings.term_fields) in one pass over its sorted postings, where numpy sorts the
 *   postings' shifted copies together. r: its sentences (int64, ascending, distinct), c: their counts (float64,
 *   none 0), first/end: each one's document bounds (int64); tlo/tn: the first sentence and the number of
 *   sentences of each document whose title holds it (int64, ascending, disjoint), tc: its title counts (float64).
 *   Writes the distinct sentences reached to rows (int64) and their counts in the sentence, the ±window context and
 *   the title to counts (float64, 3 a row) and returns how many; -1 when an argument is not such an array or the
 *   outputs are too short (then the caller runs numpy). Counts are integers, so their sums are exact in any order.
 *
 * around(rows, vals, targets, first, end, window, out) -> bool
 *   A term's count in each target sentence and in its ±window context (postings.field_counts_at), by one pass over
 *   its postings where numpy searched them once per offset. rows: its sentences (ascending, distinct; int32/int64),
 *   vals: its counts there (int32/int64/float32/float64); targets: ascending (int32/int64); first/end: each target's
 *   document bounds (int32/int64); out: float64, 2 a target (sentence, context). False when an argument is not such
 *   an array or the targets' windows do not ascend (then the caller runs numpy).
 *
 * contexts(seq_indptr, doc_first, doc_nsent, window, out) -> bool
 *   |ctx_w(s)| of every sentence (layout.context_lengths) by one pass in sentence order, where numpy gathers each
 *   sentence's document bounds. seq_indptr: the prefix sums of the sentences' lengths (N+1, int32/int64);
 *   doc_first/doc_nsent: each document's first sentence and its number of sentences (int32/int64); out: a
 *   writable int32 array of N. False when an argument is not such an array, or the documents do not cover the
 *   sentences in order, one after another (then the caller runs numpy).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

enum { I32, I64, OTHER };

static int kind_of(const Py_buffer *v) {
    const char *f = v->format ? v->format : "B";
    if (*f == '@' || *f == '=') f++;
    if (f[0] == '\0' || f[1] != '\0' || !strchr("ilq", f[0])) return OTHER;
    return v->itemsize == 4 ? I32 : v->itemsize == 8 ? I64 : OTHER;
}

/* 1 when obj is a one-dimensional contiguous int32/int64 array (writable if asked); 0 otherwise, no error set */
static int take(PyObject *obj, Py_buffer *view, int *kind, int writable) {
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, view, flags) < 0) {
        PyErr_Clear();
        return 0;
    }
    *kind = kind_of(view);
    if (view->ndim != 1 || *kind == OTHER) {
        PyBuffer_Release(view);
        return 0;
    }
    return 1;
}

static inline int64_t at(int kind, const void *buf, Py_ssize_t i) {
    return kind == I32 ? ((const int32_t *)buf)[i] : ((const int64_t *)buf)[i];
}

/* the first j' >= j with rows[j'] >= t (n if none), rows[j - 1] < t being known: widen from j until a row >= t or
 * the end, then bisect */
static inline Py_ssize_t gallop_to(int rk, const void *rows, Py_ssize_t n, Py_ssize_t j, int64_t t) {
    if (j >= n || at(rk, rows, j) >= t) return j;
    Py_ssize_t lo = j, step = 1, hi = j + 1; /* rows[lo] < t */
    while (hi < n && at(rk, rows, hi) < t) {
        lo = hi;
        step *= 2;
        hi = lo + step;
    }
    if (hi > n) hi = n;
    while (hi - lo > 1) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (at(rk, rows, mid) < t) lo = mid;
        else hi = mid;
    }
    return hi;
}

/* the pass itself; the kinds are constants where it is inlined, so no element needs a switch */
static inline int gallop(int rk, const void *rows, Py_ssize_t n, int tk, const void *targets, Py_ssize_t m,
                         int64_t *out) {
    Py_ssize_t j = 0;
    int64_t previous = INT64_MIN;
    for (Py_ssize_t i = 0; i < m; i++) {
        int64_t t = at(tk, targets, i);
        if (t < previous) return 0;
        previous = t;
        j = gallop_to(rk, rows, n, j, t);
        out[i] = j;
    }
    return 1;
}

static PyObject *insertion(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *rows_obj, *targets_obj, *out_obj;
    if (!PyArg_ParseTuple(args, "OOO", &rows_obj, &targets_obj, &out_obj)) return NULL;
    Py_buffer rows, targets, out;
    int rk, tk, ok_kind, done = 0;
    if (!take(rows_obj, &rows, &rk, 0)) Py_RETURN_FALSE;
    if (!take(targets_obj, &targets, &tk, 0)) {
        PyBuffer_Release(&rows);
        Py_RETURN_FALSE;
    }
    if (take(out_obj, &out, &ok_kind, 1)) {
        Py_ssize_t n = rows.shape[0], m = targets.shape[0];
        if (ok_kind == I64 && out.shape[0] == m) {
            int64_t *o = (int64_t *)out.buf;
            Py_BEGIN_ALLOW_THREADS
            if (rk == I32 && tk == I32) done = gallop(I32, rows.buf, n, I32, targets.buf, m, o);
            else if (rk == I64 && tk == I64) done = gallop(I64, rows.buf, n, I64, targets.buf, m, o);
            else done = gallop(rk, rows.buf, n, tk, targets.buf, m, o);
            Py_END_ALLOW_THREADS
        }
        PyBuffer_Release(&out);
    }
    PyBuffer_Release(&targets);
    PyBuffer_Release(&rows);
    return PyBool_FromLong(done);
}

/* a one-dimensional contiguous array of 8-byte items of the format letters ``formats`` (writable if asked) */
static int take8(PyObject *obj, Py_buffer *view, const char *formats, int writable) {
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, view, flags) < 0) {
        PyErr_Clear();
        return 0;
    }
    const char *f = view->format ? view->format : "B";
    if (*f == '@' || *f == '=') f++;
    if (view->ndim != 1 || view->itemsize != 8 || f[0] == '\0' || f[1] != '\0' || !strchr(formats, f[0])) {
        PyBuffer_Release(view);
        return 0;
    }
    return 1;
}

typedef struct {
    const int64_t *r, *first, *end, *tlo, *tn;
    const double *c, *tc;
    Py_ssize_t n, m, cap;
    int64_t window;
    int64_t *rows;
    double *counts;
} Fields;

/* the sentence and context counts of every sentence reached, ascending: the rows a posting reaches form an
 * interval whose ends never fall as the postings ascend, so the rows still open fit a ring of 2·window+1 slots;
 * merged on the fly with the title documents' sentences (ascending, disjoint). -1 when the output would overflow */
static Py_ssize_t fields_pass(Fields *a, double *ring0, double *ring1, char *held) {
    const int64_t w = a->window, size = 2 * w + 1;
    Py_ssize_t out = 0, j = 0;  /* j: the title document next to merge */
    int64_t tnext = 0;          /* its next sentence */
    int64_t open_lo = 0, open_hi = -1;  /* rows of the ring not written yet */
    /* on to the next title sentence: the next document's first once past a document (an empty one skipped) */
#define NEXT_TITLE()                                                                                               \
    do {                                                                                                           \
        tnext++;                                                                                                   \
        while (j < a->m && tnext >= a->tlo[j] + a->tn[j])                                                          \
            if (++j < a->m) tnext = a->tlo[j];                                                                     \
    } while (0)
    if (a->m > 0) {
        tnext = a->tlo[0] - 1;
        NEXT_TITLE();
    }

#define EMIT(row, s0, s1, s2)                                                                                      \
    do {                                                                                                           \
        if (out >= a->cap) return -1;                                                                              \
        a->rows[out] = (row);                                                                                      \
        a->counts[3 * out] = (s0);                                                                                 \
        a->counts[3 * out + 1] = (s1);                                                                             \
        a->counts[3 * out + 2] = (s2);                                                                             \
        out++;                                                                                                     \
    } while (0)
    /* title sentences before ``limit`` (exclusive), alone: no posting reaches them */
#define TITLES_BEFORE(limit)                                                                                       \
    while (j < a->m && tnext < (limit)) {                                                                          \
        EMIT(tnext, 0.0, 0.0, a->tc[j]);                                                                           \
        NEXT_TITLE();                                                                                              \
    }
    /* write the open rows below ``limit``, with the title's count where a title document holds them */
#define FLUSH_BELOW(limit)                                                                                         \
    while (open_lo <= open_hi && open_lo < (limit)) {                                                              \
        Py_ssize_t slot = (Py_ssize_t)(open_lo % size);                                                            \
        if (held[slot]) {                                                                                          \
            TITLES_BEFORE(open_lo);                                                                                \
            double t = 0.0;                                                                                        \
            if (j < a->m && tnext == open_lo) {                                                                    \
                t = a->tc[j];                                                                                      \
                NEXT_TITLE();                                                                                      \
            }                                                                                                      \
            EMIT(open_lo, ring0[slot], ring1[slot], t);                                                            \
            ring0[slot] = ring1[slot] = 0.0;                                                                       \
            held[slot] = 0;                                                                                        \
        }                                                                                                          \
        open_lo++;                                                                                                 \
    }

    for (Py_ssize_t i = 0; i < a->n; i++) {
        int64_t r = a->r[i], lo = r - w, hi = r + w;
        if (lo < a->first[i]) lo = a->first[i];
        if (hi > a->end[i] - 1) hi = a->end[i] - 1;
        FLUSH_BELOW(lo);
        if (open_lo > open_hi) open_lo = lo;
        for (int64_t row = lo; row <= hi; row++) {
            Py_ssize_t slot = (Py_ssize_t)(row % size);
            if (row == r) ring0[slot] += a->c[i];
            else ring1[slot] += a->c[i];
            held[slot] = 1;
        }
        if (hi > open_hi) open_hi = hi;
    }
    FLUSH_BELOW(INT64_MAX);
    TITLES_BEFORE(INT64_MAX);
#undef FLUSH_BELOW
#undef TITLES_BEFORE
#undef NEXT_TITLE
#undef EMIT
    return out;
}

static PyObject *fields(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *obj[9];
    long long window;
    if (!PyArg_ParseTuple(args, "OOOOLOOOOO", &obj[0], &obj[1], &obj[2], &obj[3], &window, &obj[4], &obj[5],
                          &obj[6], &obj[7], &obj[8]))
        return NULL;
    static const char *formats[9] = {"lq", "d", "lq", "lq", "lq", "lq", "d", "lq", "d"};
    Py_buffer v[9];
    int got = 0;
    Py_ssize_t found = -1;
    for (; got < 9; got++)
        if (!take8(obj[got], &v[got], formats[got], got >= 7)) break;
    if (got == 9 && window >= 0 && window < (1LL << 20)) {
        Fields a = {v[0].buf, v[2].buf, v[3].buf, v[4].buf, v[5].buf, v[1].buf, v[6].buf,
                    v[0].shape[0], v[4].shape[0], v[7].shape[0], (int64_t)window, v[7].buf, v[8].buf};
        int same = v[1].shape[0] == a.n && v[2].shape[0] == a.n && v[3].shape[0] == a.n && v[5].shape[0] == a.m &&
                   v[6].shape[0] == a.m && v[8].shape[0] == 3 * a.cap;
        Py_ssize_t size = (Py_ssize_t)(2 * window + 1);
        double *ring = same ? PyMem_RawCalloc((size_t)(2 * size), sizeof(double)) : NULL;
        char *held = ring ? PyMem_RawCalloc((size_t)size, 1) : NULL;
        if (held) {
            Py_BEGIN_ALLOW_THREADS
            found = fields_pass(&a, ring, ring + size, held);
            Py_END_ALLOW_THREADS
        }
        PyMem_RawFree(held);
        PyMem_RawFree(ring);
    }
    while (got-- > 0) PyBuffer_Release(&v[got]);
    return PyLong_FromSsize_t(found);
}

/* an element of a one-dimensional contiguous array of int32/int64/float32/float64 as a double */
enum { F32 = OTHER + 1, F64 };

static int take_number(PyObject *obj, Py_buffer *view, int *kind) {
    if (take(obj, view, kind, 0)) return 1;
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        PyErr_Clear();
        return 0;
    }
    const char *f = view->format ? view->format : "B";
    if (*f == '@' || *f == '=') f++;
    int single = f[0] != '\0' && f[1] == '\0';
    if (single && f[0] == 'f' && view->itemsize == 4) *kind = F32;
    else if (single && f[0] == 'd' && view->itemsize == 8) *kind = F64;
    else *kind = OTHER;
    if (view->ndim != 1 || *kind == OTHER) {
        PyBuffer_Release(view);
        return 0;
    }
    return 1;
}

static inline double number(int kind, const void *buf, Py_ssize_t i) {
    switch (kind) {
    case F32: return ((const float *)buf)[i];
    case F64: return ((const double *)buf)[i];
    default: return (double)at(kind, buf, i);
    }
}

static int around_pass(int rk, const void *rows, Py_ssize_t n, int vk, const void *vals, int tk, const void *targets,
                       Py_ssize_t m, int fk, const void *first, int ek, const void *end, int64_t w, double *out) {
    Py_ssize_t j = 0;
    int64_t previous = INT64_MIN, previous_lo = INT64_MIN;
    for (Py_ssize_t i = 0; i < m; i++) {
        int64_t t = at(tk, targets, i), lo = t - w, hi = t + w;
        int64_t f = at(fk, first, i), e = at(ek, end, i);
        if (lo < f) lo = f;
        if (hi > e - 1) hi = e - 1;
        if (t < previous || lo < previous_lo) return 0;
        previous = t;
        previous_lo = lo;
        j = gallop_to(rk, rows, n, j, lo);
        double own = 0.0, context = 0.0;
        for (Py_ssize_t k = j; k < n; k++) {
            int64_t r = at(rk, rows, k);
            if (r > hi) break;
            if (r == t) own += number(vk, vals, k);
            else context += number(vk, vals, k);
        }
        out[2 * i] = own;
        out[2 * i + 1] = context;
    }
    return 1;
}

static PyObject *around(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *obj[6];
    long long window;
    if (!PyArg_ParseTuple(args, "OOOOOLO", &obj[0], &obj[1], &obj[2], &obj[3], &obj[4], &window, &obj[5]))
        return NULL;
    Py_buffer v[6];
    int kinds[6], got = 0, done = 0;
    for (; got < 5; got++) {
        int ok = got == 1 ? take_number(obj[got], &v[got], &kinds[got]) : take(obj[got], &v[got], &kinds[got], 0);
        if (!ok) break;
    }
    if (got == 5 && take8(obj[5], &v[5], "d", 1)) {
        got = 6;
        Py_ssize_t n = v[0].shape[0], m = v[2].shape[0];
        if (window >= 0 && v[1].shape[0] == n && v[3].shape[0] == m && v[4].shape[0] == m && v[5].shape[0] == 2 * m) {
            Py_BEGIN_ALLOW_THREADS
            done = around_pass(kinds[0], v[0].buf, n, kinds[1], v[1].buf, kinds[2], v[2].buf, m, kinds[3], v[3].buf,
                               kinds[4], v[4].buf, (int64_t)window, (double *)v[5].buf);
            Py_END_ALLOW_THREADS
        }
    }
    while (got-- > 0) PyBuffer_Release(&v[got]);
    return PyBool_FromLong(done);
}

/* the pass itself: a document's sentences are consecutive, so its bounds are read once for all of them */
static int contexts_pass(int sk, const void *seq, Py_ssize_t n_sent, int fk, const void *first, int nk,
                         const void *nsent, Py_ssize_t n_doc, int64_t w, int32_t *out) {
    int64_t covered = 0;
    for (Py_ssize_t d = 0; d < n_doc; d++) {
        int64_t f = at(fk, first, d), e = f + at(nk, nsent, d);
        if (e == f) continue;
        if (f != covered || e > n_sent) return 0;
        for (int64_t s = f; s < e; s++) {
            int64_t lo = s - w < f ? f : s - w, hi = s + w + 1 > e ? e : s + w + 1;
            out[s] = (int32_t)(at(sk, seq, hi) - at(sk, seq, lo) - (at(sk, seq, s + 1) - at(sk, seq, s)));
        }
        covered = e;
    }
    return covered == n_sent;
}

static PyObject *contexts(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *obj[4];
    long long window;
    if (!PyArg_ParseTuple(args, "OOOLO", &obj[0], &obj[1], &obj[2], &window, &obj[3])) return NULL;
    Py_buffer v[4];
    int kinds[4], got = 0, done = 0;
    for (; got < 3; got++)
        if (!take(obj[got], &v[got], &kinds[got], 0)) break;
    if (got == 3 && take(obj[3], &v[3], &kinds[3], 1)) {
        got = 4;
        Py_ssize_t n = v[3].shape[0], n_doc = v[1].shape[0];
        if (window >= 0 && kinds[3] == I32 && v[0].shape[0] == n + 1 && v[2].shape[0] == n_doc) {
            Py_BEGIN_ALLOW_THREADS
            done = contexts_pass(kinds[0], v[0].buf, n, kinds[1], v[1].buf, kinds[2], v[2].buf, n_doc,
                                 (int64_t)window, (int32_t *)v[3].buf);
            Py_END_ALLOW_THREADS
        }
    }
    while (got-- > 0) PyBuffer_Release(&v[got]);
    return PyBool_FromLong(done);
}

static PyMethodDef methods[] = {
    {"insertion", insertion, METH_VARARGS, "insertion(rows, targets, out) -> bool"},
    {"fields", fields, METH_VARARGS, "fields(r, c, first, end, window, tlo, tn, tc, rows, counts) -> int"},
    {"around", around, METH_VARARGS, "around(rows, vals, targets, first, end, window, out) -> bool"},
    {"contexts", contexts, METH_VARARGS, "contexts(seq_indptr, doc_first, doc_nsent, window, out) -> bool"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_sorted", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__sorted(void) { return PyModule_Create(&module); }
