/* What _saturated.c is made of besides its two paths: arrays read through the buffer protocol, a posting's
 * contribution, numpy's sums, and the heap of the k best. Included by _saturated.c alone. */
#ifndef SENTRET_SATURATED_H
#define SENTRET_SATURATED_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* ---- arrays through the buffer protocol ---- */

enum { I32, I64, F32, F64, U8, U16, OTHER };

typedef struct {
    Py_buffer view;
    int kind;
    Py_ssize_t n;
} Array;

static int kind_of(const Py_buffer *v) {
    const char *f = v->format ? v->format : "B";
    if (*f == '@' || *f == '=' || *f == '<') {
        const uint16_t one = 1;
        if (*f == '<' && *(const uint8_t *)&one != 1) return OTHER;
        f++;
    }
    if (f[0] == '\0' || f[1] != '\0') return OTHER;
    if (strchr("bhilq", f[0])) return v->itemsize == 4 ? I32 : v->itemsize == 8 ? I64 : OTHER;
    if (f[0] == 'B' && v->itemsize == 1) return U8;
    if (f[0] == 'H' && v->itemsize == 2) return U16;
    if (f[0] == 'f' && v->itemsize == 4) return F32;
    if (f[0] == 'd' && v->itemsize == 8) return F64;
    return OTHER;
}

/* 1 when obj is a one-dimensional contiguous array of a kind in `allowed` (a bit mask); 0 otherwise, no error set */
static int take(PyObject *obj, Array *a, int allowed) {
    if (PyObject_GetBuffer(obj, &a->view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        PyErr_Clear();
        return 0;
    }
    a->kind = kind_of(&a->view);
    a->n = a->view.ndim == 1 ? a->view.shape[0] : -1;
    if (a->n < 0 || a->kind == OTHER || !(allowed & (1 << a->kind))) {
        PyBuffer_Release(&a->view);
        return 0;
    }
    return 1;
}

#if defined(__GNUC__) || defined(__clang__)
#define INLINE static inline __attribute__((always_inline))
#else
#define INLINE static inline
#endif

/* an element by its kind: where the kind is a constant, the compiler keeps only its case */
INLINE int64_t int_of(int kind, const void *buf, Py_ssize_t i) {
    switch (kind) {
    case I32: return ((const int32_t *)buf)[i];
    case U8: return ((const uint8_t *)buf)[i];
    case U16: return ((const uint16_t *)buf)[i];
    default: return ((const int64_t *)buf)[i];
    }
}

INLINE double real_of(int kind, const void *buf, Py_ssize_t i) {
    switch (kind) {
    case I32: return (double)((const int32_t *)buf)[i];
    case I64: return (double)((const int64_t *)buf)[i];
    case F32: return (double)((const float *)buf)[i];
    default: return ((const double *)buf)[i];
    }
}

static inline int64_t int_at(const Array *a, Py_ssize_t i) { return int_of(a->kind, a->view.buf, i); }

static inline void prefetch(const void *base, Py_ssize_t offset) {
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch((const char *)base + offset);
#else
    (void)base, (void)offset;
#endif
}

typedef struct {
    Array indptr, indices, data, terms, qtf, idf, codes, table;
    int has_codes;
    Py_ssize_t n_sentences;
    double k1, k3, k_min;
    double *w; /* each term's weight */
} Inputs;

#define AHEAD 16 /* postings: how far ahead a sentence's code is asked for (codes are read at random) */
#define CODES(in) ((in)->has_codes ? (in)->codes.kind : -1)

/* fn(in, ik, dk, ck, ...) for the kinds of in's indices, data and codes (-1: none, K per sentence), the commonest
 * (an index's own int32 postings, lengths in one or two bytes) compiled apart so that no element needs a switch */
#define BY_KINDS(fn, in, ...)                                                                                     \
    ((in)->indices.kind == I32 && (in)->data.kind == I32 && CODES(in) == U8 ? fn(in, I32, I32, U8, __VA_ARGS__)    \
     : (in)->indices.kind == I32 && (in)->data.kind == I32 && CODES(in) == U16                                   \
         ? fn(in, I32, I32, U16, __VA_ARGS__)                                                                    \
         : fn(in, (in)->indices.kind, (in)->data.kind, CODES(in), __VA_ARGS__))

/* ask for the code of the sentence AHEAD postings on */
INLINE void fetch_ahead(const Inputs *in, int ik, int ck, Py_ssize_t j, Py_ssize_t to) {
    if (ck >= 0 && j + AHEAD < to) {
        int64_t ahead = int_of(ik, in->indices.view.buf, j + AHEAD);
        if (ahead >= 0 && ahead < in->n_sentences) prefetch(in->codes.view.buf, ahead * (ck == U16 ? 2 : ck == U8 ? 1 : 8));
    }
}

/* the contribution of a count x in sentence r, for w and scale = w·(k1+1); 0: r's code is past the table */
INLINE int contribution(const Inputs *in, int ck, int64_t r, double x, double w, double scale, double *v) {
    if (in->k1 == 0.0) {
        *v = w * (x > 0 ? 1.0 : 0.0);
        return 1;
    }
    int64_t c = ck >= 0 ? int_of(ck, in->codes.view.buf, r) : r;
    if (c >= in->table.n) return 0;
    *v = (scale * x) / (((const double *)in->table.view.buf)[c] + x);
    return 1;
}

/* ---- numpy's sums ---- */

/* numpy's pairwise summation of n values (its loops_utils pairwise_sum, which add.reduce runs) */
static double pairwise(const double *a, Py_ssize_t n) {
    if (n < 8) {
        double res = -0.0;
        for (Py_ssize_t i = 0; i < n; i++) res += a[i];
        return res;
    }
    if (n <= 128) {
        double r[8];
        Py_ssize_t i;
        for (i = 0; i < 8; i++) r[i] = a[i];
        for (i = 8; i < n - (n % 8); i += 8)
            for (int j = 0; j < 8; j++) r[j] += a[i + j];
        double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++) res += a[i];
        return res;
    }
    Py_ssize_t n2 = n / 2;
    n2 -= n2 % 8;
    return pairwise(a, n2) + pairwise(a + n2, n - n2);
}

