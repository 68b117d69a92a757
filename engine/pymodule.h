/* What every compiled pass's module has (engine/strategies/cogra/_steps.c,
 * engine/shared/kleene/_typed.c, engine/shared/sequence/_counts.c,
 * engine/shared/panes/_panes.c): reading a tuple of ints, and a module of one function,
 * `run`, that sets up the count arithmetic (count128.h) when it is imported.
 */
#ifndef TRENDLAKE_PYMODULE_H
#define TRENDLAKE_PYMODULE_H

#include <Python.h>

#include "count128.h"

/* a tuple of n ints into out; -1 with TypeError (naming `what`) otherwise */
static inline int int_tuple(PyObject *obj, int n, int *out, const char *what) {
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

/* the next row of `width` int64 values of *rows (*n rows kept, *cap allocated, doubled as
 * needed), or NULL when out of memory */
static inline int64_t *grow_rows(int64_t **rows, Py_ssize_t *n, Py_ssize_t *cap, int width) {
    if (*n == *cap) {
        Py_ssize_t c = *cap ? 2 * *cap : 1024;
        int64_t *a = realloc(*rows, (size_t)c * width * sizeof(int64_t));
        if (!a) return NULL;
        *rows = a;
        *cap = c;
    }
    return *rows + (size_t)width * (*n)++;
}

/* free each of the pointers given (NULL ones too) */
#define FREE_ALL(...)                                                                  \
    do {                                                                               \
        void *owned_[] = {__VA_ARGS__};                                                \
        for (size_t i_ = 0; i_ < sizeof owned_ / sizeof owned_[0]; i_++) free(owned_[i_]); \
    } while (0)

/* the extension module NAME (an identifier, e.g. _steps) with its one function `run` */
#define COMPILED_MODULE(NAME, DOC, RUN_DOC)                                                          \
    static PyMethodDef methods[] = {{"run", run, METH_VARARGS, RUN_DOC}, {NULL, NULL, 0, NULL}};    \
    static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, #NAME, DOC, -1, methods,              \
                                        NULL, NULL, NULL, NULL};                                     \
    PyMODINIT_FUNC PyInit_##NAME(void) {                                                            \
        count128_init();                                                                             \
        return PyModule_Create(&module);                                                             \
    }

#endif
