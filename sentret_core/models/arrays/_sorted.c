/* numpy's searchsorted (side "left") for targets that are themselves sorted, by one galloping pass over both.
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

/* the pass itself; the kinds are constants where it is inlined, so no element needs a switch */
static inline int gallop(int rk, const void *rows, Py_ssize_t n, int tk, const void *targets, Py_ssize_t m,
                         int64_t *out) {
    Py_ssize_t j = 0;
    int64_t previous = INT64_MIN;
    for (Py_ssize_t i = 0; i < m; i++) {
        int64_t t = at(tk, targets, i);
        if (t < previous) return 0;
        previous = t;
        if (j < n && at(rk, rows, j) < t) {
            /* rows[lo] < t; widen until rows[hi] >= t or the end, then bisect (lo, hi] */
            Py_ssize_t lo = j, step = 1, hi = j + 1;
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
            j = hi;
        }
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

static PyMethodDef methods[] = {
    {"insertion", insertion, METH_VARARGS, "insertion(rows, targets, out) -> bool"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_sorted", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__sorted(void) { return PyModule_Create(&module); }