/* add.reduceat over one run of values: its first, plus the pairwise sum of the others */
static inline double run_sum(const double *a, Py_ssize_t n) {
    return n == 1 ? a[0] : a[0] + pairwise(a + 1, n - 1);
}

/* ---- the k best: a heap whose root is the worst kept (lowest score, then highest id) ---- */

typedef struct {
    double *score;
    int64_t *id;
    Py_ssize_t size, cap;
} Best;

static inline int worse(const Best *b, Py_ssize_t x, Py_ssize_t y) {
    return b->score[x] < b->score[y] || (b->score[x] == b->score[y] && b->id[x] > b->id[y]);
}

static void swap(Best *b, Py_ssize_t x, Py_ssize_t y) {
    double s = b->score[x];
    int64_t i = b->id[x];
    b->score[x] = b->score[y], b->id[x] = b->id[y];
    b->score[y] = s, b->id[y] = i;
}

static void sift_down(Best *b, Py_ssize_t at) {
    for (;;) {
        Py_ssize_t l = 2 * at + 1, r = l + 1, m = at;
        if (l < b->size && worse(b, l, m)) m = l;
        if (r < b->size && worse(b, r, m)) m = r;
        if (m == at) return;
        swap(b, at, m);
        at = m;
    }
}

static void offer(Best *b, int64_t id, double score) {
    if (b->size < b->cap) {
        Py_ssize_t at = b->size++;
        b->score[at] = score, b->id[at] = id;
        while (at > 0 && worse(b, at, (at - 1) / 2)) {
            swap(b, at, (at - 1) / 2);
            at = (at - 1) / 2;
        }
    } else if (b->cap > 0 && (score > b->score[0] || (score == b->score[0] && id < b->id[0]))) {
        b->score[0] = score, b->id[0] = id;
        sift_down(b, 0);
    }
}

/* the heap emptied worst first into its own arrays from the back: best first */
static void rank(Best *b) {
    while (b->size > 1) {
        Py_ssize_t last = --b->size;
        swap(b, 0, last);
        sift_down(b, 0);
    }
    b->size = 0;
}

/* ---- where the candidates go: every one, ids ascending, or the k best ---- */

typedef struct {
    int32_t *ids;
    double *scores;
    Py_ssize_t n;
    Best best;
    int all;
} Out;

/* 0 when a score to rank is NaN (the caller runs the numpy path) */
static inline int emit(Out *o, int64_t id, double score) {
    if (o->all) {
        o->ids[o->n] = (int32_t)id, o->scores[o->n] = score;
        o->n++;
        return 1;
    }
    if (isnan(score)) return 0;
    offer(&o->best, id, score);
    return 1;
}

#endif
